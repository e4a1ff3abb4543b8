// toolgate/identity: verifyCaller and createCallerVerifier against a real key set served on
// loopback, with tokens signed by jose (EdDSA, ES256, RS256), and every forged or stale token an
// attacker would try: alg none, HS256 signed with the issuer's public key, an unknown kid, an
// algorithm outside `algorithms`, expired, not yet valid, another issuer or audience, a changed
// payload. Rotation goes through the real remote key set (refetch on a new kid, bounded by the
// cooldown). The verified caller then drives a real gate's decisions.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { ToolGate, ToolGateError } from '../src-ts/index'
import { configureIdentity, createCallerVerifier, verifyCaller, type CallerVerifier, type JwtIdentityConfig } from '../src-ts/identity'
import { AUDIENCE, hmacWithPublicKey, ISSUER, issuerKey, noneToken, sign, startJwks, type IssuerKey, type JwksServer } from './helpers/jwks'

let ed: IssuerKey
let es: IssuerKey
let rs: IssuerKey
let es384: IssuerKey
let outsider: IssuerKey
let jwks: JwksServer
let config: JwtIdentityConfig

beforeAll(async () => {
  ;[ed, es, rs, es384, outsider] = await Promise.all([issuerKey('EdDSA'), issuerKey('ES256'), issuerKey('RS256'), issuerKey('ES384'), issuerKey('ES256')])
  jwks = await startJwks([ed.jwk, es.jwk, rs.jwk, es384.jwk])
  config = { issuer: ISSUER, audience: AUDIENCE, jwksUrl: jwks.url }
})
afterAll(() => jwks.close())

/** The refusal `p` rejects with: code, reason, and its message (checked never to hold `token`). */
async function refusal(p: Promise<unknown>, token?: string): Promise<ToolGateError> {
  const err = await p.then(
    () => {
      throw new Error('expected a refusal, got a caller')
    },
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(ToolGateError)
  const e = err as ToolGateError
  expect(e.code).toBe('E_UNAUTHENTICATED')
  // no part of the token is echoed (its longest part stands for it)
  const longest = (token ?? '').split(/[. ]/).sort((a, b) => b.length - a.length)[0] ?? ''
  if (longest.length >= 16) expect(e.message).not.toContain(longest.slice(0, 16))
  return e
}

describe('verifyCaller: tokens signed by the issuer', () => {
  it.each(['EdDSA', 'ES256', 'RS256'] as const)('%s: the caller is the subject with its roles', async (alg) => {
    const key = { EdDSA: ed, ES256: es, RS256: rs }[alg]
    const token = await sign(key, { roles: ['analyst', 'reader'] })
    const ctx = await verifyCaller(`Bearer ${token}`, { identity: { jwt: config } })
    expect(ctx).toEqual({ subject: 'alice', roles: ['analyst', 'reader'], session: '["alice"]' })
    // the bare token and a lower-case scheme are the same
    expect((await verifyCaller(token, { jwt: config })).subject).toBe('alice')
    expect((await verifyCaller(`bearer  ${token}`, config)).subject).toBe('alice')
  })

  it('one verifier per config: the key set is fetched once for many calls', async () => {
    const cfg = { ...config, audience: [AUDIENCE, 'other'] }
    const before = jwks.fetches()
    for (let i = 0; i < 20; i++) await verifyCaller(await sign(es), cfg)
    expect(jwks.fetches() - before).toBe(1)
  })

  it('a token within the clock tolerance passes; past it, it is expired', async () => {
    expect((await verifyCaller(await sign(ed, {}, { expIn: -10 }), config)).subject).toBe('alice')
    const late = await sign(ed, {}, { expIn: -60 })
    expect((await refusal(verifyCaller(late, config), late)).reason).toBe('expired')
    const strict = { ...config, clockToleranceSeconds: 0 }
    expect((await refusal(verifyCaller(await sign(ed, {}, { expIn: -10 }), strict))).reason).toBe('expired')
    // an issuer whose clock runs a little ahead: iat within the tolerance passes, beyond it not
    expect((await verifyCaller(await sign(ed, {}, { iatIn: 10 }), config)).subject).toBe('alice')
    const ahead = await refusal(verifyCaller(await sign(ed, {}, { iatIn: 10 }), strict))
    expect(ahead).toMatchObject({ reason: 'not_yet_valid', message: expect.stringContaining('(iat)') })
  })
})

describe('verifyCaller: a config changed in place is followed', () => {
  it('a key removed from the config object (block replaced, Object.assign of a new file, list edited) stops verifying at once', async () => {
    const leaked = await issuerKey('EdDSA')
    const block = (keys: IssuerKey[], audience = AUDIENCE) => ({ issuer: ISSUER, audience, publicKeys: keys.map((k) => k.jwk as Record<string, unknown>) })
    // the host's one config object, reloaded in place
    const cfg: { tools: unknown[]; identity: { jwt: ReturnType<typeof block> } } = { tools: [], identity: { jwt: block([leaked, es]) } }
    const stolen = await sign(leaked, { roles: ['admin'] }, { sub: 'mallory' })
    expect((await verifyCaller(`Bearer ${stolen}`, cfg)).subject).toBe('mallory')

    cfg.identity = { jwt: block([es]) } // the identity block replaced
    expect((await refusal(verifyCaller(`Bearer ${stolen}`, cfg))).reason).toBe('unknown_kid')
    expect((await verifyCaller(await sign(es), cfg)).subject).toBe('alice')

    cfg.identity.jwt.publicKeys.push(leaked.jwk as Record<string, unknown>) // edited in place: back in
    expect((await verifyCaller(stolen, cfg)).subject).toBe('mallory')
    cfg.identity.jwt.publicKeys.pop() // and out again
    expect((await refusal(verifyCaller(stolen, cfg))).reason).toBe('unknown_kid')

    Object.assign(cfg, JSON.parse(JSON.stringify({ tools: [], identity: { jwt: block([leaked, es]) } }))) // a new file read over it
    expect((await verifyCaller(stolen, cfg)).subject).toBe('mallory')
    Object.assign(cfg, JSON.parse(JSON.stringify({ tools: [], identity: { jwt: block([es], 'https://api-v2.toolgate.test') } })))
    expect((await refusal(verifyCaller(stolen, cfg))).reason).toBe('unknown_kid')
    expect((await refusal(verifyCaller(await sign(es), cfg))).reason).toBe('wrong_audience')
    expect((await verifyCaller(await sign(es, {}, { aud: 'https://api-v2.toolgate.test' }), cfg)).subject).toBe('alice')
  })

  it('an unchanged config object keeps its verifier: the key set is fetched once', async () => {
    const cfg = { identity: { jwt: { ...config, audience: [AUDIENCE, 'unchanged'] } } }
    const before = jwks.fetches()
    for (let i = 0; i < 20; i++) await verifyCaller(await sign(ed), cfg)
    expect(jwks.fetches() - before).toBe(1)
  })
})

describe('verifyCaller: what is refused, and why', () => {
  const cases: [string, string, () => Promise<string | undefined>][] = [
    ['no header at all', 'missing', async () => undefined],
    ['an empty header', 'missing', async () => ''],
    ['`Bearer` and nothing', 'missing', async () => 'Bearer'],
    ['another scheme', 'malformed', async () => 'Basic YWxpY2U6c2VjcmV0'],
    ['not a JWT', 'malformed', async () => 'Bearer not-a-jwt'],
    ['four parts', 'malformed', async () => `Bearer ${await sign(ed)}.x`],
    ['a header that is not JSON', 'malformed', async () => `Bearer ${Buffer.from('{nope').toString('base64url')}.e30.sig`],
    ['longer than 16 KiB', 'malformed', async () => `Bearer ${'a'.repeat(20_000)}.b.c`],
    ['expired', 'expired', async () => sign(ed, {}, { expIn: -3600 })],
    ['not yet valid (nbf)', 'not_yet_valid', async () => sign(ed, {}, { nbfIn: 3600 })],
    ['issued in the future (iat a day ahead)', 'not_yet_valid', async () => sign(ed, {}, { iatIn: 86_400 })],
    ['issued in the future (iat and exp a year ahead)', 'not_yet_valid', async () => sign(ed, {}, { iatIn: 365 * 86_400, expIn: 365 * 86_400 + 300 })],
    ['an iat that is not a number', 'bad_claims', async () => sign(ed, { iat: 'yesterday' as unknown as number })],
    ['another issuer', 'wrong_issuer', async () => sign(ed, {}, { iss: 'https://evil.example/' })],
    ['another audience', 'wrong_audience', async () => sign(ed, {}, { aud: 'https://other-api.example' })],
    ['alg: none', 'alg_not_allowed', async () => noneToken({ roles: ['admin'] })],
    ['HS256 signed with the RS256 public key (PEM) as secret', 'alg_not_allowed', async () => hmacWithPublicKey(rs.pem, rs.kid)],
    ['HS256 signed with the EdDSA public JWK as secret', 'alg_not_allowed', async () => hmacWithPublicKey(JSON.stringify(ed.jwk), ed.kid)],
    ['a kid the key set does not hold', 'unknown_kid', async () => sign(outsider)],
    ['the issuer\'s kid, signed by another key', 'bad_signature', async () => sign(outsider, {}, { kid: es.kid })],
    ['ES384: in the key set but outside `algorithms`', 'alg_not_allowed', async () => sign(es384)],
    ['no exp', 'bad_claims', async () => sign(ed, {}, { expIn: null })],
    ['no subject', 'bad_claims', async () => sign(ed, {}, { sub: null })],
    ['roles that are not strings', 'bad_claims', async () => sign(ed, { roles: ['a', { admin: true }] })],
    ['more than 64 roles', 'bad_claims', async () => sign(ed, { roles: Array.from({ length: 65 }, (_, i) => `r${i}`) })],
  ]
  it.each(cases)('%s → %s', async (_name, reason, make) => {
    const token = await make()
    const e = await refusal(verifyCaller(token, config), token)
    expect(e.reason).toBe(reason)
    expect(e.message).toMatch(/^unauthenticated: /)
  })

  it('a payload changed after signing (roles raised) → bad_signature', async () => {
    const [h, , s] = (await sign(ed, { roles: ['reader'] })).split('.')
    const now = Math.floor(Date.now() / 1000)
    const forged = `${h}.${Buffer.from(JSON.stringify({ iss: ISSUER, aud: AUDIENCE, sub: 'alice', roles: ['admin'], iat: now, exp: now + 300 })).toString('base64url')}.${s}`
    expect((await refusal(verifyCaller(forged, config), forged)).reason).toBe('bad_signature')
  })

  it('made-up kids do not turn into fetches: one refetch per cooldown at most', async () => {
    const v = await createCallerVerifier(config)
    await v.verify(await sign(ed)) // first fetch
    const before = jwks.fetches()
    for (let i = 0; i < 25; i++) {
      const stranger = await sign(outsider, {}, { kid: `made-up-${i}` })
      expect((await refusal(v.verify(stranger))).reason).toBe('unknown_kid')
    }
    expect(jwks.fetches() - before).toBe(0) // within the 30 s default cooldown after the first fetch
  })
})

describe('createCallerVerifier: key rotation and key-set failures', () => {
  let rotating: JwksServer
  let v: CallerVerifier
  let next: IssuerKey
  beforeAll(async () => {
    next = await issuerKey('EdDSA')
    rotating = await startJwks([ed.jwk])
    v = await createCallerVerifier({ issuer: ISSUER, audience: AUDIENCE, jwksUrl: rotating.url }, { jwks: { cooldownMs: 0 } })
  })
  afterAll(() => rotating.close())

  it('a new key appears: its first token refetches the set; the retired key is then refused', async () => {
    expect((await v.verify(await sign(ed))).subject).toBe('alice')
    expect(rotating.fetches()).toBe(1)
    rotating.setKeys([next.jwk])
    expect((await v.verify(await sign(next, {}, { sub: 'bob' }))).subject).toBe('bob')
    expect(rotating.fetches()).toBe(2)
    expect((await refusal(v.verify(await sign(ed)))).reason).toBe('unknown_kid')
  })

  it('a key set that cannot be fetched or read refuses (keys_unavailable), never lets through', async () => {
    const broken = await startJwks([ed.jwk])
    try {
      const cases: [number, string][] = [[500, 'oops'], [200, 'not json'], [200, JSON.stringify({ keys: [ed.jwk], pad: 'x'.repeat(300 * 1024) })]]
      for (const [status, body] of cases) {
        broken.breakWith(status, body)
        const fresh = await createCallerVerifier({ issuer: ISSUER, audience: AUDIENCE, jwksUrl: broken.url })
        expect((await refusal(fresh.verify(await sign(ed)))).reason).toBe('keys_unavailable')
      }
    } finally {
      await broken.close()
    }
    const gone = await createCallerVerifier({ issuer: ISSUER, audience: AUDIENCE, jwksUrl: 'http://127.0.0.1:9/jwks.json' })
    expect((await refusal(gone.verify(await sign(ed)))).reason).toBe('keys_unavailable')
  })

  it('while the key set is down, junk tokens do not turn into fetches: one failed fetch, then none for the cooldown, then a retry', async () => {
    const down = await startJwks([ed.jwk])
    try {
      down.breakWith(500, 'down')
      const failureCooldownMs = 1500
      const fresh = await createCallerVerifier({ issuer: ISSUER, audience: AUDIENCE, jwksUrl: down.url }, { jwks: { failureCooldownMs } })
      for (let wave = 0; wave < 10; wave++) {
        // well-formed tokens with made-up kids, four at a time, as a flood would send them
        const tokens = await Promise.all(Array.from({ length: 4 }, (_, i) => sign(outsider, {}, { kid: `junk-${wave}-${i}` })))
        for (const e of await Promise.all(tokens.map((t) => refusal(fresh.verify(t))))) expect(e.reason).toBe('keys_unavailable')
      }
      expect(down.fetches()).toBe(1) // 40 requests well within the cooldown
      const e = await refusal(fresh.verify(await sign(ed)))
      expect(e).toMatchObject({ reason: 'keys_unavailable', message: expect.stringMatching(/next try in/) })
      // the cooldown over and the issuer back: the next token fetches the set again and passes
      down.heal()
      await new Promise((r) => setTimeout(r, failureCooldownMs + 50))
      const before = down.fetches()
      expect((await fresh.verify(await sign(ed))).subject).toBe('alice')
      expect(down.fetches()).toBe(before + 1)
    } finally {
      await down.close()
    }
  })

  it('during the cooldown, keys already fetched still verify; a kid they lack is keys_unavailable, without a fetch', async () => {
    const flaky = await startJwks([ed.jwk])
    try {
      const fresh = await createCallerVerifier({ issuer: ISSUER, audience: AUDIENCE, jwksUrl: flaky.url }, { jwks: { cooldownMs: 0, failureCooldownMs: 60_000 } })
      expect((await fresh.verify(await sign(ed))).subject).toBe('alice')
      expect(flaky.fetches()).toBe(1)
      flaky.breakWith(503, 'down')
      // an unknown kid may refetch (cooldownMs 0): the fetch fails
      expect((await refusal(fresh.verify(await sign(outsider)))).reason).toBe('keys_unavailable')
      expect(flaky.fetches()).toBe(2)
      expect((await fresh.verify(await sign(ed, {}, { sub: 'bob' }))).subject).toBe('bob')
      for (let i = 0; i < 10; i++) expect((await refusal(fresh.verify(await sign(outsider, {}, { kid: `k${i}` })))).reason).toBe('keys_unavailable')
      expect(flaky.fetches()).toBe(2)
    } finally {
      await flaky.close()
    }
  })
})

describe('createCallerVerifier: keys given inline', () => {
  it('a JWK with kid and a PEM key (no kid: tried for any kid) both verify; a stranger does not', async () => {
    const v = await createCallerVerifier({ issuer: ISSUER, audience: AUDIENCE, publicKeys: [es.jwk as Record<string, unknown>, rs.pem] })
    expect((await v.verify(await sign(es))).subject).toBe('alice')
    expect((await v.verify(await sign(rs, {}, { kid: 'whatever' }))).subject).toBe('alice')
    expect((await v.verify(await sign(rs, {}, { kid: null }))).subject).toBe('alice')
    expect((await refusal(v.verify(await sign(outsider)))).reason).toBe('unknown_kid')
    expect((await refusal(v.verify(await hmacWithPublicKey(rs.pem, rs.kid)))).reason).toBe('alg_not_allowed')
  })

  it('two kid-less keys of one type: the one that verifies wins', async () => {
    const other = await issuerKey('ES256')
    const v = await createCallerVerifier({ issuer: ISSUER, audience: AUDIENCE, publicKeys: [other.pem, es.pem] })
    expect((await v.verify(await sign(es, {}, { kid: null }))).subject).toBe('alice')
    expect((await refusal(v.verify(await sign(outsider, {}, { kid: null })))).reason).toBe('bad_signature')
  })
})

describe('claim layouts of real identity providers', () => {
  let v: (jwt: Partial<JwtIdentityConfig>, claims: Record<string, unknown>) => Promise<unknown>
  beforeAll(() => {
    v = async (jwt, claims) => {
      const verifier = await createCallerVerifier({ issuer: ISSUER, audience: AUDIENCE, publicKeys: [ed.jwk as Record<string, unknown>], ...jwt })
      return verifier.verify(await sign(ed, claims))
    }
  })

  it('Keycloak: realm_access.roles (a dotted path), preferred_username as identity', async () => {
    const ctx = await v({ rolesClaim: 'realm_access.roles', identityClaims: { username: 'preferred_username', client: 'resource_access.toolgate.roles' } }, {
      realm_access: { roles: ['analyst', 'offline_access'] }, preferred_username: 'alice', resource_access: { toolgate: { roles: ['writer'] } },
    })
    expect(ctx).toEqual({ subject: 'alice', roles: ['analyst', 'offline_access'], identity: { username: 'alice', client: ['writer'] } })
  })

  it('Entra ID: app roles in `roles`, delegated scopes in `scp` (one space-separated string), oid as subject', async () => {
    expect(await v({ subjectClaim: 'oid', identityClaims: { tenant: 'tid' } }, { oid: '0000-oid', roles: ['Tools.Read'], tid: 't-1' })).toEqual({ subject: '0000-oid', roles: ['Tools.Read'], identity: { tenant: 't-1' } })
    expect(await v({ rolesClaim: 'scp' }, { scp: 'tools.read  tools.write' })).toMatchObject({ roles: ['tools.read', 'tools.write'] })
  })

  it('Auth0: a namespaced claim whose name holds dots is read whole; commas separate too', async () => {
    expect(await v({ rolesClaim: 'https://toolgate.example/roles' }, { 'https://toolgate.example/roles': ['admin'] })).toMatchObject({ roles: ['admin'] })
    expect(await v({ rolesClaim: 'permissions' }, { permissions: 'read:reports, write:reports,read:reports' })).toMatchObject({ roles: ['read:reports', 'write:reports'] })
  })

  it('no roles claim: no roles (never a default role)', async () => {
    expect(await v({}, {})).toEqual({ subject: 'alice', roles: [] })
  })
})

describe('configuration errors are E_CONFIG, before any token', () => {
  const base = { issuer: ISSUER, audience: AUDIENCE }
  const cases: [string, unknown, RegExp][] = [
    ['both key sources', { ...base, jwksUrl: 'https://idp.example/jwks', publicKeys: ['x'] }, /exactly one of `jwksUrl` and `publicKeys`/],
    ['no key source', base, /exactly one/],
    ['http JWKS off loopback', { ...base, jwksUrl: 'http://idp.example/jwks' }, /must be https/],
    ['HS256 allowed', { ...base, jwksUrl: 'https://idp.example/jwks', algorithms: ['RS256', 'HS256'] }, /`HS256` is not accepted/],
    ['none allowed', { ...base, jwksUrl: 'https://idp.example/jwks', algorithms: ['none'] }, /`none` is not accepted/],
    ['a symmetric key', { ...base, publicKeys: [{ kty: 'oct', k: 'c2VjcmV0' }] }, /symmetric `oct` keys are not accepted/],
    ['a private JWK', { ...base, publicKeys: [{ kty: 'OKP', crv: 'Ed25519', x: 'EU4PSTzKv0H5mh3ZnqK4tvcgLAOd89nzLRq8zRKwFDU', d: 'secret' }] }, /private key members/],
    ['a private PEM', { ...base, publicKeys: ['-----BEGIN PRIVATE KEY-----\nMC4CAQA=\n-----END PRIVATE KEY-----'] }, /BEGIN PUBLIC KEY/],
    ['an unknown key', { ...base, jwksUrl: 'https://idp.example/jwks', rolesclaim: 'x' }, /`identity\.jwt\.rolesclaim`: unknown key/],
    ['no audience', { issuer: ISSUER, jwksUrl: 'https://idp.example/jwks' }, /audience/],
  ]
  it.each(cases)('%s', async (_n, jwt, message) => {
    await expect(createCallerVerifier(jwt)).rejects.toMatchObject({ code: 'E_CONFIG', message: expect.stringMatching(message) })
  })

  it('the private key material never appears in the message', async () => {
    const err = await createCallerVerifier({ ...base, publicKeys: [{ kty: 'OKP', crv: 'Ed25519', x: 'abc', d: 'TOP-SECRET-D' }] }).catch((e: Error) => e)
    expect((err as Error).message).not.toContain('TOP-SECRET-D')
  })

  it('verifyCaller without a config: E_CONFIG until configureIdentity sets one', async () => {
    const token = await sign(es, { roles: ['x'] })
    await expect(verifyCaller(token)).rejects.toMatchObject({ code: 'E_CONFIG' })
    await expect(verifyCaller(token, { identity: undefined })).rejects.toMatchObject({ code: 'E_CONFIG' })
    await configureIdentity({ identity: { jwt: config } })
    expect(await verifyCaller(`Bearer ${token}`)).toMatchObject({ subject: 'alice', roles: ['x'] })
  })

  it('the config given to configureIdentity is followed: a key removed in place stops verifying; a block made invalid is E_CONFIG', async () => {
    const leaked = await issuerKey('EdDSA')
    const stolen = await sign(leaked, { roles: ['admin'] }, { sub: 'mallory' })
    for (const options of [undefined, { jwks: { cooldownMs: 0 } }]) {
      const host = { identity: { jwt: { issuer: ISSUER, audience: AUDIENCE, publicKeys: [leaked.jwk, es.jwk] as Record<string, unknown>[] } } }
      await configureIdentity(host, options)
      expect((await verifyCaller(stolen)).subject).toBe('mallory')
      host.identity.jwt.publicKeys.splice(0, 1)
      expect((await refusal(verifyCaller(stolen))).reason).toBe('unknown_kid')
      expect((await verifyCaller(await sign(es))).subject).toBe('alice')
      // never the old verifier: a block made invalid in place is E_CONFIG
      host.identity.jwt.publicKeys = [{ kty: 'oct', k: 'c2VjcmV0' }]
      await expect(verifyCaller(await sign(es))).rejects.toMatchObject({ code: 'E_CONFIG' })
    }
    await configureIdentity({ identity: { jwt: config } })
  })
})

describe('the verified caller decides at a real gate', () => {
  it('two callers, one gate: roles and identity from the token, pins from the subject', async () => {
    const gate = new ToolGate({
      tools: [
        { name: 'read_report', inputSchema: { type: 'object', properties: { owner: { type: 'string' } }, required: ['owner'] }, args: { owner: { pin: 'subject' } } },
        { name: 'delete_report', inputSchema: { type: 'object', properties: { id: { type: 'string' } } } },
      ],
      policy: {
        rules: [
          { effect: 'allow', roles: ['analyst'], tools: ['read_report'] },
          { effect: 'allow', roles: ['admin'], tools: ['delete_report'], when: "identity.tenant == 'acme'" },
        ],
      },
    })
    const cfg = { ...config, identityClaims: { tenant: 'org.tenant' } }
    const alice = await verifyCaller(await sign(ed, { roles: ['analyst'], org: { tenant: 'acme' } }), cfg)
    const bob = await verifyCaller(await sign(rs, { roles: ['admin'], org: { tenant: 'other' } }, { sub: 'bob' }), cfg)
    const read = gate.check('read_report', { owner: 'bob' }, alice)
    expect(read.allowed).toBe(true)
    expect(read.arguments).toEqual({ owner: 'alice' }) // pinned to the verified subject
    expect(gate.check('read_report', { owner: 'alice' }, bob)).toMatchObject({ allowed: false, reason: 'no_rule' })
    expect(gate.check('delete_report', { id: '1' }, bob)).toMatchObject({ allowed: false, reason: 'no_rule' }) // admin, but not tenant acme
    expect(gate.check('delete_report', { id: '1' }, alice)).toMatchObject({ allowed: false, reason: 'no_rule' })
  })
})

describe('the package subpath toolgate/identity (built dist)', () => {
  it('resolves from require and import, and verifies a token there', async () => {
    const root = join(__dirname, '..')
    if (!existsSync(join(root, 'dist', 'identity.js'))) throw new Error('run `npm run build:ts` first')
    const token = await sign(es, { roles: 'a b' })
    const script = `const { verifyCaller } = require('toolgate/identity')
      verifyCaller(process.argv[1], { identity: { jwt: JSON.parse(process.argv[2]) } }).then((c) => console.log(JSON.stringify(c)), (e) => console.log(e.code))`
    const cfg = JSON.stringify({ issuer: ISSUER, audience: AUDIENCE, publicKeys: [es.jwk] })
    expect(JSON.parse(execFileSync(process.execPath, ['-e', script, token, cfg], { cwd: root, encoding: 'utf8' }))).toEqual({ subject: 'alice', roles: ['a', 'b'], session: '["alice"]' })
    const esm = `import { verifyCaller } from 'toolgate/identity'
      console.log(await verifyCaller('Bearer x.y.z', { jwt: JSON.parse(process.argv[1]) }).catch((e) => e.code))`
    expect(execFileSync(process.execPath, ['--input-type=module', '-e', esm, cfg], { cwd: root, encoding: 'utf8' }).trim()).toBe('E_UNAUTHENTICATED')
  })
})
