// The checks every HTTP request to the MCP listener passes before it reaches a session: the
// `Host` header (DNS rebinding), the `Origin` header (browsers), the bearer token, and the body's
// size. Each check answers with a status and a message that names what was wrong; none of them
// ever logs or echoes the token.
import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { BodyCut, readBounded } from '../read-bounded'
import type { RpcId } from './jsonrpc-lines'

/** A refusal: the HTTP status, extra headers and a message for the JSON-RPC error body. */
export interface Refusal {
  status: number
  message: string
  headers?: Record<string, string>
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]'])

/** Whether `host` (an address or name to bind) is a loopback one. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase()
  return h === 'localhost' || h === '::1' || h === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(h)
}

/** The host part of a `Host` header (`name`, `name:port`, `[v6]`, `[v6]:port`), lower-cased. */
function hostName(header: string): string | undefined {
  const m = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/i.exec(header.trim())
  return m ? m[1].toLowerCase() : undefined
}

/**
 * `Host` against DNS rebinding: when the listener is bound to loopback, only loopback names
 * (`localhost`, `127.x.x.x`, `[::1]`) are accepted, so a page on `evil.example` that resolves
 * to 127.0.0.1 cannot reach it. Bound elsewhere, any well-formed `Host` is accepted (the
 * operator chose to expose it: use a bearer token).
 */
export function checkHost(header: string | undefined, boundToLoopback: boolean): Refusal | undefined {
  if (header === undefined || header === '') return { status: 400, message: 'Bad Request: the Host header is missing' }
  const name = hostName(header)
  if (name === undefined) return { status: 400, message: 'Bad Request: the Host header is malformed' }
  if (boundToLoopback && !LOOPBACK_NAMES.has(name) && !/^127(?:\.\d{1,3}){3}$/.test(name)) {
    return { status: 403, message: `Forbidden: Host \`${clip(header)}\` is not a loopback name (the listener is bound to loopback; DNS rebinding protection)` }
  }
  return undefined
}

/**
 * `Origin`: absent is fine (non-browser clients send none); present, it must be a loopback
 * origin (`http://localhost:*`, `http://127.0.0.1:*`, `http://[::1]:*`) or one of `allowed`
 * (compared as `scheme://host[:port]`, case-insensitively, without a trailing slash).
 */
export function checkOrigin(header: string | undefined, allowed: readonly string[]): Refusal | undefined {
  if (header === undefined) return undefined
  const origin = header.trim().toLowerCase().replace(/\/$/, '')
  const m = /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(?::\d{1,5})?$/.exec(origin)
  if (m) return undefined
  if (allowed.some((a) => a.trim().toLowerCase().replace(/\/$/, '') === origin)) return undefined
  return { status: 403, message: `Forbidden: Origin \`${clip(header)}\` is not allowed (loopback origins and --allowed-origin/allowedOrigins only)` }
}

/**
 * `Authorization: Bearer <token>` against `token`, compared in constant time (both sides are
 * hashed first, so the comparison does not even leak the length). No token configured: passes.
 */
export function checkBearer(header: string | undefined, token: string | undefined): Refusal | undefined {
  if (token === undefined) return undefined
  const unauthorized = (message: string): Refusal => ({ status: 401, message, headers: { 'WWW-Authenticate': 'Bearer realm="toolgate mcp-proxy"' } })
  if (header === undefined) return unauthorized('Unauthorized: this listener needs `Authorization: Bearer <token>`')
  const m = /^Bearer[ \t]+(\S+)\s*$/i.exec(header)
  if (!m) return unauthorized('Unauthorized: the Authorization header is not `Bearer <token>`')
  const a = createHash('sha256').update(m[1], 'utf8').digest()
  const b = createHash('sha256').update(token, 'utf8').digest()
  return timingSafeEqual(a, b) ? undefined : unauthorized('Unauthorized: the bearer token is wrong')
}

/** What {@link readBody} gives back. */
export type BodyResult = { ok: true; text: string } | { ok: false; refusal: Refusal }

/**
 * Reads a request body of at most `maxBytes` bytes. A declared `Content-Length` over the limit
 * is refused before anything is read; a body that grows past it is refused as soon as it does
 * (413, and the rest is not buffered).
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<BodyResult> {
  const tooLarge = (bytes: string): BodyResult => ({ ok: false, refusal: { status: 413, message: `Payload Too Large: the request body is ${bytes} bytes, over the limit of ${maxBytes} (--max-message-bytes)` } })
  const declared = Number(req.headers['content-length'])
  if (Number.isFinite(declared) && declared > maxBytes) {
    req.resume() // drain; the connection is closed after the answer
    return Promise.resolve(tooLarge(String(declared)))
  }
  return readBounded(req, maxBytes, 'resume', 'the client hung up before the body was complete').then(
    (body) => (body === 'too_large' ? tooLarge(`more than ${maxBytes}`) : { ok: true, text: body.toString('utf8') }),
    (err: Error) => ({ ok: false, refusal: { status: 400, message: err instanceof BodyCut ? `Bad Request: ${err.message}` : `Bad Request: the request body could not be read (${err.message})` } }),
  )
}

/**
 * Answers a request with a JSON-RPC error body and the refusal's status and headers: `id` is the
 * request's when it is known (a message refused by the listener itself), else null.
 */
export function refuse(req: IncomingMessage, res: ServerResponse, r: Refusal, code = -32000, id: RpcId | null = null): void {
  const body = JSON.stringify({ jsonrpc: '2.0', id, error: { code, message: r.message } })
  // A body not read to its end (413) leaves the connection unusable: close it after the answer.
  const close = r.status === 413 || !req.complete
  res.writeHead(r.status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), ...(close ? { Connection: 'close' } : {}), ...r.headers })
  res.end(body)
}

function clip(s: string): string {
  return s.length > 100 ? `${s.slice(0, 100)}…` : s
}
