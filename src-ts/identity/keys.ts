// Where a token's verifying key comes from: the issuer's JSON Web Key Set, fetched and cached by
// jose's `createRemoteJWKSet` (a key is looked up by `kid` and `alg`; an unknown `kid` triggers
// one refetch at most every `cooldownMs`, so key rotation works without a restart and a flood of
// made-up kids cannot turn into a flood of fetches; after a failed fetch none is tried for
// `failureCooldownMs`, so an outage of the issuer cannot either), or keys given inline in the
// config. Only public asymmetric keys are accepted: a private or symmetric key in `publicKeys` is
// `E_CONFIG`.
import { createPublicKey } from 'node:crypto'

import type { FlattenedJWSInput, JWSHeaderParameters, JWTVerifyGetKey } from 'jose'

import { ToolGateError } from '../errors'
import type { CheckedJwtConfig } from './config'

type Jose = typeof import('jose')

let jose: Promise<Jose> | undefined

/**
 * jose, loaded once and only when a verifier is built (it is an ES module; Node before 20.19
 * cannot load it from CommonJS, which is `E_CONFIG` naming the fix).
 */
export function loadJose(): Promise<Jose> {
  jose ??= import('jose').catch((err: unknown) => {
    jose = undefined
    throw new ToolGateError('E_CONFIG', `identity: the \`jose\` package cannot be loaded (${(err as Error).message.split('\n')[0]}); it needs Node ≥ 20.19 and \`npm install jose\``, { cause: err })
  })
  return jose
}

/** Tuning of the remote key set (jose's own defaults are kept unless given). */
export interface JwksOptions {
  /** Time limit of one JWKS fetch in ms (default 5000). */
  timeoutMs?: number
  /** After a fetch, how long an unknown `kid` waits before it may cause another (default 30000). */
  cooldownMs?: number
  /** How long fetched keys are used before they are fetched again (default 600000). */
  cacheMaxAgeMs?: number
  /** Largest JWKS document read, in bytes (default 256 KiB); a larger one is refused. */
  maxBytes?: number
  /**
   * After a failed fetch (no answer, not 200, not a JSON key set, too large), how long no fetch
   * is tried: a token that needs the key set meanwhile is refused `keys_unavailable` at once, keys
   * already fetched and still fresh go on verifying. Default {@link KEYS_RETRY_AFTER_SECONDS} s,
   * the `Retry-After` the servers answer with.
   */
  failureCooldownMs?: number
}

/** Default bound on a JWKS document. */
export const DEFAULT_JWKS_MAX_BYTES = 256 * 1024

/** How long a client is asked to wait (`Retry-After`) when the keys cannot be had, and no key-set fetch is tried after a failed one. */
export const KEYS_RETRY_AFTER_SECONDS = 5

/** The key lookup handed to `jwtVerify`. */
export type KeyLookup = JWTVerifyGetKey

/** The lookup for the configured keys. Throws `E_CONFIG` for key material that is not a public asymmetric key. */
export async function keyLookup(c: CheckedJwtConfig, o: JwksOptions = {}): Promise<KeyLookup> {
  const j = await loadJose()
  if ('jwksUrl' in c.keys) {
    return j.createRemoteJWKSet(c.keys.jwksUrl, {
      timeoutDuration: o.timeoutMs,
      cooldownDuration: o.cooldownMs,
      cacheMaxAge: o.cacheMaxAgeMs,
      [j.customFetch]: pausedAfterFailure(boundedFetch(o.maxBytes ?? DEFAULT_JWKS_MAX_BYTES), o.failureCooldownMs ?? KEYS_RETRY_AFTER_SECONDS * 1000),
    })
  }
  const withKid: Record<string, unknown>[] = []
  const withoutKid: Record<string, unknown>[] = []
  c.keys.publicKeys.forEach((k, i) => {
    const jwk = publicJwk(k, i)
    ;(typeof jwk.kid === 'string' ? withKid : withoutKid).push(jwk)
  })
  const named = withKid.length > 0 ? j.createLocalJWKSet({ keys: withKid as never[] }) : undefined
  const unnamed = withoutKid.length > 0 ? j.createLocalJWKSet({ keys: withoutKid as never[] }) : undefined
  // A PEM key (or a JWK without `kid`) has no key id: it is tried whatever `kid` the token names.
  return async (header: JWSHeaderParameters, token: FlattenedJWSInput) => {
    if (named !== undefined) {
      try {
        return await named(header, token)
      } catch (err) {
        if (unnamed === undefined || (err as { code?: unknown }).code !== 'ERR_JWKS_NO_MATCHING_KEY') throw err
      }
    }
    if (unnamed === undefined) throw new j.errors.JWKSNoMatchingKey()
    const { kid: _kid, ...rest } = header
    return unnamed(rest, { ...token, header: undefined })
  }
}

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']

/** One `publicKeys` entry as a public JWK (PEM converted), or `E_CONFIG` naming its index (never its content). */
function publicJwk(k: Record<string, unknown> | string, i: number): Record<string, unknown> {
  const bad = (what: string): never => {
    throw new ToolGateError('E_CONFIG', `config at \`identity.jwt.publicKeys[${i}]\`: ${what}`)
  }
  if (typeof k === 'string') {
    if (!/^\s*-----BEGIN PUBLIC KEY-----/.test(k)) bad('expected PEM text starting `-----BEGIN PUBLIC KEY-----` (SPKI); private keys and certificates are not accepted')
    let jwk: Record<string, unknown> | undefined
    try {
      jwk = createPublicKey({ key: k, format: 'pem' }).export({ format: 'jwk' }) as Record<string, unknown>
    } catch (err) {
      bad(`not a readable public key (${(err as NodeJS.ErrnoException).code ?? 'error'})`)
    }
    if (jwk === undefined || !['RSA', 'EC', 'OKP'].includes(String(jwk.kty))) return bad('not an RSA, EC or OKP public key')
    return jwk
  }
  if (!['RSA', 'EC', 'OKP'].includes(String(k.kty))) bad(`\`kty\` must be RSA, EC or OKP (symmetric \`oct\` keys are not accepted), got \`${String(k.kty)}\``)
  if (PRIVATE_MEMBERS.some((m) => m in k)) bad('holds private key members: give the public key only')
  try {
    createPublicKey({ key: k as never, format: 'jwk' })
  } catch (err) {
    bad(`not a usable public JWK (${(err as NodeJS.ErrnoException).code ?? 'error'})`)
  }
  return structuredClone(k)
}

type JwksFetch = (url: string, init: { headers: Headers; method: 'GET'; redirect: 'manual'; signal: AbortSignal }) => Promise<Response>

/**
 * `fetch`, not tried for `pauseMs` after it failed: meanwhile it fails at once, saying when it was
 * tried and when it will be again. A failure is a fetch that threw (no answer, timed out, too
 * large), an answer other than 200, or a body jose would not take as a key set. jose calls the
 * fetch only when it has to (no fresh keys, or an unknown `kid` past its cooldown), so keys it
 * holds keep verifying meanwhile.
 */
function pausedAfterFailure(fetch: JwksFetch, pauseMs: number): JwksFetch {
  let failed: { at: number; why: string } | undefined
  return async (url, init) => {
    const now = Date.now()
    if (failed !== undefined && now - failed.at < pauseMs) {
      throw new Error(`next try in ${((pauseMs - (now - failed.at)) / 1000).toFixed(1)} s: the last fetch of the key set failed ${((now - failed.at) / 1000).toFixed(1)} s ago (${failed.why})`)
    }
    let why: string | undefined
    try {
      const res = await fetch(url, init)
      if (res.status !== 200) why = `answered ${res.status}`
      else if (!isKeySet(await res.clone().text())) why = 'not a JSON key set'
      return res
    } catch (err) {
      why = (err as Error).message ?? String(err)
      throw err
    } finally {
      failed = why === undefined ? undefined : { at: Date.now(), why: why.slice(0, 120) }
    }
  }
}

/** What jose takes as a key set: a JSON object whose `keys` is a list of objects. */
function isKeySet(text: string): boolean {
  const isObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v)
  try {
    const v = JSON.parse(text) as { keys?: unknown }
    return isObject(v) && Array.isArray(v.keys) && v.keys.every(isObject)
  } catch {
    return false
  }
}

/**
 * A fetch for jose's remote key set that reads at most `max` bytes of the answer (a larger one,
 * declared or actual, fails the fetch: the token is then not judged, and the caller is refused).
 */
function boundedFetch(max: number): JwksFetch {
  return async (url, init) => {
    const res = await fetch(url, init)
    const declared = Number(res.headers.get('content-length'))
    if (Number.isFinite(declared) && declared > max) {
      await res.body?.cancel().catch(() => undefined)
      throw new Error(`the JWKS document is ${declared} bytes, over the limit of ${max}`)
    }
    if (res.body === null) return res
    const reader = res.body.getReader()
    const chunks: Uint8Array[] = []
    let size = 0
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      size += value.byteLength
      if (size > max) {
        await reader.cancel().catch(() => undefined)
        throw new Error(`the JWKS document is over the limit of ${max} bytes`)
      }
      chunks.push(value)
    }
    return new Response(Buffer.concat(chunks), { status: res.status, statusText: res.statusText, headers: res.headers })
  }
}
