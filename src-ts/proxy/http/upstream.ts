// The HTTP proxy's wire plumbing toward the model API: which incoming paths are guarded and where
// each request goes upstream, which headers cross in each direction, the proxy's own error
// answers in each API's error shape, and bounded body reading. Nothing here decides about tool
// calls.
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from 'node:http'

import { DECODED_CODINGS, type UpstreamTarget } from './client'
import { guardedDialect, normalisePath, type PassThroughList } from './paths'
import { readBounded } from '../read-bounded'
import { redactUrl } from '../redact-url'
import type { RequestDialect } from '../../request-dialect'

/** The guarded endpoints of the official APIs, as API paths (any path ending the same way is guarded too: paths.ts). */
export const GUARDED_PATHS: Readonly<Record<string, RequestDialect>> = Object.freeze({
  '/v1/chat/completions': 'openai',
  '/v1/responses': 'openai-responses',
  '/v1/messages': 'anthropic',
})

/** Where requests go: the upstream origin and its base path (no trailing `/`, no trailing `/v1`). */
export interface UpstreamBase {
  origin: string
  basePath: string
  /** Scheme, host, port and credentials of the origin, for node:http (`path` is the base path). */
  target: UpstreamTarget
  /** The URL for logs and messages: no user name or password. */
  display: string
}

/**
 * Reads `--upstream`: an `http:` or `https:` URL without query or fragment. A trailing `/` and a
 * trailing `/v1` are dropped from the base path (clients send `/v1/...` themselves), so
 * `https://api.openai.com/v1`, `https://api.openai.com` and `https://api.openai.com/` are one
 * upstream. Returns an error message naming what is wrong, or the base.
 */
export function parseUpstream(text: string): UpstreamBase | string {
  let u: URL
  try {
    u = new URL(text)
  } catch {
    return `expected an http:// or https:// URL, got \`${redactUrl(text)}\``
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `expected an http:// or https:// URL, got the scheme \`${u.protocol}\``
  if (u.search !== '' || u.hash !== '') return `expected a URL without query or fragment, got \`${redactUrl(text)}\` (credentials go in headers: config proxy.upstreamHeaders, or the client's own)`
  let basePath = u.pathname.replace(/\/+$/, '')
  if (basePath.endsWith('/v1')) basePath = basePath.slice(0, -3)
  const shown = new URL(u.href)
  shown.username = ''
  shown.password = ''
  const target: UpstreamTarget = {
    protocol: u.protocol,
    hostname: u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname,
    port: u.port !== '' ? Number(u.port) : u.protocol === 'https:' ? 443 : 80,
    path: basePath,
  }
  if (u.username !== '' || u.password !== '') target.auth = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`
  return { origin: u.origin, basePath, target, display: shown.href.replace(/\/$/, '') }
}

/** A request's place upstream: its API path (normalised, base path removed), the upstream URL, and what the proxy does with it. */
export interface Route {
  apiPath: string
  url: string
  /** Where node:http sends it: the upstream target with the whole path (base path + API path + query). */
  target: UpstreamTarget
  /** The guarded API, for a guarded request. */
  dialect: RequestDialect | undefined
  /** Why the request is refused (400: a path that cannot be normalised; 403: not guarded and not on the pass-through list). */
  refused?: { kind: 'bad_request' | 'not_passed'; message: string }
}

/**
 * Maps an incoming request to the upstream. The path is normalised (paths.ts); with the
 * upstream's base path removed when the client already sent it, it is the API path, and the
 * request goes to origin + base path + API path + query — the normalised path, never the raw
 * one. A `POST` whose path ends in a model endpoint is guarded; any other request passes when
 * `passThrough` allows it and is refused otherwise.
 */
export function routeOf(method: string | undefined, rawUrl: string | undefined, base: UpstreamBase, passThrough: PassThroughList): Route {
  const raw = rawUrl ?? '/'
  const q = raw.indexOf('?')
  const rawPath = q < 0 ? raw : raw.slice(0, q)
  const query = q < 0 ? '' : raw.slice(q)
  const norm = normalisePath(rawPath)
  let path = typeof norm === 'string' ? norm : '/'
  if (base.basePath !== '' && (path === base.basePath || path.startsWith(`${base.basePath}/`))) path = path.slice(base.basePath.length) || '/'
  const full = `${base.basePath}${path}${query}`
  const route: Route = { apiPath: path, url: `${base.origin}${full}`, target: { ...base.target, path: full }, dialect: undefined }
  if (typeof norm !== 'string') {
    route.refused = { kind: 'bad_request', message: `${norm.bad}` }
    return route
  }
  route.dialect = guardedDialect(method, path)
  if (route.dialect === undefined && !passThrough.allows(method ?? 'GET', path)) {
    route.refused = { kind: 'not_passed', message: `${method ?? 'GET'} ${path.slice(0, 200)} is neither a guarded model endpoint nor on the pass-through list (--pass-through)` }
  }
  return route
}

/** Request headers never forwarded: hop-by-hop, or for the proxy itself. */
const HOP_BY_HOP = new Set([
  'host', 'connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'transfer-encoding', 'te', 'trailer',
  'upgrade', 'expect', 'http2-settings',
])
/** Headers that vouch for a body's bytes: no longer true of a body the proxy writes or decodes. */
const BODY_INTEGRITY = ['content-md5', 'digest', 'content-digest', 'repr-digest']
/**
 * Dropped too when the proxy sends its own body and decodes the answer: the body's length, its
 * coding (a guarded body is read, and sent, as uncoded JSON; a coded one is refused first:
 * {@link requestCoding}) and its digests, and the answer's codings.
 */
const REWRITTEN = new Set(['content-length', 'content-encoding', ...BODY_INTEGRITY, 'accept-encoding'])

/** Response headers never passed back: hop-by-hop. */
const DROP_RESPONSE = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'trailer', 'upgrade'])
/** Dropped too once the body is decoded or rewritten: no longer true. */
const DROP_DECODED = new Set(['content-encoding', 'content-length', ...BODY_INTEGRITY])
/** The proxy's own header names (`x-toolgate-refused`, `x-toolgate-receipts` …): never taken from the upstream. */
const OWN_PREFIX = 'x-toolgate-'

/** The header names a `Connection` header lists (hop-by-hop by declaration), if any. */
function connectionNamed(value: string | string[] | undefined): Set<string> | undefined {
  if (value === undefined) return undefined
  const names = String(value).split(',').map((s) => s.trim().toLowerCase()).filter((s) => s !== '' && s !== 'close' && s !== 'keep-alive')
  return names.length === 0 ? undefined : new Set(names)
}

/**
 * The headers to send upstream: the client's, minus hop-by-hop headers, those the `Connection`
 * header names, and `strip` (the identity headers). `Authorization`, `x-api-key` and every
 * other header pass untouched. `as: 'guarded'` (the proxy sends its own body and decodes the
 * answer): `Content-Length` is left to the client library, `Content-Encoding` and the body
 * digests (`Content-MD5`, `Digest`, `Content-Digest`, `Repr-Digest`) are dropped — they spoke of
 * the client's bytes, not the proxy's — and `Accept-Encoding` is set to what the proxy can
 * decode. `as: 'passed'` (body and answer streamed as they are): all kept as sent.
 */
export function upstreamHeaders(headers: IncomingHttpHeaders, strip: ReadonlySet<string>, as: 'guarded' | 'passed'): Record<string, string> {
  const named = connectionNamed(headers.connection)
  const rewritten = as === 'guarded'
  const out: Record<string, string> = {}
  for (const k in headers) {
    const v = headers[k]
    if (v === undefined || HOP_BY_HOP.has(k) || (rewritten && REWRITTEN.has(k)) || named?.has(k) || strip.has(k)) continue
    out[k] = Array.isArray(v) ? v.join(', ') : v
  }
  if (rewritten) out['accept-encoding'] = DECODED_CODINGS
  return out
}

/**
 * The upstream's answer headers to pass back: all but hop-by-hop ones (and those its
 * `Connection` names) and every `x-toolgate-*` header — those are the proxy's to set, so an
 * upstream cannot forge `x-toolgate-refused` or `x-toolgate-receipts` (its trailers are never
 * passed either); `decoded` (the body is decoded or rewritten): no `Content-Encoding`,
 * `Content-Length` or body digest (`Content-MD5`, `Digest`, `Content-Digest`, `Repr-Digest`)
 * either. `Set-Cookie` stays a list.
 */
export function clientHeaders(res: IncomingMessage, decoded: boolean): OutgoingHttpHeaders {
  const h = res.headers
  const named = connectionNamed(h.connection)
  const out: OutgoingHttpHeaders = {}
  for (const k in h) {
    const v = h[k]
    if (v === undefined || DROP_RESPONSE.has(k) || k.startsWith(OWN_PREFIX) || (decoded && DROP_DECODED.has(k)) || named?.has(k)) continue
    out[k] = v
  }
  return out
}

/**
 * The content coding of a guarded request's body when it has one: `undefined` when
 * `Content-Encoding` is absent or names only `identity`, else the header as sent. The proxy
 * reads a guarded body as uncoded JSON, and the gate must decide on exactly what the provider
 * reads, so a coded body is refused (415), never decided one way and sent to be read another.
 */
export function requestCoding(headers: IncomingHttpHeaders): string | undefined {
  const header = headers['content-encoding']
  if (header === undefined) return undefined
  const codings = header.split(',').map((c) => c.trim().toLowerCase())
  return codings.every((c) => c === 'identity') ? undefined : header
}

/** What went wrong, for the proxy's own error answers. */
export type ProxyErrorKind = 'bad_request' | 'not_passed' | 'payload_too_large' | 'unsupported_encoding' | 'bad_upstream_response' | 'upstream_unreachable' | 'upstream_timeout' | 'not_implemented'

const STATUS: Record<ProxyErrorKind, number> = {
  bad_request: 400,
  not_passed: 403,
  payload_too_large: 413,
  unsupported_encoding: 415,
  not_implemented: 501,
  bad_upstream_response: 502,
  upstream_unreachable: 502,
  upstream_timeout: 504,
}

const ANTHROPIC_TYPE: Record<ProxyErrorKind, string> = {
  bad_request: 'invalid_request_error',
  not_passed: 'permission_error',
  payload_too_large: 'request_too_large',
  unsupported_encoding: 'invalid_request_error',
  not_implemented: 'api_error',
  bad_upstream_response: 'api_error',
  upstream_unreachable: 'api_error',
  upstream_timeout: 'timeout_error',
}

/** A proxy error answer: its status and JSON body in the API's own error shape. */
export interface ProxyError {
  status: number
  body: string
}

/**
 * The proxy's own error answer in the dialect's error shape — OpenAI (both APIs):
 * `{ error: { message, type, param: null, code: "toolgate_<kind>" } }`; Anthropic:
 * `{ type: "error", error: { type, message } }` — so the SDKs raise their usual error classes.
 * The message starts with `toolgate proxy:` and names what was wrong.
 */
export function proxyError(dialect: RequestDialect, kind: ProxyErrorKind, message: string): ProxyError {
  const status = STATUS[kind]
  const msg = `toolgate proxy: ${message}`
  const body = dialect === 'anthropic'
    ? { type: 'error', error: { type: ANTHROPIC_TYPE[kind], message: msg } }
    : { error: { message: msg, type: status < 500 ? 'invalid_request_error' : 'server_error', param: null, code: `toolgate_${kind}` } }
  return { status, body: JSON.stringify(body) }
}

/** The error shape for a path that is not guarded: Anthropic's under `/v1/messages…` (or any path ending in `/messages…`), else OpenAI's. */
export function dialectForErrors(apiPath: string): RequestDialect {
  return /\/(messages|complete)(\/|$|\?)/i.test(apiPath) ? 'anthropic' : 'openai'
}

/**
 * Reads a request body of at most `limit` bytes. A `Content-Length` over the limit is refused
 * before anything is read; a body that grows past it stops being read (the request is paused, the
 * connection left for the answer to close). Answers the bytes, or `'too_large'`; rejects when
 * the body breaks off.
 */
export function readRequestBounded(req: IncomingMessage, limit: number): Promise<Buffer | 'too_large'> {
  const declared = Number(req.headers['content-length'])
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve('too_large')
  // past the limit the request is paused; the answer (413, `Connection: close`) ends the connection
  return readBounded(req, limit, 'pause', 'the client closed the connection before the body ended')
}
