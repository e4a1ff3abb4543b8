// Who a request through the HTTP proxy acts for. Either the proxy has a fixed caller (`--subject`,
// `--role`, `--session`, or the config's `proxy.subject` / `roles` / `session`): then every
// request is that caller and identity headers are ignored — a fixed proxy serves one caller, and
// a header must not be able to widen it. Or it has none: then each request names its caller in
// headers (`x-toolgate-subject`, `x-toolgate-roles`, `x-toolgate-session`, or the names in
// `proxy.identityHeaders`). Either way the identity headers are stripped before the request goes
// upstream. The headers are trusted as sent: the proxy must sit behind the host's own
// authentication — or, with `identity` configured, a verified bearer token names the caller
// (see `jwtDoor` below and docs/identity.md).
import type { IncomingMessage, ServerResponse } from 'node:http'

import { ToolGateError } from '../../errors'
import { scopedSession, type VerifiedCaller } from '../../identity/claims'
import { authorizationOf, challenge, METADATA_PATH, originOf, protectedResourceMetadata } from '../../identity/door'
import type { CallerVerifier } from '../../identity/verifier'
import type { CallContext } from '../../types'
import { dialectForErrors, proxyError } from './upstream'

/** The identity header names (lower case). */
export interface IdentityHeaderNames {
  subject: string
  roles: string
  session: string
}

/** The default identity header names. */
export const DEFAULT_IDENTITY_HEADERS: Readonly<IdentityHeaderNames> = Object.freeze({
  subject: 'x-toolgate-subject',
  roles: 'x-toolgate-roles',
  session: 'x-toolgate-session',
})

/** Bounds on identity header values. */
export const IDENTITY_LIMITS = Object.freeze({ subjectChars: 256, sessionChars: 256, rolesHeaderChars: 4096, roles: 64, roleChars: 128 })

/** How the proxy learns who is calling. */
export interface IdentitySettings {
  /** A fixed caller: when it has any of subject, roles or session, headers are ignored. */
  fixed: Pick<CallContext, 'subject' | 'roles' | 'session'>
  headers: IdentityHeaderNames
}

/** True when the settings name a fixed caller (identity headers are then ignored). */
export function isFixed(s: IdentitySettings): boolean {
  return s.fixed.subject !== undefined || s.fixed.roles !== undefined || s.fixed.session !== undefined
}

/** The identity header names, as a set (for stripping them before forwarding). */
export function identityHeaderSet(s: IdentitySettings): ReadonlySet<string> {
  return new Set([s.headers.subject, s.headers.roles, s.headers.session])
}

/** The caller of one request, or an error message naming the header and what was wrong. */
export function identityOf(req: IncomingMessage, s: IdentitySettings): { context: CallContext; fromHeaders: boolean } | string {
  if (isFixed(s)) {
    const context: CallContext = {}
    if (s.fixed.subject !== undefined) context.subject = s.fixed.subject
    if (s.fixed.roles !== undefined) context.roles = [...s.fixed.roles]
    if (s.fixed.session !== undefined) context.session = s.fixed.session
    return { context, fromHeaders: false }
  }
  const one = (name: string, max: number): string | undefined | { error: string } => {
    const all = req.headersDistinct[name]
    if (all === undefined || all.length === 0) return undefined
    if (all.length > 1) return { error: `header ${name}: given ${all.length} times; give it once` }
    const v = all[0].trim()
    if (v.length > max) return { error: `header ${name}: longer than ${max} characters` }
    return v === '' ? undefined : v
  }
  const context: CallContext = {}
  const subject = one(s.headers.subject, IDENTITY_LIMITS.subjectChars)
  if (typeof subject === 'object') return subject.error
  if (subject !== undefined) context.subject = subject
  const session = one(s.headers.session, IDENTITY_LIMITS.sessionChars)
  if (typeof session === 'object') return session.error
  if (session !== undefined) context.session = session
  const roles = one(s.headers.roles, IDENTITY_LIMITS.rolesHeaderChars)
  if (typeof roles === 'object') return roles.error
  if (roles !== undefined) {
    const list = roles.split(',').map((r) => r.trim()).filter((r) => r !== '')
    if (list.length > IDENTITY_LIMITS.roles) return `header ${s.headers.roles}: more than ${IDENTITY_LIMITS.roles} roles`
    const long = list.find((r) => r.length > IDENTITY_LIMITS.roleChars)
    if (long !== undefined) return `header ${s.headers.roles}: a role longer than ${IDENTITY_LIMITS.roleChars} characters`
    if (list.length > 0) context.roles = [...new Set(list)]
  }
  return { context, fromHeaders: true }
}

/** True when the request carries any identity header (for telling the operator they are ignored). */
export function hasIdentityHeaders(req: IncomingMessage, s: IdentitySettings): boolean {
  return req.headers[s.headers.subject] !== undefined || req.headers[s.headers.roles] !== undefined || req.headers[s.headers.session] !== undefined
}

/**
 * The HTTP proxy's door when `identity` is configured: every request must carry a bearer token
 * the verifier accepts; the caller it proves is the request's CallContext (identity headers
 * other than the session are ignored, and stripped before forwarding). A refused token is
 * answered here — 401 with the RFC 9728 challenge and the API's error shape (503 when the
 * issuer's keys cannot be read) — and logged; the RFC 9728 metadata is served at
 * `/.well-known/oauth-protected-resource` without a token. Never a default caller.
 */
export interface JwtDoor {
  /** The request's verified caller, or `undefined` when the door has answered the request itself. */
  admit(req: IncomingMessage, res: ServerResponse): Promise<CallContext | undefined>
}

/** A {@link JwtDoor} for `verifier`; `sessionHeader` names a conversation inside the caller's own session scope. */
export function jwtDoor(o: { verifier: CallerVerifier; sessionHeader: string; fallbackOrigin: () => string; log: (line: string) => void }): JwtDoor {
  const answer = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    const text = JSON.stringify(body)
    res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
    res.end(text)
  }
  return {
    async admit(req, res) {
      const path = (req.url ?? '/').split('?')[0]
      const origin = originOf(req, o.fallbackOrigin())
      if (path === METADATA_PATH) {
        if (req.method !== 'GET' && req.method !== 'HEAD') answer(res, 405, { error: { message: `toolgate proxy: ${METADATA_PATH} answers GET`, type: 'invalid_request_error', param: null, code: 'toolgate_bad_request' } }, { allow: 'GET, HEAD' })
        else answer(res, 200, protectedResourceMetadata(origin, o.verifier.issuer), { 'cache-control': 'max-age=300' })
        return undefined
      }
      let caller: VerifiedCaller
      try {
        caller = await o.verifier.verify(authorizationOf(req))
      } catch (err) {
        if (!(err instanceof ToolGateError) || err.code !== 'E_UNAUTHENTICATED') throw err
        const c = challenge(req, origin, err)
        o.log(c.logLine)
        const message = `toolgate proxy: ${err.message}`
        const anthropic = dialectForErrors(path) === 'anthropic'
        const down = c.status === 503
        answer(res, c.status, anthropic
          ? { type: 'error', error: { type: down ? 'api_error' : 'authentication_error', message } }
          : { error: { message, type: down ? 'server_error' : 'invalid_request_error', param: null, code: down ? 'toolgate_keys_unavailable' : 'toolgate_unauthenticated' } }, c.headers)
        return undefined
      }
      const named = req.headersDistinct[o.sessionHeader]
      const session = named === undefined ? undefined : named.length === 1 ? scopedSession(caller.subject, named[0].trim()) : undefined
      if (named !== undefined && session === undefined) {
        const e = proxyError(dialectForErrors(path), 'bad_request', `header ${o.sessionHeader}: give it once, at most ${IDENTITY_LIMITS.sessionChars} characters`)
        res.writeHead(e.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(e.body), connection: 'close' })
        res.end(e.body)
        return undefined
      }
      return { ...caller, session: session ?? scopedSession(caller.subject, undefined) }
    },
  }
}

/** `headers` (to the upstream) with the configured upstream headers set over them. */
export function withUpstreamHeaders(headers: Record<string, string>, extra: Readonly<Record<string, string>> | undefined): Record<string, string> {
  if (extra !== undefined) for (const k in extra) headers[k] = extra[k]
  return headers
}
