// State belongs to the caller's session, not to a gate instance (issue: "enforce exactly what was
// decided", items 5 and 8): gates the proxies rebuild or evict keep every session's taint, loop
// counts and confirmation tokens, through the real native binding.
import { describe, expect, it } from 'vitest'

import { GateState, ToolGate, ToolGateError, type ToolGateConfig } from '../../src-ts/index'
import { GateCache } from '../../src-ts/proxy/http/gates'
import { ToolPins } from '../../src-ts/proxy/mcp/pins'
import { McpToolSet } from '../../src-ts/proxy/mcp/tools'

const config: ToolGateConfig = {
  labels: ['public', 'secret'],
  loop: { maxIdentical: 2, windowSeconds: 60 },
  tools: [
    { name: 'read_secret', output: { label: 'secret' } },
    { name: 'post_webhook', sink: { maxLabel: 'public' } },
    { name: 'send_email', writes: true },
  ],
}
const who = { subject: 'mallory', session: 's1' }

describe('GateState', () => {
  it('is shared by gates built with it: taint, loop counts and tokens carry over', () => {
    const state = new GateState({ maxSessions: 100 })
    const a = new ToolGate(config, { state })
    expect(a.check('read_secret', {}, who).allowed).toBe(true)
    const b = new ToolGate({ ...config, tools: [...config.tools, { name: 'new_tool' }] }, { state })
    expect(b.check('post_webhook', {}, who)).toMatchObject({ allowed: false, reason: 'taint' })
    // loop: two identical calls at a, the third at b is a loop
    expect(a.check('read_secret', { q: 1 }, who).allowed).toBe(true)
    expect(a.check('read_secret', { q: 1 }, who).allowed).toBe(true)
    expect(b.check('read_secret', { q: 1 }, who)).toMatchObject({ allowed: false, reason: 'loop' })
    // a token issued by a is confirmed at b, exactly once
    const token = a.check('send_email', { to: 'x' }, who).confirmation!.token
    expect(b.confirm(token, who)).toMatchObject({ allowed: true, tool: 'send_email', arguments: { to: 'x' } })
    expect(a.confirm(token, who)).toMatchObject({ allowed: false, reason: 'token_invalid' })
    // without the option, each gate keeps its own (the behaviour before)
    const c = new ToolGate(config)
    expect(c.check('post_webhook', {}, who).allowed).toBe(true)
  })

  it('refuses a bad bound and anything that is not a GateState', () => {
    expect(() => new GateState({ maxSessions: 0 })).toThrow(ToolGateError)
    expect(() => new ToolGate(config, { state: {} as GateState })).toThrow(/options.state/)
  })
})

describe('HTTP proxy gate cache', () => {
  it('a gate evicted by another client forgets no session taint', () => {
    const cache = new GateCache({ config, max: 2 })
    const tools = (name: string) => [{ type: 'function', function: { name, parameters: { type: 'object' } } }]
    const mine = cache.gateFor('openai', tools('lookup'))
    expect(mine.check('read_secret', {}, who).allowed).toBe(true)
    // another client forces the eviction with distinct tool lists
    for (let i = 0; i < 5; i++) cache.gateFor('openai', tools(`other_${i}`))
    const again = cache.gateFor('openai', tools('lookup'))
    expect(again).not.toBe(mine) // rebuilt
    expect(again.check('post_webhook', {}, who)).toMatchObject({ allowed: false, reason: 'taint' })
    // and the config's own gate sees it too
    expect(cache.base.check('post_webhook', {}, who)).toMatchObject({ allowed: false, reason: 'taint' })
  })
})

describe('MCP proxy tool set', () => {
  it('a tool list change (list_changed) rebuilds the gate and keeps the session taint', () => {
    const set = new McpToolSet({ config, allowlist: false, pins: new ToolPins(), log: () => undefined })
    const list = (names: string[]) => names.map((name) => ({ name, inputSchema: { type: 'object' } }))
    set.learn(list(['fetch_page']), true)
    const before = set.gate
    expect(before.check('read_secret', {}, who).allowed).toBe(true)
    set.learn(list(['fetch_page', 'brand_new_tool']), true)
    expect(set.gate).not.toBe(before)
    expect(set.gate.check('post_webhook', {}, who)).toMatchObject({ allowed: false, reason: 'taint' })
  })
})
