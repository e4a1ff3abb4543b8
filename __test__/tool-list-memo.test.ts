// `filterTools` remembers the tool lists it read (src-ts/tool-list-memo.ts): a list seen again
// by the same gate is filtered from the core's prepared list. Through the real binding, every
// answer must equal what a gate that never saw the list answers (a fresh gate of the same
// config: its first sighting is read as it comes), for callers that alternate, for lists sent
// as text and as objects — and a list must never be answered for another gate, dialect or text.
import { describe, expect, it } from 'vitest'

import { ToolGate } from '../src-ts/index'
import { MAX_REMEMBERED_TOOL_LIST, MIN_REMEMBERED_TOOL_LIST, REMEMBERED_TOOL_LISTS, toolListMemo } from '../src-ts/tool-list-memo'
import type { ToolGateConfig } from '../src-ts/types'

const config = (admins: string[]): ToolGateConfig => ({
  version: 1,
  tools: [{ name: 'search' }, { name: 'wipe' }, { name: 'read_file' }],
  policy: {
    rules: [
      { id: 'admins', effect: 'allow', roles: ['admin'], tools: admins },
      { id: 'all', effect: 'allow', tools: ['search'] },
      { id: 'banned', effect: 'deny', subjects: ['mallory'], tools: ['*'] },
    ],
  },
})

const fn = (name: string, extra: Record<string, unknown> = {}) => ({ type: 'function', function: { name, parameters: { type: 'object' }, ...extra } })
// long enough to be remembered (MIN_REMEMBERED_TOOL_LIST), as a real tool list is
const about = { description: 'd'.repeat(MIN_REMEMBERED_TOOL_LIST) }
const list = (i: number) => [fn('search', about), fn('wipe'), fn('read_file'), fn(`t${i}`)]
const names = (tools: unknown): string[] => (tools as { function: { name: string } }[]).map((t) => t.function.name)
const callers = [{ roles: ['admin'] }, {}, { subject: 'mallory', roles: ['admin'] }, { roles: ['admin', 'x'] }, {}]

describe('filterTools remembers the lists it read', () => {
  it('answers what a gate that never saw the list answers, for many lists, callers, text and objects', () => {
    const gate = new ToolGate(config(['wipe']))
    const prepared = callers.map((c) => gate.caller(c))
    // more lists than are remembered, each sent three times: noted, prepared, forgotten, again
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < REMEMBERED_TOOL_LISTS + 4; i++) {
        const objects = list(i % (REMEMBERED_TOOL_LISTS + 4))
        const text = JSON.stringify(objects)
        callers.forEach((ctx, k) => {
          const fresh = new ToolGate(config(['wipe']))
          const want = fresh.filterTools(text, { dialect: 'openai', ...ctx })
          expect(gate.filterTools(text, { dialect: 'openai', ...ctx })).toBe(want)
          expect(gate.filterTools(text, { dialect: 'openai', caller: prepared[k] })).toBe(want)
          expect(gate.filterTools(objects, { dialect: 'openai', ...ctx })).toEqual(JSON.parse(want))
        })
      }
    }
    expect(toolListMemo.size).toBeLessThanOrEqual(REMEMBERED_TOOL_LISTS)
  })

  it('answers each gate by its own policy for the same text', () => {
    // the same text, two policies: each filter asks the filtering gate which tools its caller
    // may see, whichever gate read the list
    const a = new ToolGate(config(['wipe']))
    const b = new ToolGate(config(['wipe', 'read_file']))
    const text = JSON.stringify(list(99))
    for (let i = 0; i < 4; i++) {
      expect(names(JSON.parse(a.filterTools(text, { dialect: 'openai', roles: ['admin'] })))).toEqual(['search', 'wipe'])
      expect(names(JSON.parse(b.filterTools(text, { dialect: 'openai', roles: ['admin'] })))).toEqual(['search', 'wipe', 'read_file'])
      expect(names(b.filterTools(JSON.parse(text), { dialect: 'openai', roles: ['admin'] }))).toEqual(['search', 'wipe', 'read_file'])
      expect(names(a.filterTools(JSON.parse(text), { dialect: 'openai', roles: ['admin'] }))).toEqual(['search', 'wipe'])
    }
  })

  it('never lets a gate skip its own limits on a list another gate read', () => {
    // a prepared list's answers hold for any gate, but it was read under its gate's limits: a
    // stricter gate must refuse the list itself, not filter what a laxer one read
    const lax = new ToolGate(config(['wipe']))
    const strict = new ToolGate({ ...config(['wipe']), limits: { maxDepth: 4 } })
    // a schema nested 20 levels: within the default limit, past the strict gate's (its
    // arguments' depth plus the envelope's 12)
    let deep: Record<string, unknown> = { type: 'string' }
    for (let i = 0; i < 10; i++) deep = { type: 'object', properties: { a: deep } }
    const objects = [fn('search', { ...about, parameters: deep })]
    const text = JSON.stringify(objects)
    // the lax gate first reads and prepares the list, then the strict one is given it
    for (let i = 0; i < 3; i++) expect(names(JSON.parse(lax.filterTools(text, { dialect: 'openai' })))).toEqual(['search'])
    for (let i = 0; i < 3; i++) {
      expect(() => strict.filterTools(text, { dialect: 'openai' })).toThrow(expect.objectContaining({ code: 'E_PAYLOAD', message: expect.stringMatching(/deep/) }))
      expect(() => strict.filterTools(objects, { dialect: 'openai' })).toThrow(expect.objectContaining({ code: 'E_PAYLOAD' }))
      expect(names(JSON.parse(lax.filterTools(text, { dialect: 'openai' })))).toEqual(['search'])
    }
  })

  it('reads the same text in another dialect as that dialect, error included', () => {
    const gate = new ToolGate(config(['wipe']))
    const text = JSON.stringify(list(7))
    for (let i = 0; i < 3; i++) expect(names(JSON.parse(gate.filterTools(text, { dialect: 'openai' })))).toEqual(['search'])
    for (let i = 0; i < 3; i++) expect(() => gate.filterTools(text, { dialect: 'anthropic' })).toThrow(expect.objectContaining({ code: 'E_PAYLOAD' }))
    // an unreadable list is refused every time with the same error, never remembered as read
    const broken = '[{"type":"function","function":{"name":"search"},"type":"x"}]'
    const first = (() => {
      try {
        gate.filterTools(broken, { dialect: 'openai' })
      } catch (err) {
        return err as Error
      }
    })()
    expect(first?.message).toMatch(/twice/)
    for (let i = 0; i < 3; i++) expect(() => gate.filterTools(broken, { dialect: 'openai' })).toThrow(first?.message)
  })

  it('sees objects changed between filters, and keeps the caller own objects', () => {
    const gate = new ToolGate(config(['wipe']))
    const objects = list(5)
    const parse = (): unknown => ({ parsed: true })
    // a helper's function (openai's zodFunction keeps its parser beside the definition) stays
    objects[0] = { ...fn('search'), $parseRaw: parse } as never
    for (let i = 0; i < 3; i++) {
      const kept = gate.filterTools(objects, { dialect: 'openai', roles: ['admin'] }) as unknown as Record<string, unknown>[]
      expect(names(kept)).toEqual(['search', 'wipe'])
      expect(kept[0]).toBe(objects[0])
      expect(kept[0].$parseRaw).toBe(parse)
    }
    // renamed in place: the text changed, so the answer follows it
    ;(objects[1] as { function: { name: string } }).function.name = 'read_file'
    expect(names(gate.filterTools(objects, { dialect: 'openai', roles: ['admin'] }))).toEqual(['search'])
    ;(objects[3] as { function: { name: string } }).function.name = 'wipe'
    expect(names(gate.filterTools(objects, { dialect: 'openai', roles: ['admin'] }))).toEqual(['search', 'wipe'])
  })

  it('stays within its bounds: lists past the longest or under the shortest remembered are filtered as they come', () => {
    const gate = new ToolGate(config(['wipe']))
    const long = [fn('search', { description: 'x'.repeat(MAX_REMEMBERED_TOOL_LIST) }), fn('wipe')]
    const before = toolListMemo.size
    for (let i = 0; i < 3; i++) expect(names(gate.filterTools(long, { dialect: 'openai' }))).toEqual(['search'])
    // one-tool lists, one per tool (the OpenAI Agents adapter's isEnabled): never pushing out a long list
    for (let i = 0; i < 3 * REMEMBERED_TOOL_LISTS; i++) expect(names(gate.filterTools([fn(`tiny${i}`)], { dialect: 'openai' }))).toEqual([])
    expect(toolListMemo.size).toBe(before)
    for (let i = 0; i < 3 * REMEMBERED_TOOL_LISTS; i++) gate.filterTools(JSON.stringify(list(1000 + i)), { dialect: 'openai' })
    expect(toolListMemo.size).toBe(REMEMBERED_TOOL_LISTS)
  })
})
