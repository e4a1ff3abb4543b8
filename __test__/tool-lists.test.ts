// Every fixture under __test__/fixtures/tool-lists/ (shared with the Rust tests) through
// `gate.filterTools` and the real binding.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

import { ToolGate, ToolGateError } from '../src-ts/index'

const root = join(__dirname, 'fixtures')
const gate = ToolGate.fromFile(join(root, 'dialects', 'tools.json'))

describe('tool-list fixtures', () => {
  const lists = join(root, 'tool-lists')
  for (const d of readdirSync(lists).sort()) {
    if (!statSync(join(lists, d)).isDirectory()) continue
    for (const f of readdirSync(join(lists, d)).sort()) {
      if (!f.endsWith('.json')) continue
      const fx = JSON.parse(readFileSync(join(lists, d, f), 'utf8'))
      it(`${d}/${f}: ${String(fx.description).slice(0, 80)}`, () => {
        if (fx.error) {
          let thrown: unknown
          try {
            gate.filterTools(fx.tools, { dialect: fx.dialect })
          } catch (err) {
            thrown = err
          }
          expect(thrown).toBeInstanceOf(ToolGateError)
          expect((thrown as ToolGateError).code).toBe(fx.error.code)
          expect((thrown as ToolGateError).message).toContain(fx.error.contains ?? '')
          // a prepared list is refused when prepared, with the same error
          expect(() => gate.prepareTools(fx.tools, { dialect: fx.dialect })).toThrow((thrown as Error).message)
        } else {
          const before = JSON.stringify(fx.tools)
          expect(gate.filterTools(fx.tools, { dialect: fx.dialect })).toEqual(fx.expect)
          // the same list as text: the same answer, as text in the same member order
          expect(gate.filterTools(before, { dialect: fx.dialect })).toBe(JSON.stringify(fx.expect))
          // prepared once (as objects and as text), the same answers, found again the second time
          const asObjects = gate.prepareTools(fx.tools, { dialect: fx.dialect })
          const asText = gate.prepareTools(before, { dialect: fx.dialect })
          for (let i = 0; i < 2; i++) {
            expect(asObjects.filter()).toEqual(fx.expect)
            expect(asText.filter()).toBe(JSON.stringify(fx.expect))
          }
          // the caller's list is never edited
          expect(JSON.stringify(fx.tools)).toBe(before)
        }
      })
    }
  }
})

describe('filterTools with JSON text', () => {
  it('answers text with text, filtered', () => {
    const text = JSON.stringify({ tools: [{ name: 'ping' }, { name: 'rm' }], nextCursor: 'c' })
    const out = gate.filterTools(text, { dialect: 'mcp' })
    expect(typeof out).toBe('string')
    expect(JSON.parse(out)).toEqual({ tools: [{ name: 'ping' }], nextCursor: 'c' })
  })
})

describe('filterTools with a JSON list as objects', () => {
  const fn = (name: string) => ({ type: 'function', function: { name, parameters: { type: 'object' } } })

  it('keeps the caller’s own definitions in a new list, and never edits the list it was given', () => {
    const ping = fn('ping')
    const search = fn('search')
    const list = [ping, fn('rm'), search]
    const out = gate.filterTools(list, { dialect: 'openai' })
    expect(out).toEqual([ping, search])
    expect(out[0]).toBe(ping)
    expect(out[1]).toBe(search)
    expect(out).not.toBe(list)
    expect(list.map((t) => t.function.name)).toEqual(['ping', 'rm', 'search'])
    // nothing removed: still a new outer container
    const all = [ping, search]
    const same = gate.filterTools(all, { dialect: 'openai' })
    expect(same).toEqual(all)
    expect(same).not.toBe(all)
  })

  it('keeps what JSON does not carry on a kept definition (a parser helper, say)', () => {
    const parse = (s: string): unknown => JSON.parse(s)
    const tool = Object.assign(fn('ping'), { $parseRaw: parse })
    Object.defineProperty(tool, '$brand', { value: 'auto-parseable-tool', enumerable: false })
    const out = gate.filterTools([fn('rm'), tool], { dialect: 'openai' }) as (typeof tool)[]
    expect(out).toHaveLength(1)
    expect(out[0]).toBe(tool)
    expect(out[0].$parseRaw).toBe(parse)
  })

  it('copies a request body along the way to what it removed, and keeps its other members', () => {
    const ping = fn('ping')
    const body = { model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }], tools: [fn('rm'), ping] }
    const out = gate.filterTools(body, { dialect: 'openai' })
    expect(out).toEqual({ model: 'gpt-x', messages: body.messages, tools: [ping] })
    expect(out.messages).toBe(body.messages)
    expect(out.tools[0]).toBe(ping)
    expect(body.tools).toHaveLength(2)
  })

  it('Gemini: removes declarations, emptied lists and Tools, and undeclared capabilities, by position', () => {
    const weather = { name: 'get_weather' }
    const tools = [{ functionDeclarations: [{ name: 'rm' }] }, { googleSearch: {}, functionDeclarations: [{ name: 'nope' }, weather] }]
    const out = gate.filterTools(tools, { dialect: 'gemini' })
    expect(out).toEqual([{ functionDeclarations: [weather] }])
    expect(out[0].functionDeclarations[0]).toBe(weather)
  })

  it('a list read twice differently (an accessor on the way) is answered from the text decided on', () => {
    // the first read (what the core decides on) and any later read differ: positions decided on
    // the first must never be cut from the second
    let reads = 0
    const body = {
      get tools() {
        reads++
        return reads === 1 ? [fn('rm'), fn('ping')] : [fn('ping'), fn('rm')]
      },
    }
    const out = gate.filterTools(body, { dialect: 'openai' }) as { tools: { function: { name: string } }[] }
    expect(out.tools.map((t) => t.function.name)).toEqual(['ping'])
  })

  it('a list whose JSON is not itself (toJSON, a class instance) is answered from the text decided on', () => {
    const shown = [fn('rm'), fn('ping')]
    const withToJSON = Object.assign([fn('ping'), fn('rm'), fn('rm')], { toJSON: () => shown })
    expect(gate.filterTools(withToJSON, { dialect: 'openai' }).map((t: { function: { name: string } }) => t.function.name)).toEqual(['ping'])
    class Holder {
      tools = [fn('rm'), fn('ping')]
    }
    const out = gate.filterTools(new Holder(), { dialect: 'openai' }) as unknown as { tools: unknown[] }
    expect(out).toEqual({ tools: [fn('ping')] })
    expect(out).not.toBeInstanceOf(Holder)
  })
})

describe('filterTools with live objects', () => {
  it('keeps the caller’s own AI SDK tool objects, functions and all', () => {
    const search = { description: 'Search', execute: async () => 'ok' }
    const evil = { execute: async () => 'boom' }
    const out = gate.filterTools({ search, evil }, { dialect: 'ai-sdk' })
    expect(Object.keys(out)).toEqual(['search'])
    expect(out.search).toBe(search)
  })
  it('keeps LangChain tool instances by identity', () => {
    class FakeTool {
      constructor(readonly name: string) {}
      invoke() {}
    }
    const a = new FakeTool('ping')
    const out = gate.filterTools([a, new FakeTool('rm')], { dialect: 'langchain' })
    expect(out).toEqual([a])
    expect(out[0]).toBe(a)
  })
})
