// `toolgate mcp-proxy` (the built CLI) and a request id the client reuses while the first request
// with it is still in flight (MCP: an id is never reused within a session). Routed by id, the
// server's answer to one could be taken for the other's: a `tools/list` answer matched to a
// `ping` went to the client unfiltered, hidden tools and all. Such a request is answered -32600
// and never forwarded, whatever the first one is doing (held while the proxy lists the tools,
// waiting for the user's approval, at the server, cancelled), over stdio and Streamable HTTP;
// and a server answer reaches the client only for a request in flight with its id (an answer sent
// twice, or made up for another id, is dropped). Peers: the real server-filesystem, and a small
// stdio server that logs every line it reads, holds calls until told, answers twice and forges.
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { cli, listenerUrl, rawMcpProxy, root, type RawMcpProxy } from './helpers/mcp-proxy'
import { rawMcpPost } from './helpers/mcp-raw-http'

const fsServer = join(root, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js')
const T = 60_000

// argv: <wire log> <delay ms>. Every line read goes to the wire log; requests are answered after
// the delay. `hold` is answered only on `release` (with its tag), `twice` twice, `forge` also
// answers the id it is given (as if that request were its own).
const SERVER = `
const fs = require('fs')
const [WIRE, DELAY] = process.argv.slice(1)
const rl = require('readline').createInterface({ input: process.stdin })
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n')
const obj = { type: 'object', properties: { tag: { type: 'string' }, target: {} } }
const TOOLS = ['public_echo', 'hold', 'release', 'twice', 'forge'].map((name) => ({ name, inputSchema: obj }))
  .concat([{ name: 'secret_admin_tool', description: 'internal admin tool: drops tables', inputSchema: obj }])
const result = (id, text) => ({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } })
const held = []
rl.on('line', (line) => {
  fs.appendFileSync(WIRE, line + '\\n')
  const m = JSON.parse(line)
  if (!m.method || !('id' in m)) return
  setTimeout(() => {
    if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'ids', version: '1' } } })
    else if (m.method === 'tools/list') send({ jsonrpc: '2.0', id: m.id, result: { tools: TOOLS } })
    else if (m.method !== 'tools/call') send({ jsonrpc: '2.0', id: m.id, result: {} })
    else if (m.params.name === 'hold') held.push(m)
    else if (m.params.name === 'release') { for (const h of held.splice(0)) send(result(h.id, 'held ' + h.params.arguments.tag)); send(result(m.id, 'released')) }
    else if (m.params.name === 'twice') { send(result(m.id, 'first')); send(result(m.id, 'second')) }
    else if (m.params.name === 'forge') { send(result(m.params.arguments.target, 'forged')); send(result(m.id, 'forge sent')) }
    else send(result(m.id, 'ran ' + m.params.name))
  }, Number(DELAY))
})
`

let dir: string
let serverJs: string
/** Every tool but the secret one is configured: with --filter-list, only those are listed. */
let config: string
beforeAll(() => {
  if (!existsSync(join(root, 'dist', 'proxy', 'mcp', 'proxy.js'))) throw new Error('run `npm run build:ts` first: the tests spawn dist/cli/main.js')
  dir = mkdtempSync(join(tmpdir(), 'toolgate-mcp-ids-'))
  serverJs = join(dir, 'server.cjs')
  writeFileSync(serverJs, SERVER)
  config = join(dir, 'config.json')
  writeFileSync(config, JSON.stringify({ version: 1, tools: [{ name: 'public_echo', writes: true }, { name: 'hold' }, { name: 'release' }, { name: 'twice' }, { name: 'forge' }] }))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

type Msg = Record<string, unknown>
const line = (m: unknown) => JSON.stringify(m)
const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: { elicitation: {} }, clientInfo: { name: 'raw', version: '1' } } }
const call = (id: unknown, name: string, args: Msg = {}) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })
const ping = (id: unknown) => ({ jsonrpc: '2.0', id, method: 'ping' })
/** The text of a tool result, or the error message. */
const said = (m: Msg) => (m.error !== undefined ? `error ${(m.error as { code: number }).code}: ${(m.error as { message: string }).message}` : ((m.result as { content?: { text: string }[] }).content?.[0]?.text ?? JSON.stringify(m.result)))
const toolNames = (m: Msg) => ((m.result as { tools: { name: string }[] }).tools ?? []).map((t) => t.name)
const wire = (log: string): Msg[] => readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Msg)
/** Everything the client got for `id`, in order. */
const answers = (p: RawMcpProxy, id: unknown) => p.lines.filter((m) => m.id === id && m.method === undefined).map(said)
const inFlight = (id: string) => `error -32600: Invalid Request: request id ${id} is still in flight (an id may not be reused within a session); not forwarded`

describe('mcp-proxy (stdio): a request id reused while in flight', () => {
  it('tools/list and ping with one id in one write: the ping is refused, the list is filtered (the review’s case, against server-filesystem)', async () => {
    const allow = join(dir, 'allow.json')
    writeFileSync(allow, JSON.stringify({ tools: [{ name: 'read_text_file' }] }))
    const p = rawMcpProxy(['--config', allow, '--filter-list'], [process.execPath, fsServer, dir])
    try {
      await p.handshake()
      p.send(`${line({ jsonrpc: '2.0', id: 7, method: 'tools/list' })}\n${line(ping(7))}`)
      await p.until(() => answers(p, 7).length === 2)
      const [first, second] = p.lines.filter((m) => m.id === 7)
      expect(said(first)).toBe(inFlight('7'))
      expect(toolNames(second)).toEqual(['read_text_file'])
      p.send(ping(8)) // the answers that follow are ping 8's: nothing else for 7 came after
      await p.next((m) => m.id === 8)
      expect(answers(p, 7)).toHaveLength(2)
      expect(JSON.stringify(p.lines)).not.toContain('write_file')
      expect(p.stderr()).toMatch(/refused a `ping` request whose id 7 is still in flight; not forwarded/)
    } finally {
      p.child.stdin.end()
      await p.exited
    }
  }, T)

  it('held, at the server, cancelled: a reused id is refused and never reaches the server; answers sent twice, made up or late are dropped', async () => {
    const log = join(dir, 'wire-stdio.jsonl')
    const p = rawMcpProxy(['--config', config, '--filter-list'], [process.execPath, '-e', SERVER, log, '0'])
    try {
      p.send(INIT)
      await p.next((m) => m.id === 0)
      // held while the proxy lists the tools itself (they come in the same read as `initialized`)
      p.send([line({ jsonrpc: '2.0', method: 'notifications/initialized' }), line({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), line({ jsonrpc: '2.0', id: 1, method: 'tools/list' })].join('\n'))
      await p.until(() => answers(p, 1).length === 2)
      expect(said(p.lines.filter((m) => m.id === 1)[0])).toBe(inFlight('1'))
      expect(toolNames(p.lines.filter((m) => m.id === 1)[1])).toEqual(['public_echo', 'hold', 'release', 'twice', 'forge'])

      // at the server: 2 is held there; the same id again (a call, a ping) is refused; "2" is another id
      p.send(call(2, 'hold', { tag: 'a' }))
      p.send(call(2, 'hold', { tag: 'b' }))
      p.send(ping(2))
      p.send(ping('2'))
      expect(said(await p.next((m) => m.id === '2'))).toBe('{}')
      // answered twice: the second answer is dropped
      p.send(call(3, 'twice'))
      expect(said(await p.next((m) => m.id === 3))).toBe('first')
      // an answer made up for a call the server never got (it waits for the user's approval): dropped
      p.send(call('w', 'public_echo', { tag: 'x' }))
      const ask = await p.next((m) => m.method === 'elicitation/create')
      p.send(call(4, 'forge', { target: 'w' }))
      expect(said(await p.next((m) => m.id === 4))).toBe('forge sent')
      p.send({ jsonrpc: '2.0', id: ask.id, result: { action: 'decline' } })
      expect(said(await p.next((m) => m.id === 'w'))).toMatch(/^The user did not approve `public_echo`/)
      // cancelled: the server may still answer 5, so 5 is still in use
      p.send(call(5, 'hold', { tag: 'c' }))
      p.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5, reason: 'stop' } })
      p.send(ping(5))
      expect(said(await p.next((m) => m.id === 5))).toBe(inFlight('5'))
      // the server answers 2 and (late) 5; the late answer is dropped, and 5 is free again
      p.send(call(6, 'release'))
      expect(said(await p.next((m) => m.id === 6))).toBe('released')
      p.send(ping(5))
      expect(said(await p.next((m) => m.id === 5))).toBe('{}')

      expect(answers(p, 2)).toEqual([inFlight('2'), inFlight('2'), 'held a'])
      expect(answers(p, 3)).toEqual(['first'])
      expect(answers(p, 5)).toEqual([inFlight('5'), '{}'])
      expect(answers(p, 'w')).toHaveLength(1)
      const seen = wire(log).filter((m) => m.method !== undefined && !String(m.id).startsWith('toolgate-'))
      expect(seen.map((m) => [m.id, m.method === 'tools/call' ? (m.params as { name: string }).name : m.method])).toEqual([
        [0, 'initialize'], [undefined, 'notifications/initialized'], [1, 'tools/list'], [2, 'hold'], ['2', 'ping'], [3, 'twice'], [4, 'forge'],
        [5, 'hold'], [undefined, 'notifications/cancelled'], [6, 'release'], [5, 'ping'],
      ])
      expect(p.stderr()).toMatch(/the server answered id 3, which no request in flight has; dropped/)
      expect(p.stderr()).toMatch(/the server answered id "w", which no request in flight has; dropped/)
      expect(p.stderr()).toMatch(/the server answered the cancelled request 5; dropped/)
    } finally {
      p.child.stdin.end()
      await p.exited
    }
  }, T)

  it('a call waiting for the user’s approval: the same id again is refused, and the approved call runs once', async () => {
    const log = join(dir, 'wire-confirm.jsonl')
    const p = rawMcpProxy(['--config', config], [process.execPath, '-e', SERVER, log, '0'])
    try {
      p.send(INIT)
      await p.next((m) => m.id === 0)
      p.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
      p.send(call('w', 'public_echo', { tag: 'x' }))
      const ask = await p.next((m) => m.method === 'elicitation/create')
      p.send(call('w', 'public_echo', { tag: 'y' }))
      expect(said(await p.next((m) => m.id === 'w'))).toBe(inFlight('"w"'))
      p.send({ jsonrpc: '2.0', id: ask.id, result: { action: 'accept', content: {} } })
      expect(said(await p.next((m) => m.id === 'w'))).toBe('ran public_echo')
      expect(p.lines.filter((m) => m.method === 'elicitation/create')).toHaveLength(1)
      expect(wire(log).filter((m) => m.method === 'tools/call').map((m) => (m.params as { arguments: Msg }).arguments)).toEqual([{ tag: 'x' }])
    } finally {
      p.child.stdin.end()
      await p.exited
    }
  }, T)
})

describe('mcp-proxy --listen: a request id reused while in flight', () => {
  it('the second POST is answered 400 with the id, never forwarded; the first gets the filtered list on its own stream', async () => {
    const log = join(dir, 'wire-http.jsonl')
    // every answer of the server comes 300 ms late, so the first tools/list is still in flight
    const child = spawn(process.execPath, [cli, 'mcp-proxy', '--listen', '127.0.0.1:0', '--config', config, '--filter-list', '--', process.execPath, '-e', SERVER, log, '300'], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] })
    try {
      const { url, stderr } = await listenerUrl(child)
      const init = await rawMcpPost(url, line(INIT))
      const sid = init.sid!
      expect((await rawMcpPost(url, line({ jsonrpc: '2.0', method: 'notifications/initialized' }), sid)).status).toBe(202)
      const first = rawMcpPost(url, line({ jsonrpc: '2.0', id: 7, method: 'tools/list' }), sid)
      await new Promise((r) => setTimeout(r, 100))
      const second = await rawMcpPost(url, line(ping(7)), sid)
      expect([second.status, second.messages.map(said)]).toEqual([400, [inFlight('7')]])
      expect(second.messages[0].id).toBe(7)
      const list = await first
      expect(list.messages.map(toolNames)).toEqual([['public_echo', 'hold', 'release', 'twice', 'forge']])
      expect(JSON.stringify(list.messages)).not.toContain('secret')
      expect(wire(log).filter((m) => m.id === 7).map((m) => m.method)).toEqual(['tools/list'])
      expect(stderr()).toMatch(/refused a request whose id 7 is still in flight; not forwarded/)
    } finally {
      child.kill('SIGTERM')
      await new Promise((r) => child.once('exit', r))
    }
  }, T)
})
