// Conversion only: stream events to JSON text for the binding, and its answers (the per-call wire,
// the forwarded events, the report wire) back to TypeScript values. Every decision is the core's
// (crates/toolgate-core/src/stream/).
import type { BindingStream as BindingStreamClass } from '../binding/index'
import { toToolGateError, ToolGateError } from './errors'
import type { native } from './native'
import { payloadText, readCallsWire, readTurnWire } from './turn'
import type { CallContext, Dialect, TurnCall, TurnReport } from './types'

/** Options of {@link ToolGate.stream}: the stream's dialect, and who is calling. */
export type StreamOptions = { dialect: Dialect } & CallContext

/** The dialects `gate.stream` reads. */
export const STREAM_DIALECTS: readonly Dialect[] = Object.freeze(['openai', 'openai-responses', 'anthropic', 'ai-sdk', 'gemini', 'ai-sdk-ui', 'pydantic-ai'])

/**
 * A model's streamed turn, guarded event by event (docs/turns.md "Streams"). Feed every event to
 * {@link ToolCallStream.push}, emit what {@link ToolCallStream.forward} returns to your consumer,
 * and finish with {@link ToolCallStream.end}. Create one with `gate.stream({ dialect })`.
 *
 * After any error (a broken event, an event after the stream's end, a stream buffered past
 * `limits.maxPayloadBytes`) the stream is failed: every later `push` and `end` throws
 * `ToolGateError` `E_PAYLOAD`.
 */
export class ToolCallStream<D extends Dialect = Dialect> {
  /** The dialect this stream reads. */
  readonly dialect: D
  readonly #binding: BindingStreamClass
  #failed: ToolGateError | undefined

  /** @internal Use `gate.stream(...)`. */
  constructor(mod: ReturnType<typeof native>, handle: number, dialect: D, context = '') {
    this.dialect = dialect
    // an addon built before streams existed has no BindingStream
    const Binding = mod.BindingStream as typeof BindingStreamClass | undefined
    if (typeof Binding !== 'function') {
      throw new ToolGateError('E_CONFIG', 'toolgate: this native binary has no stream support; rebuild it (npm run build:native)')
    }
    try {
      this.#binding = new Binding(handle, dialect, context)
    } catch (err) {
      throw toToolGateError(err, 'E_DIALECT')
    }
  }

  /**
   * Feeds one event: an SSE line as received (`data: {...}`, with or without the `data: `
   * prefix; `event:` lines, comments and blank lines are ignored; OpenAI's `data: [DONE]` ends
   * the stream), several lines of one SSE event, or a parsed event object. Returns the calls this
   * event completed, each decided now (run the allowed ones with their `arguments`, answer the
   * refused ones with their `message`); most events complete none. Throws `ToolGateError`
   * `E_PAYLOAD` naming the dialect, the event and the path for a broken event.
   */
  push(event: string | object): TurnCall[] {
    if (this.#failed) throw new ToolGateError('E_PAYLOAD', `${this.dialect} stream: an earlier event failed (${this.#failed.message}); this stream accepts nothing more`, { cause: this.#failed })
    let wire: string
    try {
      wire = this.#binding.push(payloadText(event, `${this.dialect} stream event`))
    } catch (err) {
      const e = toToolGateError(err, 'E_PAYLOAD')
      this.#failed = e
      throw e
    }
    return wire === '[]' ? [] : readCallsWire(wire)
  }

  /**
   * Takes the events safe to emit now, as parsed JSON values in this dialect's own event shape:
   * text as it arrived; each allowed call whole once complete, with its repaired arguments;
   * nothing of a refused call; indexes and finish/stop reasons rewritten so the result is a valid
   * stream for the dialect's own consumers (SDK accumulators, UI hooks).
   */
  forward(): unknown[] {
    const wire = this.#binding.forward()
    return wire === '[]' ? [] : (JSON.parse(wire) as unknown[])
  }

  /**
   * Ends the stream and answers the whole turn, exactly as `gate.guard` would for it (the calls
   * keep the verdicts `push` returned; none is decided twice). `payload` is the turn in the
   * dialect's non-streamed form (a chat.completion, an Anthropic message, a Response, AI SDK
   * content parts, a Gemini response, an AI SDK `UIMessage`) with repairs written back. A call the stream never
   * completed is refused here. Throws `E_PAYLOAD` for a stream cut off before its terminal event
   * (naming what was missing), a failed stream, or a second `end`.
   */
  end(): TurnReport<D> {
    if (this.#failed) throw new ToolGateError('E_PAYLOAD', `${this.dialect} stream: an earlier event failed (${this.#failed.message})`, { cause: this.#failed })
    let wire: string
    try {
      wire = this.#binding.end()
    } catch (err) {
      throw toToolGateError(err, 'E_PAYLOAD')
    }
    return readTurnWire(wire, undefined, '') as TurnReport<D>
  }
}
