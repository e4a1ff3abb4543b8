// `toolgate proxy` with `identity` (docs/identity.md), as users run it: the built CLI with a
// config file, a real key set on loopback, tokens signed by jose, and the official `openai`
// client sending each user's token (as its API key, and per request in the request options).
// The upstream is a loopback stand-in that records every header it gets: the caller's token
// must never reach it, the configured upstream key must.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import type { ServerResponse } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { startProxy, startRawUpstream, type RawRequest, type RawUpstream, type RunningProxy } from './helpers/http-proxy'
import { AUDIENCE, hmacWithPublicKey, ISSUER, issuerKey, noneToken, sign, startJwks, type IssuerKey, type JwksServer } from './helpers/jwks'

const UPSTREAM_KEY = 'sk-upstream-0123456789'
const T = 60_000

/** Analysts may read (owner pinned to the caller) and list (at most 2 identical calls a minute per session), admins may delete. */
const CONFIG = {
  tools: [
    { name: 'read_report', inputSchema: { type: 'object', properties: { owner: { type: 'string' }, id: { type: 'string' } }, required: ['owner', 'id'] }, args: { owner: { pin: 'subject' } } },
    { name: 'list_reports', inputSchema: { type: 'object', properties: { folder: { type: 'string' } } }, loop: { maxIdentical: 2, windowSeconds: 60 } },
    { name: 'delete_report', inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } },
  ],
  policy: { rules: [{ effect: 'allow', roles: ['analyst'], tools: ['read_report', 'list_reports'] }, { effect: 'allow', roles: ['admin'], tools: ['delete_report'] }] },
}

/** The model's turn: a read and a delete of report 7 — or, asked to list, one list call. */
function chatTurn(req: RawRequest, res: ServerResponse): void {
  const list = req.body.includes('"content":"list"')
  const body = JSON.stringify({
    id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4.1',
    choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: list
      ? [{ id: 'call_l', type: 'function', function: { name: 'list_reports', arguments: '{"folder":"q3"}' } }]
      : [
          { id: 'call_r', type: 'function', function: { name: 'read_report', arguments: '{"owner":"someone-else","id":"7"}' } },
          { id: 'call_d', type: 'function', function: { name: 'delete_report', arguments: '{"id":"7"}' } },
        ] } }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  })
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
  res.end(body)
}

const tools = CONFIG.tools.filter((t) => t.name !== 'list_reports').map((t) => ({ type: 'function' as const, function: { name: t.name, parameters: t.inputSchema } }))
const ask = { model: 'gpt-4.1', messages: [{ role: 'user' as const, content: 'report 7' }], tools }
const askList = { model: 'gpt-4.1', messages: [{ role: 'user' as const, content: 'list' }], tools: CONFIG.tools.map((t) => ({ type: 'function' as const, function: { name: t.name, parameters: t.inputSchema } })) }

let dir: string
let ed: IssuerKey
let rs: IssuerKey
let stranger: IssuerKey
let jwks: JwksServer
let upstream: RawUpstream
let proxy: RunningProxy
let alice: string
let bob: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-identity-proxy-'))
  ;[ed, rs, stranger] = await Promise.all([issuerKey('EdDSA'), issuerKey('RS256'), issuerKey('ES256')])
  jwks = await startJwks([ed.jwk, rs.jwk])
  upstream = await startRawUpstream((req, res) => {
    if (req.url.endsWith('/chat/completions')) chatTurn(req, res)
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[]}')
  })
  writeFileSync(join(dir, 'toolgate.config.json'), JSON.stringify({
    ...CONFIG,
    identity: { jwt: { issuer: ISSUER, audience: AUDIENCE, jwksUrl: jwks.url } },
    proxy: { upstreamHeaders: { authorization: { env: 'TG_TEST_UPSTREAM_KEY' } } },
  }))
  proxy = await startProxy(['--upstream', upstream.origin, '--port', '0', '--config', join(dir, 'toolgate.config.json')], { env: { ...process.env, TG_TEST_UPSTREAM_KEY: UPSTREAM_KEY } })
  alice = await sign(ed, { roles: ['analyst'] }, { sub: 'alice' })
  bob = await sign(rs, { roles: 'admin' }, { sub: 'bob' })
}, T)

afterAll(async () => {
  await proxy?.close()
  await upstream?.close()
  await jwks?.close()
  rmSync(dir, { recursive: true, force: true })
})

const names = (r: RawRequest) => ((JSON.parse(r.body) as { tools?: { function: { name: string } }[] }).tools ?? []).map((t) => t.function.name)
const calls = (c: OpenAI.Chat.Completions.ChatCompletion) => (c.choices[0].message.tool_calls ?? []).map((t) => {
  const f = (t as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall).function
  return [f.name, JSON.parse(f.arguments) as unknown]
})

/** No header of any request the upstream got holds `token` (or any part of it). */
function neverUpstream(token: string): void {
  const sig = token.split('.')[2]
  for (const r of upstream.requests) {
    for (const v of Object.values(r.headers)) expect(String(v)).not.toContain(sig)
    expect(r.body).not.toContain(sig)
  }
}

describe('toolgate proxy with identity: two users, one proxy', () => {
  it('each user gets their own tools and decisions; the upstream gets its own key, never theirs', async () => {
    // alice's token as the client's API key (the SDK sends `Authorization: Bearer <it>`)
    const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: alice, maxRetries: 0 })
    const a = await client.chat.completions.create(ask)
    expect(names(upstream.requests.at(-1)!)).toEqual(['read_report'])
    expect(calls(a)).toEqual([['read_report', { owner: 'alice', id: '7' }]]) // owner pinned to the verified subject
    expect(a.choices[0].message.content).toContain('`delete_report` was not run (no_rule)')
    expect(upstream.requests.at(-1)!.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`)

    // bob's token per request, on the same client
    const b = await client.chat.completions.create(ask, { headers: { Authorization: `Bearer ${bob}` } })
    expect(names(upstream.requests.at(-1)!)).toEqual(['delete_report'])
    expect(calls(b)).toEqual([['delete_report', { id: '7' }]])
    expect(b.choices[0].message.content).toContain('`read_report` was not run (no_rule)')
    expect(upstream.requests.at(-1)!.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`)
    neverUpstream(alice)
    neverUpstream(bob)
  }, T)

  it('identity headers cannot widen a verified caller, and never reach the upstream', async () => {
    const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: bob, maxRetries: 0, defaultHeaders: { 'x-toolgate-subject': 'alice', 'x-toolgate-roles': 'analyst,admin' } })
    const b = await client.chat.completions.create(ask)
    expect(calls(b)).toEqual([['delete_report', { id: '7' }]])
    const got = upstream.requests.at(-1)!.headers
    expect(got['x-toolgate-subject']).toBeUndefined()
    expect(got['x-toolgate-roles']).toBeUndefined()
  }, T)

  it('loop state is per user, and per conversation inside a user (x-toolgate-session)', async () => {
    const carol = await sign(ed, { roles: ['analyst'] }, { sub: 'carol' })
    const dave = await sign(ed, { roles: ['analyst'] }, { sub: 'dave' })
    const as = (token: string, session?: string) => new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: token, maxRetries: 0, defaultHeaders: session === undefined ? {} : { 'x-toolgate-session': session } })
    // list_reports allows 2 identical calls a minute per session
    for (let i = 0; i < 2; i++) expect(calls(await as(carol).chat.completions.create(askList))).toEqual([['list_reports', { folder: 'q3' }]])
    const third = await as(carol).chat.completions.create(askList)
    expect(calls(third)).toEqual([])
    expect(third.choices[0].message.content).toContain('`list_reports` was not run (loop)')
    // dave, even naming carol's session, is in his own scope; carol's new conversation is fresh
    expect(calls(await as(dave, '["carol"]').chat.completions.create(askList))).toHaveLength(1)
    expect(calls(await as(dave).chat.completions.create(askList))).toHaveLength(1)
    expect(calls(await as(carol, 'conversation-2').chat.completions.create(askList))).toHaveLength(1)
  }, T)
})

describe('toolgate proxy with identity: refusals at the door', () => {
  const challenge = () => `Bearer resource_metadata="${proxy.url}/.well-known/oauth-protected-resource"`

  it('no token: 401 with the RFC 9728 challenge (no error= part), a JSON body, a log line; nothing upstream', async () => {
    const before = upstream.requests.length
    const res = await fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ask) })
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toBe(challenge())
    expect(await res.json()).toMatchObject({ error: { code: 'toolgate_unauthenticated', message: expect.stringContaining('no bearer token') } })
    // the Anthropic path answers in Anthropic's error shape
    const msg = await fetch(`${proxy.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    expect(msg.status).toBe(401)
    expect(await msg.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } })
    // a pass-through path is behind the same door
    expect((await fetch(`${proxy.url}/v1/models`)).status).toBe(401)
    expect(upstream.requests.length).toBe(before)
    await new Promise((r) => setTimeout(r, 100))
    expect(proxy.stderr()).toMatch(/refused POST \/v1\/chat\/completions: missing/)
  }, T)

  const bad: [string, () => Promise<string>][] = [
    ['expired', () => sign(ed, { roles: ['admin'] }, { expIn: -3600 })],
    ['not yet valid', () => sign(ed, { roles: ['admin'] }, { nbfIn: 3600 })],
    ['another issuer', () => sign(ed, { roles: ['admin'] }, { iss: 'https://evil.example/' })],
    ['another audience', () => sign(ed, { roles: ['admin'] }, { aud: 'https://elsewhere.example' })],
    ['alg: none', async () => noneToken({ roles: ['admin'] })],
    ['HS256 signed with the public key', () => hmacWithPublicKey(rs.pem, rs.kid)],
    ['an unknown kid', () => sign(stranger, { roles: ['admin'] })],
    ['not a JWT', async () => 'sk-not-a-jwt'],
  ]
  it.each(bad)('%s: the SDK gets 401 with error="invalid_token"; nothing reaches the upstream', async (_name, make) => {
    const token = await make()
    const before = upstream.requests.length
    const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: token, maxRetries: 0 })
    const err = await client.chat.completions.create(ask).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError)
    const e = err as InstanceType<typeof OpenAI.AuthenticationError>
    expect(e.status).toBe(401)
    expect(e.headers.get('www-authenticate')).toMatch(new RegExp(`^${challenge().replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}, error="invalid_token", error_description="[^"]+"$`))
    expect(upstream.requests.length).toBe(before)
    expect(proxy.stderr()).not.toContain(token.split('.')[2] || token)
  }, T)

  it('the header must be `Bearer <token>`: a bare token or another scheme is 401 invalid_token, nothing upstream; the scheme in any case passes', async () => {
    const before = upstream.requests.length
    for (const value of [alice, `Token ${alice}`, `DPoP ${alice}`, `Basic ${alice}`, `Bearer\t${alice}`, `Bearer${alice}`]) {
      const res = await fetch(`${proxy.url}/v1/models`, { headers: { authorization: value } })
      expect(res.status, value.slice(0, 10)).toBe(401)
      expect(res.headers.get('www-authenticate')).toMatch(/, error="invalid_token", error_description="[^"]*(scheme|Bearer)[^"]*"$/)
      expect(await res.json()).toMatchObject({ error: { code: 'toolgate_unauthenticated' } })
    }
    expect(upstream.requests.length).toBe(before)
    for (const value of [`Bearer ${alice}`, `bearer ${alice}`, `BEARER ${alice}`]) {
      expect((await fetch(`${proxy.url}/v1/models`, { headers: { authorization: value } })).status).toBe(200)
    }
    expect(proxy.stderr()).not.toContain(alice.split('.')[2])
  }, T)

  it('serves the RFC 9728 protected-resource metadata without a token', async () => {
    const res = await fetch(`${proxy.url}/.well-known/oauth-protected-resource`)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ resource: proxy.url, authorization_servers: [ISSUER], bearer_methods_supported: ['header'] })
  }, T)
})

describe('toolgate proxy with identity: the issuer\'s key set is down', () => {
  it('503 with Retry-After: 5, and a flood of junk tokens makes one key-set fetch, not one per request', async () => {
    const down = await startJwks([ed.jwk])
    down.breakWith(500, 'down')
    const file = join(dir, 'idp-down.json')
    writeFileSync(file, JSON.stringify({ ...CONFIG, identity: { jwt: { issuer: ISSUER, audience: AUDIENCE, jwksUrl: down.url } } }))
    const p = await startProxy(['--upstream', upstream.origin, '--port', '0', '--config', file])
    try {
      const before = upstream.requests.length
      for (let wave = 0; wave < 25; wave++) {
        // well-formed tokens with made-up kids: each would need the key set
        const tokens = await Promise.all(Array.from({ length: 4 }, (_, i) => sign(stranger, {}, { kid: `junk-${wave}-${i}` })))
        const answers = await Promise.all(tokens.map((t) => fetch(`${p.url}/v1/models`, { headers: { authorization: `Bearer ${t}` } })))
        for (const res of answers) {
          expect(res.status).toBe(503)
          expect(res.headers.get('retry-after')).toBe('5')
          expect(await res.json()).toMatchObject({ error: { code: 'toolgate_keys_unavailable' } })
        }
      }
      expect(down.fetches()).toBe(1) // 100 requests within the 5 s the answers ask clients to wait
      expect(upstream.requests.length).toBe(before)
    } finally {
      await p.close()
      await down.close()
    }
  }, T)
})

describe('toolgate proxy with identity: no token passthrough', () => {
  it('with the upstream key in x-api-key, the caller\'s Authorization is not forwarded at all', async () => {
    const file = join(dir, 'anthropic-style.json')
    writeFileSync(file, JSON.stringify({ ...CONFIG, identity: { jwt: { issuer: ISSUER, audience: AUDIENCE, jwksUrl: jwks.url } }, proxy: { upstreamHeaders: { 'x-api-key': { env: 'TG_TEST_UPSTREAM_KEY' } } } }))
    const p = await startProxy(['--upstream', upstream.origin, '--port', '0', '--config', file], { env: { ...process.env, TG_TEST_UPSTREAM_KEY: UPSTREAM_KEY } })
    try {
      const res = await fetch(`${p.url}/v1/models`, { headers: { authorization: `Bearer ${alice}`, 'x-api-key': 'the-client-s-own' } })
      expect(res.status).toBe(200)
      const got = upstream.requests.at(-1)!
      expect(got.url).toBe('/v1/models')
      expect(got.headers.authorization).toBeUndefined()
      expect(got.headers['x-api-key']).toBe(UPSTREAM_KEY)
      neverUpstream(alice)
    } finally {
      await p.close()
    }
  }, T)
})

describe('toolgate proxy with identity: what refuses to start', () => {
  const config = (extra: Record<string, unknown>) => {
    const file = join(dir, `c-${Math.random().toString(36).slice(2)}.json`)
    writeFileSync(file, JSON.stringify({ ...CONFIG, identity: { jwt: { issuer: ISSUER, audience: AUDIENCE, jwksUrl: jwks.url } }, ...extra }))
    return file
  }
  const start = (args: string[], env: NodeJS.ProcessEnv = process.env) => startProxy(['--upstream', upstream.origin, '--port', '0', ...args], { env })

  it('--subject or --role with identity: E_CONFIG, exit 2', async () => {
    await expect(start(['--config', config({}), '--subject', 'alice'])).rejects.toThrow(/exited \(2\)[\s\S]*--subject cannot be given/)
    await expect(start(['--config', config({}), '--role', 'admin'])).rejects.toThrow(/exited \(2\)[\s\S]*--role cannot be given/)
    await expect(start(['--config', config({ proxy: { session: 's' } })])).rejects.toThrow(/exited \(2\)[\s\S]*proxy\.session cannot be given/)
  }, T)

  it('an upstream header naming an unset variable: exit 2 naming it', async () => {
    const env = { ...process.env }
    delete env.TG_TEST_NOT_SET
    await expect(start(['--config', config({ proxy: { upstreamHeaders: { 'x-api-key': { env: 'TG_TEST_NOT_SET' } } } })], env)).rejects.toThrow(/exited \(2\)[\s\S]*x-api-key`: the environment variable TG_TEST_NOT_SET is not set/)
  }, T)

  it('an HMAC algorithm in the config: exit 2', async () => {
    const file = join(dir, 'hs.json')
    writeFileSync(file, JSON.stringify({ ...CONFIG, identity: { jwt: { issuer: ISSUER, audience: AUDIENCE, jwksUrl: jwks.url, algorithms: ['HS256'] } } }))
    await expect(start(['--config', file])).rejects.toThrow(/exited \(2\)[\s\S]*HS256/)
  }, T)
})
