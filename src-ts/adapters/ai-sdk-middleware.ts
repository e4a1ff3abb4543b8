// toolgateMiddleware: the gate as an AI SDK language-model middleware. It filters the tools a
// request offers the model, and decides every tool call the model answers with — in a
// `doGenerate` result with `gate.guardAsync`, in a `doStream` stream with `gate.stream` — on the
// model's own argument text, before the AI SDK parses it. Repairs are written into the call; a
// refused call stays in the turn untouched and its verdict waits in the ledger for the gated tool
// (gateTools) that answers it with the refusal. Conversion only: every verdict is the gate's.
import type { LanguageModelMiddleware } from 'ai'

import { ToolGateError } from '../errors'
import type { ToolGate } from '../gate'
import type { CallContext, TurnCall } from '../types'
import { checkArgs, contextOf, GATED_KEY, isGatedArgs, record, tell, type AiSdkContextSource, type AiSdkGateOptions } from './ai-sdk-shared'

type TransformParams = NonNullable<LanguageModelMiddleware['transformParams']>
type CallOptions = Parameters<TransformParams>[0]['params']
type WrapGenerate = NonNullable<LanguageModelMiddleware['wrapGenerate']>
type GenerateResult = Awaited<ReturnType<WrapGenerate>>
type WrapStream = NonNullable<LanguageModelMiddleware['wrapStream']>
type StreamResult = Awaited<ReturnType<WrapStream>>
type StreamPart = StreamResult['stream'] extends ReadableStream<infer P> ? P : never
type ProviderTool = NonNullable<CallOptions['tools']>[number]

const WHERE = 'toolgateMiddleware'

/**
 * A language-model middleware (`wrapLanguageModel({ model, middleware: toolgateMiddleware(gate, ctx) })`)
 * that puts `gate` between the model and the tools, for the caller `ctx` (a function is asked
 * once per model call, so the tools offered and the calls answered are decided for the same
 * caller). Use it with tools wrapped by {@link gateTools}, which run what the gate allowed and
 * answer what it refused.
 *
 * - Tools: the request offers the model only the tools this caller could call
 *   (`gate.filterTools`; the caller's own tool objects, in order). Every tool — function, dynamic
 *   and provider-defined — must come from {@link gateTools} (`E_CONFIG` otherwise, before the
 *   request is sent): the AI SDK runs any call it can parse, so an ungated tool would run a call
 *   the gate refused. A `toolChoice` naming a removed tool (or `required` with none left) is
 *   sent as `{ type: 'auto' }`.
 * - `generateText` (`doGenerate`): the result's tool calls are decided with `gate.guardAsync`
 *   (plugged engines awaited) on the model's own argument text. An allowed call's `input` becomes
 *   the exact arguments to run with (repairs written in, so the AI SDK parses the repaired text
 *   against the tool's own schema); a refused call stays in the turn untouched, so its id is
 *   answered — by the gated tool, with the gate's message as its `error-text` tool result. Calls
 *   the provider ran itself (`providerExecuted`) are reported, not gated.
 * - `streamText` (`doStream`): every tool part is fed to `gate.stream` as it arrives (text,
 *   reasoning and files pass by untouched, live); each `tool-call` part is decided the moment it
 *   completes and passed on with the allowed arguments, or untouched when refused, exactly as
 *   for `doGenerate`. A stream that ends without its `finish` part, or a broken tool part, fails
 *   the stream (`ToolGateError` `E_PAYLOAD`): no undecided call reaches the SDK. A gate with
 *   plugged engines cannot stream (`E_ASYNC`, before the request is sent).
 * - Every verdict is told to `options.onVerdict` (with the call id and the context) and recorded
 *   for the gated tool, bound to the exact arguments allowed and usable once: the tool runs on it
 *   only when invoked with exactly those arguments, and decides any other input again. `confirm` outcomes are refusals for this
 *   turn: the model reads `verdict.message`, the token reaches only `onVerdict`.
 *
 * Throws `E_CONFIG` for a missing gate, a context that is not an object, or an unknown option.
 */
export function toolgateMiddleware(gate: ToolGate, ctx?: AiSdkContextSource, options?: AiSdkGateOptions): LanguageModelMiddleware {
  checkArgs(gate, ctx, options, WHERE)
  // one context per model call: the one the tools were filtered for decides the answer's calls
  const asked = new WeakMap<object, CallContext>()
  const contextFor = async (params: CallOptions): Promise<CallContext> => asked.get(params) ?? contextOf(ctx, WHERE)
  return {
    specificationVersion: 'v4',
    transformParams: async ({ params }) => {
      const context = await contextOf(ctx, WHERE)
      const sent = params.tools === undefined || params.tools.length === 0 ? { ...params } : withToolChoice({ ...params, tools: offeredTools(params.tools, gate, context) }, params.tools)
      asked.set(sent, context)
      return sent
    },
    wrapGenerate: async ({ doGenerate, params }) => {
      const context = await contextFor(params)
      const result = await doGenerate()
      return guardResult(result, gate, context, options)
    },
    wrapStream: async ({ doStream, params }) => {
      const context = await contextFor(params)
      // made before the request, so a gate that cannot stream (E_ASYNC) fails before anything is sent
      const toolStream = gate.stream({ dialect: 'ai-sdk', ...context })
      const result = await doStream()
      return { ...result, stream: result.stream.pipeThrough(guardStream(toolStream, gate, context, options)) }
    },
  }
}

/** The tools offered to the model: gated ones only (else `E_CONFIG`), the marker stripped, filtered by the gate. */
function offeredTools(tools: ProviderTool[], gate: ToolGate, context: CallContext): ProviderTool[] {
  const unmarked = tools.filter((t) => (t.type === 'provider' ? !isGatedArgs(t.args) : t.providerOptions?.[GATED_KEY] === undefined)).map((t) => `\`${t.name}\``)
  if (unmarked.length > 0) {
    throw new ToolGateError(
      'E_CONFIG',
      `${WHERE}: tool ${unmarked.join(', ')} did not come from gateTools; the AI SDK would run a call to it that the gate refused (pass tools: gateTools(tools, gate, ctx); provider-defined tools too)`,
    )
  }
  const visible = new Set(gate.filterTools(tools, { dialect: 'ai-sdk', ...context }).map((t) => t.name))
  return tools.filter((t) => visible.has(t.name)).map(stripMarker)
}

/**
 * The request's `toolChoice` fitted to the tools left: one naming a removed tool (or `required`
 * with none left) is sent as `auto`, so a hidden tool's name never reaches the provider and no
 * call the gate would refuse is forced (docs/adapters/README.md "Tool choice").
 */
function withToolChoice(params: CallOptions, before: readonly ProviderTool[]): CallOptions {
  const choice = params.toolChoice
  const left = params.tools ?? []
  const gone =
    choice?.type === 'tool'
      ? before.some((t) => t.name === choice.toolName) && !left.some((t) => t.name === choice.toolName)
      : choice?.type === 'required' && left.length === 0 && before.length > 0
  return gone ? { ...params, toolChoice: { type: 'auto' } } : params
}

function stripMarker(tool: ProviderTool): ProviderTool {
  if (tool.type !== 'function' || tool.providerOptions === undefined) return tool
  const { [GATED_KEY]: _marker, ...rest } = tool.providerOptions
  const { providerOptions: _old, ...bare } = tool
  return Object.keys(rest).length === 0 ? bare : { ...bare, providerOptions: rest }
}

type ToolCallContent = Extract<GenerateResult['content'][number], { type: 'tool-call' }>

/** A `doGenerate` result with its calls decided: allowed calls carry their exact arguments, refused calls stay. */
async function guardResult(result: GenerateResult, gate: ToolGate, context: CallContext, options: AiSdkGateOptions | undefined): Promise<GenerateResult> {
  const calls = result.content.filter((p): p is ToolCallContent => p.type === 'tool-call')
  if (calls.length === 0) return result
  // only the calls go to the gate: text and files cannot change a verdict, and stay untouched
  const report = await gate.guardAsync({ content: calls, finishReason: result.finishReason }, { dialect: 'ai-sdk', ...context })
  const byId = new Map<string, TurnCall>()
  for (const call of report.calls) {
    byId.set(call.callId, call)
    record(gate, call.callId, call.tool, context, call)
    await tell(options, call, call.callId, 'generate', context)
  }
  const content = result.content.map((p) => (p.type === 'tool-call' ? withVerdict(p, byId.get(p.toolCallId)) : p))
  return { ...result, content }
}

/** A tool-call part with the allowed arguments written in; a refused or provider-executed call as it is. */
function withVerdict<P extends { input: string }>(part: P, call: TurnCall | undefined): P {
  if (call === undefined || !call.allowed || call.argumentsJson === part.input) return part
  return { ...part, input: call.argumentsJson! }
}

/** Feeds the tool parts of a provider stream to `gate.stream` and passes every part on, tool calls decided. */
function guardStream(
  toolStream: ReturnType<ToolGate['stream']>,
  gate: ToolGate,
  context: CallContext,
  options: AiSdkGateOptions | undefined,
): TransformStream<StreamPart, StreamPart> {
  const decided = new Map<string, TurnCall>()
  return new TransformStream<StreamPart, StreamPart>({
    async transform(part, controller) {
      // text, reasoning, files, sources and metadata cannot change a verdict: passed by, live
      if (part.type.startsWith('tool-') || part.type === 'finish') {
        for (const call of toolStream.push(part)) {
          decided.set(call.callId, call)
          record(gate, call.callId, call.tool, context, call)
          await tell(options, call, call.callId, 'stream', context)
        }
      }
      if (part.type === 'tool-call' && part.providerExecuted !== true) {
        const call = decided.get(part.toolCallId)
        if (call === undefined) throw new ToolGateError('E_PAYLOAD', `ai-sdk stream: the tool call \`${part.toolCallId}\` was not decided when its tool-call part arrived`)
        controller.enqueue(withVerdict(part, call))
        return
      }
      controller.enqueue(part)
    },
    flush() {
      toolStream.end() // a stream cut off before its finish part is E_PAYLOAD
    },
  })
}
