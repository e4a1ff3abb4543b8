// A streamed model answer through the HTTP proxy: the upstream's server-sent events are read
// (sse-lines.ts), fed one by one to `gate.stream`, and what the gate forwards is written to the
// client in the dialect's own framing as soon as it is forwarded (sse-frames.ts). Text flows
// live; each tool call reaches the client only once the gate has decided it, whole and repaired,
// or never. Every decision is the gate's; this file moves bytes and keeps the bookkeeping.
import type { ToolGate } from '../../gate'
import { ToolGateError } from '../../errors'
import type { CallContext, TurnCall } from '../../types'
import { refusedOf, type RefusedCall } from './refusal'
import { StreamDecisions } from './sse-decided'
import { framesFor, type SseDialect } from './sse-frames'
import { SseReader } from './sse-lines'

/** Default bound on one upstream event: 8 MiB. */
export const DEFAULT_MAX_EVENT_BYTES = 8 * 1024 * 1024

/** Options of {@link guardSse}. */
export interface SseGuardOptions {
  gate: ToolGate
  /** The API the upstream speaks: Chat Completions, Responses, or Anthropic Messages. */
  dialect: SseDialect
  /** Who is calling: every call of the stream is decided for them. */
  context: CallContext
  /** The upstream response body, as it arrives (a Node `IncomingMessage`, a web stream …). */
  upstream: AsyncIterable<Uint8Array>
  /** Writes SSE text to the client; awaited (backpressure). A throw stops the stream. */
  write(chunk: string): void | Promise<void>
  /** One line per problem (never a header, never a body). */
  log?: (line: string) => void
  /** Largest upstream event accepted, in bytes (default {@link DEFAULT_MAX_EVENT_BYTES}). */
  maxEventBytes?: number
}

/** What {@link guardSse} answers once the stream is over. */
export interface SseGuardResult {
  /** The calls removed from the answer, in turn order (when the stream failed: those decided before). */
  refused: RefusedCall[]
  /** The receipt of each allowed call, when the gate signs receipts. */
  receipts: { callId: string; receipt: string }[]
  /** Why the stream was stopped (an error event was written to the client), if it was. */
  error?: string
}

/** The client could not be written to: stop without writing anything more. */
class ClientGone extends Error {}

function text(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

/**
 * Guards one streamed answer. Reads `upstream` (UTF-8 split anywhere, `\n` or `\r\n`, multi-line
 * `data:`, comments and other fields ignored, one event bounded by `maxEventBytes`), pushes each
 * event to `gate.stream({ dialect, ...context })`, and writes what the gate forwards, framed as
 * the dialect frames it, after each upstream chunk — text reaches the client while the model is
 * still writing. Guarantees:
 * - a tool call reaches the client only whole and decided: allowed ones with the arguments the
 *   gate allows (repaired), refused ones not at all, indexes and finish/stop reasons rewritten
 *   by the gate so the stream stays valid for the dialect's SDKs;
 * - every released event that names a call (a later `output_item.done`, `.done`, a
 *   `response.completed` snapshot, a `message_start` block …) is compared with the decision
 *   (sse-decided.ts): a call renamed, re-typed, moved to another namespace, re-argued, never
 *   decided, refused or sharing an id stops the stream with the error event below, unforwarded;
 * - when calls were refused, `refusalText` is written as a text part the dialect's consumers
 *   read (Chat Completions: a `delta.content` chunk before the finishing chunk; Messages: a text
 *   block before `message_delta`; Responses: a `message` output item before `response.completed`,
 *   which lists it in `output`);
 * - a stream that breaks off, sends a broken event, or outgrows a bound is stopped there: no
 *   partial call is released, the dialect's error event is written (Messages `event: error` with
 *   `api_error`; Responses `event: error` with `code: "toolgate_stream_error"`; Chat Completions
 *   `data: {"error": {..., "code": "toolgate_stream_error"}}`, or the upstream's own error chunk,
 *   and no `[DONE]`), the upstream is closed, and `error` says why;
 * - once the dialect's terminal event is read (`[DONE]`, `message_stop`, `response.completed` …)
 *   the upstream is closed and nothing more is read from it.
 * Never throws: every failure is answered in `error`.
 */
export async function guardSse(opts: SseGuardOptions): Promise<SseGuardResult> {
  const { gate, dialect, context } = opts
  const log = (line: string) => opts.log?.(`toolgate: ${dialect} stream: ${line}`)
  const frames = framesFor(dialect, log)
  const decided: RefusedCall[] = []
  let announced = 0
  const receipts: SseGuardResult['receipts'] = []
  const pending = (): RefusedCall[] => {
    const out = decided.slice(announced)
    announced = decided.length
    return out
  }
  const note = (calls: TurnCall[]) => {
    for (const c of calls) {
      if (c.allowed && c.receipt) receipts.push({ callId: c.callId, receipt: c.receipt })
    }
    decided.push(...refusedOf(calls))
  }
  const emit = async (chunk: string) => {
    if (chunk === '') return
    try {
      await opts.write(chunk)
    } catch (err) {
      throw new ClientGone(text(err))
    }
  }

  const it = opts.upstream[Symbol.asyncIterator]()
  let drained = false
  let unwritten = ''
  try {
    const stream = gate.stream({ dialect, ...context })
    const decisions = new StreamDecisions(dialect)
    const reader = new SseReader(opts.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES, `${dialect} upstream stream`)
    for (;;) {
      let next: IteratorResult<Uint8Array>
      try {
        next = await it.next()
      } catch (err) {
        drained = true // a failed iterator has nothing left to close
        throw new ToolGateError('E_PAYLOAD', `${dialect} stream: the upstream broke off (${text(err)})`)
      }
      if (next.done) {
        drained = true
        const left = reader.end()
        if (left > 0) log(`the upstream ended inside an event (${left} bytes discarded)`)
        break
      }
      let ended = false
      for (const m of reader.push(next.value)) {
        let calls: TurnCall[]
        try {
          calls = stream.push(m.data)
        } catch (err) {
          const up = frames.upstreamError(m.data)
          if (!up) throw err
          await emit(unwritten + up.text)
          unwritten = ''
          log(`the upstream sent an error: ${up.message}`)
          return { refused: decided, receipts, error: `upstream error: ${up.message}` }
        }
        note(calls)
        decisions.note(calls)
        const released = stream.forward()
        decisions.check(released)
        unwritten += frames.frame(released, pending)
        if (frames.ended || m.data.trim() === '[DONE]') {
          ended = true
          break
        }
      }
      await emit(unwritten)
      unwritten = ''
      if (ended) break
    }
    const report = stream.end()
    const refused = refusedOf(report.calls)
    // announced mid-stream already: the first `announced` of those decided, which the report
    // lists among its refused calls in the same relative order
    const seen = new Map<string, number>()
    for (const r of decided.slice(0, announced)) seen.set(r.callId, (seen.get(r.callId) ?? 0) + 1)
    const rest = refused.filter((r) => {
      const n = seen.get(r.callId) ?? 0
      if (n > 0) seen.set(r.callId, n - 1)
      return n === 0
    })
    await emit(frames.finish(rest))
    return { refused, receipts }
  } catch (err) {
    if (err instanceof ClientGone) {
      log(`the client went away (${err.message})`)
      return { refused: decided, receipts, error: `client write failed: ${err.message}` }
    }
    const message = text(err)
    log(message)
    try {
      await emit(unwritten + frames.error(`toolgate: ${message}`))
    } catch (e) {
      log(`the client went away (${text(e)})`)
    }
    return { refused: decided, receipts, error: message }
  } finally {
    if (!drained) {
      try {
        await it.return?.()
      } catch (err) {
        log(`closing the upstream failed (${text(err)})`)
      }
    }
  }
}
