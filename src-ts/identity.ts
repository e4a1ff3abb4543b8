// `toolgate/identity`: who is calling, proven by a bearer token (JWT, OAuth 2.1 resource server
// style). `verifyCaller` turns an `Authorization` header into the CallContext a gate decides
// for, for hosts with their own HTTP server; `toolgate proxy` and `toolgate mcp-proxy --listen`
// use the same verifier for every request (docs/identity.md).
import { ToolGateError } from './errors'
import { scopedSession, type VerifiedCaller } from './identity/claims'
import type { IdentityConfig, JwtIdentityConfig } from './identity/config'
import { createCallerVerifier, type CallerVerifier, type CallerVerifierOptions } from './identity/verifier'
import type { CallContext } from './types'

export { createCallerVerifier, bearerToken, MAX_TOKEN_CHARS, type CallerVerifier, type CallerVerifierOptions, type UnauthenticatedReason } from './identity/verifier'
export { claimAt, rolesOf, scopedSession, CLAIM_LIMITS, type VerifiedCaller } from './identity/claims'
export { checkJwtConfig, ASYMMETRIC_ALGORITHMS, DEFAULT_ALGORITHMS, type IdentityConfig, type JwtIdentityConfig } from './identity/config'
export type { JwksOptions } from './identity/keys'

/** What {@link verifyCaller} accepts as its config: a whole toolgate config, its `identity` block, or `identity.jwt`. */
export type IdentitySource = { identity?: IdentityConfig } | IdentityConfig | JwtIdentityConfig

/** Verifiers kept per config object (each holds its key cache). */
const byObject = new WeakMap<object, Promise<CallerVerifier>>()
/** Verifiers kept per config text, for configs rebuilt on every call (bounded, oldest dropped). */
const byText = new Map<string, Promise<CallerVerifier>>()
const MAX_BY_TEXT = 16
let configured: Promise<CallerVerifier> | undefined

/** The `identity.jwt` block in any of the shapes {@link IdentitySource} allows. */
function jwtBlock(source: unknown): unknown {
  const s = source as { identity?: { jwt?: unknown }; jwt?: unknown } | null
  if (typeof s !== 'object' || s === null) return s
  if ('identity' in s) {
    if (typeof s.identity !== 'object' || s.identity === null) throw new ToolGateError('E_CONFIG', 'config has no `identity.jwt` block: bearer tokens cannot be verified')
    return s.identity.jwt
  }
  if ('jwt' in s) return s.jwt
  return s
}

function verifierFor(source: unknown): Promise<CallerVerifier> {
  if (typeof source !== 'object' || source === null) return Promise.reject(new ToolGateError('E_CONFIG', 'identity: expected a config object with `identity.jwt`'))
  const held = byObject.get(source)
  if (held !== undefined) return held
  let made: Promise<CallerVerifier>
  try {
    const jwt = jwtBlock(source)
    const text = JSON.stringify(jwt)
    made = byText.get(text) ?? createCallerVerifier(jwt)
    byText.delete(text)
    byText.set(text, made)
    if (byText.size > MAX_BY_TEXT) byText.delete(byText.keys().next().value as string)
    made.catch(() => byText.get(text) === made && byText.delete(text))
  } catch (err) {
    made = Promise.reject(err)
  }
  byObject.set(source, made)
  return made
}

/**
 * Sets the config {@link verifyCaller} uses when it is given none (a whole toolgate config, its
 * `identity` block, or `identity.jwt`). Checks it now: rejects with `E_CONFIG` for a bad block.
 */
export async function configureIdentity(config: IdentitySource, options?: CallerVerifierOptions): Promise<void> {
  const made = options === undefined ? verifierFor(config) : createCallerVerifier(jwtBlock(config), options)
  await made
  configured = made
}

/**
 * The caller a bearer token proves, as a `CallContext` for `gate.check` / `guard` /
 * `filterTools`: `subject`, `roles` and the configured `identity` facts, and `session` scoped to
 * the subject (`scopedSession(subject, conversation)` for one per conversation; docs/identity.md). `headerOrToken` is the `Authorization` header value
 * (`Bearer <jwt>`) or the bare token; `config` a toolgate config with `identity.jwt` (or the
 * block itself) — default: the one given to {@link configureIdentity}. Verifiers (and their
 * fetched keys) are kept per config, so calling this on every request costs one signature check.
 *
 * Rejects with `ToolGateError` `E_UNAUTHENTICATED` (`reason`: `missing`, `malformed`,
 * `alg_not_allowed`, `unknown_kid`, `bad_signature`, `expired`, `not_yet_valid`,
 * `wrong_issuer`, `wrong_audience`, `bad_claims`, `keys_unavailable`) — answer it with 401 — and
 * `E_CONFIG` when no identity is configured. Never falls back to a default caller.
 *
 * @example
 * const ctx = await verifyCaller(req.headers.authorization, config)
 * const verdict = gate.check(tool, args, ctx)
 */
export async function verifyCaller(headerOrToken: string | undefined, config?: IdentitySource): Promise<CallContext & VerifiedCaller> {
  const verifier = config !== undefined ? verifierFor(config) : configured
  if (verifier === undefined) throw new ToolGateError('E_CONFIG', 'verifyCaller: no identity config given and none set by configureIdentity()')
  const caller = await (await verifier).verify(headerOrToken)
  return { ...caller, session: scopedSession(caller.subject, undefined) }
}
