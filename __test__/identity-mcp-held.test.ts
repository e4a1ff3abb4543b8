// `toolgate mcp-proxy --listen` with `identity`: a message that waits inside the proxy — a
// `tools/call` held while the proxy lists the server's tools again (after
// `notifications/tools/list_changed`), one waiting for the user's approval, one the gate is
// deciding off the event loop (state in Redis), a `tools/list` the server has not answered yet —
// is decided, confirmed, filtered and audited for the caller proven by the token of the request
// that carried it, never for the caller of a later request of the same MCP session (docs/identity.md).
//
// One user, two tokens, one MCP session: a narrow one (role `analyst`, conversation `c1`, as
// handed to an agent) and a wide one (role `admin`, conversation `c2`). The listener runs in
// process over loopback with the native gate, tokens are signed by jose and checked against a key
// set served on loopback, and the MCP server is a real process (stdio) that answers a listing only
// when the test sends it SIGUSR2, so every message is known to wait in the proxy before the other
// token's message arrives (a POST's answer headers come after the proxy has taken its message).
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createCallerVerifier } from '../src-ts/identity'
import { listenMcpHttp, type McpHttpListener } from '../src-ts/proxy/mcp/http'
import type { ToolGateConfig } from '../src-ts/types'
import { AUDIENCE, ISSUER, issuerKey, sign, startJwks, type IssuerKey, type JwksServer } from './helpers/jwks'
import { redisCommand, startRedis, type TestRedis } from './helpers/redis'

const T = 60_000

// argv: <pid file> <ran file>. `test/relist`: the server says its tools changed (the proxy lists
// them again and holds the client's messages) and answers that next listing only on SIGUSR2;
// `test/slow_list`: the next `tools/list` (the client's) is answered only on SIGUSR2. Every call
// the server runs is appended to the ran file.
const SERVER = `
const fs = require('fs')
const [PIDS, RAN] = process.argv.slice(1)
fs.appendFileSync(PIDS, process.pid + '\\n')
const rl = require('readline').createInterface({ input: process.stdin })
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n')
const obj = { type: 'object', properties: { id: { type: 'string' } } }
const TOOLS = ['read_report', 'delete_report', 'write_report'].map((name) => ({ name, inputSchema: obj }))
let slow = false
const waiting = []
process.on('SIGUSR2', () => { for (const answer of waiting.splice(0)) answer() })
rl.on('line', (line) => {
  const m = JSON.parse(line)
  if (!m.method || !('id' in m)) return
  if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: { listChanged: true } }, serverInfo: { name: 'reports', version: '1' } } })
  else if (m.method === 'tools/list') {
    const answer = () => send({ jsonrpc: '2.0', id: m.id, result: { tools: TOOLS } })
    if (slow) { slow = false; waiting.push(answer) } else answer()
  } else if (m.method === 'test/relist') {
    slow = true
    send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })
    send({ jsonrpc: '2.0', id: m.id, result: {} })
  } else if (m.method === 'test/slow_list') {
    slow = true
    send({ jsonrpc: '2.0', id: m.id, result: {} })
  } else if (m.method === 'tools/call') {
    fs.appendFileSync(RAN, m.params.name + ' ' + m.params.arguments.id + '\\n')
    send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'ran ' + m.params.name + ' ' + m.params.arguments.id }] } })
  } else send({ jsonrpc: '2.0', id: m.id, result: {} })
})
`

type Msg = Record<string, unknown>
interface AuditRecord {
  type: string
  tool?: string
  callId?: string
  step?: string
  outcome?: string
  sub?: string
  roles?: string[]
  session?: string
}

const VERSION = '2025-11-25'
const INIT = (elicitation: boolean) => ({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: VERSION, capabilities: elicitation ? { elicitation: {} } : {}, clientInfo: { name: 'raw', version: '1' } } })
const call = (id: number, name: string, arg: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { id: arg } } })
/** Any later message of the session: a notification (answered 202 at once). */
const NUDGE = { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'nudge', progress: 1 } }
/** The text of a tool result, or the error. */
const said = (m: Msg | undefined) => {
  if (m === undefined) return 'no answer'
  if (m.error !== undefined) return `error: ${(m.error as { message: string }).message}`
  const r = m.result as { content?: { text: string }[]; isError?: boolean }
  return `${r.isError === true ? 'refused: ' : ''}${r.content?.[0]?.text ?? JSON.stringify(r)}`
}

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting')
    await new Promise((r) => setTimeout(r, 25))
  }
}

/** A POST whose answer may stream for a while: resolves once the listener answered its headers (the proxy has taken the message). */
async function post(url: string, token: string, body: unknown, o: { sid?: string; conversation?: string } = {}) {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` }
  if (o.sid !== undefined) Object.assign(headers, { 'mcp-session-id': o.sid, 'mcp-protocol-version': VERSION })
  if (o.conversation !== undefined) headers['x-toolgate-session'] = o.conversation
  const r = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(20_000) })
  let text = ''
  const done = (async () => {
    const decoder = new TextDecoder()
    for await (const chunk of r.body as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk, { stream: true })
  })().catch(() => {})
  const messages = () =>
    (r.headers.get('content-type') ?? '').startsWith('text/event-stream')
      ? text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as Msg)
      : text === '' ? [] : [JSON.parse(text) as Msg]
  return {
    status: r.status,
    sid: r.headers.get('mcp-session-id') ?? undefined,
    messages,
    /** The answer to request `id` (waits for the whole stream). */
    answer: async (id: number) => {
      await done
      return messages().find((m) => m.id === id && m.method === undefined)
    },
  }
}

let dir: string
let key: IssuerKey
let jwks: JwksServer
let narrow: string
let wide: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-identity-mcp-held-'))
  key = await issuerKey('EdDSA')
  jwks = await startJwks([key.jwk])
  // one user, alice: an agent's narrow token and her own wide one
  narrow = await sign(key, { roles: ['analyst'] }, { sub: 'alice' })
  wide = await sign(key, { roles: ['admin'] }, { sub: 'alice' })
}, T)

afterAll(async () => {
  await jwks?.close()
  rmSync(dir, { recursive: true, force: true })
})

const POLICY: ToolGateConfig['policy'] = {
  rules: [
    { effect: 'allow', roles: ['analyst'], tools: ['read_report', 'write_report'] },
    { effect: 'allow', roles: ['admin'], tools: ['delete_report', 'write_report'] },
  ],
}

/** A listener with identity in front of {@link SERVER} (one process per MCP session), auditing to its own file. */
async function listen(name: string, extra: Partial<ToolGateConfig> = {}) {
  const audit = join(dir, `${name}-audit.jsonl`)
  const pids = join(dir, `${name}-pids`)
  const ran = join(dir, `${name}-ran`)
  writeFileSync(pids, '')
  const config = {
    tools: [{ name: 'read_report' }, { name: 'delete_report' }, { name: 'write_report', writes: true }],
    policy: POLICY,
    audit: { jsonl: audit },
    ...extra,
  } as ToolGateConfig
  const logs: string[] = []
  const identity = await createCallerVerifier({ issuer: ISSUER, audience: AUDIENCE, jwksUrl: jwks.url })
  const listener: McpHttpListener = await listenMcpHttp({
    host: '127.0.0.1',
    port: 0,
    maxMessageBytes: 1 << 20,
    allowedOrigins: [],
    identity,
    config,
    filterList: true,
    log: (l) => logs.push(l),
    upstream: { command: [process.execPath, '-e', SERVER, pids, ran] },
  })
  /** Opens a session with the narrow token (the owner is alice either way); answers its id and its server's pid. */
  const open = async (elicitation = false) => {
    const init = await post(listener.url, narrow, INIT(elicitation))
    expect(init.status).toBe(200)
    await init.answer(0)
    const sid = init.sid!
    expect((await post(listener.url, narrow, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sid })).status).toBe(202)
    const pid = Number(readFileSync(pids, 'utf8').trim().split('\n').at(-1))
    // the proxy's first listing is in (a ping goes through only once it is)
    expect(said(await (await post(listener.url, narrow, { jsonrpc: '2.0', id: 1, method: 'ping' }, { sid })).answer(1))).toBe('{}')
    return { sid, pid }
  }
  const records = (): AuditRecord[] => (existsSync(audit) ? readFileSync(audit, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as AuditRecord) : [])
  const decisions = (tool: string) => records().filter((r) => r.type === 'decision' && r.tool === tool)
  const runs = () => (existsSync(ran) ? readFileSync(ran, 'utf8').trim().split('\n').filter(Boolean) : [])
  return { listener, logs, open, records, decisions, runs }
}

const NARROW = { sub: 'alice', roles: ['analyst'], session: '["alice","c1"]' }
const WIDE = { sub: 'alice', roles: ['admin'], session: '["alice","c2"]' }
/** Who a record was decided for. */
const caller = (r: AuditRecord | undefined) => r && { sub: r.sub, roles: r.roles, session: r.session }

describe('mcp-proxy --listen with identity: a message that waits is decided for its own token', () => {
  it('calls held while the proxy lists the tools again are each decided and audited for the token that sent them, not a later request’s', async () => {
    const l = await listen('held')
    try {
      const { sid, pid } = await l.open()
      const url = l.listener.url
      // the server says its tools changed: the proxy lists them again and holds what follows
      expect(said(await (await post(url, narrow, { jsonrpc: '2.0', id: 2, method: 'test/relist' }, { sid })).answer(2))).toBe('{}')
      const byAgent = await post(url, narrow, call(3, 'delete_report', 'r3'), { sid, conversation: 'c1' })
      const byAlice = await post(url, wide, call(4, 'delete_report', 'r4'), { sid, conversation: 'c2' })
      expect([byAgent.status, byAlice.status]).toEqual([200, 200])
      // the last message before the listing ends carries the wide token, then the narrow one's
      // call would be decided as admin if the session kept one caller for everything
      expect((await post(url, wide, NUDGE, { sid, conversation: 'c2' })).status).toBe(202)
      expect(byAgent.messages()).toEqual([]) // both still held
      process.kill(pid, 'SIGUSR2')

      expect(said(await byAgent.answer(3))).toMatch(/^refused: Not permitted: no policy rule allows `delete_report`/)
      expect(said(await byAlice.answer(4))).toBe('ran delete_report r4')
      expect(l.runs()).toEqual(['delete_report r4'])
      await until(() => l.decisions('delete_report').length === 2)
      const [d3, d4] = [l.decisions('delete_report').find((r) => r.callId === '3'), l.decisions('delete_report').find((r) => r.callId === '4')]
      expect({ outcome: d3?.outcome, ...caller(d3) }).toEqual({ outcome: 'denied', ...NARROW })
      expect({ outcome: d4?.outcome, ...caller(d4) }).toEqual({ outcome: 'passed', ...WIDE })
    } finally {
      await l.listener.close()
    }
  }, T)

  it('a tools/list the server has not answered yet is filtered for the token that asked, not a later request’s', async () => {
    const l = await listen('list')
    try {
      const { sid, pid } = await l.open()
      const url = l.listener.url
      expect(said(await (await post(url, narrow, { jsonrpc: '2.0', id: 2, method: 'test/slow_list' }, { sid })).answer(2))).toBe('{}')
      const list = await post(url, narrow, { jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} }, { sid, conversation: 'c1' })
      expect((await post(url, wide, NUDGE, { sid, conversation: 'c2' })).status).toBe(202)
      process.kill(pid, 'SIGUSR2')
      const answer = await list.answer(3)
      expect(said(answer)).not.toMatch(/^error/)
      const tools = (answer?.result as { tools: { name: string }[] } | undefined)?.tools.map((t) => t.name)
      expect(tools).toEqual(['read_report', 'write_report'])
    } finally {
      await l.listener.close()
    }
  }, T)

  it('a held call needing approval is asked and confirmed for the token that sent it, whoever approves', async () => {
    const l = await listen('approval')
    try {
      const { sid, pid } = await l.open(true)
      const url = l.listener.url
      expect(said(await (await post(url, narrow, { jsonrpc: '2.0', id: 2, method: 'test/relist' }, { sid })).answer(2))).toBe('{}')
      const write = await post(url, narrow, call(3, 'write_report', 'w3'), { sid, conversation: 'c1' })
      expect((await post(url, wide, NUDGE, { sid, conversation: 'c2' })).status).toBe(202)
      process.kill(pid, 'SIGUSR2')
      // the question comes on the call's own stream; the answer is sent with the wide token
      await until(() => write.messages().some((m) => m.method === 'elicitation/create'))
      const ask = write.messages().find((m) => m.method === 'elicitation/create')!
      expect((await post(url, wide, { jsonrpc: '2.0', id: ask.id, result: { action: 'accept', content: {} } }, { sid, conversation: 'c2' })).status).toBe(202)
      expect(said(await write.answer(3))).toBe('ran write_report w3')
      await until(() => l.decisions('write_report').length === 2)
      const [first, confirmed] = l.decisions('write_report')
      expect({ outcome: first?.outcome, ...caller(first) }).toEqual({ outcome: 'confirm', ...NARROW })
      expect({ step: confirmed?.step, outcome: confirmed?.outcome, ...caller(confirmed) }).toEqual({ step: 'confirm', outcome: 'passed', ...NARROW })
    } finally {
      await l.listener.close()
    }
  }, T)
})

describe('mcp-proxy --listen with identity and state in Redis: a call decided off the event loop', () => {
  let redis: TestRedis
  beforeAll(async () => {
    redis = await startRedis()
  }, T)
  afterAll(async () => {
    await redis?.stop()
  })

  it('is asked and confirmed for the token that sent it, though another token’s message arrives while the gate decides', async () => {
    const l = await listen('redis', { state: { redis: { url: redis.url, keyPrefix: `held${process.pid}:`, timeoutMs: 5_000 } } })
    try {
      const { sid } = await l.open(true)
      const url = l.listener.url
      // Redis stops answering for a while: the gate's decision waits for it
      expect(await redisCommand(redis.port, 'CLIENT', 'PAUSE', '1500', 'ALL')).toMatch(/^\+OK/)
      const write = await post(url, narrow, call(3, 'write_report', 'w3'), { sid, conversation: 'c1' })
      expect((await post(url, wide, NUDGE, { sid, conversation: 'c2' })).status).toBe(202)
      expect(write.messages()).toEqual([]) // still being decided
      await until(() => write.messages().some((m) => m.method === 'elicitation/create'))
      const ask = write.messages().find((m) => m.method === 'elicitation/create')!
      expect((await post(url, wide, { jsonrpc: '2.0', id: ask.id, result: { action: 'accept', content: {} } }, { sid, conversation: 'c2' })).status).toBe(202)
      expect(said(await write.answer(3))).toBe('ran write_report w3')
      await until(() => l.decisions('write_report').length === 2)
      const [first, confirmed] = l.decisions('write_report')
      expect({ outcome: first?.outcome, ...caller(first) }).toEqual({ outcome: 'confirm', ...NARROW })
      expect({ step: confirmed?.step, outcome: confirmed?.outcome, ...caller(confirmed) }).toEqual({ step: 'confirm', outcome: 'passed', ...NARROW })
    } finally {
      await l.listener.close()
    }
  }, T)
})
