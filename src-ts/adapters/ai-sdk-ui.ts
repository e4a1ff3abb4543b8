// The UI side of the Vercel AI SDK (`useChat`): the gate on a UI message stream on its way to the
// client, and on the UI messages a client sends back. Both are the `ai-sdk-ui` dialect; shaping
// only: which call runs, with which input, and every refusal's text are the gate's.
//
//   return createUIMessageStreamResponse({ stream: gateUIMessageStream(result.toUIMessageStream(), gate, caller) })
//   const { messages } = await gateUIMessages(body.messages, gate, caller)   // before convertToModelMessages
import { ToolGateError } from '../errors'
import type { ToolGate } from '../gate'
import type { ToolCallStream } from '../stream'
import type { CallContext, TurnReport } from '../types'
import type { AiSdkUIRefusalPart } from '../dialects/ai-sdk-ui'
import { checkArgs, contextOf, tell, type AiSdkContextSource, type AiSdkGateOptions } from './ai-sdk-shared'

/** A UI message stream chunk (`UIMessageChunk`), as far as the gate needs to know it. */
type Chunk = { type: string }

/** A UI message (`UIMessage`), as far as the gate needs to know it. */
type Message = { role: string; parts: unknown[] }

/**
 * Puts the gate on a UI message stream (`streamText(...).toUIMessageStream()`, or the stream of
 * `createUIMessageStream`) before it reaches the client, for the caller `ctx` (a function is asked
 * once, when the stream starts). Each call is held from its `tool-input-start` until its
 * `tool-input-available`, decided there, and released whole with the gate's arguments; a refused
 * call reaches the client as one `tool-input-error` chunk whose `errorText` is the gate's message
 * (`useChat` shows the part in state `output-error`, and `onToolCall` never runs for it), and any
 * output or approval the server sends for it is dropped. Text, reasoning, data and metadata pass
 * as they come. `onVerdict` is told each verdict (source `'ui-stream'`) before its chunks are
 * released.
 *
 * This decides what the client sees and runs (tools without `execute`, run in `onToolCall`). A
 * tool the server executes has already run by the time its call is in this stream: gate those
 * with `gateTools` and `toolgateMiddleware`. A broken stream (a repeated or forged id, an output
 * for a call never decided, a stream cut off before `finish`) errors with `ToolGateError`
 * `E_PAYLOAD`: nothing more reaches the client.
 */
export function gateUIMessageStream<CHUNK extends Chunk>(
  stream: ReadableStream<CHUNK>,
  gate: ToolGate,
  ctx?: AiSdkContextSource,
  options?: AiSdkGateOptions,
): ReadableStream<CHUNK> {
  const where = 'gateUIMessageStream'
  checkArgs(gate, ctx, options, where)
  if (stream === null || typeof stream !== 'object' || typeof (stream as { pipeThrough?: unknown }).pipeThrough !== 'function') {
    throw new ToolGateError('E_CONFIG', `${where}: expected a ReadableStream of UI message chunks`)
  }
  let guarded: ToolCallStream<'ai-sdk-ui'> | undefined
  let context: CallContext = {}
  const opened = (): ToolCallStream<'ai-sdk-ui'> => {
    if (guarded === undefined) throw new ToolGateError('E_PAYLOAD', `${where}: the stream was not started`)
    return guarded
  }
  return stream.pipeThrough(
    new TransformStream<CHUNK, CHUNK>({
      async start() {
        context = await contextOf(ctx, where)
        guarded = gate.stream({ ...context, dialect: 'ai-sdk-ui' })
      },
      async transform(chunk, controller) {
        const s = opened()
        for (const call of s.push(chunk)) await tell(options, call, call.callId, 'ui-stream', context)
        for (const out of s.forward()) controller.enqueue(out as CHUNK)
      },
      flush() {
        opened().end()
      },
    }),
  )
}

/** What {@link gateUIMessages} answers. */
export interface GatedUIMessages<M> {
  /**
   * The messages to go on with: every call's part with the gate's arguments as its `input`
   * (repairs written in), every refused call's part replaced by its refusal (state
   * `output-error`, `errorText` = the gate's message), everything else as it was.
   */
  messages: M[]
  /** The gate's report (`feedback`: the refusal parts, in call order). */
  report: TurnReport<'ai-sdk-ui'>
}

/**
 * Decides the calls in UI messages a client sent (`useChat`'s request `messages`) with
 * `gate.guardAsync` for the caller `ctx`: tool parts in `input-available`, `approval-requested`
 * or `approval-responded` (approved) are calls the SDK would still run — an approved call runs
 * when the next `streamText` starts, with the input the client sent back. Answered parts
 * (`output-*`, a denied approval) are history and are not decided again; `input-streaming` is not
 * a call yet. Returns the messages with repairs written in and refusals in place (a refused call
 * becomes an answered one, so `convertToModelMessages` hands the model the gate's message and the
 * SDK runs nothing), and the report. `onVerdict` is told each verdict (source `'ui-messages'`).
 * A broken payload (an empty or repeated `toolCallId`, an unknown `state`, a `toolName` that
 * contradicts the part's type) throws `ToolGateError` `E_PAYLOAD`.
 */
export async function gateUIMessages<M extends Message>(messages: M[], gate: ToolGate, ctx?: AiSdkContextSource, options?: AiSdkGateOptions): Promise<GatedUIMessages<M>> {
  const where = 'gateUIMessages'
  checkArgs(gate, ctx, options, where)
  if (!Array.isArray(messages)) throw new ToolGateError('E_PAYLOAD', `${where}: expected an array of UI messages`)
  const context = await contextOf(ctx, where)
  const report = (await gate.guardAsync(messages, { ...context, dialect: 'ai-sdk-ui' })) as TurnReport<'ai-sdk-ui'>
  for (const call of report.calls) await tell(options, call, call.callId, 'ui-messages', context)
  // a copy of what the gate read (repairs written in); ids are unique among tool parts (the core refuses repeats)
  const out = JSON.parse(JSON.stringify(report.payload)) as M[]
  const refusals = new Map<string, AiSdkUIRefusalPart>(report.feedback.map((f) => [f.toolCallId, f]))
  if (refusals.size > 0) {
    for (const m of out) {
      m.parts = m.parts.map((p) => {
        const id = p !== null && typeof p === 'object' ? (p as { toolCallId?: unknown }).toolCallId : undefined
        return typeof id === 'string' && refusals.has(id) ? refusals.get(id) : p
      })
    }
  }
  return { messages: out, report }
}
