// A guarded model answer, made fit to hand back: the gate's report payload (repaired arguments
// already written back) with every refused call removed, the stop reason rewritten when no call
// is left, and the refusal told in a text part. Which calls are refused, and what each refusal
// says, are the gate's (`TurnReport.calls`, `refusalText`); this file only edits shapes.
import { ToolGateError } from '../errors'
import type { TurnCall } from '../types'
import { refusalText, refusedOf, type RefusedCall } from './http-refusal'
import type { ApiDialect } from './http-upstream'

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

/** A guarded answer ready to send: the body, the calls removed, and the receipts of the calls kept. */
export interface GuardedAnswer {
  body: unknown
  refused: RefusedCall[]
  receipts: { callId: string; receipt: string }[]
}

/**
 * Removes the refused calls of `calls` from `payload` (the report's payload, edited in place):
 * Chat Completions `tool_calls` entries (the array dropped when empty, `finish_reason`
 * `tool_calls`/`function_call` → `stop`, the refusal text appended to `content`); Responses
 * `output` items (a `message` item with an `output_text` part holding the refusal text takes the
 * first removed item's place); Anthropic `tool_use` blocks (a `text` block takes the first removed
 * block's place; `stop_reason` `tool_use` → `end_turn` when none is left). Throws `E_PAYLOAD` when
 * a refused call cannot be found in the payload: the answer is then not sent at all.
 */
export function removeRefused(dialect: ApiDialect, payload: unknown, calls: readonly TurnCall[]): GuardedAnswer {
  const refused = refusedOf(calls)
  const receipts: GuardedAnswer['receipts'] = []
  for (const c of calls) if (c.allowed && c.receipt !== undefined) receipts.push({ callId: c.callId, receipt: c.receipt })
  if (refused.length === 0) return { body: payload, refused, receipts }
  if (!isObj(payload)) throw new ToolGateError('E_PAYLOAD', `${dialect} answer: expected an object to remove refused calls from`)
  if (dialect === 'openai') chat(payload, calls)
  else if (dialect === 'anthropic') messages(payload, refused)
  else responses(payload, refused)
  return { body: payload, refused, receipts }
}

/** Chat Completions: calls are read choice by choice, `tool_calls` then a legacy `function_call`. */
function chat(payload: Obj, calls: readonly TurnCall[]): void {
  const choices = Array.isArray(payload.choices) ? payload.choices : []
  let k = 0
  const next = (id: unknown): TurnCall => {
    const c = calls[k++]
    if (c === undefined || (typeof id === 'string' && id !== c.callId)) {
      throw new ToolGateError('E_PAYLOAD', `openai answer: the calls in \`choices\` do not line up with the gate's report (at call ${k - 1})`)
    }
    return c
  }
  for (const choice of choices) {
    const message = isObj(choice) ? choice.message : undefined
    if (!isObj(choice) || !isObj(message)) continue
    const removed: TurnCall[] = []
    if (Array.isArray(message.tool_calls)) {
      message.tool_calls = message.tool_calls.filter((tc) => {
        const c = next(isObj(tc) ? tc.id : undefined)
        if (!c.allowed) removed.push(c)
        return c.allowed
      })
      if ((message.tool_calls as unknown[]).length === 0) delete message.tool_calls
    }
    if (isObj(message.function_call)) {
      const c = next(undefined)
      if (!c.allowed) {
        removed.push(c)
        delete message.function_call
      }
    }
    if (removed.length === 0) continue
    const text = refusalText(refusedOf(removed))
    message.content = typeof message.content === 'string' && message.content !== '' ? `${message.content}\n\n${text}` : text
    if (message.tool_calls === undefined && message.function_call === undefined && (choice.finish_reason === 'tool_calls' || choice.finish_reason === 'function_call')) {
      choice.finish_reason = 'stop'
    }
  }
  if (k !== calls.length) throw new ToolGateError('E_PAYLOAD', `openai answer: the gate reported ${calls.length} calls, the payload holds ${k}`)
}

/** Anthropic Messages: `tool_use` blocks, by id. */
function messages(payload: Obj, refused: readonly RefusedCall[]): void {
  if (!Array.isArray(payload.content)) throw new ToolGateError('E_PAYLOAD', 'anthropic answer: expected `content` to be an array')
  const ids = new Set(refused.map((r) => r.callId))
  const content = payload.content as unknown[]
  let at = -1
  const kept: unknown[] = []
  for (const block of content) {
    if (isObj(block) && block.type === 'tool_use' && typeof block.id === 'string' && ids.has(block.id)) {
      ids.delete(block.id)
      if (at < 0) at = kept.length
      continue
    }
    kept.push(block)
  }
  if (ids.size > 0) throw new ToolGateError('E_PAYLOAD', `anthropic answer: refused call \`${[...ids][0]}\` not found among the \`tool_use\` blocks`)
  kept.splice(at, 0, { type: 'text', text: refusalText(refused) })
  payload.content = kept
  if (payload.stop_reason === 'tool_use' && !kept.some((b) => isObj(b) && b.type === 'tool_use')) payload.stop_reason = 'end_turn'
}

/** Responses: call items (`function_call`, `custom_tool_call`, client built-ins …) by `call_id`. */
function responses(payload: Obj, refused: readonly RefusedCall[]): void {
  if (!Array.isArray(payload.output)) throw new ToolGateError('E_PAYLOAD', 'openai-responses answer: expected `output` to be an array')
  const ids = new Set(refused.map((r) => r.callId))
  let at = -1
  const kept: unknown[] = []
  for (const item of payload.output as unknown[]) {
    const id = isObj(item) && typeof item.type === 'string' && !item.type.endsWith('_output') ? item.call_id : undefined
    if (typeof id === 'string' && ids.has(id)) {
      ids.delete(id)
      if (at < 0) at = kept.length
      continue
    }
    kept.push(item)
  }
  if (ids.size > 0) throw new ToolGateError('E_PAYLOAD', `openai-responses answer: refused call \`${[...ids][0]}\` not found among the \`output\` items`)
  kept.splice(at, 0, {
    type: 'message',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text: refusalText(refused), annotations: [] }],
  })
  payload.output = kept
}

/** Largest `x-toolgate-refused` / `x-toolgate-receipts` header value sent (clients bound header sizes). */
export const MAX_HEADER_CHARS = 8192

/**
 * The `x-toolgate-receipts` header value: `<callId>=<receipt>` per allowed call, comma-separated,
 * the call id percent-encoded (the receipt is a compact JWS: base64url and dots). Only whole
 * pairs that fit in {@link MAX_HEADER_CHARS}; `undefined` when none does.
 */
export function receiptsHeader(receipts: readonly { callId: string; receipt: string }[]): string | undefined {
  const enc = (s: string) => encodeURIComponent(s).replace(/[;,=]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  let out = ''
  for (const r of receipts) {
    const pair = `${enc(r.callId)}=${r.receipt}`
    const next = out === '' ? pair : `${out}, ${pair}`
    if (next.length > MAX_HEADER_CHARS) break
    out = next
  }
  return out === '' ? undefined : out
}
