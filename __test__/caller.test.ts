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

// A context object passed call after call is decided through the caller prepared from its text
// while it holds what it held (src-ts/context-memo.ts). Attacker's view: a host that reuses one
// object and changes it between calls must never get the old caller's decision.
describe('a context object passed again and again', () => {
  const merge = '{"owner":"o","repo":"r","pullNumber":1}'
  const conditional = new ToolGate({
    tools: [{ name: 'export_report', inputSchema: { type: 'object' } }],
    policy: { rules: [{ effect: 'allow', tools: ['export_report'], when: "identity.org.tier == 'gold' and context.region == 'eu'" }] },
  } as never)
  const exportCall = (ctx: object) => conditional.check('export_report', '{}', ctx as CallContext).allowed
  /** Enough calls for the object to be remembered (its text seen, then the object seen twice). */
  const warm = (f: () => unknown) => {
    for (let i = 0; i < 4; i++) f()
  }

  it.each([
    ['a role pushed into its array', (c: { roles: string[] }) => c.roles.push('maintainer')],
    ['a role written over in place', (c: { roles: string[] }) => { c.roles[0] = 'maintainer' }],
    ['its roles replaced', (c: { roles: string[] }) => { c.roles = ['maintainer'] }],
    ['its roles given a getter', (c: { roles: string[] }) => Object.defineProperty(c, 'roles', { get: () => ['maintainer'], enumerable: true })],
    ['a toJSON added', (c: { roles: string[] }) => Object.assign(c, { toJSON: () => ({ subject: 'u-memo', roles: ['maintainer'] }) })],
  ])('sees %s (denied, then allowed)', (_what, change) => {
    const ctx = { subject: 'u-memo', roles: ['viewer'] }
    warm(() => expect(gate.check('merge_pull_request', merge, ctx).reason).toBe('no_rule'))
    change(ctx)
    for (let i = 0; i < 3; i++) expect(gate.check('merge_pull_request', merge, ctx).allowed).toBe(true)
  })

  it.each([
    ['its roles deleted', (c: { roles?: string[] }) => { delete c.roles }],
    ['its roles set to undefined', (c: { roles?: string[] }) => { c.roles = undefined }],
    ['its role array emptied', (c: { roles?: string[] }) => { c.roles!.length = 0 }],
  ])('sees %s (allowed, then denied)', (_what, change) => {
    const ctx: { subject: string; roles?: string[] } = { subject: 'u-memo-2', roles: ['maintainer'] }
    warm(() => expect(gate.check('merge_pull_request', merge, ctx).allowed).toBe(true))
    change(ctx)
    for (let i = 0; i < 3; i++) expect(gate.check('merge_pull_request', merge, ctx).allowed).toBe(false)
  })

  it('sees an array element made undefined (JSON null: the context is refused, as on first sight)', () => {
    const ctx: { subject: string; roles: (string | undefined)[] } = { subject: 'u-memo-3', roles: ['maintainer'] }
    warm(() => expect(gate.check('merge_pull_request', merge, ctx as CallContext).allowed).toBe(true))
    ctx.roles[0] = undefined
    for (let i = 0; i < 3; i++) expect(() => gate.check('merge_pull_request', merge, ctx as CallContext)).toThrow(/roles\[0\]/)
  })

  it('sees a change deep inside identity and context, and a key added', () => {
    const ctx: { subject: string; identity: { org: { tier: string } }; context: { region: string }; purpose?: string } = {
      subject: 'u-deep',
      identity: { org: { tier: 'gold' } },
      context: { region: 'eu' },
    }
    warm(() => expect(exportCall(ctx)).toBe(true))
    ctx.identity.org.tier = 'silver'
    expect(exportCall(ctx)).toBe(false)
    warm(() => expect(exportCall(ctx)).toBe(false))
    ctx.identity.org.tier = 'gold'
    expect(exportCall(ctx)).toBe(true)
    ctx.context.region = 'us'
    expect(exportCall(ctx)).toBe(false)
    ctx.context.region = 'eu'
    warm(() => expect(exportCall(ctx)).toBe(true))
    // a key the core refuses, added to a remembered object, is refused as on first sight
    Object.assign(ctx, { role: ['admin'] })
    expect(() => exportCall(ctx)).toThrow(/role/)
  })

  it('answers a remembered object exactly as a fresh copy of it', () => {
    for (const k of corpus.cases) {
      const ctx = { ...callers[k.caller] }
      const fresh = gate.check(k.tool, k.args, { ...ctx })
      warm(() => expect(gate.check(k.tool, k.args, ctx), k.id).toEqual(fresh))
    }
  })
})

// Differential: random context objects, each passed again and again while changed at random in
// place (any depth, any key), always decided as a fresh JSON copy of the object is. Seeded.
describe('a context object changed at random between calls', () => {
  const ruled = new ToolGate({
    tools: [{ name: 'act', inputSchema: { type: 'object' } }],
    policy: {
      rules: [
        { effect: 'deny', tools: ['act'], when: "identity.blocked or context.region == 'cn'" },
        { effect: 'allow', tools: ['act'], roles: ['admin'] },
        { effect: 'allow', tools: ['act'], when: "identity.org.tier == 'gold' and purpose == 'audit'" },
        { effect: 'allow', tools: ['act'], subjects: ['u-1'], when: "context.region == 'eu'" },
      ],
    },
  } as never)
  let seed = 20261203
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed % n
  }
  const pick = <T,>(xs: readonly T[]): T => xs[rnd(xs.length)]
  const decide = (ctx: object) => {
    try {
      const v = ruled.check('act', '{}', ctx as CallContext)
      return `${v.outcome}/${v.reason ?? ''}`
    } catch (e) {
      return `throws ${(e as ToolGateError).code}`
    }
  }
  const mutations: ((c: Record<string, unknown>) => void)[] = [
    (c) => { c.subject = pick(['u-1', 'u-2', undefined]) },
    (c) => { c.roles = pick([['admin'], ['viewer'], [], undefined]) },
    (c) => { if (Array.isArray(c.roles)) (c.roles as string[]).push(pick(['admin', 'viewer'])) },
    (c) => { if (Array.isArray(c.roles) && c.roles.length > 0) (c.roles as string[])[0] = pick(['admin', 'viewer']) },
    (c) => { if (Array.isArray(c.roles)) (c.roles as string[]).length = 0 },
    (c) => { c.purpose = pick(['audit', 'ops', undefined]) },
    (c) => { delete c[pick(['subject', 'roles', 'purpose', 'identity', 'context'])] },
    (c) => { c.identity = { org: { tier: pick(['gold', 'silver']) }, blocked: pick([true, false]) } },
    (c) => { const id = c.identity as { org?: { tier?: string } } | undefined; if (id?.org) id.org.tier = pick(['gold', 'silver', 'Gold']) },
    (c) => { const id = c.identity as { blocked?: unknown } | undefined; if (id) id.blocked = pick([true, false, null, undefined]) },
    (c) => { c.context = { region: pick(['eu', 'us', 'cn']) } },
    (c) => { const x = c.context as { region?: string } | undefined; if (x) x.region = pick(['eu', 'us', 'cn']) },
    (c) => { c.session = pick(['s-1', 's-2']) },
  ]
  it('decides every call as a fresh copy of the object would be decided (2,000 calls)', () => {
    for (let obj = 0; obj < 100; obj++) {
      const ctx: Record<string, unknown> = { subject: pick(['u-1', 'u-2']), roles: [pick(['admin', 'viewer'])], context: { region: 'eu' }, identity: { org: { tier: 'gold' } } }
      for (let step = 0; step < 20; step++) {
        if (rnd(3) === 0) pick(mutations)(ctx)
        const copy = JSON.parse(JSON.stringify(ctx)) as object
        expect(decide(ctx), `object ${obj}, step ${step}: ${JSON.stringify(ctx)}`).toBe(decide(copy))
      }
    }
  })
})
