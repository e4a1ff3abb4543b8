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

/** A verifier and the text of the `identity.jwt` block it was built from. */
interface Held {
  text: string
  made: Promise<CallerVerifier>
}
/**
 * Verifiers kept per config object (each holds its key cache), with the text of the block each was
 * built from: checked on every call, so a block replaced or edited in place (a host reloading its
 * config into the same object) is followed at the next call — a removed key never keeps working.
 */
const byObject = new WeakMap<object, Held>()
/** Verifiers kept per config text, for configs rebuilt on every call (bounded, oldest dropped). */
const byText = new Map<string, Promise<CallerVerifier>>()
const MAX_BY_TEXT = 16
/** The config given to {@link configureIdentity}, followed as {@link verifierFor} follows one. */
interface Configured {
  source: IdentitySource
  options: CallerVerifierOptions | undefined
  held?: Held
}
let configured: Configured | undefined

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

/** The block and its text (`JSON.stringify`: what a verifier is kept by), or the rejection for a config that has none. */
function blockOf(source: unknown): { jwt: unknown; text: string } | Promise<never> {
  try {
    const jwt = jwtBlock(source)
    return { jwt, text: String(JSON.stringify(jwt)) }
  } catch (err) {
    return Promise.reject(err)
  }
}

function verifierFor(source: unknown): Promise<CallerVerifier> {
  if (typeof source !== 'object' || source === null) return Promise.reject(new ToolGateError('E_CONFIG', 'identity: expected a config object with `identity.jwt`'))
  const b = blockOf(source)
  if (b instanceof Promise) return b
  const held = byObject.get(source)
  if (held !== undefined && held.text === b.text) return held.made
  const made = byText.get(b.text) ?? createCallerVerifier(b.jwt)
  byText.delete(b.text)
  byText.set(b.text, made)
  if (byText.size > MAX_BY_TEXT) byText.delete(byText.keys().next().value as string)
  made.catch(() => byText.get(b.text) === made && byText.delete(b.text))
  byObject.set(source, { text: b.text, made })
  return made
}

/** The verifier for the configured config, rebuilt when its block has changed since. */
function configuredVerifier(c: Configured): Promise<CallerVerifier> {
  if (c.options === undefined) return verifierFor(c.source)
  const b = blockOf(c.source)
  if (b instanceof Promise) return b
  if (c.held?.text !== b.text) c.held = { text: b.text, made: createCallerVerifier(b.jwt, c.options) }
  return c.held.made
}

/**
 * Sets the config {@link verifyCaller} uses when it is given none (a whole toolgate config, its
 * `identity` block, or `identity.jwt`). Checks it now: rejects with `E_CONFIG` for a bad block.
 * The object is followed, not copied: changed in place later, the next `verifyCaller(header)`
 * verifies against its new block.
 */
export async function configureIdentity(config: IdentitySource, options?: CallerVerifierOptions): Promise<void> {
  const next: Configured = { source: config, options }
  await configuredVerifier(next)
  configured = next
}

/**
 * The caller a bearer token proves, as a `CallContext` for `gate.check` / `guard` /
 * `filterTools`: `subject`, `roles` and the configured `identity` facts, and `session` scoped to
 * the subject (`scopedSession(subject, conversation)` for one per conversation; docs/identity.md). `headerOrToken` is the `Authorization` header value
 * (`Bearer <jwt>`) or the bare token; `config` a toolgate config with `identity.jwt` (or the
 * block itself) — default: the one given to {@link configureIdentity}. Verifiers (and their
 * fetched keys) are kept per config, so calling this on every request costs one signature check;
 * the block is compared with the one the verifier was built from on every call, so a config
 * changed in place (its `identity` replaced, a new file assigned over it, a key removed) is
 * followed at once.
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
  const verifier = config !== undefined ? verifierFor(config) : configured !== undefined ? configuredVerifier(configured) : undefined
  if (verifier === undefined) throw new ToolGateError('E_CONFIG', 'verifyCaller: no identity config given and none set by configureIdentity()')
  const caller = await (await verifier).verify(headerOrToken)
  return { ...caller, session: scopedSession(caller.subject, undefined) }
}
