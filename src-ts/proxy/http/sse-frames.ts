// How each model API writes its stream, for the HTTP proxy: the SSE framing of the events the
// gate forwards (Chat Completions `data: <json>` and a closing `data: [DONE]`; Messages and
// Responses `event: <type>` + `data: <json>`), where a turn's refusal text part goes and what it
// looks like in that dialect's events, and the dialect's mid-stream error event. Shapes only:
// which calls were refused, and the text announcing them, come from the gate
// (`refusedOf`/`refusalText` over its verdicts).
import { isObj } from '../../json-object'
import type { RefusedCall } from './refusal'
import { refusalText } from './refusal'

/** The dialects the HTTP proxy streams. */
export type SseDialect = 'openai' | 'openai-responses' | 'anthropic'

/** `code` of the error event the proxy writes into an OpenAI-dialect stream it had to stop. */
export const STREAM_ERROR_CODE = 'toolgate_stream_error'

/**
 * One stream's writer. {@link SseFrames.frame} turns what `ToolCallStream.forward()` answered
 * into SSE text, holding back the events that close the turn where the refusal part must come
 * before them (it is only complete once the stream has ended); {@link SseFrames.finish} writes
 * the refusal part and what was held; {@link SseFrames.error} the event that tells the client
 * the stream failed.
 */
export interface SseFrames {
  /** The dialect's terminal event went by: nothing after it is to be read. */
  readonly ended: boolean
  /**
   * SSE text for `events`, in order. `pending` answers the refused calls not yet announced
   * (and counts them announced); a dialect that announces them mid-stream calls it.
   */
  frame(events: unknown[], pending: () => RefusedCall[]): string
  /** The end of a turn that ended well: the refusal part for `refused` (none: nothing), then the held events. */
  finish(refused: RefusedCall[]): string
  /** The error event for a stream stopped with `message` (`''` when the client already got the upstream's own error event). */
  error(message: string): string
  /**
   * For an upstream event the gate could not read: the upstream's own error, when that is what
   * the event is (Chat Completions sends `data: {"error": {...}}` mid-stream), as the text to
   * write and its message.
   */
  upstreamError(data: string): { text: string; message: string } | undefined
}

type Json = Record<string, unknown>
const index = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined)

/** An event name that keeps the SSE framing intact (no line breaks, nothing odd). */
const SAFE_NAME = /^[A-Za-z0-9_.:-]{1,128}$/

/** The writer for `dialect`; `log` hears about events it could not write. */
export function framesFor(dialect: SseDialect, log: (line: string) => void): SseFrames {
  if (dialect === 'openai') return new ChatFrames()
  if (dialect === 'anthropic') return new AnthropicFrames(log)
  return new ResponsesFrames(log)
}

/** `event: <type>` + `data:`; an event whose `type` could break the framing is dropped (and logged). */
function named(ev: Json, log: (line: string) => void): string {
  const type = ev.type
  if (typeof type !== 'string' || !SAFE_NAME.test(type)) {
    log(`dropped an event whose type is not a plain name (${JSON.stringify(type)?.slice(0, 80)})`)
    return ''
  }
  return `event: ${type}\ndata: ${JSON.stringify(ev)}\n\n`
}

// ---- Chat Completions ---------------------------------------------------------------------------

/**
 * Chunks as `data: <json>`, `data: [DONE]` at the end. The refusal part is a `delta.content`
 * chunk of the finishing choice, right before the chunk carrying its `finish_reason` (every call
 * of a choice is decided by then); with several choices, the refusals decided so far go to the
 * first choice that finishes after them.
 */
class ChatFrames implements SseFrames {
  ended = false
  /** The last chunk's top-level members (id, created, model …), for chunks the proxy writes. */
  #head: Json = { object: 'chat.completion.chunk' }
  /** Choices whose content is not empty: the refusal text starts a new paragraph there. */
  #texted = new Set<number>()

  frame(events: unknown[], pending: () => RefusedCall[]): string {
    let s = ''
    for (const ev of events) {
      if (!isObj(ev)) continue
      const choices = Array.isArray(ev.choices) ? ev.choices.filter(isObj) : []
      const { choices: _c, usage: _u, obfuscation: _o, ...head } = ev
      this.#head = head
      for (const c of choices) {
        const content = isObj(c.delta) ? c.delta.content : undefined
        if (typeof content === 'string' && content !== '') this.#texted.add(index(c.index) ?? 0)
      }
      const finishing = choices.find((c) => c.finish_reason !== null && c.finish_reason !== undefined)
      const refused = finishing ? pending() : []
      if (!finishing || refused.length === 0) {
        s += `data: ${JSON.stringify(ev)}\n\n`
        continue
      }
      const at = index(finishing.index) ?? 0
      const reason = finishing.finish_reason
      if (isObj(finishing.delta) && Object.keys(finishing.delta).length > 0) {
        // the finishing chunk also carries content: it goes first, the finish after the refusal
        finishing.finish_reason = null
        s += `data: ${JSON.stringify(ev)}\n\n` + this.#text(at, refused)
        s += `data: ${JSON.stringify({ ...head, choices: [{ index: finishing.index, delta: {}, logprobs: null, finish_reason: reason }] })}\n\n`
      } else {
        s += this.#text(at, refused) + `data: ${JSON.stringify(ev)}\n\n`
      }
    }
    return s
  }

  #text(choice: number, refused: RefusedCall[]): string {
    const content = (this.#texted.has(choice) ? '\n\n' : '') + refusalText(refused)
    this.#texted.add(choice)
    return `data: ${JSON.stringify({ ...this.#head, choices: [{ index: choice, delta: { content }, logprobs: null, finish_reason: null }] })}\n\n`
  }

  finish(refused: RefusedCall[]): string {
    this.ended = true
    return (refused.length > 0 ? this.#text(0, refused) : '') + 'data: [DONE]\n\n'
  }

  error(message: string): string {
    return `data: ${JSON.stringify({ error: { message, type: 'server_error', param: null, code: STREAM_ERROR_CODE } })}\n\n`
  }

  upstreamError(data: string): { text: string; message: string } | undefined {
    let v: unknown
    try {
      v = JSON.parse(data)
    } catch {
      return undefined
    }
    if (!isObj(v) || !isObj(v.error)) return undefined
    const message = typeof v.error.message === 'string' ? v.error.message : 'the upstream reported an error'
    return { text: `data: ${JSON.stringify({ error: v.error })}\n\n`, message }
  }
}

// ---- Anthropic Messages -------------------------------------------------------------------------

/**
 * Events as `event: <type>`. The refusal part is a text block (`content_block_start` /
 * `text_delta` / `content_block_stop`) at the next free block index, before `message_delta`:
 * `message_delta` and what follows are held until `message_stop`, when every call is decided
 * (a `tool_use` block the stream never stopped is refused only then).
 */
class AnthropicFrames implements SseFrames {
  ended = false
  #next = 0
  #held: Json[] | undefined
  #erred = false
  readonly #log: (line: string) => void

  constructor(log: (line: string) => void) {
    this.#log = log
  }

  frame(events: unknown[]): string {
    let s = ''
    for (const ev of events) {
      if (!isObj(ev)) continue
      const type = ev.type
      if (type === 'message_start' && isObj(ev.message) && Array.isArray(ev.message.content)) this.#next = Math.max(this.#next, ev.message.content.length)
      if (type === 'content_block_start') this.#next = Math.max(this.#next, (index(ev.index) ?? -1) + 1)
      if (type === 'message_stop') this.ended = true
      if (this.#held || type === 'message_delta' || type === 'message_stop') {
        ;(this.#held ??= []).push(ev)
        continue
      }
      if (type === 'error') this.#erred = true
      s += named(ev, this.#log)
    }
    return s
  }

  finish(refused: RefusedCall[]): string {
    let s = ''
    if (refused.length > 0) {
      const at = this.#next++
      s += named({ type: 'content_block_start', index: at, content_block: { type: 'text', text: '' } }, this.#log)
      s += named({ type: 'content_block_delta', index: at, delta: { type: 'text_delta', text: refusalText(refused) } }, this.#log)
      s += named({ type: 'content_block_stop', index: at }, this.#log)
    }
    for (const ev of this.#held ?? []) s += named(ev, this.#log)
    this.#held = undefined
    return s
  }

  error(message: string): string {
    if (this.#erred) return ''
    // an upstream error event held behind `message_delta` says more than ours
    const upstream = this.#held?.find((e) => e.type === 'error')
    this.#erred = true
    return named(upstream ?? { type: 'error', error: { type: 'api_error', message } }, this.#log)
  }

  upstreamError(): undefined {
    return undefined // `error` events are the gate's to pass through
  }
}

// ---- OpenAI Responses ---------------------------------------------------------------------------

/** The events that end a Responses stream. */
const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed'])

/**
 * Events as `event: <type>`, sequence numbers renumbered to stay contiguous. The refusal part is
 * an assistant `message` output item (added, content part added, text delta, text done, part
 * done, item done) at the next free output index, before the terminal event, whose
 * `response.output` gets the same item appended.
 */
class ResponsesFrames implements SseFrames {
  ended = false
  #next = 0
  /** The next sequence number, once the stream uses them. */
  #seq: number | undefined
  #held: Json | undefined
  #erred = false
  readonly #log: (line: string) => void

  constructor(log: (line: string) => void) {
    this.#log = log
  }

  #write(ev: Json): string {
    if (this.#seq !== undefined) ev.sequence_number = this.#seq++
    return named(ev, this.#log)
  }

  frame(events: unknown[]): string {
    let s = ''
    for (const ev of events) {
      if (!isObj(ev)) continue
      if (this.#seq === undefined && 'sequence_number' in ev) this.#seq = 0
      const type = ev.type
      if (type === 'response.output_item.added') this.#next = Math.max(this.#next, (index(ev.output_index) ?? -1) + 1)
      if (typeof type === 'string' && TERMINAL.has(type)) {
        this.ended = true
        this.#held = ev
        continue
      }
      if (type === 'error') this.#erred = true
      s += this.#write(ev)
    }
    return s
  }

  finish(refused: RefusedCall[]): string {
    let s = ''
    if (refused.length > 0) {
      const at = this.#next++
      const id = `msg_toolgate_${(refused[0].callId || 'refusal').replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64)}`
      const text = refusalText(refused)
      const part = { type: 'output_text', text, annotations: [] }
      const item = { id, type: 'message', status: 'completed', role: 'assistant', content: [part] }
      const at0 = { item_id: id, output_index: at, content_index: 0 }
      s += this.#write({ type: 'response.output_item.added', output_index: at, item: { ...item, status: 'in_progress', content: [] } })
      s += this.#write({ type: 'response.content_part.added', ...at0, part: { ...part, text: '' } })
      s += this.#write({ type: 'response.output_text.delta', ...at0, delta: text, logprobs: [] })
      s += this.#write({ type: 'response.output_text.done', ...at0, text, logprobs: [] })
      s += this.#write({ type: 'response.content_part.done', ...at0, part })
      s += this.#write({ type: 'response.output_item.done', output_index: at, item })
      const response = this.#held?.response
      if (isObj(response) && Array.isArray(response.output)) response.output = [...response.output, item]
    }
    if (this.#held) s += this.#write(this.#held)
    this.#held = undefined
    return s
  }

  error(message: string): string {
    if (this.#erred) return ''
    this.#erred = true
    const ev: Json = { type: 'error', code: STREAM_ERROR_CODE, message, param: null }
    if (this.#seq !== undefined) ev.sequence_number = 0
    return this.#write(ev)
  }

  upstreamError(): undefined {
    return undefined // `error` events are the gate's to pass through
  }
}
