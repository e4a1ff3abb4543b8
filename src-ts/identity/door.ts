// The HTTP side of identity, shared by `toolgate proxy` and `toolgate mcp-proxy --listen`: what
// a request's `Authorization` says, the 401 challenge that points a client at the RFC 9728
// protected-resource metadata, and that metadata itself. Each server shapes its own error body;
// nothing here ever echoes a token.
import type { IncomingMessage } from 'node:http'

import type { ToolGateError } from '../errors'

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
 * The `Authorization` value of a request; `undefined` when absent. A header given twice is a
 * string no verifier accepts (never "the first one").
 */
export function authorizationOf(req: IncomingMessage): string | undefined {
  const all = req.headersDistinct.authorization
  if (all === undefined || all.length === 0) return undefined
  return all.length === 1 ? all[0] : 'Duplicate authorization-headers'
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
  if (reason === 'keys_unavailable') return { status: 503, headers: { 'Retry-After': '5', Connection: 'close' }, logLine }
  let value = `Bearer resource_metadata="${origin}${METADATA_PATH}"`
  if (reason !== 'missing') value += `, error="invalid_token", error_description="${quoted(err.message)}"`
  return { status: 401, headers: { 'WWW-Authenticate': value, Connection: 'close' }, logLine }
}
