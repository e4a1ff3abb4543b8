// Verifying one bearer token: the `Authorization` value (or the bare token) read, the signature
// checked by jose against the configured keys with the issuer, audience and algorithms pinned,
// the times checked with the configured leeway, and the claims turned into a CallContext. Every
// failure is one `ToolGateError` `E_UNAUTHENTICATED` whose `reason` says why; the token itself is
// never put into a message.
import { ToolGateError } from '../errors'
import { callerOf, type VerifiedCaller } from './claims'
import { checkJwtConfig, type CheckedJwtConfig } from './config'
import { keyLookup, loadJose, type JwksOptions } from './keys'

/** Why a token was refused (`ToolGateError.reason` with code `E_UNAUTHENTICATED`). */
export type UnauthenticatedReason =
  | 'missing'
  | 'malformed'
  | 'alg_not_allowed'
  | 'unknown_kid'
  | 'bad_signature'
  | 'expired'
  | 'not_yet_valid'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'bad_claims'
  | 'keys_unavailable'

/** Longest token read (Entra tokens with many groups run to a few KiB). */
export const MAX_TOKEN_CHARS = 16 * 1024

/** Options of {@link createCallerVerifier} beyond the config block. */
export interface CallerVerifierOptions {
  /** The remote key set's fetch limits and cache (jose's defaults unless given). */
  jwks?: JwksOptions
}

/** Verifies bearer tokens against one `identity.jwt` config. */
export interface CallerVerifier {
  /** The issuer tokens must come from (the `authorization_servers` entry of RFC 9728 metadata). */
  readonly issuer: string
  /**
   * The caller a bearer token proves: `Authorization` header value (`Bearer <jwt>`) or the bare
   * token. Resolves with the subject, roles and identity facts; rejects with `ToolGateError`
   * `E_UNAUTHENTICATED` (`reason` set) for a missing, malformed, badly signed, expired, not yet
   * valid, foreign (issuer / audience) token, an `alg` outside the allowed ones (`none` and HMAC
   * never are), a `kid` the key set does not hold, or claims without a usable subject or roles.
   */
  verify(headerOrToken: string | undefined): Promise<VerifiedCaller>
}

const fail = (reason: UnauthenticatedReason, message: string, cause?: unknown): ToolGateError =>
  new ToolGateError('E_UNAUTHENTICATED', `unauthenticated: ${message}`, { reason, cause })

/**
 * The token in an `Authorization` value, or the error for what is wrong. Without
 * `schemeRequired` a bare token is taken too, and the scheme may be followed by spaces or tabs
 * (what {@link CallerVerifier.verify} and `verifyCaller` accept); with it, the value must be
 * `Bearer <token>` as RFC 6750 §2.1 writes it — the scheme in any case, then spaces — which is
 * what the servers' door asks of every request.
 */
export function bearerToken(headerOrToken: string | undefined, o: { schemeRequired?: boolean } = {}): string | ToolGateError {
  if (typeof headerOrToken !== 'string' || headerOrToken.trim() === '') return fail('missing', 'no bearer token (send `Authorization: Bearer <token>`)')
  if (headerOrToken.length > MAX_TOKEN_CHARS + 16) return fail('malformed', `the token is longer than ${MAX_TOKEN_CHARS} characters`)
  const v = headerOrToken.trim()
  if (/^bearer$/i.test(v)) return fail('missing', 'the Authorization header names Bearer but holds no token')
  const scheme = /^([A-Za-z][A-Za-z0-9-]*)([ \t]+)(.*)$/s.exec(v)
  if (scheme !== null && scheme[1].toLowerCase() !== 'bearer') return fail('malformed', `the Authorization scheme is \`${scheme[1].slice(0, 20)}\`, not Bearer`)
  if (o.schemeRequired === true && (scheme === null || !/^ +$/.test(scheme[2]))) return fail('malformed', 'the Authorization header must be `Bearer <token>`: the scheme Bearer, a space, the token')
  const token = scheme !== null ? scheme[3].trim() : v
  if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/.test(token)) return fail('malformed', 'the bearer token is not a compact JWT (three base64url parts)')
  return token
}

/**
 * A verifier for `identity.jwt` (checked now: `E_CONFIG` for a bad block or key). Keys from
 * `jwksUrl` are fetched on first use and cached by jose's rules; inline `publicKeys` are imported
 * now. One verifier per config: it holds the key cache.
 */
export async function createCallerVerifier(jwt: unknown, options: CallerVerifierOptions = {}): Promise<CallerVerifier> {
  const c = checkJwtConfig(jwt)
  const [j, lookup] = await Promise.all([loadJose(), keyLookup(c, options.jwks)])
  // A failure to get keys (fetch, timeout, a key set that is not JSON or too large) is told
  // apart from a refused token: the token was not judged.
  const keys: typeof lookup = async (header, input) => {
    try {
      return await lookup(header, input)
    } catch (err) {
      const code = (err as { code?: unknown }).code
      if (code === 'ERR_JWKS_NO_MATCHING_KEY' || code === 'ERR_JWKS_MULTIPLE_MATCHING_KEYS' || code === 'ERR_JOSE_NOT_SUPPORTED') throw err
      throw new KeysUnavailable(err)
    }
  }
  const verifyOptions = {
    issuer: c.issuer,
    audience: c.audience,
    algorithms: c.algorithms,
    clockTolerance: c.clockToleranceSeconds,
    requiredClaims: ['exp'],
  }
  return {
    issuer: c.issuer,
    async verify(headerOrToken) {
      const token = bearerToken(headerOrToken)
      if (token instanceof ToolGateError) throw token
      let alg: unknown
      try {
        alg = j.decodeProtectedHeader(token).alg
      } catch (err) {
        throw fail('malformed', 'the token header is not readable JSON', err)
      }
      if (typeof alg !== 'string' || !c.algorithms.includes(alg)) {
        throw fail('alg_not_allowed', `the token is signed with \`${typeof alg === 'string' ? alg.slice(0, 20) : 'no alg'}\`; accepted: ${c.algorithms.join(', ')}`)
      }
      let payload: Record<string, unknown>
      try {
        payload = (await j.jwtVerify(token, keys, verifyOptions)).payload
      } catch (err) {
        if ((err as { code?: unknown }).code !== 'ERR_JWKS_MULTIPLE_MATCHING_KEYS') throw refusal(err, c)
        payload = await tryEach(err as AsyncIterable<unknown>, token, verifyOptions, c)
      }
      // jose checks `iat` against the clock only with maxTokenAge (which would make `iat`
      // required): a token issued in the future is refused here, as `nbf` is
      if (typeof payload.iat === 'number' && payload.iat > Math.floor(Date.now() / 1000) + c.clockToleranceSeconds) throw fail('not_yet_valid', 'the token was issued in the future (iat)')
      const caller = callerOf(payload, c)
      if (typeof caller === 'string') throw fail('bad_claims', caller)
      return caller
    },
  }

  /** Several keys match the header (no `kid`): the first that verifies wins (eight at most). */
  async function tryEach(candidates: AsyncIterable<unknown>, token: string, o: typeof verifyOptions, cc: CheckedJwtConfig): Promise<Record<string, unknown>> {
    let first: unknown
    let n = 0
    for await (const key of candidates) {
      if (n++ >= 8) break
      try {
        return (await j.jwtVerify(token, key as Parameters<typeof j.jwtVerify>[1], o)).payload
      } catch (err) {
        first ??= err
        if ((err as { code?: unknown }).code !== 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') break
      }
    }
    throw refusal(first ?? new j.errors.JWKSNoMatchingKey(), cc)
  }
}

/** The key set could not be had; carries the cause. */
class KeysUnavailable extends Error {
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause })
  }
}

/** jose's error as the refusal naming why (its `code` and `claim` map once, here). */
function refusal(err: unknown, c: CheckedJwtConfig): ToolGateError {
  const e = err as { code?: unknown; claim?: unknown; reason?: unknown; message?: unknown }
  switch (e.code) {
    case 'ERR_JWT_EXPIRED':
      return fail('expired', 'the token has expired', err)
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if ((e.claim === 'nbf' || e.claim === 'iat') && e.reason === 'invalid') return fail('bad_claims', `claim \`${e.claim}\` is not a number`, err)
      if (e.claim === 'nbf') return fail('not_yet_valid', 'the token is not valid yet (nbf)', err)
      if (e.claim === 'iat') return fail('not_yet_valid', 'the token was issued in the future (iat)', err)
      if (e.claim === 'iss') return fail('wrong_issuer', `the token was not issued by ${c.issuer}`, err)
      if (e.claim === 'aud') return fail('wrong_audience', `the token is not for ${c.audience.join(' or ')}`, err)
      return fail('bad_claims', `claim \`${String(e.claim)}\`: ${String(e.reason ?? 'check failed')}`, err)
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
    case 'ERR_JOSE_NOT_SUPPORTED':
      return fail('alg_not_allowed', `the token's algorithm is not accepted (${c.algorithms.join(', ')})`, err)
    case 'ERR_JWKS_NO_MATCHING_KEY':
      return fail('unknown_kid', "no key of the issuer's key set matches the token's kid and alg", err)
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return fail('bad_signature', 'the signature does not verify', err)
    case 'ERR_JWS_INVALID':
    case 'ERR_JWT_INVALID':
      return fail('malformed', `the token is not a valid JWT (${String(e.message).slice(0, 120)})`, err)
    default:
      if (err instanceof KeysUnavailable) return fail('keys_unavailable', `the issuer's keys cannot be read now (${err.message.slice(0, 160)})`, err.cause)
      return fail('malformed', `the token cannot be verified (${String(e.message ?? err).slice(0, 120)})`, err)
  }
}
