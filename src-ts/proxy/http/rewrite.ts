// A guarded model answer, made fit to hand back: the answer as the client will parse it, every
// tool-call part lined up with the gate's report by position and re-encoded from the decision
// (name, namespace, type, id, arguments — never the upstream's bytes for those parts), every
// refused call removed, the stop reason rewritten when no call is left, and the refusal told in a
// text part. Which calls are refused, and what each refusal says, are the gate's
// (`TurnReport.calls`, `refusalText`); this file only edits shapes and refuses what does not line up.
import { isObj } from '../../json-object'
import { ToolGateError } from '../../errors'
import type { TurnCall } from '../../types'
import { answerCallParts, chatMessageParts, chatMessages, messagesPart, responsesPart, type AnswerDialect, type CallPart } from './call-parts'
import { refusalText, refusedOf, type RefusedCall } from './refusal'

type Obj = Record<string, unknown>

/** A guarded answer ready to send: its text, the calls removed, and the receipts of the calls kept. */
export interface GuardedAnswer {
  /** The JSON text to send. */
  text: string
  refused: RefusedCall[]
  receipts: { callId: string; receipt: string }[]
}

/**
 * The answer to send for the upstream answer `json` (which the gate guarded into `calls`).
 * `json` is parsed here as the client will parse it; its tool-call parts (call-parts.ts) must be
 * exactly the gate's calls, one for one in payload order: same count, same tool, same wire id
 * (an empty, missing or shared id, an ambiguous shape, or a part the gate did not decide refuses
 * the whole answer — `E_PAYLOAD`, which the proxy answers 502, never forwarding it). Allowed
 * calls are written anew from the decision: Chat `{id, type, function|custom: {name,
 * arguments|input}}` or `function_call: {name, arguments}`; Messages `{type: "tool_use", id,
 * name, input}`; Responses `{type, id, call_id, name, namespace, arguments|input, status}` or a
 * built-in's `{type, id, call_id, status, <action member>}` — every other member of the part is
 * dropped. Refused calls are removed: Chat entries (the array dropped when empty,
 * `finish_reason` `tool_calls`/`function_call` → `stop`, the refusal text appended to
 * `content`); Responses items (a `message` item with an `output_text` part holding the refusal
 * text takes the first removed item's place); Messages blocks (a `text` block takes the first
 * removed block's place; `stop_reason` `tool_use` → `end_turn` when none is left). An answer with
 * no call at all goes out as its own text.
 */
export function decidedAnswer(dialect: AnswerDialect, json: string, calls: readonly TurnCall[]): GuardedAnswer {
  let body: unknown
  try {
    body = JSON.parse(json)
  } catch (err) {
    throw new ToolGateError('E_PAYLOAD', `${dialect} answer: not JSON (${(err as Error).message})`)
  }
  if (!isObj(body)) throw new ToolGateError('E_PAYLOAD', `${dialect} answer: expected a JSON object`)
  const parts = answerCallParts(dialect, body)
  if (parts.length !== calls.length) {
    throw new ToolGateError('E_PAYLOAD', `${dialect} answer: it carries ${parts.length} tool call${parts.length === 1 ? '' : 's'}, the gate decided ${calls.length}; not forwarded`)
  }
  for (const [i, p] of parts.entries()) lineUp(dialect, p, calls[i], i)
  const refused = refusedOf(calls)
  const receipts: GuardedAnswer['receipts'] = []
  for (const c of calls) if (c.allowed && c.receipt !== undefined) receipts.push({ callId: c.callId, receipt: c.receipt })
  if (calls.length === 0) return { text: json, refused, receipts }
  const decided = new Map<Obj, TurnCall>(parts.map((p, i) => [p.part, calls[i]]))
  if (dialect === 'openai') chat(body, decided)
  else if (dialect === 'anthropic') messages(body, decided)
  else responses(body, decided)
  return { text: JSON.stringify(body), refused, receipts }
}

/** Part `i` must be the gate's call `i`: the same tool and the same id. */
function lineUp(dialect: AnswerDialect, p: CallPart, c: TurnCall | undefined, i: number): void {
  const id = p.id ?? String(i)
  if (c === undefined || c.tool !== p.tool || c.callId !== id) {
    throw new ToolGateError('E_PAYLOAD', `${dialect} answer: tool call ${i} (\`${p.tool.slice(0, 64)}\`, id \`${id.slice(0, 64)}\`) is not the call the gate decided there (\`${c?.tool.slice(0, 64) ?? 'none'}\`, id \`${c?.callId.slice(0, 64) ?? 'none'}\`); not forwarded`)
  }
}

/** The decided arguments as text (members that hold a JSON string on the wire). */
function argsText(c: TurnCall): string {
  if (c.argumentsJson === undefined) throw new ToolGateError('E_PAYLOAD', `allowed call \`${c.callId}\` has no decided arguments`)
  return c.argumentsJson
}

/** The decided arguments as a value (members that hold an object on the wire). */
function argsValue(c: TurnCall): Record<string, unknown> {
  if (c.arguments === undefined) throw new ToolGateError('E_PAYLOAD', `allowed call \`${c.callId}\` has no decided arguments`)
  return c.arguments
}

/** An allowed part, written anew from its decision; only members that say which call runs, and how, survive. */
function encode(p: CallPart, c: TurnCall): Obj {
  const src = p.part
  switch (p.shape) {
    case 'function':
      return { id: p.id, type: 'function', function: { name: p.name, arguments: argsText(c) } }
    case 'custom':
      return { id: p.id, type: 'custom', custom: { name: p.name, input: argsText(c) } }
    case 'legacy':
      return { name: p.name, arguments: argsText(c) }
    case 'tool_use':
      return { type: 'tool_use', id: p.id, name: p.name, input: argsValue(c) }
    case 'text':
    case 'builtin': {
      const out: Obj = { type: p.type }
      if (typeof src.id === 'string') out.id = src.id
      out.call_id = p.id
      if (p.shape === 'text') {
        out.name = p.name
        if (p.namespace !== undefined) out.namespace = p.namespace
        out[p.member] = argsText(c)
      } else {
        out[p.member] = argsValue(c)
        if (p.type === 'computer_call' && Array.isArray(src.pending_safety_checks)) out.pending_safety_checks = src.pending_safety_checks
        if (p.type === 'tool_search_call') out.execution = 'client'
      }
      if (src.status === 'completed' || src.status === 'in_progress' || src.status === 'incomplete') out.status = src.status
      return out
    }
  }
}

/** Chat Completions: each message's calls replaced by their decided form or removed. */
function chat(body: Obj, decided: Map<Obj, TurnCall>): void {
  for (const { message, choice, where } of chatMessages(body)) {
    const parts = chatMessageParts(message, where)
    if (parts.length === 0) continue
    const removed: TurnCall[] = []
    const kept: Obj[] = []
    for (const p of parts) {
      const c = decided.get(p.part)!
      if (c.allowed) kept.push(encode(p, c))
      else removed.push(c)
    }
    if (parts[0].shape === 'legacy') {
      if (kept.length > 0) message.function_call = kept[0]
      else delete message.function_call
    } else if (kept.length > 0) message.tool_calls = kept
    else delete message.tool_calls
    if (removed.length === 0) continue
    const text = refusalText(refusedOf(removed))
    message.content = typeof message.content === 'string' && message.content !== '' ? `${message.content}\n\n${text}` : text
    if (kept.length === 0 && choice !== undefined && (choice.finish_reason === 'tool_calls' || choice.finish_reason === 'function_call')) choice.finish_reason = 'stop'
  }
}

/** Replaces call parts of `list` with their decided form, drops refused ones, and puts `note(refused)` where the first one was. */
function rewriteList(list: unknown[], partOf: (v: unknown, i: number) => CallPart | undefined, decided: Map<Obj, TurnCall>, note: (refused: RefusedCall[]) => Obj): unknown[] {
  const kept: unknown[] = []
  const removed: TurnCall[] = []
  let at = -1
  list.forEach((v, i) => {
    const p = partOf(v, i)
    if (p === undefined) {
      kept.push(v)
      return
    }
    const c = decided.get(p.part)!
    if (c.allowed) {
      kept.push(encode(p, c))
      return
    }
    removed.push(c)
    if (at < 0) at = kept.length
  })
  if (removed.length > 0) kept.splice(at, 0, note(refusedOf(removed)))
  return kept
}

/** Anthropic Messages: `tool_use` blocks. */
function messages(body: Obj, decided: Map<Obj, TurnCall>): void {
  const content = rewriteList(body.content as unknown[], (b, i) => messagesPart(b, `content[${i}]`), decided, (r) => ({ type: 'text', text: refusalText(r) }))
  body.content = content
  if (body.stop_reason === 'tool_use' && !content.some((b) => isObj(b) && b.type === 'tool_use')) body.stop_reason = 'end_turn'
}

/** Responses: call items (`function_call`, `custom_tool_call`, client built-ins …). */
function responses(body: Obj, decided: Map<Obj, TurnCall>): void {
  body.output = rewriteList(body.output as unknown[], (it, i) => (isObj(it) ? responsesPart(it, `output[${i}]`) : undefined), decided, (r) => ({
    type: 'message',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text: refusalText(r), annotations: [] }],
  }))
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
