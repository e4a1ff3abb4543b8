// The HTTP side of identity, shared by `toolgate proxy` and `toolgate mcp-proxy --listen`: what
// a request's `Authorization` says, the 401 challenge that points a client at the RFC 9728
// protected-resource metadata, and that metadata itself. Each server shapes its own error body;
// nothing here ever echoes a token.
import type { IncomingMessage } from 'node:http'

import { ToolGateError } from '../errors'
import { KEYS_RETRY_AFTER_SECONDS } from './keys'
import { bearerToken } from './verifier'

/** Where the protected-resource metadata is served (RFC 9728 §3). */
export const METADATA_PATH = '/.well-known/oauth-protected-resource'

/** Host header forms accepted for building the server's own origin (no quotes, spaces or paths). */
const HOST = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/

/**
 * The origin clients reach this server at: `http://` + the request's `Host` when it is a plain
 * `name[:port]` (what the client used, also behind port forwarding), else `fallback` (the
 * address the server is bound to). Never holds a character that could break a header value.
 */
export function originOf(req: IncomingMessage, fallback: string): string {
  const host = req.headers.host
  return typeof host === 'string' && HOST.test(host) ? `http://${host}` : fallback
}

/** The RFC 9728 metadata for `resource`: its issuer as the one authorization server, tokens in the header only. */
export function protectedResourceMetadata(resource: string, issuer: string): Record<string, unknown> {
  return { resource, authorization_servers: [issuer], bearer_methods_supported: ['header'] }
}

/**
 * The bearer token of a request, for the verifier: `undefined` when it has no `Authorization`
 * (the verifier refuses that as `missing`). The header must be `Bearer <token>` (RFC 6750 §2.1;
 * the scheme in any case): a bare token, another scheme, a tab after the scheme, or the header
 * given twice (never "the first one") throws `ToolGateError` `E_UNAUTHENTICATED` (`malformed`;
 * an empty value or `Bearer` alone: `missing`), to be answered as any refused token.
 */
export function authorizationOf(req: IncomingMessage): string | undefined {
  const all = req.headersDistinct.authorization
  if (all === undefined || all.length === 0) return undefined
  if (all.length > 1) throw new ToolGateError('E_UNAUTHENTICATED', 'unauthenticated: the Authorization header is given more than once', { reason: 'malformed' })
  const token = bearerToken(all[0], { schemeRequired: true })
  if (token instanceof ToolGateError) throw token
  return token
}

/** What a server answers for a refused token: 401 (503 when the keys could not be read) and the headers. */
export interface Challenge {
  status: 401 | 503
  headers: Record<string, string>
  /** One line for the server's log: method, path, reason — no token, no claims. */
  logLine: string
}

const quoted = (s: string) => s.replace(/[^\x20-\x7e]|["\\]/g, '').slice(0, 200)

/**
 * The answer to a request whose bearer token was refused (`err`, code `E_UNAUTHENTICATED`):
 * 401 with `WWW-Authenticate: Bearer resource_metadata="<origin>/.well-known/oauth-protected-resource"`,
 * plus `error="invalid_token"` and a description when a token was sent (RFC 6750 §3); 503 with
 * `Retry-After` when the issuer's keys could not be read (the token was not judged). Either way
 * the connection is closed after the answer, so an unread body is never read for nothing.
 */
export function challenge(req: IncomingMessage, origin: string, err: ToolGateError): Challenge {
  const reason = err.reason ?? 'malformed'
  const path = (req.url ?? '/').split('?')[0].slice(0, 80)
  const logLine = `refused ${req.method ?? '?'} ${path}: ${reason} (${err.message.replace(/^unauthenticated: /, '')})`
  // no key-set fetch is tried for as long after a failed one: a client retrying sooner is refused again
  if (reason === 'keys_unavailable') return { status: 503, headers: { 'Retry-After': String(KEYS_RETRY_AFTER_SECONDS), Connection: 'close' }, logLine }
  let value = `Bearer resource_metadata="${origin}${METADATA_PATH}"`
  if (reason !== 'missing') value += `, error="invalid_token", error_description="${quoted(err.message)}"`
  return { status: 401, headers: { 'WWW-Authenticate': value, Connection: 'close' }, logLine }
}
