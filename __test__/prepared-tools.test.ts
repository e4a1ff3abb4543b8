// `gate.prepareTools`: a tool list read once and filtered per caller through the real binding —
// every answer what `filterTools` answers for the list as it was prepared, for callers that
// alternate, and never what the list's objects became afterwards.
import { describe, expect, it } from 'vitest'

import { ToolGate, ToolGateError } from '../src-ts/index'
import { native } from '../src-ts/native'

const names = ['read_file', 'write_file', 'search', 'delete_user', 'googleSearch']
const gate = new ToolGate({
  version: 1,
  tools: names.map((name) => ({ name })),
  policy: {
    rules: [
      { id: 'everyone', effect: 'allow', tools: ['search'] },
      { id: 'readers', effect: 'allow', roles: ['reader'], tools: ['read_file', 'googleSearch'] },
      { id: 'writers', effect: 'allow', roles: ['writer'], tools: ['read_file', 'write_file'] },
      { id: 'admins', effect: 'allow', roles: ['admin'], tools: ['*'] },
      { id: 'banned', effect: 'deny', subjects: ['mallory'], tools: ['*'] },
    ],
  },
})

const fn = (name: string) => ({ type: 'function', function: { name, description: `${name} tool`, parameters: { type: 'object', properties: { q: { type: 'string' } } } } })
const openaiList = () => [...names, 'undeclared'].map(fn)
const callers = [{}, { roles: ['reader'] }, { roles: ['writer'] }, { roles: ['admin'] }, { subject: 'mallory', roles: ['admin'] }, { roles: ['reader', 'writer'] }]

describe('prepareTools', () => {
  it('answers every caller, in any order, what filterTools answers', () => {
    const list = openaiList()
    const text = JSON.stringify(list)
    const asObjects = gate.prepareTools(list, { dialect: 'openai' })
    const asText = gate.prepareTools(text, { dialect: 'openai' })
    const seen = new Set<string>()
    for (let round = 0; round < 3; round++) {
      for (const ctx of round === 1 ? [...callers].reverse() : callers) {
        const want = gate.filterTools(text, { dialect: 'openai', ...ctx })
        seen.add(want)
        expect(asText.filter(ctx)).toBe(want)
        expect(JSON.stringify(asObjects.filter(ctx))).toBe(want)
        const caller = gate.caller(ctx)
        expect(asText.filter(caller)).toBe(want)
        expect(asText.filter({ caller })).toBe(want)
      }
    }
    // the callers really see different lists
    expect(seen.size).toBeGreaterThanOrEqual(5)
  })

  it('filters Gemini capabilities and emptied Tools as filterTools does', () => {
    const tools = [{ functionDeclarations: [{ name: 'read_file' }, { name: 'write_file' }] }, { googleSearch: {} }, { codeExecution: {}, functionDeclarations: [{ name: 'search' }] }]
    const prepared = gate.prepareTools(tools, { dialect: 'gemini' })
    for (const ctx of callers) expect(prepared.filter(ctx)).toEqual(gate.filterTools(tools, { dialect: 'gemini', ...ctx }))
  })

  it('answers the list as it was prepared: later changes to its objects are not seen', () => {
    const list = openaiList()
    const prepared = gate.prepareTools(list, { dialect: 'openai' })
    const before = prepared.filter({ roles: ['reader'] })
    // the host renames an offered tool to one the caller may not call, and adds one
    ;(list[0].function as { name: string }).name = 'delete_user'
    list.push(fn('delete_user'))
    const after = prepared.filter({ roles: ['reader'] })
    expect(after).toEqual(before)
    expect((after as typeof list).map((t) => t.function.name)).toEqual(['read_file', 'search', 'googleSearch'])
  })

  it('reads a getter once, when the list is prepared', () => {
    let reads = 0
    const sneaky = {
      type: 'function',
      get function() {
        reads++
        return { name: reads === 1 ? 'search' : 'delete_user' }
      },
    }
    const prepared = gate.prepareTools([sneaky], { dialect: 'openai' })
    for (let i = 0; i < 3; i++) expect(prepared.filter({})).toEqual([{ type: 'function', function: { name: 'search' } }])
    expect(reads).toBe(1)
  })

  it('gives each answer its own outer list, and shares frozen definitions', () => {
    const prepared = gate.prepareTools(openaiList(), { dialect: 'openai' })
    const a = prepared.filter({ roles: ['admin'] }) as ReturnType<typeof openaiList>
    const b = prepared.filter({ roles: ['admin'] }) as ReturnType<typeof openaiList>
    expect(a).not.toBe(b)
    a.push(fn('undeclared'))
    expect(b).toHaveLength(5)
    expect(Object.isFrozen(b[0])).toBe(true)
    expect(() => {
      ;(b[0].function as { name: string }).name = 'undeclared'
    }).toThrow(TypeError)
    expect((prepared.filter({ roles: ['admin'] }) as typeof b).map((t) => t.function.name)).toEqual(names)
  })

  it('keeps live tool objects (AI SDK records) as they were named when prepared', () => {
    const execute = async () => 'ok'
    const record: Record<string, unknown> = { read_file: { execute }, delete_user: { execute }, search: { execute } }
    const prepared = gate.prepareTools(record, { dialect: 'ai-sdk' })
    record.write_file = { execute }
    const out = prepared.filter({ roles: ['writer'] }) as Record<string, unknown>
    expect(Object.keys(out)).toEqual(['read_file', 'search'])
    expect(out.read_file).toBe(record.read_file)
  })

  it('the raw binding refuses a list handle that names no prepared list, never another list', () => {
    const n = native()
    const g = new n.BindingGate(JSON.stringify({ tools: [{ name: 'search' }] }))
    const list = new n.BindingTools(g.handle, 'openai', '[{"type":"function","function":{"name":"search"}}]')
    expect(n.filterPrepared(g.handle, list.handle, '', undefined)).toBe('[{"type":"function","function":{"name":"search"}}]')
    for (const bad of [list.handle + 1000, 2 ** 32 - 1]) {
      expect(() => n.filterPrepared(g.handle, bad, '', undefined)).toThrow('this prepared tool list has been released')
      expect(() => n.filterPreparedRemovals(g.handle, bad, '', undefined)).toThrow('this prepared tool list has been released')
    }
  })

  it('refuses what filterTools refuses, when prepared, and a context key that is not a field', () => {
    expect(() => gate.prepareTools('[{"type":"function","function":{"name":"a","name":"search"}}]', { dialect: 'openai' })).toThrow(ToolGateError)
    expect(() => gate.prepareTools([], { dialect: undefined as never })).toThrow(/dialect/)
    const prepared = gate.prepareTools(openaiList(), { dialect: 'openai' })
    let thrown: unknown
    try {
      prepared.filter({ role: 'admin' } as never)
    } catch (err) {
      thrown = err
    }
    expect((thrown as ToolGateError).code).toBe('E_CONFIG')
    expect((thrown as ToolGateError).message).toContain('`role`')
    // the same refused object again (its text now seen, never prepared as a caller): refused again
    const bad = { role: 'admin' } as never
    for (let i = 0; i < 3; i++) expect(() => prepared.filter(bad)).toThrow(expect.objectContaining({ code: 'E_CONFIG' }))
  })

  it('answers a context object passed again by what it holds now', () => {
    // passed again, the object goes as the caller prepared from its text, while it holds the
    // same; changed in place, it is read again: the answer follows what it holds
    const prepared = gate.prepareTools(openaiList(), { dialect: 'openai' })
    const text = JSON.stringify(openaiList())
    const ctx: { subject?: string; roles: string[] } = { roles: ['reader'] }
    const want = (c: object) => gate.filterTools(text, { dialect: 'openai', ...c })
    for (let i = 0; i < 3; i++) expect(JSON.stringify(prepared.filter(ctx))).toBe(want({ roles: ['reader'] }))
    ctx.roles.push('writer')
    for (let i = 0; i < 3; i++) expect(JSON.stringify(prepared.filter(ctx))).toBe(want({ roles: ['reader', 'writer'] }))
    ctx.subject = 'mallory'
    ctx.roles = ['admin']
    for (let i = 0; i < 3; i++) expect(JSON.stringify(prepared.filter(ctx))).toBe('[]')
    // a new object of the same text each time: the same answers
    for (let i = 0; i < 3; i++) expect(JSON.stringify(prepared.filter({ roles: ['admin'] }))).toBe(want({ roles: ['admin'] }))
  })
})
