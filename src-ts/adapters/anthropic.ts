// toolgate/anthropic: one line to guard an agent built on the official `@anthropic-ai/sdk` client.
// `guardAnthropic` returns the caller's client (same type) whose `messages.create` filters
// `tools` for the caller before the request and guards the `tool_use` blocks of the answer — a
// whole message through `gate.guardAsync`, a stream through `gate.stream`. `runToolCalls` runs
// the allowed calls of a guarded turn and answers every `tool_use` id exactly once, in one user
// message. Nothing here decides anything: allowed or not, the arguments, the refusal and its wire
// shape all come from the gate's TurnReport. The SDK is an optional peer dependency, imported for
// its types only.
import type Anthropic from '@anthropic-ai/sdk'
import type { Stream } from '@anthropic-ai/sdk/core/streaming'

import type { ToolGate } from '../gate'
import type { TurnReport } from '../types'
import { proxyClient } from './guarded-client'
import { checkGuardArgs, entryOf, guardedCreate, type ContextSource, type GuardClientOptions } from './guarded-turns'
import { checkRunArgs, reportOf, runAllowed, type RunToolCallsOptions, type ToolHandlers } from './run-handlers'

export type { ClientDialect, ContextSource, GuardClientOptions, ReportInfo, ToolChoiceInfo, VerdictInfo } from './guarded-turns'
export type { RunToolCallsOptions, ToolCallInfo, ToolHandler, ToolHandlers } from './run-handlers'
export { answer, type AnthropicToolResult } from './anthropic-answer'
export type { ToolResults } from './answer-plan'

type Message = Anthropic.Messages.Message
type MessageParam = Anthropic.Messages.MessageParam
type RawMessageStreamEvent = Anthropic.Messages.RawMessageStreamEvent
type ToolResultBlockParam = Anthropic.Messages.ToolResultBlockParam

/** Options of {@link guardAnthropic}: `onVerdict`, `onReport` and `onToolChoice` hooks. Unknown keys are `E_CONFIG`. */
export type GuardAnthropicOptions = GuardClientOptions<'anthropic'>

/** A guarded turn's report, with `payload` typed as the whole `Message`. */
export type GuardedAnthropicReport = TurnReport<'anthropic'> & { payload: Message }

const WHERE = 'guardAnthropic'
const RUN = 'runToolCalls (toolgate/anthropic)'

/**
 * Returns `client` guarded by `gate` for the caller `ctx` (a `CallContext`, or a function asked
 * once per request); same object seen through a Proxy, same type. Cheap: wrap once with a
 * context function, or per request with that request's context.
 *
 * - `messages.create` sends `tools` through `gate.filterTools` (the caller's body is copied, not
 *   changed): the model is only offered what this caller may call. A `tool_choice` naming a
 *   removed tool (or `any` when no tool is left) is sent as `{ type: 'auto' }` (keeping
 *   `disable_parallel_tool_use`): never a removed tool's name (docs/adapters/README.md "Tool choice");
 *   `options.onToolChoice` is told why.
 * - A whole message is `gate.guardAsync`-ed (engines awaited) and answered with repaired `input`
 *   written back; refused `tool_use` blocks stay in it, their refusals in
 *   {@link toolgateReport}`(message).feedback`. Pass the message to {@link runToolCalls}.
 * - With `stream: true` the answer is the SDK's `Stream` class again, whose events are what
 *   `gate.stream` forwards: text live, each `tool_use` block held until complete, then released
 *   with its repaired input or dropped, indexes and `stop_reason` rewritten. When it has been read
 *   to its end, {@link toolgateReport}`(stream)` holds the turn (`payload` is the whole message,
 *   refused calls included: send that back as the assistant turn) and
 *   {@link runToolCalls}`(stream, …)` answers it. A gate with plugged engines cannot stream:
 *   `E_ASYNC`, before the request is sent.
 * - `await`, `.withResponse()` (data guarded, `request_id` kept), `.asResponse()` (the raw HTTP
 *   response: toolgate never reads it) work as before. `messages.stream()` and `messages.parse()`
 *   are guarded through `create` (the report of a `messages.stream()` turn reaches you through
 *   `options.onReport`). Other resources (`beta.*`, including `beta.messages.toolRunner`,
 *   `messages.batches`) are not guarded.
 * - A message that cannot be read as Anthropic's rejects with `ToolGateError` `E_PAYLOAD`;
 *   a throw of `onVerdict` / `onReport` rejects the request (or fails the stream).
 *
 * `E_CONFIG` for a `gate` that is not a ToolGate, a `ctx` that is neither a context nor a
 * function, unknown options, or a client without `messages.create`.
 */
export function guardAnthropic<T extends Anthropic>(client: T, gate: ToolGate, ctx: ContextSource = {}, options: GuardAnthropicOptions = {}): T {
  checkGuardArgs(WHERE, client, gate, ctx, options)
  const opts = options as GuardClientOptions
  return proxyClient(
    client,
    { 'messages.create': (original, resource) => guardedCreate(original, resource, { gate, dialect: 'anthropic', ctx, options: opts, where: 'messages.create' }) },
    ['messages.create'],
    (derived) => guardAnthropic(derived, gate, ctx, options),
    WHERE,
  )
}

/**
 * The report of a turn a guarded client answered: a message at once, a stream once it has been
 * read to its end (`undefined` before, and for anything no guarded client answered). `payload`
 * is the whole message with repairs written back and refused calls kept; `feedback` holds the
 * refusals as one user message of `tool_result` blocks.
 */
export function toolgateReport(turn: Message | Stream<RawMessageStreamEvent>): GuardedAnthropicReport | undefined {
  const entry = entryOf(turn)
  if (entry === undefined || entry.dialect !== 'anthropic') return undefined
  return entry.report as GuardedAnthropicReport | undefined
}

/**
 * Runs the allowed calls of a turn (a `Message`, a guarded stream read to its end, or an
 * `'anthropic'` report) and answers every `tool_use` id exactly once, in ONE user message:
 * a `tool_result` block per allowed call (the handler's result; `is_error: true` when it threw),
 * then the gate's `tool_result` blocks for the refused calls (`is_error: true`, from
 * `report.feedback`). `undefined` when the turn holds no call to answer.
 *
 * Send the assistant turn first — `{ role: 'assistant', content: message.content }` of the
 * guarded message (for a stream: `toolgateReport(stream).payload.content`, not what you
 * accumulated, which lacks the refused calls) — then this message. If you add your own content
 * to the user turn, put it after these blocks in the same message: the API wants the results
 * first, in the turn right after the calls.
 *
 * Handlers get the gate's exact (repaired) input and run one after the other; a refused call
 * (also `confirm`) never reaches its handler. A handler's throw becomes that call's result
 * (`` Tool `name` failed: … ``, or what `options.onError` returns); a missing handler for an
 * allowed tool is `E_CONFIG` before any handler runs. A turn a guarded client answered is never
 * decided again; any other message is guarded here with `gate` and `ctx` (its verdicts told to
 * `options.onVerdict`). `E_PAYLOAD` for a guarded stream not yet read to its end.
 */
export async function runToolCalls(
  turn: Message | Stream<RawMessageStreamEvent> | TurnReport<'anthropic'>,
  handlers: ToolHandlers,
  gate: ToolGate,
  ctx?: ContextSource,
  options: RunToolCallsOptions = {},
): Promise<MessageParam | undefined> {
  checkRunArgs(RUN, handlers, gate, options)
  const report = await reportOf(turn, 'anthropic', gate, ctx, options, RUN)
  const results = await runAllowed(report, handlers, options, RUN)
  const blocks: ToolResultBlockParam[] = results.map((r) =>
    r.isError ? { type: 'tool_result', tool_use_id: r.callId, content: r.text, is_error: true } : { type: 'tool_result', tool_use_id: r.callId, content: r.text },
  )
  const refusals = report.feedback.flatMap((m) => m.content) as ToolResultBlockParam[]
  if (blocks.length === 0 && refusals.length === 0) return undefined
  return { role: 'user', content: [...blocks, ...refusals] }
}
