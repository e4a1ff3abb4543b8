// The HTTP proxy's wire plumbing toward the model API: which incoming paths are guarded and where
// each request goes upstream, which headers cross in each direction, the proxy's own error
// answers in each API's error shape, and bounded body reading. Nothing here decides about tool
// calls.
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from 'node:http'

/** The model APIs the HTTP proxy guards. */
export type ApiDialect = 'openai' | 'openai-responses' | 'anthropic'

/** The guarded endpoints, as API paths (relative to the upstream's base path). */
export const GUARDED_PATHS: Readonly<Record<string, ApiDialect>> = Object.freeze({
  '/v1/chat/completions': 'openai',
  '/v1/responses': 'openai-responses',
  '/v1/messages': 'anthropic',
})

/** Where requests go: the upstream origin and its base path (no trailing `/`, no trailing `/v1`). */
export interface UpstreamBase {
  origin: string
  basePath: string
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
    return `expected an http:// or https:// URL, got \`${text}\``
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `expected an http:// or https:// URL, got the scheme \`${u.protocol}\``
  if (u.search !== '' || u.hash !== '') return `expected a URL without query or fragment, got \`${text}\``
  let basePath = u.pathname.replace(/\/+$/, '')
  if (basePath.endsWith('/v1')) basePath = basePath.slice(0, -3)
  const shown = new URL(u.href)
  shown.username = ''
  shown.password = ''
  return { origin: u.origin, basePath, display: shown.href.replace(/\/$/, '') }
}

/** A request's place upstream: its API path (base path removed), the upstream URL, and the guarded dialect, if any. */
export interface Route {
  apiPath: string
  url: string
  dialect: ApiDialect | undefined
}

/**
 * Maps an incoming request to the upstream: the incoming path, with the upstream's base path
 * removed when the client already sent it, is the API path; the request goes to
 * origin + base path + API path + query. `POST` to one of {@link GUARDED_PATHS} is guarded;
 * everything else passes through.
 */
export function routeOf(method: string | undefined, rawUrl: string | undefined, base: UpstreamBase): Route {
  const raw = rawUrl ?? '/'
  const q = raw.indexOf('?')
  let path = q < 0 ? raw : raw.slice(0, q)
  const query = q < 0 ? '' : raw.slice(q)
  if (!path.startsWith('/')) path = `/${path}`
  if (base.basePath !== '' && (path === base.basePath || path.startsWith(`${base.basePath}/`))) path = path.slice(base.basePath.length) || '/'
  const dialect = method === 'POST' && Object.prototype.hasOwnProperty.call(GUARDED_PATHS, path) ? GUARDED_PATHS[path] : undefined
  return { apiPath: path, url: `${base.origin}${base.basePath}${path}${query}`, dialect }
}

/** Request headers never forwarded: hop-by-hop, recomputed by the HTTP client, or for the proxy itself. */
const DROP_REQUEST = new Set([
  'host', 'connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'transfer-encoding', 'te', 'trailer',
  'upgrade', 'content-length', 'expect', 'accept-encoding', 'http2-settings',
])

/** Response headers never passed back: hop-by-hop, or no longer true once the body is decoded or rewritten. */
const DROP_RESPONSE = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'trailer', 'upgrade', 'content-encoding', 'content-length'])

/**
 * The headers to send upstream: the client's, minus hop-by-hop headers, those the `Connection`
 * header names, and `strip` (the identity headers). `Authorization`, `x-api-key` and every
 * other header pass untouched. `Accept-Encoding` is set to what the proxy can decode.
 */
export function upstreamHeaders(headers: IncomingHttpHeaders, strip: ReadonlySet<string>): Record<string, string> {
  const named = new Set(String(headers.connection ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean))
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || DROP_REQUEST.has(k) || named.has(k) || strip.has(k)) continue
    out[k] = Array.isArray(v) ? v.join(', ') : v
  }
  out['accept-encoding'] = 'gzip, deflate, br'
  return out
}

/** The upstream's response headers to pass back (decoded body: no `content-encoding` or `content-length`). */
export function clientHeaders(h: Headers): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {}
  h.forEach((value, key) => {
    if (DROP_RESPONSE.has(key) || key === 'set-cookie') return
    out[key] = value
  })
  const cookies = h.getSetCookie()
  if (cookies.length > 0) out['set-cookie'] = cookies
  return out
}

/** What went wrong, for the proxy's own error answers. */
export type ProxyErrorKind = 'bad_request' | 'payload_too_large' | 'bad_upstream_response' | 'upstream_unreachable' | 'upstream_timeout' | 'not_implemented'

const STATUS: Record<ProxyErrorKind, number> = {
  bad_request: 400,
  payload_too_large: 413,
  not_implemented: 501,
  bad_upstream_response: 502,
  upstream_unreachable: 502,
  upstream_timeout: 504,
}

const ANTHROPIC_TYPE: Record<ProxyErrorKind, string> = {
  bad_request: 'invalid_request_error',
  payload_too_large: 'request_too_large',
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
export function proxyError(dialect: ApiDialect, kind: ProxyErrorKind, message: string): ProxyError {
  const status = STATUS[kind]
  const msg = `toolgate proxy: ${message}`
  const body = dialect === 'anthropic'
    ? { type: 'error', error: { type: ANTHROPIC_TYPE[kind], message: msg } }
    : { error: { message: msg, type: status < 500 ? 'invalid_request_error' : 'server_error', param: null, code: `toolgate_${kind}` } }
  return { status, body: JSON.stringify(body) }
}

/** The error shape for a path that is not guarded: Anthropic's under `/v1/messages…`, else OpenAI's. */
export function dialectForErrors(apiPath: string): ApiDialect {
  return apiPath.startsWith('/v1/messages') || apiPath.startsWith('/v1/complete') ? 'anthropic' : 'openai'
}

/**
 * Reads a request body of at most `limit` bytes. A `Content-Length` over the limit is refused
 * before anything is read; a body that grows past it stops being read. Answers the bytes, or
 * `'too_large'`.
 */
export async function readBounded(req: IncomingMessage, limit: number): Promise<Buffer | 'too_large'> {
  const declared = Number(req.headers['content-length'])
  if (Number.isFinite(declared) && declared > limit) return 'too_large'
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > limit) return 'too_large'
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks, size)
}

/** Reads an upstream body of at most `limit` bytes (decoded); `'too_large'` past it (the rest is not read). */
export async function readUpstreamBounded(body: ReadableStream<Uint8Array> | null, limit: number): Promise<Buffer | 'too_large'> {
  if (body === null) return Buffer.alloc(0)
  const chunks: Buffer[] = []
  let size = 0
  const reader = body.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      size += value.byteLength
      if (size > limit) {
        await reader.cancel().catch(() => undefined)
        return 'too_large'
      }
      chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength))
    }
  } finally {
    reader.releaseLock()
  }
  return Buffer.concat(chunks, size)
}

/** Why a fetch failed, for messages: the system error code of its cause when there is one. */
export function fetchFailure(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause
  if (cause && typeof cause.code === 'string') return cause.code
  if (cause && typeof cause.message === 'string') return cause.message
  return err instanceof Error ? err.message : String(err)
}
