// What the HTTP proxy does with an upstream answer that is not a 2xx on a guarded path. Such an
// answer is never guarded by the gate, so nothing of it may reach the client that a client could
// act on: a redirect is not followed or passed (its `Location` could send the client to an
// answer the gate never saw), and an error passes only as the API's own error shape, re-encoded
// member by member, so no tool call can ride in it.
import { isObj } from '../../json-object'
import type { RequestDialect } from '../../request-dialect'

type Obj = Record<string, unknown>

/** Largest upstream error body read on a guarded path (bytes); a longer one is answered 502. */
export const MAX_ERROR_BODY_BYTES = 256 * 1024
/** Longest error message passed on (characters); longer ones are cut and say so. */
const MAX_MESSAGE_CHARS = 4096

const str = (v: unknown, n = MAX_MESSAGE_CHARS): string | undefined => {
  if (typeof v !== 'string') return undefined
  return v.length > n ? `${v.slice(0, n)}… (${v.length - n} more characters cut by toolgate)` : v
}

/**
 * The body to pass on for an upstream error answer (`status` 400–599) of a guarded request, or
 * `undefined` when the upstream's body is not the API's error shape (the proxy then answers 502).
 * OpenAI (both APIs): `{ error: { message, type, param, code } }` — `message` a string, the
 * others strings (a number for `code`) or null. Anthropic: `{ type: "error", error: { type,
 * message } }` plus a string `request_id` when given. Only those members are written, from the
 * upstream's values: whatever else the body held (a `choices`, a `content`, an `output`) is gone.
 */
export function errorShape(dialect: RequestDialect, text: string): string | undefined {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return undefined
  }
  if (!isObj(body) || !isObj(body.error)) return undefined
  const e = body.error
  const message = str(e.message)
  if (message === undefined) return undefined
  if (dialect === 'anthropic') {
    const type = str(e.type, 128)
    if (body.type !== 'error' || type === undefined) return undefined
    const out: Obj = { type: 'error', error: { type, message } }
    const rid = str(body.request_id, 256)
    if (rid !== undefined) out.request_id = rid
    return JSON.stringify(out)
  }
  const opt = (v: unknown): string | null => str(v, 256) ?? null
  const code = typeof e.code === 'number' && Number.isFinite(e.code) ? e.code : opt(e.code)
  return JSON.stringify({ error: { message, type: opt(e.type), param: opt(e.param), code } })
}

/** How a guarded request's non-2xx upstream status is answered: passed as an error, or refused (502). */
export function statusPolicy(status: number): 'error' | 'refuse' {
  return status >= 400 && status <= 599 ? 'error' : 'refuse'
}
