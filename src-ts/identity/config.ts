// The `identity.jwt` block of a config, checked before any token is looked at: who issues the
// tokens, for which audience, where the keys are, which algorithms are allowed, and where the
// subject, roles and other identity facts sit in the claims (docs/identity.md). Only asymmetric
// algorithms exist here: a shared HMAC secret in a config would let anyone who reads it mint
// callers, and refusing them also closes the "HS256 signed with the public key" attack.
import { isObj } from '../json-object'
import { ToolGateError } from '../errors'

export type { IdentityConfig, JwtIdentityConfig } from '../types'

/** The algorithms a verifier may accept (asymmetric signatures that jose verifies). */
export const ASYMMETRIC_ALGORITHMS: readonly string[] = Object.freeze([
  'EdDSA', 'Ed25519', 'ES256', 'ES384', 'ES512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512',
])

/** The default `algorithms`. */
export const DEFAULT_ALGORITHMS: readonly string[] = Object.freeze(['EdDSA', 'ES256', 'RS256'])

/** Bounds on the block (a config is trusted, but a typo must not become an unbounded loop). */
export const CONFIG_LIMITS = Object.freeze({ publicKeys: 32, identityClaims: 32, claimPathChars: 256, maxToleranceSeconds: 300 })

/** `identity.jwt` checked and with its defaults filled in. */
export interface CheckedJwtConfig {
  issuer: string
  audience: string[]
  keys: { jwksUrl: URL } | { publicKeys: (Record<string, unknown> | string)[] }
  algorithms: string[]
  subjectClaim: string
  rolesClaim: string
  identityClaims: [name: string, path: string][]
  clockToleranceSeconds: number
}

const KEYS = new Set(['issuer', 'audience', 'jwksUrl', 'publicKeys', 'algorithms', 'subjectClaim', 'rolesClaim', 'identityClaims', 'clockToleranceSeconds'])
const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v.trim() !== ''

/** Whether `host` (a URL's hostname) is a loopback one. */
export function isLoopbackName(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '')
  return h === 'localhost' || h === '::1' || /^127(?:\.\d{1,3}){3}$/.test(h)
}

/**
 * Checks `identity.jwt` (`at` names it in messages) and fills in the defaults. Throws
 * `ToolGateError` `E_CONFIG` naming the key: unknown keys, a missing issuer or audience, both or
 * neither of `jwksUrl` / `publicKeys`, a `jwksUrl` that is not https (http only on loopback),
 * an algorithm outside {@link ASYMMETRIC_ALGORITHMS} (HMAC and `none` included), bad claim paths.
 * Key material itself is checked when the keys are imported (keys.ts), never echoed.
 */
export function checkJwtConfig(jwt: unknown, at = 'identity.jwt'): CheckedJwtConfig {
  const bad = (key: string, what: string): never => {
    throw new ToolGateError('E_CONFIG', `config at \`${at}${key === '' ? '' : `.${key}`}\`: ${what}`)
  }
  if (!isObj(jwt)) bad('', 'expected an object { issuer, audience, jwksUrl | publicKeys, … }')
  const j = jwt as Record<string, unknown>
  for (const k of Object.keys(j)) if (!KEYS.has(k)) bad(k, `unknown key (known: ${[...KEYS].join(', ')})`)
  if (!nonEmpty(j.issuer)) bad('issuer', 'expected the issuer URL the tokens carry in `iss`')
  const aud = j.audience
  const audience = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : []
  if (audience.length === 0 || !audience.every(nonEmpty)) bad('audience', 'expected a non-empty string or a non-empty list of them')
  const hasUrl = j.jwksUrl !== undefined
  const hasKeys = j.publicKeys !== undefined
  if (hasUrl === hasKeys) bad('', 'give exactly one of `jwksUrl` and `publicKeys`')
  let keys: CheckedJwtConfig['keys']
  if (hasUrl) {
    let url: URL | undefined
    try {
      url = typeof j.jwksUrl === 'string' ? new URL(j.jwksUrl) : undefined
    } catch {
      url = undefined
    }
    if (url === undefined) return bad('jwksUrl', 'expected an absolute URL')
    if (url.username !== '' || url.password !== '') bad('jwksUrl', 'must not hold a user name or password')
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackName(url.hostname))) {
      bad('jwksUrl', 'must be https: (http: only on a loopback host), or keys could be swapped on the way')
    }
    keys = { jwksUrl: url }
  } else {
    const list = j.publicKeys
    if (!Array.isArray(list) || list.length === 0) return bad('publicKeys', 'expected a non-empty list of public JWKs or PEM public keys')
    if (list.length > CONFIG_LIMITS.publicKeys) bad('publicKeys', `at most ${CONFIG_LIMITS.publicKeys} keys`)
    list.forEach((k, i) => {
      if (!isObj(k) && typeof k !== 'string') bad(`publicKeys[${i}]`, 'expected a JWK object or a PEM string')
    })
    keys = { publicKeys: list as (Record<string, unknown> | string)[] }
  }
  let algorithms = [...DEFAULT_ALGORITHMS]
  if (j.algorithms !== undefined) {
    const a = j.algorithms
    if (!Array.isArray(a) || a.length === 0) return bad('algorithms', 'expected a non-empty list')
    for (const x of a) {
      if (typeof x !== 'string' || !ASYMMETRIC_ALGORITHMS.includes(x)) {
        bad('algorithms', `\`${String(x)}\` is not accepted (asymmetric signatures only: ${ASYMMETRIC_ALGORITHMS.join(', ')})`)
      }
    }
    algorithms = [...new Set(a as string[])]
  }
  const path = (key: string, fallback: string): string => {
    const v = j[key]
    if (v === undefined) return fallback
    if (!nonEmpty(v) || v.length > CONFIG_LIMITS.claimPathChars) return bad(key, `expected a claim name or dotted path of at most ${CONFIG_LIMITS.claimPathChars} characters`)
    return v
  }
  const identityClaims: [string, string][] = []
  if (j.identityClaims !== undefined) {
    const ic = j.identityClaims
    if (!isObj(ic)) return bad('identityClaims', 'expected an object: name → claim path')
    const entries = Object.entries(ic)
    if (entries.length > CONFIG_LIMITS.identityClaims) bad('identityClaims', `at most ${CONFIG_LIMITS.identityClaims} entries`)
    for (const [name, p] of entries) {
      if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name)) bad(`identityClaims.${name}`, 'the name must be an identifier (letters, digits, _), as `identity.<name>` in conditions')
      if (!nonEmpty(p) || p.length > CONFIG_LIMITS.claimPathChars) bad(`identityClaims.${name}`, 'expected a claim name or dotted path')
      identityClaims.push([name, p as string])
    }
  }
  let tolerance = 30
  if (j.clockToleranceSeconds !== undefined) {
    const t = j.clockToleranceSeconds
    if (typeof t !== 'number' || !Number.isFinite(t) || t < 0 || t > CONFIG_LIMITS.maxToleranceSeconds) {
      bad('clockToleranceSeconds', `expected a number of seconds from 0 to ${CONFIG_LIMITS.maxToleranceSeconds}`)
    }
    tolerance = t as number
  }
  return {
    issuer: j.issuer as string,
    audience: audience as string[],
    keys,
    algorithms,
    subjectClaim: path('subjectClaim', 'sub'),
    rolesClaim: path('rolesClaim', 'roles'),
    identityClaims,
    clockToleranceSeconds: tolerance,
  }
}
