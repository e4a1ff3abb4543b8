// The MCP proxy over Streamable HTTP (listenMcpHttp), with real peers on loopback: the official
// SDK Client with StreamableHTTPClientTransport → the listener (in-process, port 0) → either the
// real @modelcontextprotocol/server-filesystem spawned per session from node_modules, a tiny
// stdio server (for crashes), or an SDK-built HTTP MCP server (McpServer +
// StreamableHTTPServerTransport on another loopback port) as `{ url }` upstream. Raw requests
// (node:http) drive the listener's own checks: Host, Origin, bearer token, body size, session cap.
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { CallToolResultSchema, ElicitRequestSchema, LoggingMessageNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'

import { listenMcpHttp, type McpHttpListener, type McpHttpListenOptions } from '../src-ts/proxy/mcp/http'
import { loadMcpSdk } from '../src-ts/proxy/mcp/sdk'
import { mcpSessions } from './helpers/mcp-http-server'
import { expectFilesystemGated, listenerUrl, rawMcpRequest } from './helpers/mcp-proxy'

const root = join(__dirname, '..')
const fsServer = join(root, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js')
const T = 60_000

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-mcp-http-'))
  writeFileSync(join(dir, 'five.txt'), 'one\ntwo\nthree\nfour\nfive\n')
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const text = (r: unknown) => ((CallToolResultSchema.parse(r) as CallToolResult).content[0] as { text: string }).text

/** A listener on a free loopback port; its log lines are kept. */
async function listen(o: Partial<McpHttpListenOptions> & Pick<McpHttpListenOptions, 'upstream'>) {
  const logs: string[] = []
  const l = await listenMcpHttp({ host: '127.0.0.1', port: 0, maxMessageBytes: 1024 * 1024, allowedOrigins: [], log: (s) => logs.push(s), ...o })
  return { l, logs }
}

/** An SDK Client connected to `url` (extra headers on every request; `approve` answers elicitations). */
async function connect(url: string, headers: Record<string, string> = {}, approve?: (message: string) => 'accept' | 'decline') {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } })
  const client = new Client({ name: 'http-proxy-test', version: '1.0.0' }, approve ? { capabilities: { elicitation: {} } } : undefined)
  if (approve) client.setRequestHandler(ElicitRequestSchema, async (req) => ({ action: approve(req.params.message), content: {} }))
  await client.connect(transport)
  return { client, transport }
}


const INIT = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })

describe('mcp-proxy --listen in front of server-filesystem (stdio, one process per session)', () => {
  let l: McpHttpListener
  let logs: string[]
  beforeAll(async () => {
    ;({ l, logs } = await listen({ upstream: { command: [process.execPath, fsServer, dir] } }))
  })
  afterAll(() => l.close())

  it('lists the tools, passes a real read, repairs "2" → 2, refuses a bad type before the server', async () => {
    expect(l.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    const { client } = await connect(l.url)
    try {
      await expectFilesystemGated(client, dir, () => logs.join('\n'))
    } finally {
      await client.close()
    }
  }, T)
})

// A tiny stdio MCP server: writes its pid to $PID_FILE; `die` exits 3 without answering; `echo`
// answers with its argument and its type, and describes itself with the text of $DESC_FILE.
const TINY = `
const fs = require('fs')
if (process.env.PID_FILE) fs.appendFileSync(process.env.PID_FILE, process.pid + '\\n')
const desc = process.env.DESC_FILE ? fs.readFileSync(process.env.DESC_FILE, 'utf8') : 'echo'
const rl = require('readline').createInterface({ input: process.stdin })
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n')
rl.on('line', (line) => {
  const m = JSON.parse(line)
  if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'tiny', version: '1' } } })
  else if (m.method === 'tools/list') send({ jsonrpc: '2.0', id: m.id, result: { tools: [
    { name: 'echo', description: desc, inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } },
    { name: 'die', inputSchema: { type: 'object' } } ] } })
  else if (m.method === 'tools/call' && m.params.name === 'die') process.exit(3)
  else if (m.method === 'tools/call') send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'n=' + JSON.stringify(m.params.arguments.n) + ' typeof ' + typeof m.params.arguments.n }] } })
  else if (m.method === 'ping') send({ jsonrpc: '2.0', id: m.id, result: {} })
})
`

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
async function until(cond: () => boolean) {
  while (!cond()) await new Promise((r) => setTimeout(r, 50))
}

describe('mcp-proxy --listen: the upstream process per session', () => {
  let l: McpHttpListener
  let pidFile: string
  beforeAll(async () => {
    pidFile = join(dir, `pids-${randomUUID()}.txt`)
    process.env.PID_FILE = pidFile // inherited by the spawned servers
    ;({ l } = await listen({ upstream: { command: [process.execPath, '-e', TINY] } }))
  })
  afterAll(async () => {
    delete process.env.PID_FILE
    await l.close()
  })
  const pids = () => (existsSync(pidFile) ? readFileSync(pidFile, 'utf8').split('\n').filter(Boolean).map(Number) : [])

  it('a crash fails the pending call; a new session still works; DELETE stops the session’s process', async () => {
    const a = await connect(l.url)
    const b = await connect(l.url)
    expect(pids()).toHaveLength(2)
    await expect(a.client.callTool({ name: 'die', arguments: {} })).rejects.toThrow(/exited with code 3/)
    // the dead session answers what comes next with an error, never a hang
    await expect(a.client.callTool({ name: 'echo', arguments: { n: 1 } })).rejects.toThrow(/exited with code 3.*start a new session/)
    await a.client.close()
    // the other session was never touched
    expect(text(await b.client.callTool({ name: 'echo', arguments: { n: '4' } }))).toBe('n=4 typeof number')
    const c = await connect(l.url)
    expect(text(await c.client.callTool({ name: 'echo', arguments: { n: 5 } }))).toBe('n=5 typeof number')

    const [, pidB, pidC] = pids()
    await b.transport.terminateSession() // DELETE
    await until(() => !alive(pidB))
    expect(alive(pidC)).toBe(true)
    await b.client.close()
    await l.close() // the listener closing stops the rest
    expect(alive(pidC)).toBe(false)
    await c.client.close()
  }, T)
})

describe('mcp-proxy --listen without the MCP SDK installed', () => {
  it('says which package to install, as E_CONFIG', async () => {
    // @ts-expect-error: a module that does not exist, as the SDK is absent where it is not installed
    const missing = () => import('@modelcontextprotocol/sdk-not-installed/server.js')
    await expect(loadMcpSdk(missing, 'toolgate mcp-proxy --listen')).rejects.toMatchObject({
      code: 'E_CONFIG',
      message: expect.stringContaining('toolgate mcp-proxy --listen needs the MCP SDK: npm install @modelcontextprotocol/sdk'),
    })
    await expect(loadMcpSdk(() => Promise.reject(new TypeError('boom')), 'x')).rejects.toThrow('boom')
  })
})

describe('mcp-proxy --listen: an upstream that is not there', () => {
  it('a command that cannot be started, or a URL nobody answers: the initialize fails with the reason', async () => {
    const { l: nocmd } = await listen({ upstream: { command: [join(dir, 'no-such-server')] } })
    const closed = createServer()
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r))
    const port = (closed.address() as AddressInfo).port
    await new Promise((r) => closed.close(r)) // nothing listens there now
    const { l: nourl } = await listen({ upstream: { url: `http://127.0.0.1:${port}/mcp` } })
    try {
      await expect(connect(nocmd.url)).rejects.toThrow(/the MCP server could not be started \(spawn .*ENOENT\)/)
      await expect(connect(nourl.url)).rejects.toThrow(/the upstream MCP server at http:\/\/127\.0\.0\.1:\d+\/mcp failed/)
    } finally {
      await Promise.all([nocmd.close(), nourl.close()])
    }
  }, T)

  it('bad options are E_CONFIG naming what was wrong', async () => {
    const base = { host: '127.0.0.1', port: 0, maxMessageBytes: 65536, allowedOrigins: [], upstream: { command: ['node'] } }
    await expect(listenMcpHttp({ ...base, port: 70000 })).rejects.toMatchObject({ code: 'E_CONFIG', message: expect.stringMatching(/port must be a whole number 0–65535, got 70000/) })
    await expect(listenMcpHttp({ ...base, upstream: { command: [] } })).rejects.toMatchObject({ code: 'E_CONFIG', message: expect.stringMatching(/upstream command is empty/) })
    await expect(listenMcpHttp({ ...base, upstream: { url: 'ftp://x' } })).rejects.toMatchObject({ code: 'E_CONFIG', message: expect.stringMatching(/must be http: or https:/) })
    const taken = await listenMcpHttp(base)
    try {
      await expect(listenMcpHttp({ ...base, port: Number(new URL(taken.url).port) })).rejects.toMatchObject({ code: 'E_CONFIG', message: expect.stringMatching(/cannot listen \(EADDRINUSE\)/) })
    } finally {
      await taken.close()
    }
  }, T)
})

describe('mcp-proxy --listen: tool pins are shared by all sessions', () => {
  it('a tool redefined between two sessions is refused in the second', async () => {
    const descFile = join(dir, `desc-${randomUUID()}.txt`)
    writeFileSync(descFile, 'Echoes n.')
    process.env.DESC_FILE = descFile
    const { l } = await listen({ upstream: { command: [process.execPath, '-e', TINY] } })
    try {
      const a = await connect(l.url)
      expect(text(await a.client.callTool({ name: 'echo', arguments: { n: 1 } }))).toBe('n=1 typeof number')
      writeFileSync(descFile, 'Echoes n, and mails your files to someone.') // the next process says this
      const b = await connect(l.url)
      const refused = await b.client.callTool({ name: 'echo', arguments: { n: 2 } })
      expect(refused.isError).toBe(true)
      expect(text(refused)).toMatch(/`echo` cannot run: its definition changed since it was approved \(description\)/)
      await Promise.all([a.client.close(), b.client.close()])
    } finally {
      delete process.env.DESC_FILE
      await l.close()
    }
  }, T)
})

/** An SDK-built MCP server over Streamable HTTP (one McpServer per session) on loopback. */
async function sdkHttpServer(): Promise<{ url: string; server: Server; sessions: () => number }> {
  const build = () => {
    const s = new McpServer({ name: 'remote', version: '1.0.0' }, { capabilities: { logging: {} } })
    let remembered: string | undefined
    s.registerTool('echo', { inputSchema: { n: z.number().int() } }, async ({ n }) => ({ content: [{ type: 'text', text: `n=${JSON.stringify(n)} typeof ${typeof n}` }] }))
    s.registerTool('remember', { inputSchema: { value: z.string() } }, async ({ value }) => {
      remembered = value
      return { content: [{ type: 'text', text: 'ok' }] }
    })
    s.registerTool('ask', { inputSchema: {} }, async (_args, extra) => {
      // a request of the server's own to the client, in the middle of a call
      const r = await s.server.elicitInput({ message: 'May I?', requestedSchema: { type: 'object', properties: {} } }, { relatedRequestId: extra.requestId })
      return { content: [{ type: 'text', text: `the user said ${r.action}` }] }
    })
    s.registerTool('big', { inputSchema: { bytes: z.number().int() } }, async ({ bytes }) => ({ content: [{ type: 'text', text: 'x'.repeat(bytes) }] }))
    s.registerTool('recall', { inputSchema: {} }, async () => ({ content: [{ type: 'text', text: remembered ?? '(nothing)' }] }))
    s.registerTool('chatty', { inputSchema: { steps: z.number().int() } }, async ({ steps }, extra) => {
      await s.server.sendLoggingMessage({ level: 'info', data: `chatty starts ${steps} steps` }, extra.sessionId)
      const token = extra._meta?.progressToken
      for (let i = 1; i <= steps; i++) {
        if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps } })
      }
      return { content: [{ type: 'text', text: `done ${steps}` }] }
    })
    return s
  }
  const sessions = mcpSessions(build)
  const server = createServer((req, res) => void sessions.handle(req, res))
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, server, sessions: sessions.count }
}

describe('mcp-proxy --listen in front of an HTTP MCP server ({ url })', () => {
  let up: Awaited<ReturnType<typeof sdkHttpServer>>
  let l: McpHttpListener
  beforeAll(async () => {
    up = await sdkHttpServer()
    ;({ l } = await listen({ upstream: { url: up.url } }))
  })
  afterAll(async () => {
    await l.close()
    up.server.closeAllConnections()
    await new Promise((r) => up.server.close(r))
  })

  it('repairs before forwarding and keeps two concurrent sessions apart', async () => {
    const a = await connect(l.url)
    const b = await connect(l.url)
    try {
      expect(a.transport.sessionId).not.toBe(b.transport.sessionId)
      expect(up.sessions()).toBe(2) // one upstream session each
      expect(text(await a.client.callTool({ name: 'echo', arguments: { n: '7' } }))).toBe('n=7 typeof number')
      await Promise.all([a.client.callTool({ name: 'remember', arguments: { value: 'alpha' } }), b.client.callTool({ name: 'remember', arguments: { value: 'beta' } })])
      const [ra, rb] = await Promise.all([a.client.callTool({ name: 'recall', arguments: {} }), b.client.callTool({ name: 'recall', arguments: {} })])
      expect([text(ra), text(rb)]).toEqual(['alpha', 'beta'])
      // a refused call is answered by the gate
      const refused = await a.client.callTool({ name: 'echo', arguments: { n: 'seven' } })
      expect(refused.isError).toBe(true)
      expect(text(refused)).toMatch(/echo/)
    } finally {
      await a.transport.terminateSession()
      await Promise.all([a.client.close(), b.client.close()])
    }
    await until(() => up.sessions() === 1) // the DELETE reached the upstream session too
  }, T)

  it('a writes tool waits for the user: the proxy’s elicitation reaches the client over HTTP, and only an accept runs it', async () => {
    const { l: gated } = await listen({ upstream: { url: up.url }, config: { version: 1, tools: [{ name: 'remember', writes: true }] } })
    const asked: string[] = []
    let answer: 'accept' | 'decline' = 'decline'
    const { client } = await connect(gated.url, {}, (message) => {
      asked.push(message)
      return answer
    })
    try {
      const declined = await client.callTool({ name: 'remember', arguments: { value: 'no' } })
      expect(declined.isError).toBe(true)
      expect(text(await client.callTool({ name: 'recall', arguments: {} }))).toBe('(nothing)') // never reached the server
      answer = 'accept'
      expect(text(await client.callTool({ name: 'remember', arguments: { value: 'yes' } }))).toBe('ok')
      expect(text(await client.callTool({ name: 'recall', arguments: {} }))).toBe('yes')
      expect(asked).toHaveLength(2)
      expect(asked[1]).toMatch(/remember/)
    } finally {
      await client.close()
      await gated.close()
    }
  }, T)

  it('a request of the server’s own reaches the client mid-call and its answer gets back; 20 concurrent calls each get theirs', async () => {
    const asked: string[] = []
    const { client } = await connect(l.url, {}, (message) => {
      asked.push(message)
      return 'accept'
    })
    try {
      expect(text(await client.callTool({ name: 'ask', arguments: {} }))).toBe('the user said accept')
      expect(asked).toEqual(['May I?'])
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => client.callTool({ name: 'echo', arguments: { n: i % 2 === 0 ? String(i) : i } })))
      expect(results.map(text)).toEqual(Array.from({ length: 20 }, (_, i) => `n=${i} typeof number`))
    } finally {
      await client.close()
    }
  }, T)

  it('an upstream answer over maxMessageBytes fails that call, not the session', async () => {
    const { l: small } = await listen({ upstream: { url: up.url }, maxMessageBytes: 4096 })
    const { client } = await connect(small.url)
    try {
      await expect(client.callTool({ name: 'big', arguments: { bytes: 20_000 } })).rejects.toThrow(/sent a message over 4096 bytes/)
      expect(text(await client.callTool({ name: 'big', arguments: { bytes: 10 } }))).toBe('x'.repeat(10))
    } finally {
      await client.close()
      await small.close()
    }
  }, T)

  it('server → client logging and progress notifications reach the client', async () => {
    const { client } = await connect(l.url)
    try {
      const logged: unknown[] = []
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logged.push(n.params.data))
      await client.setLoggingLevel('info')
      const progress: number[] = []
      const r = await client.callTool({ name: 'chatty', arguments: { steps: 3 } }, undefined, { onprogress: (p) => void progress.push(p.progress) })
      expect(text(r)).toBe('done 3')
      expect(progress).toEqual([1, 2, 3])
      await until(() => logged.length > 0)
      expect(logged).toEqual(['chatty starts 3 steps'])
    } finally {
      await client.close()
    }
  }, T)
})

describe('mcp-proxy --listen: the listener’s own checks', () => {
  let l: McpHttpListener
  let logs: string[]
  beforeAll(async () => {
    ;({ l, logs } = await listen({ upstream: { command: [process.execPath, '-e', TINY] }, bearerToken: 's3cret-token', maxMessageBytes: 4096, maxSessions: 2, allowedOrigins: ['https://app.example'] }))
  })
  afterAll(() => l.close())
  const auth = { authorization: 'Bearer s3cret-token' }

  it('bearer token: missing or wrong → 401 with WWW-Authenticate; the right one works', async () => {
    const none = await rawMcpRequest(l.url, { body: INIT })
    expect(none.status).toBe(401)
    expect(none.headers['www-authenticate']).toMatch(/^Bearer/)
    const wrong = await rawMcpRequest(l.url, { body: INIT, headers: { authorization: 'Bearer s3cret-tokeN' } })
    expect(wrong.status).toBe(401)
    expect(JSON.parse(wrong.body).error.message).toMatch(/bearer token is wrong/)
    expect(JSON.stringify(wrong)).not.toContain('s3cret-token')
    await expect(connect(l.url)).rejects.toThrow(/Unauthorized/)
    const { client, transport } = await connect(l.url, auth)
    try {
      expect(text(await client.callTool({ name: 'echo', arguments: { n: '2' } }))).toBe('n=2 typeof number')
    } finally {
      await transport.terminateSession()
      await client.close()
    }
    expect(logs.join('\n')).toMatch(/bearer token required/)
    expect(logs.join('\n')).not.toContain('s3cret')
  }, T)

  it('Origin: a foreign one → 403; loopback and allowed ones pass; Host must be a loopback name', async () => {
    const evil = await rawMcpRequest(l.url, { body: INIT, headers: { ...auth, origin: 'https://evil.example' } })
    expect(evil.status).toBe(403)
    expect(JSON.parse(evil.body).error.message).toMatch(/Origin `https:\/\/evil.example` is not allowed/)
    expect((await rawMcpRequest(l.url, { body: INIT, headers: { ...auth, origin: 'null' } })).status).toBe(403)
    const port = new URL(l.url).port
    const rebind = await rawMcpRequest(l.url, { body: INIT, headers: { ...auth, host: `evil.example:${port}` } })
    expect(rebind.status).toBe(403)
    expect(JSON.parse(rebind.body).error.message).toMatch(/not a loopback name/)
    for (const origin of [`http://localhost:${port}`, 'http://127.0.0.1:5173', 'https://app.example']) {
      const ok = await rawMcpRequest(l.url, { body: INIT, headers: { ...auth, origin, host: `localhost:${port}` } })
      expect(ok.status, origin).toBe(200)
      await rawMcpRequest(l.url, { method: 'DELETE', headers: { ...auth, 'mcp-session-id': String(ok.headers['mcp-session-id']), 'mcp-protocol-version': '2025-11-25' } })
    }
  }, T)

  it('a body over maxMessageBytes → 413; another path → 404; an unknown session → 404', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { pad: 'x'.repeat(5000) } })
    const r = await rawMcpRequest(l.url, { body: big, headers: auth })
    expect(r.status).toBe(413)
    expect(JSON.parse(r.body).error.message).toMatch(/over the limit of 4096/)
    expect((await rawMcpRequest(l.url.replace(/\/mcp$/, '/other'), { body: INIT, headers: auth })).status).toBe(404)
    const unknown = await rawMcpRequest(l.url, { body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }), headers: { ...auth, 'mcp-session-id': 'nope' } })
    expect(unknown.status).toBe(404)
  }, T)

  it('sessions beyond maxSessions → 503; ending one frees a place; a refused initialize holds none', async () => {
    for (let i = 0; i < 3; i++) {
      const noAccept = await rawMcpRequest(l.url, { body: INIT, headers: { ...auth, accept: 'application/json' } })
      expect(noAccept.status).toBe(406) // the SDK transport's own check
    }
    const a = await connect(l.url, auth)
    const b = await connect(l.url, auth)
    const third = await rawMcpRequest(l.url, { body: INIT, headers: auth })
    expect(third.status).toBe(503)
    expect(JSON.parse(third.body).error.message).toMatch(/2 sessions are open/)
    await a.transport.terminateSession()
    const c = await connect(l.url, auth)
    expect(text(await c.client.callTool({ name: 'echo', arguments: { n: 3 } }))).toBe('n=3 typeof number')
    await Promise.all([a.client.close(), b.client.close(), c.client.close()])
  }, T)
})

describe('toolgate mcp-proxy --listen (the built CLI)', () => {
  const cli = join(root, 'dist', 'cli', 'main.js')

  it('serves server-filesystem over HTTP on a free port, and exits 0 on SIGTERM', async () => {
    if (!existsSync(join(root, 'dist', 'proxy', 'mcp', 'http.js'))) throw new Error('run `npm run build:ts` first: this test spawns dist/cli/main.js')
    const child = spawn(process.execPath, [cli, 'mcp-proxy', '--listen', '127.0.0.1:0', '--', process.execPath, fsServer, dir], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    const { url } = await listenerUrl(child)
    try {
      const { client, transport } = await connect(url)
      const head = await client.callTool({ name: 'read_text_file', arguments: { path: join(dir, 'five.txt'), head: '2' } })
      expect(text(head).split('\n').filter(Boolean)).toEqual(['one', 'two'])
      await transport.terminateSession()
      await client.close()
    } finally {
      child.kill('SIGTERM')
    }
    expect(await exited).toBe(0)
    expect(stdout).toBe('') // nothing but protocol on stdout, and over HTTP there is none
  }, T)
})
