// What the two servers (`toolgate proxy`, `toolgate mcp-proxy --listen`) take from a config for
// identity, checked once at start: the verifier for `identity.jwt`, the upstream's own headers
// (`proxy.upstreamHeaders`), and the rule that verified callers and a fixed caller exclude each
// other (a fixed subject, roles or session would put every user in one scope). On a config
// reload (SIGHUP) the verifier is rebuilt from the new `identity.jwt` and swapped in with the new
// gates, or, when it does not build, the reload is refused as a whole.
import { ToolGateError } from '../errors'
import { resolveUpstreamHeaders } from '../proxy/upstream-headers'
import type { VerifiedCaller } from './claims'
import { createCallerVerifier, type CallerVerifier } from './verifier'

/** A server's identity settings. */
export interface ServerIdentity {
  /** Present when the config has `identity.jwt`: every request must then carry a valid bearer token. */
  verifier?: ServerVerifier
  /** `proxy.upstreamHeaders`, values read (environment variables included). */
  upstreamHeaders: Record<string, string>
}

/**
 * The verifier a server asks for every request: the one built from the config's `identity.jwt`
 * at start, until a reload replaces it ({@link prepareIdentityReload}). The swap is one
 * assignment, so each request is verified wholly against the old block or wholly the new one.
 */
export class ServerVerifier implements CallerVerifier {
  #current: CallerVerifier
  #text: string

  /** `text`: the `identity.jwt` block `current` was built from, as JSON text. */
  constructor(current: CallerVerifier, text: string) {
    this.#current = current
    this.#text = text
  }

  /** The issuer of the block in force. */
  get issuer(): string {
    return this.#current.issuer
  }

  /** The text of the `identity.jwt` block in force. */
  get text(): string {
    return this.#text
  }

  /** Verifies against the block in force now (a function of its own: it may be passed around unbound). */
  readonly verify = (headerOrToken: string | undefined): Promise<VerifiedCaller> => this.#current.verify(headerOrToken)

  /** Puts `next`, built from the block `text`, in force for every request from now on. */
  replace(next: CallerVerifier, text: string): void {
    this.#current = next
    this.#text = text
  }
}

/** The `identity.jwt` block of `config`; `undefined` without `identity`; `E_CONFIG` for an `identity` without `jwt`. */
function jwtOf(config: unknown): unknown {
  const identity = (typeof config === 'object' && config !== null ? (config as { identity?: unknown }).identity : undefined) as { jwt?: unknown } | null | undefined
  if (identity === undefined) return undefined
  if (typeof identity !== 'object' || identity === null || identity.jwt === undefined) throw new ToolGateError('E_CONFIG', 'config at `identity`: expected { jwt: { issuer, audience, jwksUrl | publicKeys, … } }')
  return identity.jwt
}

/**
 * Reads `identity` and `proxy.upstreamHeaders` from `config`. `fixed` lists the fixed-caller
 * settings given (`--subject`, `--role`, `proxy.session` …): any of them with `identity` is
 * `E_CONFIG` naming them; so are a bad `identity.jwt` block, an unreadable key and an
 * environment variable that is not set.
 */
export async function serverIdentity(config: unknown, fixed: readonly string[]): Promise<ServerIdentity> {
  const c = (typeof config === 'object' && config !== null ? config : {}) as { identity?: unknown; proxy?: { upstreamHeaders?: unknown } }
  if (c.identity !== undefined && fixed.length > 0) {
    throw new ToolGateError('E_CONFIG', `config \`identity\`: callers are verified from their bearer tokens, so ${fixed.join(', ')} cannot be given (a fixed caller would put every user in one scope)`)
  }
  const upstreamHeaders = resolveUpstreamHeaders(c.proxy?.upstreamHeaders)
  const jwt = jwtOf(c)
  if (jwt === undefined) return { upstreamHeaders }
  return { verifier: new ServerVerifier(await createCallerVerifier(jwt), JSON.stringify(jwt)), upstreamHeaders }
}

/** The identity part of a reload, built and checked, waiting to be swapped in. */
export interface IdentityReload {
  /** True when the reloaded `identity.jwt` differs from the one in force (a new verifier, with keys of its own). */
  changed: boolean
  /** Swaps the new verifier in; call it together with the rest of the reload, once that has been validated too. */
  commit(): void
}

/**
 * Builds the verifier for a reloaded config's `identity.jwt`, not yet in force: the caller swaps
 * it in with {@link IdentityReload.commit} once the rest of the config has compiled too, so a
 * reload applies as a whole or not at all. An unchanged block keeps the running verifier (and
 * the keys it has fetched). Rejects with `E_CONFIG`, nothing swapped, for a block that does not
 * build, and when the reload would turn identity on or off: a server started without it trusts
 * a fixed caller or identity headers, one started with it must never lose its door to a reload
 * — either change needs a restart.
 */
export async function prepareIdentityReload(running: ServerVerifier | undefined, config: unknown): Promise<IdentityReload> {
  const jwt = jwtOf(config)
  if (running === undefined) {
    if (jwt !== undefined) throw new ToolGateError('E_CONFIG', 'config `identity`: a reload cannot turn verified callers on (this server was started without it); restart the proxy for that')
    return { changed: false, commit: () => undefined }
  }
  if (jwt === undefined) throw new ToolGateError('E_CONFIG', 'config `identity` was removed: a reload does not turn verified callers off (requests would no longer need a token); restart the proxy for that')
  const text = JSON.stringify(jwt)
  if (text === running.text) return { changed: false, commit: () => undefined }
  const next = await createCallerVerifier(jwt)
  return { changed: true, commit: () => running.replace(next, text) }
}
