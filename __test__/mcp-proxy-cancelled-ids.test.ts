// Requests the client cancels (`notifications/cancelled`) while the server still holds them. The
// server may answer such a request late, or never: its id stays in use until it does (a late
// answer is dropped, never taken for a later request that reused the id), and the ids kept so
// are bounded with the requests in flight — past the bound a new request is answered with an
// error naming why and never forwarded. A hostile server that never answers cancelled requests,
// or a client that sends and cancels request after request, cannot grow the proxy's tables
// without limit, nor keep a session "busy" (never reaped as idle) forever.
//
// Peers on loopback: the listener in process (`listenMcpHttp`, a small `maxPending` so the bound
// is reached in a few requests) with raw POSTs and the official SDK client, and the built CLI over
// stdio at the default bound; behind both a stdio server that holds every `hold` call and answers
// them all — late — only when told (`notifications/release`), and logs every line it reads.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'

import { listenMcpHttp, type McpHttpListenOptions } from '../src-ts/proxy/mcp/http'
import { DEFAULT_MAX_PENDING } from '../src-ts/proxy/mcp/proxy'
import { rawMcpProxy, root } from './helpers/mcp-proxy'
import { rawMcpPost } from './helpers/mcp-raw-http'

const T = 120_000

// argv: <wire log, or ''>. `hold` calls are held; `notifications/release` answers every held call
// (in the order they came); any other request is answered at once. Cancellations are ignored.
const SERVER = `
const fs = require('fs')
const [WIRE] = process.argv.slice(1)
const rl = require('readline').createInterface({ input: process.stdin })
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n')
const obj = { type: 'object', properties: { tag: { type: 'string' } } }
const TOOLS = [{ name: 'hold', inputSchema: obj }, { name: 'echo', inputSchema: obj }]
const result = (id, text) => ({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } })
const held = []
rl.on('line', (line) => {
  if (WIRE) fs.appendFileSync(WIRE, line + '\\n')
  const m = JSON.parse(line)
  if (m.method === 'notifications/release') for (const h of held.splice(0)) send(result(h.id, 'held ' + h.params.arguments.tag))
  if (!m.method || !('id' in m)) return
  if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'holds', version: '1' } } })
  else if (m.method === 'tools/list') send({ jsonrpc: '2.0', id: m.id, result: { tools: TOOLS } })
  else if (m.method === 'tools/call' && m.params.name === 'hold') held.push(m)
  else if (m.method === 'tools/call') send(result(m.id, 'echo ' + m.params.arguments.tag))
  else send({ jsonrpc: '2.0', id: m.id, result: {} })
})
`

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-mcp-cancelled-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

type Msg = Record<string, unknown>
const line = (m: unknown) => JSON.stringify(m)
const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }
const call = (id: unknown, name: string, tag: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { tag } } })
const ping = (id: unknown) => ({ jsonrpc: '2.0', id, method: 'ping' })
const cancel = (id: unknown) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'the user stopped it' } })
const RELEASE = { jsonrpc: '2.0', method: 'notifications/release' }
/** The text of a tool result, or the error (code and message). */
const said = (m: Msg) => (m.error !== undefined ? `error ${(m.error as { code: number }).code}: ${(m.error as { message: string }).message}` : ((m.result as { content?: { text: string }[] }).content?.[0]?.text ?? JSON.stringify(m.result)))
const inFlight = (id: string) => `error -32600: Invalid Request: request id ${id} is still in flight (an id may not be reused within a session); not forwarded`
const wire = (log: string): Msg[] => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Msg) : [])
const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i)
/** The answers (not the requests or notifications) among `ms`. */
const answersIn = (ms: Msg[]) => ms.filter((m) => m.method === undefined && ('result' in m || 'error' in m))

async function until(cond: () => boolean, ms = 10_000): Promise<boolean> {
  const end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) return false
    await new Promise((r) => setTimeout(r, 25))
  }
  return true
}

/** A POST whose answer stream stays open (a request the server holds): what came so far, and a way to hang up. */
function openPost(url: string, body: string, sid: string) {
  const ac = new AbortController()
  let text = ''
  const done = fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' }, body, signal: ac.signal })
    .then(async (r) => {
      const decoder = new TextDecoder()
      for await (const chunk of r.body as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk, { stream: true })
    })
    .catch(() => {})
  return {
    messages: () => text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as Msg),
    hangUp: async () => {
      ac.abort()
      await done
    },
  }
}

async function listen(o: Partial<McpHttpListenOptions>, log: string) {
  const logs: string[] = []
  const l = await listenMcpHttp({ host: '127.0.0.1', port: 0, maxMessageBytes: 1024 * 1024, allowedOrigins: [], log: (s) => logs.push(s), upstream: { command: [process.execPath, '-e', SERVER, log] }, ...o })
  return { l, logs }
}

describe('mcp-proxy --listen: requests the client cancels', () => {
  it('cancelled ids the server never answers count against the bound: past it a request is refused -32001 naming why, never forwarded; late answers are dropped and free the ids', async () => {
    const log = join(dir, 'wire-http.jsonl')
    const MAX = 8
    const { l, logs } = await listen({ maxPending: MAX }, log)
    const held: ReturnType<typeof openPost>[] = []
    try {
      const init = await rawMcpPost(l.url, line(INIT))
      const sid = init.sid!
      expect((await rawMcpPost(l.url, line({ jsonrpc: '2.0', method: 'notifications/initialized' }), sid)).status).toBe(202)
      expect((await rawMcpPost(l.url, line(ping('ready')), sid)).messages.map(said)).toEqual(['{}'])

      // round 1: MAX calls the server holds, all cancelled by the client
      for (const i of range(1, MAX)) held.push(openPost(l.url, line(call(i, 'hold', `h${i}`)), sid))
      expect(await until(() => wire(log).filter((m) => m.method === 'tools/call').length === MAX)).toBe(true)
      expect((await rawMcpPost(l.url, line(range(1, MAX).map(cancel)), sid)).status).toBe(202)
      expect(await until(() => wire(log).filter((m) => m.method === 'notifications/cancelled').length === MAX)).toBe(true)

      // the server never answered them: they are still open, so the session is full
      const over = await rawMcpPost(l.url, line(ping(100)), sid)
      expect(over.status).toBe(200)
      expect(over.messages).toHaveLength(1)
      expect(over.messages[0].id).toBe(100)
      expect(said(over.messages[0])).toBe(`error -32001: toolgate: ${MAX} requests of this session are open (in flight, or cancelled and not yet answered by the server); not forwarded`)
      // a new call too: refused before the gate would forward it
      expect((await rawMcpPost(l.url, line(call(101, 'echo', 'x')), sid)).messages.map(said)).toEqual([expect.stringMatching(/^error -32001: toolgate: 8 requests of this session are open/)])
      // a cancelled id is still in use: the server may still answer it
      const reused = await rawMcpPost(l.url, line(ping(3)), sid)
      expect([reused.status, reused.messages.map(said)]).toEqual([400, [inFlight('3')]])
      expect(logs.join('\n')).toMatch(/8 requests are open \(in flight, or cancelled and not yet answered by the server\); request 100 answered with an error, not forwarded/)

      // the server answers the cancelled calls late: dropped, and their ids free again
      expect((await rawMcpPost(l.url, line(RELEASE), sid)).status).toBe(202)
      expect(await until(() => logs.filter((s) => /the server answered the cancelled request \d+; dropped/.test(s)).length === MAX)).toBe(true)
      const again = await rawMcpPost(l.url, line(ping(3)), sid)
      expect([again.status, again.messages.map(said)]).toEqual([200, ['{}']])
      expect((await rawMcpPost(l.url, line(call(102, 'echo', 'y')), sid)).messages.map(said)).toEqual(['echo y'])

      // round 2 (a client that keeps cancelling): the bound holds again, and frees again
      for (const i of range(11, MAX)) held.push(openPost(l.url, line(call(i, 'hold', `h${i}`)), sid))
      expect(await until(() => wire(log).filter((m) => m.method === 'tools/call' && (m.params as { name: string }).name === 'hold').length === 2 * MAX)).toBe(true)
      expect((await rawMcpPost(l.url, line(range(11, MAX).map(cancel)), sid)).status).toBe(202)
      expect(await until(() => wire(log).filter((m) => m.method === 'notifications/cancelled').length === 2 * MAX)).toBe(true)
      expect((await rawMcpPost(l.url, line(ping(103)), sid)).messages.map(said)).toEqual([expect.stringMatching(/^error -32001: /)])
      expect((await rawMcpPost(l.url, line(RELEASE), sid)).status).toBe(202)
      expect(await until(() => logs.filter((s) => /the server answered the cancelled request \d+; dropped/.test(s)).length === 2 * MAX)).toBe(true)
      expect((await rawMcpPost(l.url, line(ping(104)), sid)).messages.map(said)).toEqual(['{}'])

      // what the refused requests never did: reach the server; what the late answers never did: reach the client
      const seen = wire(log).filter((m) => m.method !== undefined && !String(m.id).startsWith('toolgate-'))
      expect(seen.filter((m) => [100, 101, 103].includes(m.id as number))).toEqual([])
      expect(seen.filter((m) => m.method === 'ping').map((m) => m.id)).toEqual(['ready', 3, 104])
      expect(answersIn(held.flatMap((h) => h.messages()))).toEqual([])
    } finally {
      await Promise.all(held.map((h) => h.hangUp()))
      await l.close()
    }
  }, T)

  it('a session whose only open requests were cancelled is idle (reaped), while one with a call the client waits for is not', async () => {
    const log = join(dir, 'wire-idle.jsonl')
    const { l, logs } = await listen({ idleSessionMs: 1000 }, log)
    const clients: Client[] = []
    const connect = async () => {
      const client = new Client({ name: 'cancel-test', version: '1.0.0' })
      await client.connect(new StreamableHTTPClientTransport(new URL(l.url)))
      clients.push(client)
      return client
    }
    try {
      // one session waits for its call; the other cancels its call (the SDK sends notifications/cancelled)
      const waiting = await connect()
      const waitingSid = (waiting.transport as StreamableHTTPClientTransport).sessionId!
      const pending = waiting.callTool({ name: 'hold', arguments: { tag: 'waited' } }, undefined, { timeout: 60_000 }).catch((e: Error) => e)
      const cancelling = await connect()
      const cancellingSid = (cancelling.transport as StreamableHTTPClientTransport).sessionId!
      const ac = new AbortController()
      const cancelled = cancelling.callTool({ name: 'hold', arguments: { tag: 'cancelled' } }, undefined, { signal: ac.signal }).catch((e: Error) => e)
      expect(await until(() => wire(log).filter((m) => m.method === 'tools/call').length === 2)).toBe(true)
      ac.abort('the user stopped it')
      expect(await cancelled).toBeInstanceOf(Error)
      expect(await until(() => wire(log).some((m) => m.method === 'notifications/cancelled'))).toBe(true)

      // the reaper looks every second; the idle bound is 1 s
      expect(await until(() => logs.some((s) => s.startsWith(`session ${cancellingSid.slice(0, 8)}: ended (idle for 1 s)`)), 8000)).toBe(true)
      expect(logs.some((s) => s.startsWith(`session ${waitingSid.slice(0, 8)}: ended`))).toBe(false)
      // the session that was ended is gone; the waiting one still gets its answer
      const gone = await fetch(l.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': cancellingSid, 'mcp-protocol-version': '2025-11-25' }, body: line(ping(1)) })
      expect(gone.status).toBe(404)
      await waiting.notification({ method: 'notifications/release' } as never)
      const r = await pending
      expect(r).not.toBeInstanceOf(Error)
      expect(said({ result: r } as Msg)).toBe('held waited')
    } finally {
      await Promise.all(clients.map((c) => c.close().catch(() => {})))
      await l.close()
    }
  }, T)
})

describe('mcp-proxy (stdio): requests the client cancels', () => {
  beforeAll(() => {
    if (!existsSync(join(root, 'dist', 'proxy', 'mcp', 'proxy.js'))) throw new Error('run `npm run build:ts` first: the tests spawn dist/cli/main.js')
  })

  /** The proxy in front of SERVER, its tools listed (so nothing is held behind the listing). */
  async function ready() {
    const serverJs = join(dir, 'server.cjs')
    writeFileSync(serverJs, SERVER)
    const p = rawMcpProxy([], [process.execPath, serverJs, ''])
    await p.handshake()
    p.send(ping('ready'))
    await p.next((m) => m.id === 'ready')
    return p
  }
  const answers = (p: Awaited<ReturnType<typeof ready>>, id: unknown) => p.lines.filter((m) => m.id === id && m.method === undefined).map(said)

  it('a cancelled id stays in use until the server answers it, however many were cancelled after it: its late answer never reaches a request that reused the id', async () => {
    const p = await ready()
    try {
      // more cancelled requests than any fixed table of cancelled ids would keep (1,024 used to)
      const N = 1500
      p.send([...range(1, N).map((i) => line(call(i, 'hold', `h${i}`))), line(ping('sync'))].join('\n'))
      await p.next((m) => m.id === 'sync') // every hold is at the server
      // cancel them all, then reuse the first id, then let the server answer (late) what it holds
      p.send([...range(1, N).map((i) => line(cancel(i))), line(call(1, 'hold', 'again')), line(RELEASE)].join('\n'))
      expect(said(await p.next((m) => m.id === 1))).toBe(inFlight('1'))
      // (p.until wakes on stdout only; the proxy says this on stderr)
      expect(await until(() => p.stderr().includes(`the server answered the cancelled request ${N}; dropped`))).toBe(true)
      // answered late, the ids are free again
      p.send([line(call(1, 'hold', 'again')), line(RELEASE)].join('\n'))
      expect(said(await p.next((m) => m.id === 1))).toBe('held again')
      expect(answers(p, 1)).toEqual([inFlight('1'), 'held again'])
      expect(answersIn(p.lines).filter((m) => /^held h/.test(said(m)))).toEqual([])
    } finally {
      p.child.stdin.end()
      await p.exited
    }
  }, T)

  it(`at the default bound (${DEFAULT_MAX_PENDING} requests in flight or cancelled and unanswered) a request is refused -32001 naming why, never forwarded`, async () => {
    const p = await ready()
    try {
      const N = DEFAULT_MAX_PENDING
      p.send([...range(1, N).map((i) => line(call(i, 'hold', `h${i}`))), line(ping('sync'))].join('\n'))
      await p.next((m) => m.id === 'sync')
      p.send(range(1, N).map((i) => line(cancel(i))).join('\n'))
      p.send(ping('over'))
      expect(said(await p.next((m) => m.id === 'over'))).toBe(`error -32001: toolgate: ${N} requests are open (in flight, or cancelled and not yet answered by the server); not forwarded`)
      p.send(RELEASE)
      // (p.until wakes on stdout only; the proxy says this on stderr)
      expect(await until(() => p.stderr().includes(`the server answered the cancelled request ${N}; dropped`))).toBe(true)
      p.send(ping('after'))
      expect(said(await p.next((m) => m.id === 'after'))).toBe('{}')
      expect(answers(p, 'over')).toHaveLength(1) // the proxy's refusal, and no answer of the server's
      expect(answersIn(p.lines).filter((m) => /^held h/.test(said(m)))).toEqual([])
    } finally {
      p.child.stdin.end()
      await p.exited
    }
  }, T)
})
