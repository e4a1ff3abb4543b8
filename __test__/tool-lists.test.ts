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
        } else {
          expect(gate.filterTools(fx.tools, { dialect: fx.dialect })).toEqual(fx.expect)
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
