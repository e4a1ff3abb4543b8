// `toolgate mcp-proxy` as users run it: the built CLI (dist/cli/main.js, from `npm run build:ts`)
// spawned by the official MCP SDK Client's StdioClientTransport, fronting the real
// @modelcontextprotocol/server-filesystem on a temp directory. Every claim is proved by the
// server's own effect on disk (a refused call never reaches it; a repaired call's answer shows
// the repaired value), and the server exiting is driven with a tiny inline server.
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { cli, expectFilesystemGated, proxyTransport, rawMcpProxy, root, runMcpProxyCli, toolText } from './helpers/mcp-proxy'

const fsServer = join(root, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js')
const T = 60_000

let dir: string
beforeAll(() => {
  if (!existsSync(join(root, 'dist', 'proxy', 'mcp', 'proxy.js'))) throw new Error('run `npm run build:ts` first: the tests spawn dist/cli/main.js')
  dir = mkdtempSync(join(tmpdir(), 'toolgate-mcp-proxy-'))
  writeFileSync(join(dir, 'five.txt'), 'one\ntwo\nthree\nfour\nfive\n')
  for (let i = 0; i < 50; i++) writeFileSync(join(dir, `f${i}.txt`), `file ${i}\nsecond line\n`)
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** An SDK Client talking to the proxy, which fronts server-filesystem on `dir`. */
async function connect(flags: string[] = [], server: string[] = [process.execPath, fsServer, dir]) {
  const { transport, stderr } = proxyTransport(flags, server)
  const client = new Client({ name: 'proxy-test', version: '1.0.0' })
  await client.connect(transport)
  return { client, stderr }
}

const text = toolText

function writeConfig(name: string, config: unknown): string {
  const path = join(dir, name)
  writeFileSync(path, JSON.stringify(config))
  return path
}

describe('toolgate mcp-proxy in front of server-filesystem', () => {
  it('lists the server’s tools, passes a real read, repairs "2" → 2, refuses a bad type', async () => {
    const { client, stderr } = await connect()
    try {
      // The server's own schema says `head` is a number: "2" alone would fail there. The gate
      // forwards 2, and the server's answer holds exactly two lines.
      await expectFilesystemGated(client, dir, stderr)
    } finally {
      await client.close()
    }
  }, T)

  it('a --config schema stricter than the server’s refuses a call the server would run', async () => {
    const config = writeConfig('strict.json', {
      version: 1,
      tools: [{ name: 'write_file', inputSchema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string', maxLength: 5 } }, required: ['path', 'content'], additionalProperties: false } }],
    })
    const { client } = await connect(['--config', config, '--subject', 'alice', '--role', 'dev', '--session', 's1'])
    try {
      const target = join(dir, 'strict.txt')
      const refused = await client.callTool({ name: 'write_file', arguments: { path: target, content: 'far too long for the config' } })
      expect(refused.isError).toBe(true)
      expect(text(refused)).toContain('write_file')
      expect(text(refused)).toContain('content')
      expect(existsSync(target)).toBe(false)

      // Within the config's schema the same tool runs on the server.
      const ok = await client.callTool({ name: 'write_file', arguments: { path: target, content: 'short' } })
      expect(ok.isError).toBeFalsy()
      expect(existsSync(target)).toBe(true)
      // Tools not in the config keep the server's own schema.
      const read = await client.callTool({ name: 'read_text_file', arguments: { path: target } })
      expect(text(read)).toBe('short')
    } finally {
      await client.close()
    }
  }, T)

  it('50 concurrent calls each get their own answer', async () => {
    const { client } = await connect()
    try {
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => client.callTool({ name: 'read_text_file', arguments: { path: join(dir, `f${i}.txt`), head: i % 2 === 0 ? '1' : 1 } })),
      )
      results.forEach((r, i) => {
        expect(r.isError).toBeFalsy()
        expect(text(r).trim()).toBe(`file ${i}`)
      })
    } finally {
      await client.close()
    }
  }, T)

  it('--filter-list with configured tools: only those are listed and callable', async () => {
    const config = writeConfig('allow.json', { version: 1, tools: [{ name: 'read_text_file' }, { name: 'list_allowed_directories' }] })
    const { client } = await connect(['--config', config, '--filter-list'])
    try {
      const names = (await client.listTools()).tools.map((t) => t.name)
      expect(names.sort()).toEqual(['list_allowed_directories', 'read_text_file'])
      // The configured tool without a schema takes the server's: "2" is still repaired.
      const head = await client.callTool({ name: 'read_text_file', arguments: { path: join(dir, 'five.txt'), head: '2' } })
      expect(text(head).split('\n').filter(Boolean)).toEqual(['one', 'two'])
      const target = join(dir, 'hidden.txt')
      const hidden = await client.callTool({ name: 'write_file', arguments: { path: target, content: 'x' } })
      expect(hidden.isError).toBe(true)
      expect(text(hidden)).toMatch(/^Unknown tool `write_file`/)
      expect(existsSync(target)).toBe(false)
    } finally {
      await client.close()
    }
  }, T)

  it('without --filter-list every server tool is listed', async () => {
    const config = writeConfig('allow2.json', { version: 1, tools: [{ name: 'read_text_file' }] })
    const { client } = await connect(['--config', config])
    try {
      expect((await client.listTools()).tools.length).toBeGreaterThan(5)
    } finally {
      await client.close()
    }
  }, T)
})

// A tiny MCP server: answers initialize and tools/list; on tools/call of `echo` (and `later`) it
// first sends the client a ping request with the SAME id as the call, then answers; on `die` it
// exits 3; `grow` adds the tool `later` and announces notifications/tools/list_changed.
const TINY = `
const rl = require('readline').createInterface({ input: process.stdin })
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n')
const waiting = new Map()
let grown = false
rl.on('line', (line) => {
  const m = JSON.parse(line)
  if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'tiny', version: '1' } } })
  else if (m.method === 'tools/list') send({ jsonrpc: '2.0', id: m.id, result: { tools: [
    { name: 'echo', inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } },
    { name: 'die', inputSchema: { type: 'object' } }, { name: 'grow', inputSchema: { type: 'object' } },
    ...(grown ? [{ name: 'later', inputSchema: { type: 'object', properties: { n: { type: 'integer' } } } }] : []) ] } })
  else if (m.method === 'tools/call' && m.params.name === 'die') process.exit(3)
  else if (m.method === 'tools/call' && m.params.name === 'grow') { grown = true
    send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })
    send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'grown' }] } }) }
  else if (m.method === 'tools/call') { waiting.set(m.id, m); send({ jsonrpc: '2.0', id: m.id, method: 'ping' }) }
  else if (!m.method && waiting.has(m.id)) { const c = waiting.get(m.id); waiting.delete(m.id)
    send({ jsonrpc: '2.0', id: c.id, result: { content: [{ type: 'text', text: 'n=' + JSON.stringify(c.params.arguments.n) + ' typeof ' + typeof c.params.arguments.n }] } }) }
})
`

/** The proxy in a child process, driven line by line (to see raw answers and its exit code). */
const rawProxy = (flags: string[] = [], server: string[] = [process.execPath, '-e', TINY]) => rawMcpProxy(flags, server)

describe('toolgate mcp-proxy: ids, bad lines, the server exiting', () => {
  it('keeps client and server id spaces apart and repairs before forwarding', async () => {
    const p = rawProxy()
    try {
      await p.handshake()
      p.send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { n: '5' } } })
      // the server's own request with the same id 7 passes through to the client untouched
      const ping = await p.next((m) => m.method === 'ping')
      expect(ping).toEqual({ jsonrpc: '2.0', id: 7, method: 'ping' })
      p.send({ jsonrpc: '2.0', id: 7, result: {} })
      const answer = await p.next((m) => m.id === 7 && 'result' in m)
      expect(answer.result).toEqual({ content: [{ type: 'text', text: 'n=5 typeof number' }] })
      // no message of the proxy's own (its tools/list) ever reached the client
      expect(p.lines.filter((m) => typeof m.id === 'string' && String(m.id).startsWith('toolgate-'))).toEqual([])
    } finally {
      p.child.stdin.end()
      await p.exited
    }
  }, T)

  it('learns the server’s tools again on notifications/tools/list_changed', async () => {
    const p = rawProxy()
    try {
      await p.handshake()
      p.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'later', arguments: { n: '3' } } })
      expect(((await p.next((m) => m.id === 1)).result as { isError?: boolean }).isError).toBe(true) // not there yet
      p.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'grow', arguments: {} } })
      await p.next((m) => m.method === 'notifications/tools/list_changed') // passed through
      await p.next((m) => m.id === 2)
      p.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'later', arguments: { n: '3' } } })
      await p.next((m) => m.method === 'ping')
      p.send({ jsonrpc: '2.0', id: 3, result: {} })
      expect((await p.next((m) => m.id === 3 && 'result' in m)).result).toEqual({ content: [{ type: 'text', text: 'n=3 typeof number' }] })
    } finally {
      p.child.stdin.end()
      await p.exited
    }
  }, T)

  it('answers a line that is not JSON with -32700, refuses an oversized line, and keeps going', async () => {
    const p = rawProxy(['--max-message-bytes', '2048'])
    try {
      await p.handshake()
      p.send('this is not json')
      const parse = await p.next((m) => (m.error as { code?: number } | undefined)?.code === -32700)
      expect(parse.id).toBeNull()
      p.send({ jsonrpc: '2.0', id: 'big', method: 'tools/call', params: { name: 'echo', arguments: { n: 1, pad: 'x'.repeat(5000) } } })
      const big = await p.next((m) => m.id === 'big')
      expect((big.error as { code: number }).code).toBe(-32600)
      p.send({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'echo', arguments: { n: 2 } } })
      await p.next((m) => m.method === 'ping')
      p.send({ jsonrpc: '2.0', id: 8, result: {} })
      expect((await p.next((m) => m.id === 8 && 'result' in m)).result).toEqual({ content: [{ type: 'text', text: 'n=2 typeof number' }] })
      expect(p.stderr()).toMatch(/not JSON/)
      expect(p.stderr()).toMatch(/over the limit/)
    } finally {
      p.child.stdin.end()
      await p.exited
    }
  }, T)

  it('the server exiting fails the pending request, and the proxy exits with the server’s code', async () => {
    const p = rawProxy()
    await p.handshake()
    p.send({ jsonrpc: '2.0', id: 'pending', method: 'tools/call', params: { name: 'die', arguments: {} } })
    const failed = await p.next((m) => m.id === 'pending')
    expect((failed.error as { code: number }).code).toBe(-32000)
    expect((failed.error as { message: string }).message).toMatch(/exited with code 3/)
    expect(await p.exited).toBe(3)
  }, T)

  it('through the SDK Client: the pending call rejects when the server dies', async () => {
    const { client } = await connect([], [process.execPath, '-e', TINY])
    try {
      await expect(client.callTool({ name: 'die', arguments: {} })).rejects.toThrow(/exited with code 3|Connection closed/)
    } finally {
      await client.close()
    }
  }, T)
})

// An SDK-built server: `hold` answers only once `release` is called; `ask` first sends the
// client a ping (the SDK numbers its own requests from 0) and answers after the client's reply.
const req = createRequire(join(root, 'package.json'))
const SDK_SERVER = `
const { McpServer } = require(${JSON.stringify(req.resolve('@modelcontextprotocol/sdk/server/mcp.js'))})
const { StdioServerTransport } = require(${JSON.stringify(req.resolve('@modelcontextprotocol/sdk/server/stdio.js'))})
const { EmptyResultSchema } = require(${JSON.stringify(req.resolve('@modelcontextprotocol/sdk/types.js'))})
const z = require(${JSON.stringify(req.resolve('zod'))})
const server = new McpServer({ name: 'ids', version: '1.0.0' })
const out = (text) => ({ content: [{ type: 'text', text }] })
let release
const held = new Promise((r) => (release = r))
server.registerTool('hold', { inputSchema: { tag: z.string() } }, async ({ tag }) => { await held; return out('held ' + tag) })
server.registerTool('release', { inputSchema: {} }, async () => { release(); return out('released') })
server.registerTool('ask', { inputSchema: { n: z.number().int() } }, async ({ n }, extra) => {
  await extra.sendRequest({ method: 'ping' }, EmptyResultSchema)
  return out('pong n=' + JSON.stringify(n))
})
server.connect(new StdioServerTransport())
`

describe('toolgate mcp-proxy: colliding ids and out-of-order answers (SDK-built server)', () => {
  it('a client request and a server request with the same id in flight, answered out of order', async () => {
    const p = rawProxy([], [process.execPath, '-e', SDK_SERVER])
    try {
      p.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })
      await p.next((m) => m.id === 'init')
      p.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
      // 1 is held by the server until `release`; 0 makes the server ask the client (its id 0 too)
      p.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'hold', arguments: { tag: 'one' } } })
      p.send({ jsonrpc: '2.0', id: 0, method: 'tools/call', params: { name: 'ask', arguments: { n: '7' } } })
      const ping = await p.next((m) => m.method === 'ping')
      expect(ping).toEqual({ jsonrpc: '2.0', id: 0, method: 'ping' }) // the server's own id 0, untouched
      p.send({ jsonrpc: '2.0', id: 0, result: {} }) // the client's answer to the server's 0
      const zero = await p.next((m) => m.id === 0 && 'result' in m)
      expect(zero.result).toEqual({ content: [{ type: 'text', text: 'pong n=7' }] }) // repaired "7" → 7
      expect(p.lines.some((m) => m.id === 1)).toBe(false) // 1 is still waiting
      p.send({ jsonrpc: '2.0', id: 'r', method: 'tools/call', params: { name: 'release', arguments: {} } })
      const one = await p.next((m) => m.id === 1)
      expect(one.result).toEqual({ content: [{ type: 'text', text: 'held one' }] })
      expect((await p.next((m) => m.id === 'r')).result).toEqual({ content: [{ type: 'text', text: 'released' }] })
      expect(p.lines.filter((m) => typeof m.id === 'string' && String(m.id).startsWith('toolgate-'))).toEqual([])
    } finally {
      p.child.stdin.end()
      await p.exited
    }
  }, T)
})

describe('toolgate mcp-proxy: a policy naming the server’s tools', () => {
  // The rules name tools only the server's tools/list declares: the proxy starts (each rule that
  // matches nothing yet is logged), and once the list is learned the rules decide every call.
  it('starts with tools: ["read_*"] rules and enforces them against server-filesystem', async () => {
    const config = writeConfig('server-tools-policy.json', {
      version: 1,
      tools: [],
      policy: {
        rules: [
          { effect: 'allow', roles: ['reader'], tools: ['read_*', 'list_*'] },
          { effect: 'deny', tools: ['write_*', 'no_such_tool_*'] },
        ],
      },
    })
    const { client, stderr } = await connect(['--config', config, '--subject', 'ann', '--role', 'reader'])
    try {
      const names = (await client.listTools()).tools.map((t) => t.name)
      expect(names).toContain('write_file')
      const read = await client.callTool({ name: 'read_text_file', arguments: { path: join(dir, 'five.txt') } })
      expect(read.isError).toBeFalsy()
      expect(text(read)).toContain('three')
      const target = join(dir, 'policy-write.txt')
      const write = await client.callTool({ name: 'write_file', arguments: { path: target, content: 'x' } })
      expect(write.isError).toBe(true)
      expect(text(write)).toMatch(/Not permitted/)
      expect(existsSync(target)).toBe(false)
      // a tool no rule allows: deny by default
      const move = await client.callTool({ name: 'move_file', arguments: { source: join(dir, 'f1.txt'), destination: join(dir, 'moved.txt') } })
      expect(move.isError).toBe(true)
      expect(existsSync(join(dir, 'moved.txt'))).toBe(false)
      expect(stderr()).toMatch(/no_such_tool_\*/)
    } finally {
      await client.close()
    }
  }, T)
})

describe('toolgate mcp-proxy: flags', () => {
  const run = runMcpProxyCli

  it('--help shows the mcpServers entry; a missing server command or unknown flag is exit 2', async () => {
    const help = await run(['--help'])
    expect(help.code).toBe(0)
    expect(help.out).toContain('"args": ["toolgate", "mcp-proxy", "--", "npx", "-y",')
    expect(help.out).toContain('npx.cmd')
    const missing = await run(['--subject', 'a'])
    expect(missing.code).toBe(2)
    expect(missing.err).toMatch(/missing the server command/)
    const unknown = await run(['--nope', '--', 'node'])
    expect(unknown.code).toBe(2)
    expect(unknown.err).toMatch(/unknown flag `--nope`/)
    const badConfig = await run(['--config', join(dir, 'does-not-exist.json'), '--', 'node'])
    expect(badConfig.code).toBe(2)
    expect(badConfig.out).toBe('')
  }, T)

  it('--listen serves Streamable HTTP with a bearer token from the environment, and closes on SIGTERM', async () => {
    const child = spawn(process.execPath, [cli, 'mcp-proxy', '--listen', '127.0.0.1:0', '--token-env', 'TG_TEST_TOKEN', '--', process.execPath, fsServer, dir], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, TG_TEST_TOKEN: 'tok-123' },
    })
    let err = ''
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    const url = await new Promise<string>((resolve) =>
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString()
        const m = /listening on (http:\/\/\S+)/.exec(err)
        if (m) resolve(m[1])
      }),
    )
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    const withToken = new Client({ name: 'http-test', version: '1.0.0' })
    await withToken.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: 'Bearer tok-123' } } }))
    const read = await withToken.callTool({ name: 'read_text_file', arguments: { path: join(dir, 'five.txt'), head: '1' } })
    expect(text(read)).toBe('one')
    await withToken.close()
    const without = new Client({ name: 'http-test', version: '1.0.0' })
    await expect(without.connect(new StreamableHTTPClientTransport(new URL(url)))).rejects.toThrow(/Unauthorized/)
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
    expect(out).toBe('')
  }, T)

  it('--listen refuses a non-loopback host without --allow-remote, an unset token variable, and HTTP flags without --listen', async () => {
    const remote = await run(['--listen', '0.0.0.0:0', '--', 'node'])
    expect(remote.code).toBe(2)
    expect(remote.err).toMatch(/--listen 0\.0\.0\.0 is not a loopback address; add --allow-remote/)
    const token = await run(['--listen', '0', '--token-env', 'TG_SURELY_UNSET_VAR', '--', 'node'])
    expect(token.code).toBe(2)
    expect(token.err).toMatch(/--token-env: the environment variable TG_SURELY_UNSET_VAR is not set/)
    const noListen = await run(['--upstream-url', 'http://127.0.0.1:1/mcp'])
    expect(noListen.code).toBe(2)
    expect(noListen.err).toMatch(/--upstream-url needs --listen/)
    const noUpstream = await run(['--listen', '8808'])
    expect(noUpstream.code).toBe(2)
    expect(noUpstream.err).toMatch(/--listen needs an upstream/)
    const badAddr = await run(['--listen', 'localhost:99999', '--', 'node'])
    expect(badAddr.code).toBe(2)
    expect(badAddr.err).toMatch(/--listen needs \[HOST:\]PORT/)
  }, T)
})
