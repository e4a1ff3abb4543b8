// A config reload (SIGHUP) applies the `identity` block: an operator who removes a leaked key from
// `identity.jwt.publicKeys`, or moves to a new audience, and sends SIGHUP must see the old tokens
// refused at once — by `toolgate proxy` and `toolgate mcp-proxy --listen` alike (the built CLIs,
// config files rewritten as deploy tools do, tokens signed by jose with real keys). A reload whose
// identity block does not build, or whose gate config does not compile, leaves the running config
// entirely in place (gates and verifier) and says so; identity cannot be turned off by a reload.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import type { ServerResponse } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { until, writeConfig } from './helpers/config-reload'
import { startProxy, startRawUpstream, type RawRequest, type RawUpstream, type RunningProxy } from './helpers/http-proxy'
import { AUDIENCE, ISSUER, issuerKey, sign, type IssuerKey } from './helpers/jwks'
import { cli, listenerUrl, rawMcpRequest, root, toolResult } from './helpers/mcp-proxy'

const T = 60_000
const NEW_AUDIENCE = 'https://api-v2.toolgate.test'

let dir: string
let leaked: IssuerKey
let kept: IssuerKey
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-identity-reload-'))
  ;[leaked, kept] = await Promise.all([issuerKey('EdDSA'), issuerKey('ES256')])
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** An inline-keys identity block. */
const identity = (keys: IssuerKey[], audience = AUDIENCE, extra: Record<string, unknown> = {}) => ({ jwt: { issuer: ISSUER, audience, publicKeys: keys.map((k) => k.jwk), ...extra } })

/** Sends SIGHUP and waits for the `n`th reload line (done or refused) of the log; answers it. */
async function hangup(child: ChildProcess, stderr: () => string, n: number): Promise<string> {
  child.kill('SIGHUP')
  const lines = () => stderr().split('\n').filter((l) => /SIGHUP: (config reloaded|the config was not reloaded)/.test(l))
  await until(() => lines().length >= n, `reload #${n}`)
  return lines()[n - 1]!
}

describe('toolgate proxy: SIGHUP applies the identity block', () => {
  /** Analysts may call read_report; the upstream records the tools it is offered. */
  const gates = (rolesAllowed: string[]) => ({
    tools: [{ name: 'read_report', inputSchema: { type: 'object', properties: { id: { type: 'string' } } } }],
    policy: { rules: [{ effect: 'allow', roles: rolesAllowed, tools: ['read_report'] }] },
  })
  let upstream: RawUpstream
  let proxy: RunningProxy
  let file: string
  beforeAll(async () => {
    upstream = await startRawUpstream((req: RawRequest, res: ServerResponse) => {
      const body = req.url.endsWith('/chat/completions')
        ? JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'ok' } }] })
        : '{"object":"list","data":[]}'
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body)
    })
    file = join(dir, 'proxy.json')
    writeConfig(file, { ...gates(['analyst']), identity: identity([leaked, kept]) })
    proxy = await startProxy(['--upstream', upstream.origin, '--port', '0', '--config', file])
  }, T)
  afterAll(async () => {
    await proxy?.close()
    await upstream?.close()
  })

  const status = async (token: string) => (await fetch(`${proxy.url}/v1/models`, { headers: { authorization: `Bearer ${token}` } })).status
  /** The tools the upstream was offered for an analyst's request (what the gates in force allow). */
  const offered = async (token: string): Promise<string[]> => {
    const res = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'read_report', parameters: { type: 'object' } } }] }),
    })
    expect(res.status).toBe(200)
    const got = JSON.parse(upstream.requests.at(-1)!.body) as { tools?: { function: { name: string } }[] }
    return (got.tools ?? []).map((t) => t.function.name)
  }

  it('a key removed from publicKeys and a new audience take effect at the reload; the log says identity changed', async () => {
    const stolen = await sign(leaked, { roles: ['admin'] }, { sub: 'mallory' })
    expect(await status(stolen)).toBe(200)

    writeConfig(file, { ...gates(['analyst']), identity: identity([kept], NEW_AUDIENCE) })
    expect(await hangup(proxy.child, proxy.stderr, 1)).toMatch(/SIGHUP: config reloaded from .*proxy\.json/)
    expect(await status(stolen)).toBe(401) // the revoked key no longer mints callers
    expect(proxy.stderr()).toMatch(/identity: tokens are verified against the reloaded `identity\.jwt` from now on/)
    expect(await status(await sign(leaked, {}, { aud: NEW_AUDIENCE }))).toBe(401)
    expect(await status(await sign(kept))).toBe(401) // the old audience
    expect(await status(await sign(kept, {}, { aud: NEW_AUDIENCE }))).toBe(200)
    await until(() => /refused GET \/v1\/models: unknown_kid/.test(proxy.stderr()) && /wrong_audience/.test(proxy.stderr()), 'the refusals logged')
  }, T)

  it('an identity block that does not build: nothing is reloaded (neither gates nor verifier), and the log says why', async () => {
    const analyst = await sign(kept, { roles: ['analyst'] }, { aud: NEW_AUDIENCE })
    expect(await offered(analyst)).toEqual(['read_report'])
    // the policy would refuse analysts, and the identity block asks for HMAC: E_CONFIG
    writeConfig(file, { ...gates(['admin']), identity: identity([kept], 'https://api-v3.toolgate.test', { algorithms: ['HS256'] }) })
    expect(await hangup(proxy.child, proxy.stderr, 2)).toMatch(/SIGHUP: the config was not reloaded, the running one stays: .*HS256/)
    expect(await offered(analyst)).toEqual(['read_report']) // the old gates
    expect(await status(analyst)).toBe(200) // the old verifier
    expect(await status(await sign(kept, {}, { aud: 'https://api-v3.toolgate.test' }))).toBe(401)
  }, T)

  it('a gate config that does not compile: the new identity block is not applied either', async () => {
    writeConfig(file, { tools: [{ name: 'read_report', inputSchema: { type: 'nonsense' } }], identity: identity([leaked, kept], 'https://api-v3.toolgate.test') })
    expect(await hangup(proxy.child, proxy.stderr, 3)).toMatch(/not reloaded, the running one stays/)
    expect(await status(await sign(kept, {}, { aud: NEW_AUDIENCE }))).toBe(200)
    expect(await status(await sign(kept, {}, { aud: 'https://api-v3.toolgate.test' }))).toBe(401)
    expect(await status(await sign(leaked, {}, { aud: 'https://api-v3.toolgate.test' }))).toBe(401)
  }, T)

  it('identity removed from the file: refused (a reload never opens the door); the running verifier stays', async () => {
    writeConfig(file, gates(['analyst']))
    expect(await hangup(proxy.child, proxy.stderr, 4)).toMatch(/not reloaded, the running one stays: .*identity.*restart/)
    expect((await fetch(`${proxy.url}/v1/models`)).status).toBe(401)
    expect(await status(await sign(kept, {}, { aud: NEW_AUDIENCE }))).toBe(200)
  }, T)
})

describe('toolgate mcp-proxy --listen: SIGHUP applies the identity block', () => {
  const INIT = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })
  const echoServer = [process.execPath, join(root, 'bench', 'mcp-echo-server.mjs')]
  const gates = (rolesAllowed: string[]) => ({ tools: [], policy: { rules: [{ effect: 'allow', roles: rolesAllowed, tools: ['echo'] }] } })
  let child: ChildProcess
  let url: string
  let stderr: () => string
  let file: string
  beforeAll(async () => {
    file = join(dir, 'mcp.json')
    writeConfig(file, { ...gates(['analyst']), identity: identity([leaked, kept]) })
    child = spawn(process.execPath, [cli, 'mcp-proxy', '--listen', '127.0.0.1:0', '--filter-list', '--config', file, '--', ...echoServer], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] })
    ;({ url, stderr } = await listenerUrl(child))
  }, T)
  afterAll(async () => {
    if (child !== undefined && child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r))
      child.kill('SIGTERM')
      await exited
    }
  })

  /** The status of an initialize with `token`; a session it opened is ended again. */
  const status = async (token: string): Promise<number> => {
    const r = await rawMcpRequest(url, { headers: { Authorization: `Bearer ${token}` }, body: INIT })
    const sid = r.headers['mcp-session-id']
    if (typeof sid === 'string') await rawMcpRequest(url, { method: 'DELETE', headers: { Authorization: `Bearer ${token}`, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' } })
    return r.status
  }
  /** The tools an SDK client with `token` is listed, and whether its echo call passes. */
  const session = async (token: string): Promise<{ listed: string[]; echo: boolean }> => {
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } })
    const client = new Client({ name: 'identity-reload', version: '1.0.0' })
    await client.connect(transport)
    try {
      const listed = (await client.listTools()).tools.map((t) => t.name)
      const echo = toolResult(await client.callTool({ name: 'echo', arguments: { text: 'hi', n: 1 } })).isError !== true
      return { listed, echo }
    } finally {
      await transport.terminateSession()
      await client.close()
    }
  }

  it('a key removed from publicKeys and a new audience take effect at the reload', async () => {
    const stolen = await sign(leaked, { roles: ['analyst'] }, { sub: 'mallory' })
    expect(await status(stolen)).toBe(200)
    writeConfig(file, { ...gates(['analyst']), identity: identity([kept], NEW_AUDIENCE) })
    expect(await hangup(child, stderr, 1)).toMatch(/SIGHUP: config reloaded from .*mcp\.json/)
    expect(await status(stolen)).toBe(401) // the revoked key no longer opens sessions
    expect(stderr()).toMatch(/identity: tokens are verified against the reloaded `identity\.jwt` from now on/)
    expect(stderr()).not.toMatch(/`identity`.*read at start only/)
    expect(await status(await sign(kept, { roles: ['analyst'] }))).toBe(401) // the old audience
    expect(await status(await sign(kept, { roles: ['analyst'] }, { aud: NEW_AUDIENCE }))).toBe(200)
    // the metadata names the issuer of the verifier in force
    const meta = await rawMcpRequest(url.replace(/\/mcp$/, '/.well-known/oauth-protected-resource'), { method: 'GET' })
    expect(JSON.parse(meta.body)).toMatchObject({ authorization_servers: [ISSUER] })
  }, T)

  it('an identity block that does not build: neither the gates nor the verifier change, and the log says why', async () => {
    const analyst = await sign(kept, { roles: ['analyst'] }, { aud: NEW_AUDIENCE })
    expect(await session(analyst)).toEqual({ listed: ['echo'], echo: true })
    writeConfig(file, { ...gates(['admin']), identity: identity([kept], 'https://api-v3.toolgate.test', { algorithms: ['HS256'] }) })
    expect(await hangup(child, stderr, 2)).toMatch(/SIGHUP: the config was not reloaded, the running one stays: .*HS256/)
    expect(await session(analyst)).toEqual({ listed: ['echo'], echo: true })
    expect(await status(await sign(kept, { roles: ['analyst'] }, { aud: 'https://api-v3.toolgate.test' }))).toBe(401)
  }, T)

  it('identity removed from the file: refused, the door stays', async () => {
    writeConfig(file, gates(['analyst']))
    expect(await hangup(child, stderr, 3)).toMatch(/not reloaded, the running one stays: .*identity.*restart/)
    expect((await rawMcpRequest(url, { body: INIT })).status).toBe(401)
  }, T)
})
