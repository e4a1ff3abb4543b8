// Prepared callers (`gate.caller(ctx)`, issue 20): a caller read once answers exactly as the
// same context passed with each call, on the MCP corpus (64 published tool schemas, a
// four-role policy, 38 calls) through check, checkAsync, guard, filterTools and stream; a bad
// context is refused when it is prepared; a caller cannot be forged or mixed with context fields.
import { describe, expect, it } from 'vitest'

import { loadCorpus } from '../bench/corpus/mcp/corpus'
import { Caller, ToolGate, ToolGateError, type CallContext } from '../src-ts/index'

const corpus = loadCorpus()
const gate = new ToolGate(corpus.config as never)
const callers = corpus.callers as Record<string, CallContext>

describe('gate.caller', () => {
  it('answers every corpus call as the same context does (check and checkAsync)', async () => {
    const prepared = Object.fromEntries(Object.entries(callers).map(([k, c]) => [k, gate.caller(c)]))
    for (const k of corpus.cases) {
      const byCtx = gate.check(k.tool, k.args, callers[k.caller])
      expect(byCtx.outcome, k.id).toBe(k.expect.outcome)
      expect(gate.check(k.tool, k.args, prepared[k.caller]), k.id).toEqual(byCtx)
      expect(await gate.checkAsync(k.tool, k.args, prepared[k.caller]), k.id).toEqual(byCtx)
    }
  })

  it('answers a turn, a tool list and a stream as the same context does', () => {
    const dev = callers.developer
    const caller = gate.caller(dev)
    const completion = JSON.stringify({
      id: 'c1', object: 'chat.completion', created: 1, model: 'm',
      choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [
        { id: 'a', type: 'function', function: { name: 'get_file_contents', arguments: '{"owner":"o","repo":"r"}' } },
        { id: 'b', type: 'function', function: { name: 'list_issues', arguments: '{"owner":"o","repo":"r","labels":"bug"}' } },
        { id: 'c', type: 'function', function: { name: 'merge_pull_request', arguments: '{"owner":"o","repo":"r","pullNumber":1}' } },
      ] } }],
    })
    const byCtx = gate.guard(completion, { dialect: 'openai', ...dev })
    expect(byCtx.calls.map((c) => c.outcome)).toEqual(['repaired', 'repaired', 'denied'])
    const byCaller = gate.guard(completion, { dialect: 'openai', caller })
    expect(byCaller.calls).toEqual(byCtx.calls)
    expect(byCaller.feedback).toEqual(byCtx.feedback)
    expect(byCaller.payload).toEqual(byCtx.payload)
    const tools = corpus.config.tools.map((t) => ({ type: 'function', function: { name: t.name, parameters: t.inputSchema } }))
    const listed = gate.filterTools(tools, { dialect: 'openai', caller: gate.caller(callers.viewer) })
    expect(listed).toEqual(gate.filterTools(tools, { dialect: 'openai', ...callers.viewer }))
    expect(listed.length).toBeLessThan(tools.length)
    const s = gate.stream({ dialect: 'openai', caller })
    expect(s).toBeDefined()
  })

  it('refuses a bad context when it is prepared, not at each call', () => {
    expect(() => gate.caller({ role: ['admin'] } as never)).toThrow(ToolGateError)
    try {
      gate.caller({ context: { n: 1 } } as never)
    } catch (e) {
      expect((e as ToolGateError).code).toBe('E_CONFIG')
    }
  })

  it('is a snapshot of the context it was prepared from', () => {
    const ctx: CallContext = { subject: 'u', roles: ['viewer'] }
    const caller = gate.caller(ctx)
    ctx.roles!.push('maintainer')
    ;(ctx as { roles: string[] }).roles = ['maintainer']
    expect(gate.check('merge_pull_request', '{"owner":"o","repo":"r","pullNumber":1}', caller).reason).toBe('no_rule')
    expect(Object.isFrozen(caller.context)).toBe(true)
  })

  it('answers a context passed again and again as the first time, and sees it change (check and guard)', () => {
    const ctx: CallContext = { subject: 'u-repeat', roles: ['viewer'] }
    const merge = '{"owner":"o","repo":"r","pullNumber":1}'
    const first = gate.check('merge_pull_request', merge, ctx)
    expect(first.reason).toBe('no_rule')
    for (let i = 0; i < 4; i++) expect(gate.check('merge_pull_request', merge, ctx)).toEqual(first)
    ;(ctx as { roles: string[] }).roles = ['maintainer']
    const changed = gate.check('merge_pull_request', merge, ctx)
    expect(changed.allowed).toBe(true)
    for (let i = 0; i < 4; i++) expect(gate.check('merge_pull_request', merge, { subject: 'u-repeat', roles: ['maintainer'] })).toEqual(changed)
    const turn = JSON.stringify({
      id: 'c1', object: 'chat.completion', created: 1, model: 'm',
      choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [
        { id: 'a', type: 'function', function: { name: 'merge_pull_request', arguments: merge } },
      ] } }],
    })
    const byCaller = gate.guard(turn, { dialect: 'openai', caller: gate.caller({ subject: 'u-turn', roles: ['viewer'] }) })
    for (let i = 0; i < 4; i++) expect(gate.guard(turn, { dialect: 'openai', subject: 'u-turn', roles: ['viewer'] }).calls).toEqual(byCaller.calls)
  })

  it('refuses a bad context passed with each call every time, with the same error', () => {
    const codes = []
    for (let i = 0; i < 4; i++) {
      try {
        gate.check('get_file_contents', '{"owner":"o","repo":"r","path":"p"}', { role: ['admin'] } as never)
        codes.push('none')
      } catch (e) {
        codes.push(`${(e as ToolGateError).code}: ${(e as Error).message}`)
      }
    }
    expect(codes[0]).toMatch(/^E_CONFIG: /)
    expect(new Set(codes).size).toBe(1)
  })

  it('cannot be forged, nor given beside context fields', () => {
    expect(() => new (Caller as unknown as new (...a: unknown[]) => Caller)(Symbol('x'), {}, '', {})).toThrow(TypeError)
    const caller = gate.caller(callers.viewer)
    expect(() => gate.guard('{}', { dialect: 'openai', caller, subject: 'someone-else' })).toThrow(/caller/)
    expect(() => gate.guard('{}', { dialect: 'openai', caller: { roles: ['maintainer'] } as never })).toThrow(/Caller/)
  })
})
