// The HTTP proxy's client toward the model API: node:http / node:https `request` over keep-alive
// agents (one per scheme, per proxy), cancelled with the exchange (client gone, timed out),
// and the answer's content coding undone on the way in. No `fetch`: undici's web streams cost
// about half a millisecond per request more than a node:http request on a kept-alive socket.
// Nothing here decides about tool calls.
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import { pipeline, Transform, type Readable, type TransformCallback } from 'node:stream'
import { createBrotliDecompress, createGunzip, createInflate, createInflateRaw, type Inflate, type InflateRaw } from 'node:zlib'
import { readBounded } from '../read-bounded'

/** Keep-alive agents toward the upstream, one per scheme. */
export interface UpstreamAgents {
  http: HttpAgent
  https: HttpsAgent
  /** Closes every socket, idle or not (the proxy's `close()`). */
  destroy(): void
}

/** Sockets per upstream host and port at most (requests beyond wait in the agent's queue). */
export const MAX_SOCKETS = 256
/** Idle sockets kept per upstream host and port. */
export const MAX_FREE_SOCKETS = 64
/** An idle kept-alive socket is closed after this long (below common server idle limits; a server's `Keep-Alive: timeout` hint shortens it). */
export const IDLE_SOCKET_MS = 30_000

/** New keep-alive agents: {@link MAX_SOCKETS} sockets, {@link MAX_FREE_SOCKETS} kept idle, TCP keep-alive probes after 1 s idle, most recently used socket first. */
export function upstreamAgents(): UpstreamAgents {
  const o = { keepAlive: true, keepAliveMsecs: 1000, maxSockets: MAX_SOCKETS, maxFreeSockets: MAX_FREE_SOCKETS, timeout: IDLE_SOCKET_MS, scheduling: 'lifo' as const }
  const http = new HttpAgent(o)
  const https = new HttpsAgent(o)
  return {
    http,
    https,
    destroy: () => {
      http.destroy()
      https.destroy()
    },
  }
}

/** Where a request goes: scheme, host (IPv6 without brackets), port, and the path with its query. */
export interface UpstreamTarget {
  protocol: 'http:' | 'https:'
  hostname: string
  port: number
  path: string
  /** `user:password` from the upstream URL (decoded), sent as Basic auth when the client sends no `Authorization`. */
  auth?: string
}

/**
 * Cancels one exchange with the upstream: `cancel(reason)` destroys the request in flight and
 * its answer (the socket is destroyed, never reused), and any request started afterwards at once.
 * Cheaper than an `AbortSignal`, which costs an event target and listeners per request.
 */
export class UpstreamCancel {
  #req: ClientRequest | undefined
  #reason: Error | undefined

  /** Whether `cancel` was called. */
  get cancelled(): boolean {
    return this.#reason !== undefined
  }

  /** Destroys the request in flight (once). */
  cancel(reason: Error): void {
    if (this.#reason !== undefined) return
    this.#reason = reason
    this.#req?.destroy(reason)
  }

  /** The request now in flight (a retry replaces the first); destroyed at once when already cancelled. */
  attach(req: ClientRequest): void {
    this.#req = req
    if (this.#reason !== undefined) req.destroy(this.#reason)
  }
}

/** One request upstream. */
export interface UpstreamRequest {
  method: string
  headers: Record<string, string>
  /** The whole body — text (sent as UTF-8) or bytes — retried once on a kept-alive socket the server had just closed; a stream piped as it comes; or none. */
  body?: string | Buffer | Readable
  /** Cancels the request and its answer. */
  cancel: UpstreamCancel
}

/**
 * Sends `r` to `target` and resolves with the upstream's answer once its status and headers are
 * in (the body not read yet). Rejects with the socket error (`ECONNREFUSED`, `ENOTFOUND` …) or
 * the cancel's reason. A request with a whole body (text or bytes) or none that fails with `ECONNRESET`/`EPIPE`
 * on a reused kept-alive socket before any answer — the server closed it as it was picked — is
 * sent once more on a fresh socket, as Node's documentation recommends; a streamed body never is.
 * No redirect is followed: a 3xx is an answer like any other.
 */
export function requestUpstream(agents: UpstreamAgents, target: UpstreamTarget, r: UpstreamRequest, retried = false): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const https = target.protocol === 'https:'
    const req: ClientRequest = (https ? httpsRequest : httpRequest)({
      hostname: target.hostname,
      port: target.port,
      path: target.path,
      method: r.method,
      headers: r.headers,
      agent: https ? agents.https : agents.http,
      auth: target.auth,
    })
    r.cancel.attach(req)
    let answered = false
    req.once('response', (res) => {
      answered = true
      resolve(res)
    })
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (answered) return // the answer's stream carries it
      const code = err.code
      if (!retried && req.reusedSocket && (code === 'ECONNRESET' || code === 'EPIPE') && !r.cancel.cancelled && (r.body === undefined || typeof r.body === 'string' || Buffer.isBuffer(r.body))) {
        requestUpstream(agents, target, r, true).then(resolve, reject)
        return
      }
      reject(err)
    })
    if (r.body === undefined) req.end()
    else if (typeof r.body === 'string') {
      // text goes out with the head in one write (no Buffer made for it)
      req.setHeader('content-length', Buffer.byteLength(r.body))
      req.end(r.body)
    } else if (Buffer.isBuffer(r.body)) {
      req.setHeader('content-length', r.body.length)
      req.end(r.body)
    } else {
      const body = r.body
      body.on('error', (err) => req.destroy(err))
      body.pipe(req)
    }
  })
}

/** The content codings the proxy undoes (what it asks for in `Accept-Encoding` on guarded paths). */
export const DECODED_CODINGS = 'gzip, deflate, br'

/**
 * The answer's body with its content coding undone: `gzip` (`x-gzip`), `deflate` (zlib-wrapped
 * or raw, told by the first byte) and `br`, in any chain of up to three; no coding or `identity`
 * is the body as it is. Errors of the answer or of a decoder reach the returned stream; destroying
 * it destroys the answer (and its socket). A coding it cannot undo (`zstd` — Node 20's zlib has
 * none — `compress`, …) is answered `{ unsupported }` naming it, the body untouched.
 */
export function decodedBody(res: IncomingMessage): Readable | { unsupported: string } {
  const header = res.headers['content-encoding']
  if (header === undefined) return res
  const codings = header.split(',').map((c) => c.trim().toLowerCase()).filter((c) => c !== '' && c !== 'identity')
  if (codings.length === 0) return res
  if (codings.length > 3) return { unsupported: header }
  const decoders: Transform[] = []
  for (const c of codings.reverse()) {
    if (c === 'gzip' || c === 'x-gzip') decoders.push(createGunzip())
    else if (c === 'br') decoders.push(createBrotliDecompress())
    else if (c === 'deflate') decoders.push(new InflateAuto())
    else return { unsupported: c }
  }
  return pipeline([res, ...decoders], () => undefined) as unknown as Readable
}

/**
 * `deflate` as servers send it: zlib-wrapped (RFC 9110) or, from some, raw; told by the first
 * byte. The inner decoder is paused whenever this stream's buffer is full and resumed when it
 * is read, so a reader that stops stops the decoding, and with it the reading of the answer:
 * what is buffered stays within the streams' high-water marks (plus one decoder chunk each),
 * as with `gzip` and `br`, however far the body inflates.
 */
class InflateAuto extends Transform {
  #inner: Inflate | InflateRaw | undefined

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    if (this.#inner === undefined) {
      if (chunk.length === 0) {
        done()
        return
      }
      const inner = (chunk[0] & 0x0f) === 0x08 ? createInflate() : createInflateRaw()
      inner.on('data', (d: Buffer) => {
        // full: the decoder waits (and its input with it) until this stream is read (_read)
        if (!this.push(d)) inner.pause()
      })
      inner.on('error', (err) => this.destroy(err))
      this.#inner = inner
    }
    if (this.#inner.write(chunk)) done()
    else this.#inner.once('drain', () => done())
  }

  override _read(size: number): void {
    this.#inner?.resume()
    super._read(size)
  }

  override _flush(done: TransformCallback): void {
    if (this.#inner === undefined) {
      done()
      return
    }
    this.#inner.once('end', () => done())
    this.#inner.end()
  }

  override _destroy(err: Error | null, done: (err: Error | null) => void): void {
    this.#inner?.destroy()
    done(err)
  }
}

/**
 * Reads an upstream answer of at most `limit` bytes; `'too_large'` past it (the stream is
 * destroyed, the rest never read). Rejects with the stream's error, or when it closes before its end.
 */
export function readStreamBounded(body: Readable, limit: number): Promise<Buffer | 'too_large'> {
  return readBounded(body, limit, 'destroy', 'the answer ended before its body was whole')
}

/** Why a request failed, for messages: its system error code when it has one (`ECONNREFUSED` …), else its message. */
export function requestFailure(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } } | undefined
  if (typeof e?.code === 'string' && e.code !== 'ABORT_ERR') return e.code
  if (e?.cause && typeof e.cause.code === 'string') return e.cause.code
  if (e?.cause && typeof e.cause.message === 'string') return e.cause.message
  return err instanceof Error ? err.message : String(err)
}
