// Adversarial: plugged engines never let through what they could not judge. A Cedar engine (the
// real @cedar-policy/cedar-wasm) that cannot hold a value exactly denies instead of dropping it
// (a `forbid` guarded by `has` failed open on a dropped integer), and the async methods enforce
// `engineTimeoutMs` on an engine that blocks the event loop (its timer never fires, so its late
// `allow` won the race). Through the real native addon.
import { describe, expect, it } from 'vitest'

import { cedarEngine } from '../../src-ts/engines/cedar'
import { ToolGate, type EngineRequest, type PolicyEngine, type ToolGateConfig } from '../../src-ts/index'

const config: ToolGateConfig = {
  tools: [
    { name: 'get_account', inputSchema: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] } },
    { name: 'pay', inputSchema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] }, writes: true },
  ],
  policy: { rules: [{ effect: 'allow', tools: ['get_account', 'pay'], confirm: false }] },
}

// a forbid written the careful way (`has` first), on an id past 2^53: Cedar's Long holds it exactly
const PROTECTED = 9007199254740992 // 2^53: JavaScript cannot tell it from 2^53 + 1
const POLICIES = `
permit(principal, action, resource);
forbid(principal, action, resource) when { context.arguments has id && context.arguments.id == ${PROTECTED} };
forbid(principal, action, resource) when { context has identity && context.identity has account && context.identity.account == ${PROTECTED} };
`

const request = (args: Record<string, unknown>, identity?: Record<string, unknown>): EngineRequest => ({
  tool: 'get_account',
  action: 'get_account',
  arguments: args,
  context: { subject: 'ana', ...(identity === undefined ? {} : { identity }) },
  rules: 'allow',
})

describe('Cedar never drops a value it cannot hold exactly', () => {
  const engine = cedarEngine({ policies: POLICIES })

  it('the engine itself: a protected id past 2^53 is refused (thrown), never dropped into a `has` that is false', () => {
    expect(engine(request({ id: 42 }))).toBe('allow')
    expect(() => engine(request({ id: PROTECTED }))).toThrow(/context\.arguments\.id is 9007199254740992, which Cedar cannot hold exactly \(an integer beyond 2\^53 - 1\)/)
    expect(() => engine(request({ id: 42 }, { account: PROTECTED }))).toThrow(/context\.identity\.account/)
    for (const bad of [0.5, Number.NaN, null]) expect(() => engine(request({ id: 1, note: bad }))).toThrow(/the call is denied/)
    expect(() => engine(request({ id: 1, owner: { __entity: { type: 'User', id: 'admin' } } }))).toThrow(/__entity/)
  })

  it('through the gate: the model’s 9007199254740993 and a host identity past 2^53 are denied, and onEngineError is told', () => {
    const told: string[] = []
    const gate = new ToolGate(config, { engines: [engine], engineTimeoutMs: 5_000, onEngineError: (e) => void told.push((e as Error).message) })
    expect(gate.check('get_account', '{"id":42}', { subject: 'ana' }).allowed).toBe(true)
    // the model's text holds 2^53 + 1; JSON.parse would hand the tool (and Cedar) 2^53
    const v = gate.check('get_account', '{"id":9007199254740993}', { subject: 'ana' })
    expect(v.allowed).toBe(false)
    // the core refuses it as bad_arguments, or (an older core) the engine denies it
    expect(['bad_arguments', 'engine']).toContain(v.reason)
    const w = gate.check('get_account', '{"id":7}', { subject: 'ana', identity: { account: 2 ** 60 } })
    expect([w.allowed, w.reason]).toEqual([false, 'engine'])
    expect(told.at(-1)).toMatch(/context\.identity\.account is 1152921504606847000/)
  })
})

/** An engine that blocks the event loop for `ms` when `slow.on`, then answers `allow`. */
function blocking(ms: number, slow: { on: boolean }): PolicyEngine {
  return () => {
    if (slow.on) {
      const end = performance.now() + ms
      while (performance.now() < end) {
        // busy: no timer can fire
      }
    }
    return 'allow'
  }
}

describe('engineTimeoutMs holds in the async methods for an engine that blocks the event loop', () => {
  it('checkAsync, guardAsync and confirmAsync deny a late allow and tell onEngineError', async () => {
    const slow = { on: true }
    const told: string[] = []
    const gate = new ToolGate(config, { engines: [blocking(150, slow)], engineTimeoutMs: 40, onEngineError: (e) => void told.push((e as Error).message) })

    const v = await gate.checkAsync('get_account', '{"id":1}', { subject: 'ana' })
    expect([v.allowed, v.reason]).toEqual([false, 'engine'])
    expect(told.at(-1)).toMatch(/^engine took \d+\.\d ms, over engineTimeoutMs 40$/)

    const turn = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_account', arguments: '{"id":1}' } }] }
    const r = await gate.guardAsync(turn, { dialect: 'openai', subject: 'ana' })
    expect(r.calls.map((c) => [c.allowed, c.reason])).toEqual([[false, 'engine']])
    expect(told).toHaveLength(2)

    // a confirmation asked while the engine is fast, confirmed while it blocks
    const writes = new ToolGate({ ...config, policy: { rules: [{ effect: 'allow', tools: ['pay'] }] } }, { engines: [blocking(150, slow)], engineTimeoutMs: 40, onEngineError: (e) => void told.push((e as Error).message) })
    slow.on = false
    const asked = await writes.checkAsync('pay', '{"amount":5}', { subject: 'ana' })
    expect(asked.outcome).toBe('confirm')
    slow.on = true
    const confirmed = await writes.confirmAsync(asked.confirmation!.token, { subject: 'ana' })
    expect([confirmed.allowed, confirmed.reason]).toEqual([false, 'engine'])
    expect(told).toHaveLength(3)

    // the same engine in time: allowed
    slow.on = false
    expect((await gate.checkAsync('get_account', '{"id":1}', { subject: 'ana' })).allowed).toBe(true)
  })

  it('an async engine that answers after the timer denied is told once, and still denies', async () => {
    const told: string[] = []
    const late: PolicyEngine = () => new Promise((resolve) => setTimeout(() => resolve('allow'), 80))
    const gate = new ToolGate(config, { engines: [late], engineTimeoutMs: 20, onEngineError: (e) => void told.push((e as Error).message) })
    const v = await gate.checkAsync('get_account', '{"id":1}', { subject: 'ana' })
    expect([v.allowed, v.reason]).toEqual([false, 'engine'])
    await new Promise((r) => setTimeout(r, 120))
    expect(told).toEqual(['engine did not answer within engineTimeoutMs 20'])
  })
})

describe('a turn is finished with the engines’ answers to exactly the calls they were asked about', () => {
  // `guard` on a gate with engines decides in two steps: the built-ins decide every call up to the
  // engines (the core keeps that turn), the engines answer the calls that reached them, then only
  // those calls run the rest of the pipeline with the answers. A call the first step refused was
  // not put to the engines; if the rules change between the steps (a `now` condition running out
  // while the engines think), that call keeps its refusal: it never reaches the engines' stage
  // with an answer nobody gave.
  const turn = (names: string[]) => ({
    role: 'assistant',
    content: null,
    tool_calls: names.map((name, i) => ({ id: `c${i}`, type: 'function', function: { name, arguments: '{"id":1}' } })),
  })
  const gateUntil = (until: number, engine: PolicyEngine) =>
    new ToolGate(
      {
        tools: [
          { name: 'get_account', inputSchema: { type: 'object', properties: { id: { type: 'integer' } } } },
          { name: 'close_account', inputSchema: { type: 'object', properties: { id: { type: 'integer' } } } },
        ],
        policy: {
          rules: [
            { effect: 'allow', tools: ['get_account', 'close_account'] },
            { effect: 'deny', tools: ['close_account'], when: `now < '${new Date(until).toISOString()}'` },
          ],
        },
      },
      { engines: [engine], engineTimeoutMs: 5_000 },
    )

  it('guardAsync: a call refused by a rule that runs out while the engines answer keeps its refusal', async () => {
    const asked: string[] = []
    // the engine allows reads, refuses everything else, and takes its time
    const engine: PolicyEngine = (r) => {
      asked.push(r.tool)
      return new Promise((resolve) => setTimeout(() => resolve(r.tool === 'get_account' ? 'allow' : 'deny'), 250))
    }
    const gate = gateUntil(Date.now() + 120, engine)
    const r = await gate.guardAsync(turn(['get_account', 'close_account']), { dialect: 'openai', subject: 'ana' })
    expect(asked).toEqual(['get_account'])
    expect(r.calls[0].allowed).toBe(true)
    // the engine was never asked about close_account: it must not run
    expect([r.calls[1].allowed, r.calls[1].reason]).toEqual([false, 'deny_rule'])
    expect(r.calls[1].message).toMatch(/policy denies `close_account`/)
    expect(r.allowed.map((c) => c.tool)).toEqual(['get_account'])
  })

  it('guard (sync engine): the same when the rule runs out during a slow synchronous engine', () => {
    const asked: string[] = []
    const engine: PolicyEngine = (r) => {
      asked.push(r.tool)
      const end = performance.now() + 250
      while (performance.now() < end) {
        // a slow engine
      }
      return r.tool === 'get_account' ? 'allow' : 'deny'
    }
    const gate = gateUntil(Date.now() + 120, engine)
    const r = gate.guard(turn(['get_account', 'close_account']), { dialect: 'openai', subject: 'ana' })
    expect(asked).toEqual(['get_account'])
    expect(r.calls.map((c) => [c.allowed, c.reason])).toEqual([
      [true, undefined],
      [false, 'deny_rule'],
    ])
  })
})

describe('a gate with engines records every final decision once, those refused before the engines too', () => {
  // The first step of a gate with engines records nothing (the second decides again); a call it
  // refuses is the host's answer all the same, and used to go unrecorded: a deny rule, an unknown
  // tool, bad arguments, a bad confirmation token, a turn refused whole — exactly what an
  // operator looks for in the trail after a prompt injection.
  const audited = () => {
    const lines: string[] = []
    const gate = new ToolGate(
      {
        tools: [
          { name: 'get_account', inputSchema: { type: 'object', properties: { id: { type: 'integer' } } } },
          { name: 'close_account', inputSchema: { type: 'object', properties: { id: { type: 'integer' } } } },
        ],
        policy: { rules: [{ effect: 'allow', tools: ['get_account'] }, { effect: 'deny', tools: ['close_account'] }] },
        audit: {},
      },
      { engines: [() => 'allow'], onAudit: (l) => void lines.push(l) },
    )
    const records = async () => {
      await gate.flush()
      return lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => r.type !== 'open')
    }
    return { gate, records }
  }
  const turn = (calls: [string, string][]) => ({
    role: 'assistant',
    content: null,
    tool_calls: calls.map(([name, args], i) => ({ id: `c${i}`, type: 'function', function: { name, arguments: args } })),
  })

  it('check and confirm: refusals of the first step are recorded, an engine-decided call once', async () => {
    const { gate, records } = audited()
    expect(gate.check('close_account', '{"id":1}', { subject: 'ana' }).reason).toBe('deny_rule')
    expect(gate.check('drop_tables', '{}', { subject: 'ana' }).reason).toBe('unknown_tool')
    expect(gate.check('get_account', '{"id":"x"}', { subject: 'ana' }).reason).toBe('invalid')
    expect(gate.check('get_account', '{"id":1}', { subject: 'ana' }).outcome).toBe('passed')
    expect((await gate.checkAsync('close_account', '{"id":2}', { subject: 'ana' })).reason).toBe('deny_rule')
    expect(gate.confirm('not-a-token', { subject: 'ana' }).reason).toBe('token_invalid')
    const r = await records()
    expect(r.map((x) => [x.type, x.tool, x.outcome])).toEqual([
      ['decision', 'close_account', 'denied'],
      ['decision', 'drop_tables', 'rejected'],
      ['decision', 'get_account', 'rejected'],
      ['decision', 'get_account', 'passed'],
      ['decision', 'close_account', 'denied'],
      ['decision', '', 'denied'],
    ])
  })

  it('guard: a turn refused at the first step is recorded call by call; a turn the engines finish, once per call; a turn refused whole, once', async () => {
    const { gate, records } = audited()
    gate.guard(turn([['close_account', '{"id":1}'], ['drop_tables', '{}']]), { dialect: 'openai', subject: 'ana' })
    gate.guard(turn([['get_account', '{"id":1}'], ['close_account', '{"id":2}']]), { dialect: 'openai', subject: 'ana' })
    await gate.guardAsync(turn([['close_account', '{"id":3}']]), { dialect: 'openai', subject: 'ana' })
    expect(() => gate.guard({ role: 'assistant', tool_calls: 5 }, { dialect: 'openai', subject: 'ana' })).toThrow(/tool_calls/)
    const r = await records()
    expect(r.map((x) => [x.type, x.tool ?? x.code, x.outcome])).toEqual([
      ['decision', 'close_account', 'denied'],
      ['decision', 'drop_tables', 'rejected'],
      ['decision', 'get_account', 'passed'],
      ['decision', 'close_account', 'denied'],
      ['decision', 'close_account', 'denied'],
      ['turn_error', 'E_PAYLOAD', undefined],
    ])
  })
})
