// `toolgate mcp-proxy` under attack and under load: the built CLI (dist/cli/main.js, `npm run
// build:ts` first) between the official MCP SDK Client (or raw JSON-RPC lines, where the attack is
// a message the SDK would not send) and a naive stdio MCP server that dispatches on `method` alone
// and records every line it receives. Each test names the attack; the server's own record (and
// the files its tools write) proves what reached it.
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { cli, listenerUrl, proxyTransport, rawMcpProxy, root, runMcpProxyCli, toolText } from '../helpers/mcp-proxy'

const T = 120_000
let dir: string
beforeAll(() => {
  if (!existsSync(join(root, 'dist', 'proxy', 'mcp', 'proxy.js'))) throw new Error('run `npm run build:ts` first: the tests spawn dist/cli/main.js')
  dir = mkdtempSync(join(tmpdir(), 'toolgate-adv-mcp-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

// A naive server: every line it reads is appended to LOG; `tools/call` runs whatever its `id`
// (a notification included): `write_note` writes a file, `echo` answers its tag after a short
// random wait, and after KILL_AFTER calls of `echo` it kills itself with SIGKILL. Its answer to
// the proxy's own `tools/list` (ids `toolgate-…`) waits LIST_DELAY_MS.
const NAIVE = `
const fs = require('fs')
const [LOG, DIR, KILL_AFTER, LIST_DELAY_MS] = process.argv.slice(1)
const rl = require('readline').createInterface({ input: process.stdin })
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n')
const TOOLS = [
  { name: 'write_note', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
  { name: 'echo', inputSchema: { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] } },
]
let echoes = 0
rl.on('line', (line) => {
  fs.appendFileSync(LOG, line + '\\n')
  const m = JSON.parse(line)
  if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'naive', version: '1' } } })
  else if (m.method === 'tools/list') {
    const answer = () => send({ jsonrpc: '2.0', id: m.id, result: { tools: TOOLS } })
    if (String(m.id).startsWith('toolgate-') && Number(LIST_DELAY_MS) > 0) setTimeout(answer, Number(LIST_DELAY_MS))
    else answer()
  } else if (m.method === 'ping') send({ jsonrpc: '2.0', id: m.id, result: {} })
  else if (m.method === 'tools/call' && m.params.name === 'write_note') {
    fs.writeFileSync(require('path').join(DIR, 'note-' + m.params.arguments.text), 'ran')
    if ('id' in m) send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'written' }] } })
  } else if (m.method === 'tools/call' && m.params.name === 'echo') {
    if (++echoes === Number(KILL_AFTER)) setTimeout(() => process.kill(process.pid, 'SIGKILL'), 5)
    setTimeout(() => send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: m.params.arguments.tag } ] } }), Math.floor(Math.random() * 20))
  }
})
`

const naive = (log: string, killAfter = 0, listDelayMs = 0) => [process.execPath, '-e', NAIVE, log, dir, String(killAfter), String(listDelayMs)]
const received = (log: string): Record<string, unknown>[] => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) : [])

const rawProxy = (server: string[]) => rawMcpProxy([], server)

describe('requests without an id', () => {
  it('a tools/call sent as a notification never reaches the server (the SDK client sends it)', async () => {
    const log = join(dir, 'notify.log')
    const { transport, stderr } = proxyTransport([], naive(log))
    const client = new Client({ name: 'attacker', version: '1' })
    await client.connect(transport)
    try {
      await client.notification({ method: 'tools/call', params: { name: 'write_note', arguments: { text: 'pwned' } } } as never)
      await client.notification({ method: 'resources/read', params: { uri: 'file:///etc/passwd' } } as never)
      // a real call after it: by its answer every earlier line has been handled
      expect(toolText(await client.callTool({ name: 'echo', arguments: { tag: 'sync' } }))).toBe('sync')
      expect(existsSync(join(dir, 'note-pwned'))).toBe(false)
      const idless = received(log).filter((m) => !('id' in m) && typeof m.method === 'string' && !m.method.startsWith('notifications/'))
      expect(idless).toEqual([])
      expect(stderr()).toContain('dropped a `tools/call` request without an id')
    } finally {
      await client.close()
    }
  }, T)

  it('over Streamable HTTP (--listen) too: a tools/call notification never reaches the server', async () => {
    const log = join(dir, 'listen.log')
    const child = spawn(process.execPath, [cli, 'mcp-proxy', '--listen', '127.0.0.1:0', '--', ...naive(log)], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] })
    const { url } = await listenerUrl(child)
    try {
      const transport = new StreamableHTTPClientTransport(new URL(url))
      const client = new Client({ name: 'attacker', version: '1' })
      await client.connect(transport)
      await client.notification({ method: 'tools/call', params: { name: 'write_note', arguments: { text: 'pwned-http' } } } as never)
      expect(toolText(await client.callTool({ name: 'echo', arguments: { tag: 'sync' } }))).toBe('sync')
      expect(existsSync(join(dir, 'note-pwned-http'))).toBe(false)
      expect(received(log).filter((m) => m.method === 'tools/call' && !('id' in m))).toEqual([])
      await transport.terminateSession()
      await client.close()
    } finally {
      child.kill('SIGTERM')
    }
  }, T)

  it('a tools/call whose id is null, an object or a fraction is answered with an error, never forwarded', async () => {
    const log = join(dir, 'badid.log')
    const p = rawProxy(naive(log))
    try {
      p.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })
      p.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
      for (const id of [null, { a: 1 }, 1.5, true]) p.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'write_note', arguments: { text: `bad-${typeof id}` } } })
      p.send({ jsonrpc: '2.0', id: 9, method: 'ping' })
      await p.until(() => p.lines.some((m) => m.id === 9))
      const errors = p.lines.filter((m) => m.id === null && (m.error as { code: number } | undefined)?.code === -32600)
      expect(errors.length).toBe(4)
      expect(received(log).filter((m) => m.method === 'tools/call')).toEqual([])
    } finally {
      p.child.stdin.end()
      await p.exited
    }
  }, T)
})

describe('credentials in upstream URLs are never printed', () => {
  it('mcp-proxy --upstream-url with user:password@ or a token= query', async () => {
    const usage = await runMcpProxyCli(['--listen', '127.0.0.1:0', '--upstream-url', 'ftp://bob:hunter2-pw@host/mcp?token=tok-999'])
    expect(usage.code).toBe(2)
    expect(usage.err).toContain('--upstream-url needs an http:// or https:// URL')
    expect(usage.err).not.toContain('hunter2-pw')
    expect(usage.err).not.toContain('tok-999')
    // a session in front of an upstream that cannot be reached: its failure is logged, the URL scrubbed
    const child = spawn(process.execPath, [cli, 'mcp-proxy', '--listen', '127.0.0.1:0', '--upstream-url', 'http://bob:hunter2-pw@127.0.0.1:1/mcp?token=tok-999'], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] })
    const { url, stderr: printed } = await listenerUrl(child)
    try {
      const client = new Client({ name: 'c', version: '1' })
      await client.connect(new StreamableHTTPClientTransport(new URL(url))).catch(() => undefined)
      await client.close().catch(() => undefined)
    } finally {
      child.kill('SIGTERM')
      await new Promise((r) => child.once('exit', r))
    }
    const stderr = printed()
    expect(stderr).toMatch(/127\.0\.0\.1:1/)
    expect(stderr).not.toContain('hunter2-pw')
    expect(stderr).not.toContain('tok-999')
  }, T)
})

describe('bounded queues', () => {
  it('while the proxy lists the server’s tools, held messages are bounded: the oldest are failed with a JSON-RPC error', async () => {
    const log = join(dir, 'held.log')
    const p = rawProxy(naive(log, 0, 3000))
    try {
      p.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })
      await p.until(() => p.lines.some((m) => m.id === 0))
      p.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
      const N = 1100
      for (let i = 1; i <= N; i++) p.send({ jsonrpc: '2.0', id: i, method: 'ping' })
      await p.until(() => p.lines.filter((m) => typeof m.id === 'number' && m.id > 0).length === N)
      const failed = p.lines.filter((m) => m.error !== undefined).map((m) => m.id)
      expect(failed).toEqual(Array.from({ length: N - 1024 }, (_, i) => i + 1))
      expect(p.lines.find((m) => m.id === 1)?.error).toMatchObject({ code: -32001, message: expect.stringContaining('toolgate: too many messages') })
      expect(p.lines.filter((m) => 'result' in m && typeof m.id === 'number' && m.id > 0).length).toBe(1024)
      // the failed ones never reached the server
      expect(received(log).filter((m) => m.method === 'ping').map((m) => m.id)).toEqual(Array.from({ length: 1024 }, (_, i) => N - 1024 + i + 1))
    } finally {
      p.child.stdin.end()
      await p.exited
    }
  }, T)
})

describe('load and faults', () => {
  it('1,000 concurrent calls, the server killed half-way: every call is answered — its own result or an error — and no id is misrouted', async () => {
    const log = join(dir, 'load.log')
    const { transport } = proxyTransport([], naive(log, 500))
    const client = new Client({ name: 'load', version: '1' })
    await client.connect(transport)
    const N = 1000
    const settled = await Promise.allSettled(Array.from({ length: N }, (_, i) => client.callTool({ name: 'echo', arguments: { tag: `t${i}` } })))
    await client.close().catch(() => undefined)
    let ok = 0
    let failed = 0
    settled.forEach((s, i) => {
      if (s.status === 'fulfilled') {
        ok++
        expect(toolText(s.value)).toBe(`t${i}`) // its own answer, never another call's
      } else {
        failed++
        expect(String(s.reason)).toMatch(/toolgate: the MCP server was killed by SIGKILL before answering/)
      }
    })
    expect(ok + failed).toBe(N)
    expect(ok).toBeGreaterThan(0)
    expect(failed).toBeGreaterThan(0)
  }, T)
})
