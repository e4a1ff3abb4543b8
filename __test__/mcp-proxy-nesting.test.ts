// `toolgate mcp-proxy` (the built CLI) and messages nested deeper than anything it will read:
// a 400 KB line of 200,000 nested arrays passes JSON.parse, but what the proxy does with a
// message afterwards recurses (JSON.stringify threw, uncaught, and the proxy exited 1, leaving
// every waiting request unanswered). Such a message, from either side of either transport, is
// never read: a request is answered -32600 naming the limit (256 levels), an answer is replaced
// by that error to the request it answered, a notification is dropped — and the proxy goes on.
// Peers: the real server-filesystem, a small stdio server that writes such lines (each with a
// `\u` escape, which makes the proxy re-encode what it passes on), and a raw HTTP MCP server.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { cli, listenerUrl, rawMcpProxy, root } from './helpers/mcp-proxy'
import { rawMcpPost } from './helpers/mcp-raw-http'

const fsServer = join(root, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js')
const T = 60_000
const N = 200_000
/** `n` arrays, one inside the other. */
const nested = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`
/** A ping whose whole message nests `depth` levels (the message object is the first, params the second). */
const pingAt = (id: number, depth: number) => `{"jsonrpc":"2.0","id":${id},"method":"ping","params":{"a":${nested(depth - 2)}}}`
const DEEP_PING = pingAt(1, N)

// Writes a 200,000-deep line, with a `\u` escape, for: `deep` (its answer), `deep_note` (a
// notification, then its answer), `deep_ask` (a request to the client; the call is answered with
// what came back for it). `ask` sends the client a plain ping, and answers with the client's reply.
const SERVER = String.raw`
const rl = require('readline').createInterface({ input: process.stdin })
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n')
const N = 200000
const DEEP = '['.repeat(N) + ']'.repeat(N)
const TOOLS = ['deep', 'deep_note', 'deep_ask', 'ask', 'fine'].map((name) => ({ name, inputSchema: { type: 'object' } }))
const result = (id, text) => ({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } })
const asked = new Map()
rl.on('line', (line) => {
  const m = JSON.parse(line)
  if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'deep', version: '1' } } })
  else if (m.method === 'tools/list') send({ jsonrpc: '2.0', id: m.id, result: { tools: TOOLS } })
  else if (m.method === 'tools/call') {
    const id = JSON.stringify(m.id)
    const name = m.params.name
    if (name === 'deep') process.stdout.write('{"jsonrpc":"2.0","id":' + id + ',"result":{"content":[{"type":"text","text":"\\u0041"}],"structuredContent":{"a":' + DEEP + '}}}\n')
    else if (name === 'deep_note') {
      process.stdout.write('{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"\\u0041","data":' + DEEP + '}}\n')
      send(result(m.id, 'noted'))
    } else if (name === 'deep_ask') {
      asked.set('srv-1', m.id)
      process.stdout.write('{"jsonrpc":"2.0","id":"srv-1","method":"sampling/createMessage","params":{"x":"\\u0041","messages":' + DEEP + '}}\n')
    } else if (name === 'ask') {
      asked.set('srv-2', m.id)
      send({ jsonrpc: '2.0', id: 'srv-2', method: 'ping' })
    } else send(result(m.id, 'fine'))
  } else if (!m.method && asked.has(m.id)) send(result(asked.get(m.id), 'told: ' + JSON.stringify(m.error || m.result)))
  else if ('id' in m && m.method) send({ jsonrpc: '2.0', id: m.id, result: {} })
})
`

let dir: string
let serverJs: string
beforeAll(() => {
  if (!existsSync(join(root, 'dist', 'proxy', 'mcp', 'proxy.js'))) throw new Error('run `npm run build:ts` first: the tests spawn dist/cli/main.js')
  dir = mkdtempSync(join(tmpdir(), 'toolgate-mcp-nesting-'))
  serverJs = join(dir, 'deep-server.cjs')
  writeFileSync(serverJs, SERVER)
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

type Msg = Record<string, unknown>
const line = (m: unknown) => JSON.stringify(m)
const call = (id: unknown, name: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } })
const said = (m: Msg) => (m.error !== undefined ? `error ${(m.error as { code: number }).code}: ${(m.error as { message: string }).message}` : ((m.result as { content?: { text: string }[] }).content?.[0]?.text ?? JSON.stringify(m.result)))
const TOO_DEEP = 'nested deeper than 256 levels of arrays and objects is over the limit'
const refused = `error -32600: toolgate: message ${TOO_DEEP}; not forwarded`
const answerRefused = `error -32600: toolgate: the server's answer ${TOO_DEEP}; not forwarded`

describe('mcp-proxy (stdio): messages nested too deeply', () => {
  it('from the client: a request is answered -32600 naming the limit, and the proxy goes on (against server-filesystem)', async () => {
    const p = rawMcpProxy([], [process.execPath, fsServer, dir])
    try {
      await p.handshake()
      p.send(DEEP_PING)
      expect(said(await p.next((m) => m.id === 1))).toBe(refused)
      // the limit is 256 levels, the message itself the first
      p.send(pingAt(2, 256))
      expect(said(await p.next((m) => m.id === 2))).toBe('{}')
      p.send(pingAt(3, 257))
      expect(said(await p.next((m) => m.id === 3))).toBe(refused)
      p.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":${JSON.stringify(join(dir, 'x'))},"x":${nested(N)}}}}`)
      expect(said(await p.next((m) => m.id === 4))).toBe(refused)
      // the id is read from the parsed message, wherever it stands
      p.send(`{"params":{"a":${nested(N)}},"id":"mid","method":"ping","jsonrpc":"2.0"}`)
      expect(said(await p.next((m) => m.id === 'mid'))).toBe(refused)
      p.send({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'list_allowed_directories', arguments: {} } })
      expect(said(await p.next((m) => m.id === 5))).toContain(dir)
      expect(p.stderr()).toContain(`client message ${TOO_DEEP}; not forwarded`)
      expect(p.child.exitCode).toBeNull()
    } finally {
      p.child.stdin.end()
    }
    expect(await p.exited).toBe(0)
  }, T)

  it('from the server: its answer becomes an error to the request, a notification is dropped, its request is refused; so is the client’s deep response to it', async () => {
    const p = rawMcpProxy([], [process.execPath, serverJs])
    try {
      await p.handshake()
      p.send(call(1, 'deep'))
      expect(said(await p.next((m) => m.id === 1))).toBe(answerRefused)
      p.send(call(2, 'deep_note'))
      expect(said(await p.next((m) => m.id === 2))).toBe('noted')
      p.send(call(3, 'deep_ask'))
      expect(said(await p.next((m) => m.id === 3))).toBe(`told: {"code":-32600,"message":"toolgate: request ${TOO_DEEP}"}`)
      // the server's plain request, answered by the client with a deep response
      p.send(call(4, 'ask'))
      await p.next((m) => m.id === 'srv-2')
      p.send(`{"jsonrpc":"2.0","id":"srv-2","result":{"x":${nested(N)}}}`)
      expect(said(await p.next((m) => m.id === 4))).toBe(`told: {"code":-32600,"message":"toolgate: the client's response ${TOO_DEEP}"}`)
      p.send(call(5, 'fine'))
      expect(said(await p.next((m) => m.id === 5))).toBe('fine')
      expect(p.lines.filter((m) => m.method === 'notifications/message' || m.method === 'sampling/createMessage')).toEqual([])
      expect(p.stderr()).toContain(`server message ${TOO_DEEP}; not forwarded`)
      expect(p.child.exitCode).toBeNull()
    } finally {
      p.child.stdin.end()
    }
    expect(await p.exited).toBe(0)
  }, T)
})

/** Starts `toolgate mcp-proxy --listen 127.0.0.1:0 ARGS`; its URL and stderr. */
async function listener(args: string[]): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  const child = spawn(process.execPath, [cli, 'mcp-proxy', '--listen', '127.0.0.1:0', ...args], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] })
  return { child, ...(await listenerUrl(child)) }
}

async function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode
  child.kill('SIGTERM')
  return new Promise((r) => child.once('exit', (code) => r(code)))
}

/** initialize and notifications/initialized: the session id. */
async function open(url: string): Promise<string> {
  const init = await rawMcpPost(url, line({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }))
  expect(init.status).toBe(200)
  expect((await rawMcpPost(url, line({ jsonrpc: '2.0', method: 'notifications/initialized' }), init.sid)).status).toBe(202)
  return init.sid!
}

describe('mcp-proxy --listen: messages nested too deeply', () => {
  it('the client’s POST is answered 400 with its id naming the limit; the server’s deep answer is an error to that request; the listener goes on', async () => {
    const { child, url, stderr } = await listener(['--', process.execPath, serverJs])
    try {
      const sid = await open(url)
      const deep = await rawMcpPost(url, DEEP_PING, sid)
      expect([deep.status, deep.messages]).toEqual([400, [{ jsonrpc: '2.0', id: 1, error: { code: -32600, message: `toolgate: message ${TOO_DEEP}; not forwarded` } }]])
      const answer = await rawMcpPost(url, line(call(2, 'deep')), sid)
      expect(answer.messages.map(said)).toEqual([answerRefused])
      const fine = await rawMcpPost(url, line(call(3, 'fine')), sid)
      expect(fine.messages.map(said)).toEqual(['fine'])
      expect(stderr()).toContain(`server message ${TOO_DEEP}; not forwarded`)
    } finally {
      expect(await stop(child)).toBe(0)
    }
  }, T)

  it('an HTTP upstream’s deep answer (read by the SDK) is an error to the request it answers', async () => {
    // a raw Streamable HTTP MCP server: JSON answers, no GET stream; `deep` answers 200,000 levels deep
    const up = createServer((req, res) => {
      let body = ''
      req.on('data', (d: Buffer) => (body += d.toString()))
      req.on('end', () => {
        if (req.method !== 'POST') return void res.writeHead(req.method === 'DELETE' ? 200 : 405).end()
        const m = JSON.parse(body) as Msg
        if (!('id' in m)) return void res.writeHead(202).end()
        const json = (text: string) => res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'up-1' }).end(text)
        const ok = (result: unknown) => json(line({ jsonrpc: '2.0', id: m.id, result }))
        if (m.method === 'initialize') ok({ protocolVersion: (m.params as Msg).protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'deep-up', version: '1' } })
        else if (m.method === 'tools/list') ok({ tools: ['deep', 'fine'].map((name) => ({ name, inputSchema: { type: 'object' } })) })
        else if (m.method === 'tools/call' && (m.params as Msg).name === 'deep') json(`{"jsonrpc":"2.0","id":${line(m.id)},"result":{"content":[],"structuredContent":{"a":${nested(N)}}}}`)
        else if (m.method === 'tools/call') ok({ content: [{ type: 'text', text: 'fine' }] })
        else ok({})
      })
    })
    await new Promise<void>((r) => up.listen(0, '127.0.0.1', r))
    const { child, url } = await listener(['--upstream-url', `http://127.0.0.1:${(up.address() as AddressInfo).port}/mcp`])
    try {
      const sid = await open(url)
      const answer = await rawMcpPost(url, line(call(1, 'deep')), sid)
      expect(answer.messages.map(said)).toEqual([answerRefused])
      const fine = await rawMcpPost(url, line(call(2, 'fine')), sid)
      expect(fine.messages.map(said)).toEqual(['fine'])
    } finally {
      expect(await stop(child)).toBe(0)
      up.closeAllConnections()
      await new Promise((r) => up.close(r))
    }
  }, T)
})
