// toolgate/openai: one line to guard an agent built on the official `openai` client.
// `guardOpenAI` returns the caller's client (same type) whose `chat.completions.create` and
// `responses.create` filter `tools` for the caller before the request and guard the tool calls of
// the answer — a whole response through `gate.guardAsync`, a stream through `gate.stream`.
// `runToolCalls` runs the allowed calls of a guarded turn and answers every call id exactly once.
// Nothing here decides anything: allowed or not, the arguments, the refusal and its wire shape
// all come from the gate's TurnReport. The SDK is an optional peer dependency, imported for its
// types only.
import { isObj } from '../json-object'
import type OpenAI from 'openai'
import type { Stream } from 'openai/core/streaming'

import { ToolGateError } from '../errors'
import type { ToolGate } from '../gate'
import { isGateReport } from '../turn'
import type { TurnReport } from '../types'
import { proxyClient } from './guarded-client'
import { checkGuardArgs, contextOf, entryOf, guardedCreate, type ContextSource, type GuardClientOptions } from './guarded-turns'
import { checkRunArgs, reportOf, runAllowed, type RunToolCallsOptions, type ToolHandlers } from './run-handlers'
import { gateRunnableTools, RunLedger } from './openai-run-tools'
import { itemKinds } from './openai-answer'
import { fitToolChoice } from '../request-tool-choice'

export type { ClientDialect, ContextSource, GuardClientOptions, ReportInfo, ToolChoiceInfo, VerdictInfo } from './guarded-turns'
export type { RunToolCallsOptions, ToolCallInfo, ToolHandler, ToolHandlers } from './run-handlers'
export { answer, type ChatToolResult, type ResponsesToolResult } from './openai-answer'
export type { ToolResults } from './answer-plan'

type ChatCompletion = OpenAI.Chat.Completions.ChatCompletion
type ChatCompletionChunk = OpenAI.Chat.Completions.ChatCompletionChunk
type ChatCompletionMessageParam = OpenAI.Chat.Completions.ChatCompletionMessageParam
type ChatCompletionToolMessageParam = OpenAI.Chat.Completions.ChatCompletionToolMessageParam
type Response = OpenAI.Responses.Response
type ResponseStreamEvent = OpenAI.Responses.ResponseStreamEvent
type ResponseInputItem = OpenAI.Responses.ResponseInputItem

/** Options of {@link guardOpenAI}: `onVerdict`, `onReport` and `onToolChoice` hooks. Unknown keys are `E_CONFIG`. */
export type GuardOpenAIOptions = GuardClientOptions<'openai' | 'openai-responses'>

/** A guarded turn's report, with `payload` typed as the dialect's whole response. */
export type GuardedReport<D extends 'openai' | 'openai-responses', P> = TurnReport<D> & { payload: P }

const WHERE = 'guardOpenAI'
const RUN = 'runToolCalls (toolgate/openai)'

/**
 * Returns `client` guarded by `gate` for the caller `ctx` (a `CallContext`, or a function asked
 * once per request); same object seen through a Proxy, same type (`AzureOpenAI` stays one).
 * Cheap: wrap once with a context function, or per request with that request's context.
 *
 * - `chat.completions.create` and `responses.create` send `tools` through `gate.filterTools`
 *   (the caller's body is copied, not changed): the model is only offered what this caller may
 *   call. A Chat Completions request left with no tool is sent without `tools`, `tool_choice` and
 *   `parallel_tool_calls` (the API refuses an empty list). A `tool_choice` that names a removed
 *   tool (or forces a call when no tool is left) is sent as `'auto'`: never a removed tool's
 *   name (docs/adapters/README.md "Tool choice"); `options.onToolChoice` is told why.
 * - A whole response is `gate.guardAsync`-ed (engines awaited) and answered with repaired
 *   arguments written back; refused calls stay in it, their refusals in
 *   {@link toolgateReport}`(response).feedback`. Pass the response to {@link runToolCalls}.
 * - With `stream: true` the answer is the SDK's `Stream` class again, whose events are what
 *   `gate.stream` forwards: text live, each call held until complete, then released with its
 *   repaired arguments or dropped. When it has been read to its end, {@link toolgateReport}`(stream)`
 *   holds the turn (`payload` is the whole response, refused calls included) and
 *   {@link runToolCalls}`(stream, …)` answers it. A gate with plugged engines cannot stream:
 *   `E_ASYNC`, before the request is sent.
 * - `await`, `.withResponse()` (data guarded, `request_id` kept), `.asResponse()` (the raw HTTP
 *   response: toolgate never reads it) work as before. The SDK helpers built on `create`
 *   (`chat.completions.parse`, `.stream`, `responses.parse`, `.stream`) are guarded through it.
 * - `chat.completions.runTools` asks the model through the guarded `create` and runs allowed
 *   calls only: each tool function gets the gate's exact (repaired) arguments; a refused call
 *   (also `confirm`) never reaches its function and is answered with the gate's message. The
 *   runner holds only the tools this caller may see (`gate.filterTools`), so its own answer to a
 *   call of a name it does not hold ("Invalid tool_call … Available options are …") never names
 *   a tool the caller may not see. With
 *   `stream: true` it throws `E_CONFIG` (a guarded stream drops refused calls, so the runner
 *   could not answer them: run without `stream`, or use create and {@link runToolCalls}).
 * - Other resources (`beta.*`, `responses.retrieve({ stream })`, `completions`) are not guarded.
 * - A response that cannot be read as its dialect rejects with `ToolGateError` `E_PAYLOAD`;
 *   a throw of `onVerdict` / `onReport` rejects the request (or fails the stream).
 *
 * `E_CONFIG` for a `gate` that is not a ToolGate, a `ctx` that is neither a context nor a
 * function, unknown options, or a client without these methods.
 */
export function guardOpenAI<T extends OpenAI>(client: T, gate: ToolGate, ctx: ContextSource = {}, options: GuardOpenAIOptions = {}): T {
  checkGuardArgs(WHERE, client, gate, ctx, options)
  const opts = options as GuardClientOptions
  return proxyClient(
    client,
    {
      'chat.completions.create': (original, resource) => guardedCreate(original, resource, { gate, dialect: 'openai', ctx, options: opts, where: 'chat.completions.create' }),
      'responses.create': (original, resource) => guardedCreate(original, resource, { gate, dialect: 'openai-responses', ctx, options: opts, where: 'responses.create' }),
      'chat.completions.runTools': (original, resource) => guardedRunTools(original, resource, gate, ctx, options),
    },
    ['chat.completions.create', 'responses.create'],
    (derived) => guardOpenAI(derived, gate, ctx, options),
    WHERE,
  )
}

/**
 * The report of a turn a guarded client answered: a response at once, a stream once it has been
 * read to its end (`undefined` before, and for anything no guarded client answered). `payload`
 * is the whole turn with repairs written back and refused calls kept — for a stream, send it
 * back as the assistant turn, not the events you accumulated (they lack the refused calls);
 * `feedback` holds the refusals in the API's own shape.
 */
export function toolgateReport(turn: ChatCompletion | Stream<ChatCompletionChunk>): GuardedReport<'openai', ChatCompletion> | undefined
export function toolgateReport(turn: Response | Stream<ResponseStreamEvent>): GuardedReport<'openai-responses', Response> | undefined
export function toolgateReport(turn: object): GuardedReport<'openai' | 'openai-responses', ChatCompletion | Response> | undefined {
  const entry = entryOf(turn)
  if (entry === undefined || entry.dialect === 'anthropic') return undefined
  return entry.report as GuardedReport<'openai' | 'openai-responses', ChatCompletion | Response> | undefined
}

/**
 * Runs the allowed calls of a turn and answers every call id exactly once, in order:
 * - Chat Completions (a `ChatCompletion`, a guarded stream read to its end, or an `'openai'`
 *   report): `[assistant message, ...tool messages]` — the assistant message of choice 0 as the
 *   gate answered it (repairs written back, refused calls kept), then one `tool` message per call
 *   of it: the handler's result for each allowed call, the gate's refusal (`report.feedback`) for
 *   each refused one. Append them all to `messages`.
 * - Responses (a `Response`, a guarded stream, or an `'openai-responses'` report): the
 *   `function_call_output` (or `custom_tool_call_output`) items of the allowed calls, then the
 *   gate's feedback items. With `previous_response_id`, send them as `input`; without it, send
 *   the response's `output` items first (for a stream: `toolgateReport(stream).payload.output`).
 *   An allowed built-in call (`computer_call`, `shell_call` …) is `E_CONFIG`: answer those yourself.
 *
 * Handlers get the gate's exact (repaired) arguments and run one after the other; a refused call
 * (also `confirm`) never reaches its handler. A handler's throw becomes that call's result
 * (`` Tool `name` failed: … ``, or what `options.onError` returns); a missing handler for an
 * allowed tool is `E_CONFIG` before any handler runs. A turn a guarded client answered is never
 * decided again; any other response is guarded here with `gate` and `ctx` (its verdicts told to
 * `options.onVerdict`). `E_PAYLOAD` for a guarded stream not yet read to its end.
 */
export function runToolCalls(
  turn: ChatCompletion | Stream<ChatCompletionChunk> | TurnReport<'openai'>,
  handlers: ToolHandlers,
  gate: ToolGate,
  ctx?: ContextSource,
  options?: RunToolCallsOptions,
): Promise<ChatCompletionMessageParam[]>
export function runToolCalls(
  turn: Response | Stream<ResponseStreamEvent> | TurnReport<'openai-responses'>,
  handlers: ToolHandlers,
  gate: ToolGate,
  ctx?: ContextSource,
  options?: RunToolCallsOptions,
): Promise<ResponseInputItem[]>
export async function runToolCalls(
  turn: object,
  handlers: ToolHandlers,
  gate: ToolGate,
  ctx?: ContextSource,
  options: RunToolCallsOptions = {},
): Promise<ChatCompletionMessageParam[] | ResponseInputItem[]> {
  checkRunArgs(RUN, handlers, gate, options)
  const dialect = dialectOf(turn)
  if (dialect === 'openai') {
    const report = await reportOf(turn, 'openai', gate, ctx, options, RUN)
    return chatAnswers(report, handlers, options)
  }
  const report = await reportOf(turn, 'openai-responses', gate, ctx, options, RUN)
  return responsesAnswers(report, handlers, options)
}

type Obj = Record<string, unknown>

/** Which API a turn belongs to: from the guarded client's record, the report, or the response's `object`. */
function dialectOf(turn: unknown): 'openai' | 'openai-responses' {
  const d = entryOf(turn)?.dialect ?? (isGateReport(turn) ? turn.dialect : isObj(turn) ? turn.object : undefined)
  if (d === 'openai' || d === 'chat.completion') return 'openai'
  if (d === 'openai-responses' || d === 'response') return 'openai-responses'
  throw new ToolGateError('E_DIALECT', `${RUN}: expected a ChatCompletion, a Response, a guarded stream of either, or an openai / openai-responses report`)
}

async function chatAnswers(report: TurnReport<'openai'>, handlers: ToolHandlers, options: RunToolCallsOptions): Promise<ChatCompletionMessageParam[]> {
  const payload = report.payload as Obj
  const message = (Array.isArray(payload.choices) ? (payload.choices[0] as Obj | undefined)?.message : payload.role === 'assistant' ? payload : undefined) as
    | OpenAI.Chat.Completions.ChatCompletionMessage
    | undefined
  if (!isObj(message)) throw new ToolGateError('E_PAYLOAD', `${RUN}: the turn holds no assistant message (choices[0].message)`)
  const ids = new Set((message.tool_calls ?? []).map((c) => c.id))
  const results = await runAllowed(report, handlers, options, RUN, ids)
  const answers: ChatCompletionToolMessageParam[] = results.map((r) => ({ role: 'tool', tool_call_id: r.callId, content: r.text }))
  const refusals = (report.feedback as ChatCompletionToolMessageParam[]).filter((f) => ids.has(f.tool_call_id))
  return [message as OpenAI.Chat.Completions.ChatCompletionAssistantMessageParam, ...answers, ...refusals]
}

/** The answer item type for each kind of call `runToolCalls` runs. */
const OUTPUT_TYPE: Readonly<Record<string, 'function_call_output' | 'custom_tool_call_output'>> = {
  function_call: 'function_call_output',
  custom_tool_call: 'custom_tool_call_output',
}

async function responsesAnswers(report: TurnReport<'openai-responses'>, handlers: ToolHandlers, options: RunToolCallsOptions): Promise<ResponseInputItem[]> {
  const payload = report.payload as Obj | unknown[]
  const kinds = itemKinds(payload)
  for (const c of report.calls) {
    if (c.allowed && OUTPUT_TYPE[kinds.get(c.callId) ?? 'function_call'] === undefined) {
      throw new ToolGateError('E_CONFIG', `${RUN}: the allowed call ${c.callId} is a \`${kinds.get(c.callId)}\`; runToolCalls answers function and custom tool calls only, answer this one yourself`)
    }
  }
  const results = await runAllowed(report, handlers, options, RUN)
  const answers = results.map((r) => ({ type: OUTPUT_TYPE[kinds.get(r.callId) ?? 'function_call'], call_id: r.callId, output: r.text }) as ResponseInputItem)
  return [...answers, ...(report.feedback as ResponseInputItem[])]
}

/**
 * The guarded `chat.completions.runTools`: the runner asks the model through a guarded client
 * whose every turn's report fills this run's ledger, and its tool functions take their verdicts
 * from it (openai-run-tools.ts).
 */
function guardedRunTools(
  original: (...args: unknown[]) => unknown,
  resource: object,
  gate: ToolGate,
  ctx: ContextSource,
  options: GuardOpenAIOptions,
): (...args: unknown[]) => unknown {
  const where = `${WHERE}: chat.completions.runTools`
  return function runTools(body: unknown, ...rest: unknown[]): unknown {
    if (!isObj(body) || !Array.isArray(body.tools)) throw new ToolGateError('E_CONFIG', `${where}: the body needs \`tools\`, an array of runnable function tools`)
    if (body.stream === true) {
      throw new ToolGateError('E_CONFIG', `${where}: with stream: true a guarded stream drops refused calls, so the runner could not answer them; run without stream, or call create and runToolCalls`)
    }
    const ledger = new RunLedger()
    const real = (resource as { _client?: unknown })._client as OpenAI
    const onReport = options.onReport
    const run = guardOpenAI(real, gate, ctx, {
      ...options,
      onReport: async (report, info) => {
        ledger.load(report)
        if (onReport !== undefined) await onReport(report, info)
      },
    })
    const context = contextOf(ctx, where)
    let before: unknown[] = []
    let after: unknown[] = []
    const visible = (names: string[]): ReadonlySet<string> => {
      before = names.map((name) => ({ type: 'function', function: { name } }))
      after = gate.filterTools(before, { ...context, dialect: 'openai' })
      return new Set((after as { function: { name: string } }[]).map((t) => t.function.name))
    }
    const tools = gateRunnableTools(body.tools, ledger, visible, where)
    // the runner reads `tool_choice` itself (and names a forced tool in its own answers): a
    // forced tool this caller may not see is `auto` from the start
    const fit = fitToolChoice(body.tool_choice, before, after, 'openai')
    if (fit !== undefined) options.onToolChoice?.(fit.why, { dialect: 'openai', context })
    const params = fit === undefined ? { ...body, tools } : { ...body, tools, tool_choice: fit.toolChoice }
    return original.call(run.chat.completions, params, ...rest)
  }
}
