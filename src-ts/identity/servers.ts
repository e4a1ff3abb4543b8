// What the two servers (`toolgate proxy`, `toolgate mcp-proxy --listen`) take from a config for
// identity, checked once at start: the verifier for `identity.jwt`, the upstream's own headers
// (`proxy.upstreamHeaders`), and the rule that verified callers and a fixed caller exclude each
// other (a fixed subject, roles or session would put every user in one scope).
import { ToolGateError } from '../errors'
import { resolveUpstreamHeaders } from '../proxy/upstream-headers'
import { createCallerVerifier, type CallerVerifier } from './verifier'

/** A server's identity settings. */
export interface ServerIdentity {
  /** Present when the config has `identity.jwt`: every request must then carry a valid bearer token. */
  verifier?: CallerVerifier
  /** `proxy.upstreamHeaders`, values read (environment variables included). */
  upstreamHeaders: Record<string, string>
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
  if (c.identity === undefined) return { upstreamHeaders }
  const identity = c.identity as { jwt?: unknown } | null
  if (typeof identity !== 'object' || identity === null || identity.jwt === undefined) throw new ToolGateError('E_CONFIG', 'config at `identity`: expected { jwt: { issuer, audience, jwksUrl | publicKeys, … } }')
  return { verifier: await createCallerVerifier(identity.jwt), upstreamHeaders }
}
