// `toolgate mcp-proxy --listen` with `identity` (docs/identity.md), as users run it: the built
// CLI with a config file, in front of an SDK-built HTTP MCP server on loopback (which records
// every header it gets), a real key set on loopback, tokens signed by jose, and the official MCP
// SDK client over Streamable HTTP sending each user's token in `requestInit.headers`. Two users
// with different roles share one listener; one user's session id is worth nothing to the other.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'

import { AUDIENCE, hmacWithPublicKey, ISSUER, issuerKey, noneToken, sign, startJwks, type IssuerKey, type JwksServer } from './helpers/jwks'
import { mcpSessions } from './helpers/mcp-http-server'
import { cli, listenerUrl, rawMcpRequest, root, runMcpProxyCli, toolText } from './helpers/mcp-proxy'

const T = 60_000
const UPSTREAM_TOKEN = 'mcp-upstream-secret-42'

/** An HTTP MCP server with `read_report` and `delete_report`; it records each request's headers and each call it runs. */
async function reportsServer(): Promise<{ url: string; server: Server; headers: IncomingHttpHeaders[]; ran: string[] }> {
  const headers: IncomingHttpHeaders[] = []
  const ran: string[] = []
  const build = () => {
    const s = new McpServer({ name: 'reports', version: '1.0.0' })
    s.registerTool('read_report', { inputSchema: { owner: z.string(), id: z.string() } }, async ({ owner, id }) => {
      ran.push(`read_report ${owner} ${id}`)
      return { content: [{ type: 'text', text: `report ${id} of ${owner}` }] }
    })
    s.registerTool('delete_report', { inputSchema: { id: z.string() } }, async ({ id }) => {
      ran.push(`delete_report ${id}`)
      return { content: [{ type: 'text', text: `deleted ${id}` }] }
    })
    return s
  }
  const sessions = mcpSessions(build)
  const server = createServer(async (req, res) => {
    headers.push(req.headers)
    await sessions.handle(req, res)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, server, headers, ran }
}

/** The built CLI with `--listen 127.0.0.1:0`; resolves with the MCP URL once it listens. */
async function startListener(args: string[], env: NodeJS.ProcessEnv): Promise<{ url: string; child: ChildProcess; stderr: () => string }> {
  if (!existsSync(cli)) throw new Error('run `npm run build:ts` first: this test spawns dist/cli/main.js')
  const child = spawn(process.execPath, [cli, 'mcp-proxy', '--listen', '127.0.0.1:0', ...args], { cwd: root, env, stdio: ['ignore', 'ignore', 'pipe'] })
  const { url, stderr } = await listenerUrl(child)
  return { url, child, stderr }
}

/** An SDK client sending `token` as the bearer token on every request. */
async function connect(url: string, token: string) {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } })
  const client = new Client({ name: 'identity-test', version: '1.0.0' })
  await client.connect(transport)
  return { client, transport }
}

const LIST = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} })
const INIT = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })

let dir: string
let ed: IssuerKey
let es: IssuerKey
let stranger: IssuerKey
let jwks: JwksServer
let up: Awaited<ReturnType<typeof reportsServer>>
let listener: Awaited<ReturnType<typeof startListener>>
let configFile: string
let alice: string
let bob: string
const env = () => ({ ...process.env, TG_TEST_MCP_TOKEN: UPSTREAM_TOKEN })

beforeAll(async () => {
  process.env.TG_TEST_MCP_TOKEN = UPSTREAM_TOKEN // for the CLI runs that inherit this environment
  dir = mkdtempSync(join(tmpdir(), 'toolgate-identity-mcp-'))
  ;[ed, es, stranger] = await Promise.all([issuerKey('EdDSA'), issuerKey('ES256'), issuerKey('ES256')])
  jwks = await startJwks([ed.jwk, es.jwk])
  up = await reportsServer()
  configFile = join(dir, 'toolgate.config.json')
  writeFileSync(configFile, JSON.stringify({
    tools: [{ name: 'read_report', args: { owner: { pin: 'subject' } } }, { name: 'delete_report' }],
    policy: { rules: [{ effect: 'allow', roles: ['analyst'], tools: ['read_report'] }, { effect: 'allow', roles: ['admin'], tools: ['delete_report'] }] },
    // Keycloak's layout: realm roles under realm_access.roles
    identity: { jwt: { issuer: ISSUER, audience: AUDIENCE, jwksUrl: jwks.url, rolesClaim: 'realm_access.roles' } },
    proxy: { upstreamHeaders: { authorization: { env: 'TG_TEST_MCP_TOKEN' } } },
  }))
  listener = await startListener(['--filter-list', '--config', configFile, '--upstream-url', up.url], env())
  alice = await sign(ed, { realm_access: { roles: ['analyst'] } }, { sub: 'alice' })
  bob = await sign(es, { realm_access: { roles: ['admin'] } }, { sub: 'bob' })
}, T)

afterAll(async () => {
  delete process.env.TG_TEST_MCP_TOKEN
  if (listener !== undefined && listener.child.exitCode === null) {
    const exited = new Promise((r) => listener.child.once('exit', r))
    listener.child.kill('SIGTERM')
    await exited
  }
  up?.server.closeAllConnections()
  await new Promise((r) => up?.server.close(r))
  await jwks?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('mcp-proxy --listen with identity: two users, one listener', () => {
  it('each user lists and may call only their own tools; the server runs only what each may', async () => {
    const a = await connect(listener.url, alice)
    const b = await connect(listener.url, bob)
    try {
      expect((await a.client.listTools()).tools.map((t) => t.name)).toEqual(['read_report'])
      expect((await b.client.listTools()).tools.map((t) => t.name)).toEqual(['delete_report'])

      // alice reads (the owner pinned to her verified subject), may not delete
      expect(toolText(await a.client.callTool({ name: 'read_report', arguments: { owner: 'bob', id: '7' } }))).toBe('report 7 of alice')
      const aDelete = await a.client.callTool({ name: 'delete_report', arguments: { id: '7' } })
      expect(aDelete.isError).toBe(true)
      // bob deletes, may not read
      expect(toolText(await b.client.callTool({ name: 'delete_report', arguments: { id: '8' } }))).toBe('deleted 8')
      const bRead = await b.client.callTool({ name: 'read_report', arguments: { owner: 'bob', id: '8' } })
      expect(bRead.isError).toBe(true)
      expect(up.ran).toEqual(['read_report alice 7', 'delete_report 8'])
    } finally {
      await a.transport.terminateSession()
      await b.transport.terminateSession()
      await Promise.all([a.client.close(), b.client.close()])
    }
  }, T)

  it('the MCP server gets the configured token, never a caller’s', () => {
    expect(up.headers.length).toBeGreaterThan(0)
    for (const h of up.headers) {
      expect(h.authorization).toBe(`Bearer ${UPSTREAM_TOKEN}`)
      for (const v of Object.values(h)) {
        expect(String(v)).not.toContain(alice.split('.')[2])
        expect(String(v)).not.toContain(bob.split('.')[2])
      }
    }
  })

  it('a session id is bound to its subject: another user presenting it gets 404, the owner goes on', async () => {
    const a = await connect(listener.url, alice)
    try {
      const sid = a.transport.sessionId!
      expect(sid).toBeTruthy()
      const asBob = { Authorization: `Bearer ${bob}`, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' }
      for (const method of ['POST', 'GET', 'DELETE']) {
        const r = await rawMcpRequest(listener.url, { method, headers: asBob, body: method === 'POST' ? JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_report', arguments: { owner: 'x', id: '1' } } }) : undefined })
        expect(r.status).toBe(404)
        expect(JSON.parse(r.body)).toMatchObject({ error: { message: expect.stringMatching(/^Session not found/) } })
      }
      // without a token the door answers first: the session's existence is not told either
      expect((await rawMcpRequest(listener.url, { headers: { 'mcp-session-id': sid }, body: LIST })).status).toBe(401)
      // the session survived: alice still uses it (bob's DELETE did not end it)
      expect((await a.client.listTools()).tools.map((t) => t.name)).toEqual(['read_report'])
      expect(up.ran).not.toContain('read_report bob 1')
    } finally {
      await a.transport.terminateSession()
      await a.client.close()
    }
  }, T)
})

describe('mcp-proxy --listen with identity: each request is decided for its own token', () => {
  it('a refreshed token with other roles takes effect in the same session, at its next request', async () => {
    const headers: Record<string, string> = { Authorization: `Bearer ${alice}` }
    const transport = new StreamableHTTPClientTransport(new URL(listener.url), { requestInit: { headers } })
    const client = new Client({ name: 'identity-refresh', version: '1.0.0' })
    await client.connect(transport)
    try {
      const sid = transport.sessionId
      expect((await client.callTool({ name: 'delete_report', arguments: { id: '21' } })).isError).toBe(true)
      // promoted: alice's next token also holds admin
      headers.Authorization = `Bearer ${await sign(ed, { realm_access: { roles: ['analyst', 'admin'] } }, { sub: 'alice' })}`
      expect(toolText(await client.callTool({ name: 'delete_report', arguments: { id: '21' } }))).toBe('deleted 21')
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['delete_report', 'read_report'])
      // demoted: a token without roles, same session — nothing is allowed any more
      headers.Authorization = `Bearer ${await sign(ed, {}, { sub: 'alice' })}`
      expect((await client.callTool({ name: 'read_report', arguments: { owner: 'alice', id: '22' } })).isError).toBe(true)
      expect((await client.listTools()).tools).toEqual([])
      expect(transport.sessionId).toBe(sid)
      expect(up.ran.filter((r) => r.endsWith(' 21') || r.endsWith(' 22'))).toEqual(['delete_report 21'])
    } finally {
      headers.Authorization = `Bearer ${alice}`
      await transport.terminateSession()
      await client.close()
    }
  }, T)
})

describe('mcp-proxy --listen with identity: one user cannot take every session', () => {
  it('at most 10 sessions per subject (429 beyond); another user still gets one', async () => {
    const open = async (token: string) => rawMcpRequest(listener.url, { headers: { Authorization: `Bearer ${token}` }, body: INIT })
    const ids: string[] = []
    try {
      for (let i = 0; i < 10; i++) {
        const r = await open(alice)
        expect(r.status).toBe(200)
        ids.push(String(r.headers['mcp-session-id']))
      }
      const over = await open(alice)
      expect(over.status).toBe(429)
      expect(over.headers['retry-after']).toBe('5')
      const other = await open(bob)
      expect(other.status).toBe(200)
      ids.push(`bob:${String(other.headers['mcp-session-id'])}`)
    } finally {
      for (const id of ids) {
        const [token, sid] = id.startsWith('bob:') ? [bob, id.slice(4)] : [alice, id]
        await rawMcpRequest(listener.url, { method: 'DELETE', headers: { Authorization: `Bearer ${token}`, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' } })
      }
    }
    // ended sessions free the subject's places
    expect((await open(alice)).status).toBe(200)
  }, T)
})

describe('mcp-proxy --listen with identity: refusals at the door', () => {
  const origin = () => listener.url.replace(/\/mcp$/, '')

  it('no token: 401 with the RFC 9728 challenge and a JSON-RPC error body; logged', async () => {
    const r = await rawMcpRequest(listener.url, { body: INIT })
    expect(r.status).toBe(401)
    expect(r.headers['www-authenticate']).toBe(`Bearer resource_metadata="${origin()}/.well-known/oauth-protected-resource"`)
    expect(JSON.parse(r.body)).toMatchObject({ jsonrpc: '2.0', id: null, error: { message: expect.stringContaining('no bearer token') } })
    await new Promise((res) => setTimeout(res, 100))
    expect(listener.stderr()).toMatch(/refused POST \/mcp: missing/)
  })

  const bad: [string, () => Promise<string>][] = [
    ['expired', () => sign(ed, { realm_access: { roles: ['admin'] } }, { expIn: -3600 })],
    ['another audience', () => sign(ed, { realm_access: { roles: ['admin'] } }, { aud: 'https://elsewhere.example' })],
    ['alg: none', async () => noneToken({ realm_access: { roles: ['admin'] } })],
    ['HS256 signed with the public key', () => hmacWithPublicKey(ed.pem, ed.kid, { realm_access: { roles: ['admin'] } })],
    ['an unknown kid', () => sign(stranger, { realm_access: { roles: ['admin'] } })],
  ]
  it.each(bad)('%s: 401 with error="invalid_token"; the SDK client cannot connect', async (_n, make) => {
    const token = await make()
    const r = await rawMcpRequest(listener.url, { headers: { Authorization: `Bearer ${token}` }, body: INIT })
    expect(r.status).toBe(401)
    expect(r.headers['www-authenticate']).toMatch(/^Bearer resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource", error="invalid_token", error_description="[^"]+"$/)
    await expect(connect(listener.url, token)).rejects.toMatchObject({ code: 401, message: expect.stringContaining('Unauthorized: unauthenticated') })
    expect(listener.stderr()).not.toContain(token.split('.')[2] || token.split('.')[1])
  }, T)

  it('the header must be `Bearer <token>`: a bare token or another scheme is 401 invalid_token; the scheme in any case passes', async () => {
    for (const value of [alice, `Token ${alice}`, `DPoP ${alice}`, `Bearer\t${alice}`]) {
      const r = await rawMcpRequest(listener.url, { headers: { Authorization: value }, body: INIT })
      expect(r.status, value.slice(0, 10)).toBe(401)
      expect(r.headers['www-authenticate']).toMatch(/, error="invalid_token", error_description="[^"]*(scheme|Bearer)[^"]*"$/)
      expect(r.headers['mcp-session-id']).toBeUndefined()
    }
    for (const value of [`bearer ${alice}`, `BEARER ${alice}`]) {
      const r = await rawMcpRequest(listener.url, { headers: { Authorization: value }, body: INIT })
      expect(r.status).toBe(200)
      await rawMcpRequest(listener.url, { method: 'DELETE', headers: { Authorization: value, 'mcp-session-id': String(r.headers['mcp-session-id']), 'mcp-protocol-version': '2025-11-25' } })
    }
  }, T)

  it('serves the RFC 9728 metadata (root and /mcp) without a token', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const r = await rawMcpRequest(`${origin()}${path}`, { method: 'GET' })
      expect(r.status).toBe(200)
      expect(JSON.parse(r.body)).toEqual({ resource: `${origin()}/mcp`, authorization_servers: [ISSUER], bearer_methods_supported: ['header'] })
    }
  })
})

describe('mcp-proxy with identity: what refuses to start', () => {
  it('--subject/--role, --token-env, or no --listen: exit 2 naming why', async () => {
    const withFlag = await runMcpProxyCli(['--listen', '127.0.0.1:0', '--config', configFile, '--subject', 'alice', '--upstream-url', up.url])
    expect(withFlag.code).toBe(2)
    expect(withFlag.err).toMatch(/--subject cannot be given/)
    const role = await runMcpProxyCli(['--listen', '127.0.0.1:0', '--config', configFile, '--role', 'admin', '--upstream-url', up.url])
    expect(role.code).toBe(2)
    expect(role.err).toMatch(/--role cannot be given/)
    process.env.TG_TEST_LISTEN_TOKEN = 'x'
    try {
      const both = await runMcpProxyCli(['--listen', '127.0.0.1:0', '--config', configFile, '--token-env', 'TG_TEST_LISTEN_TOKEN', '--upstream-url', up.url])
      expect(both.code).toBe(2)
      expect(both.err).toMatch(/both read Authorization/)
    } finally {
      delete process.env.TG_TEST_LISTEN_TOKEN
    }
    const stdio = await runMcpProxyCli(['--config', configFile, '--', process.execPath, '-e', ''])
    expect(stdio.code).toBe(2)
    expect(stdio.err).toMatch(/`identity` needs --listen/)
  }, T)
})
