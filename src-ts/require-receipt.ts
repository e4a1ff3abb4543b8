// The tool server's side of receipts: a handler wrapped by `requireReceipt` runs only calls a
// gate allowed — with exactly these arguments, for this tool — and each receipt at most once
// within its lifetime. Verification is the core's (`verifyReceipt`); this reads where the
// receipt travels and keeps the replay cache.
import { ToolGateError } from './errors'
import { verifyReceipt, type ReceiptClaims } from './receipt'

/** Where an MCP `tools/call` carries its receipt: `params._meta["toolgate/receipt"]`. */
export const RECEIPT_META = 'toolgate/receipt'
/** The HTTP header that carries a receipt. */
export const RECEIPT_HEADER = 'x-toolgate-receipt'

/** Options of {@link requireReceipt}. */
export interface RequireReceiptOptions {
  /** The gate's verifying key (`gate.publicKey`, base64url). */
  publicKey: string
  /** The tool this handler runs; receipts for another tool are refused (`wrong_tool`). Default: not checked. */
  tool?: string
  /** Receipts remembered to refuse a replayed `jti` (default 100000); when full of unexpired receipts, new ones are refused. */
  maxReplayCache?: number
  /** Told of every refusal (for logs). */
  onRefused?: (error: ToolGateError) => void
}

/** Remembers `jti`s until their receipt expires, bounded. */
class ReplayCache {
  readonly #seen = new Map<string, number>()
  readonly #max: number

  constructor(max: number) {
    this.#max = max
  }

  /** Records `jti` (expiring at `exp`, Unix seconds); `false` if it was seen or the cache is full. */
  admit(jti: string, exp: number, nowS: number): 'ok' | 'replayed' | 'full' {
    if (this.#seen.has(jti)) return 'replayed'
    if (this.#seen.size >= this.#max) {
      for (const [k, e] of this.#seen) if (e + 60 < nowS) this.#seen.delete(k) // expired, skew included
      if (this.#seen.size >= this.#max) return 'full'
    }
    this.#seen.set(jti, exp)
    return 'ok'
  }
}

/** Checks one receipt for one call: signature, expiry, tool, arguments, then the replay cache. */
function checker(opts: RequireReceiptOptions): (receipt: unknown, args: unknown) => ReceiptClaims {
  if (typeof opts?.publicKey !== 'string' || opts.publicKey === '') {
    throw new ToolGateError('E_CONFIG', 'requireReceipt: `publicKey` (the gate\'s publicKey) is required')
  }
  const cache = new ReplayCache(opts.maxReplayCache ?? 100_000)
  return (receipt, args) => {
    try {
      if (typeof receipt !== 'string' || receipt === '') {
        throw new ToolGateError('E_RECEIPT', 'missing: this call carries no toolgate receipt; only calls a gate allowed run here', { reason: 'missing' })
      }
      const claims = verifyReceipt(receipt, opts.publicKey, { tool: opts.tool, arguments: args ?? {} })
      const seen = cache.admit(claims.jti, claims.exp, Math.floor(Date.now() / 1000))
      if (seen !== 'ok') {
        const why = seen === 'replayed' ? 'this receipt was already used' : 'too many receipts are live to remember another'
        throw new ToolGateError('E_RECEIPT', `replayed: ${why}; the call was not run`, { reason: seen === 'replayed' ? 'replayed' : 'replay_cache_full' })
      }
      return claims
    } catch (err) {
      const e = err instanceof ToolGateError ? err : new ToolGateError('E_RECEIPT', String(err), { cause: err, reason: 'malformed' })
      opts.onRefused?.(e)
      throw e
    }
  }
}

/** The part of a Node `IncomingMessage` read here (structural, so no `@types/node` is needed). */
export interface HttpRequestLike extends AsyncIterable<Uint8Array | string> {
  headers: Record<string, string | string[] | undefined>
}

/** The part of a Node `ServerResponse` written here on a refusal. */
export interface HttpResponseLike {
  writeHead(status: number, headers?: Record<string, string>): unknown
  end(body?: string): unknown
}

/** The extra an MCP SDK tool handler receives (only `_meta` is read). */
export interface McpHandlerExtra {
  _meta?: Record<string, unknown>
}

/**
 * Wraps an MCP tool handler (`(args, extra) => result`, as `McpServer.registerTool` takes it): it
 * runs only when `extra._meta["toolgate/receipt"]` is a valid, unexpired, unused receipt for these
 * exact arguments (and `options.tool`); otherwise it answers an MCP tool error
 * (`isError: true`) naming why, and the handler never runs.
 */
export function requireReceipt<A, E extends McpHandlerExtra, R>(
  handler: (args: A, extra: E) => R | Promise<R>,
  options: RequireReceiptOptions,
): (args: A, extra: E) => Promise<R | { isError: true; content: { type: 'text'; text: string }[] }> {
  const check = checker(options)
  return async (args, extra) => {
    try {
      check(extra?._meta?.[RECEIPT_META], args)
    } catch (err) {
      return { isError: true, content: [{ type: 'text', text: `Refused by the tool server: ${(err as Error).message}` }] }
    }
    return handler(args, extra)
  }
}

/**
 * Wraps a Node HTTP handler for a tool endpoint whose request body is the call's JSON arguments
 * and whose `x-toolgate-receipt` header carries the receipt. The body is read (at most
 * `maxBodyBytes`, default 1 MiB) and checked; the handler gets it parsed as its third argument.
 * A refusal answers 403 with `{ error: { code: 'E_RECEIPT', reason, message } }`.
 */
requireReceipt.http = function requireReceiptHttp<Req extends HttpRequestLike, Res extends HttpResponseLike>(
  handler: (req: Req, res: Res, args: unknown) => unknown,
  options: RequireReceiptOptions & { maxBodyBytes?: number },
): (req: Req, res: Res) => Promise<void> {
  const check = checker(options)
  const max = options.maxBodyBytes ?? 1 << 20
  return async (req, res) => {
    const chunks: Buffer[] = []
    let size = 0
    const refuse = (status: number, body: object) => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
    }
    for await (const c of req) {
      const b = typeof c === 'string' ? Buffer.from(c) : Buffer.from(c.buffer, c.byteOffset, c.byteLength)
      size += b.length
      if (size > max) {
        refuse(413, { error: { code: 'E_PAYLOAD', message: `body over ${max} bytes` } })
        return
      }
      chunks.push(b)
    }
    let args: unknown
    try {
      const text = Buffer.concat(chunks).toString('utf8')
      args = text.trim() === '' ? {} : JSON.parse(text)
    } catch {
      refuse(400, { error: { code: 'E_PAYLOAD', message: 'the body is not JSON' } })
      return
    }
    try {
      check(req.headers[RECEIPT_HEADER], args)
    } catch (err) {
      const e = err as ToolGateError
      refuse(403, { error: { code: 'E_RECEIPT', reason: e.reason, message: e.message } })
      return
    }
    await handler(req, res, args)
  }
}
