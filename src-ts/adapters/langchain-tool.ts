// gateTool: a LangChain.js tool seen through a Proxy that asks the gate before the tool's own
// input validation runs. The model-facing surface (name, description, schema, everything
// `bindTools` reads) is the tool's own; only `invoke` and the deprecated `call` are intercepted.
// The gate sits in front of LangChain's zod / JSON Schema parse, so its repairs ("3" → 3) land
// before that parse would reject them; the tool then validates the repaired arguments itself.
// Nothing is decided here: allowed or not, the arguments and the refusal (a ToolMessage built
// from the gate's LangChain feedback) all come from the gate.
import type { ToolCall, ToolMessage, ToolMessageFields } from '@langchain/core/messages'
import type { RunnableConfig } from '@langchain/core/runnables'
import type { StructuredToolInterface } from '@langchain/core/tools'

import type { LangChainToolMessageFields } from '../dialects/langchain'
import { ToolGateError } from '../errors'
import type { ToolGate } from '../gate'
import type { Verdict } from '../types'
import { contextFor, type GateToolOptions, type LangChainContextSource } from './langchain-context'
import { messagesModule, toolsModule } from './langchain-runtime'

/** A tool toolgate can gate: anything with a `name` and an `invoke` (StructuredTool, DynamicTool, `tool()`, RunnableToolLike). */
export type GateableTool = Pick<StructuredToolInterface, 'name' | 'invoke'>

const ORIGINAL = Symbol('toolgate.langchain.original')

/** The decision for one invocation: the arguments to run with, or what to answer instead. */
type Decision = { run: true; args: Record<string, unknown> } | { run: false; refusal: ToolMessage }

type Invoke = (input: unknown, config?: unknown) => Promise<unknown>
type Call = (arg: unknown, config?: unknown, tags?: unknown) => Promise<unknown>

/** The tool a gated tool wraps (itself when not gated). */
export function ungated<T>(tool: T): T {
  const original = (tool as { [ORIGINAL]?: T } | null)?.[ORIGINAL]
  return original ?? tool
}

/** Whether `value` is a LangChain `ToolCall` (LangChain's own test: `type: 'tool_call'`). */
function isToolCall(value: unknown): value is ToolCall {
  return value !== null && typeof value === 'object' && (value as { type?: unknown }).type === 'tool_call'
}

/** A RunnableConfig object (not a callbacks array or manager, which `call` also takes). */
function configObject(value: unknown): RunnableConfig | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !('handlers' in value) ? (value as RunnableConfig) : undefined
}

/**
 * Wraps `tool` with the gate (see {@link gateTool} in toolgate/langchain for the contract).
 * `where` names the entry point in errors.
 */
export function wrapTool<T extends GateableTool>(tool: T, gate: ToolGate, ctx: LangChainContextSource | undefined, options: GateToolOptions, where: string): T {
  if (tool === null || typeof tool !== 'object' || typeof tool.name !== 'string' || typeof tool.invoke !== 'function') {
    throw new ToolGateError('E_CONFIG', `${where}: expected a LangChain tool (an object with a string \`name\` and an \`invoke\` method)`)
  }
  const target = ungated(tool)
  const name = target.name
  const { onVerdict } = options

  /** Asks the gate about `args` for the tool that will actually run (`name`), as `toolCall` if there is one. */
  const decide = async (args: unknown, toolCall: ToolCall | undefined, config: RunnableConfig | undefined): Promise<Decision> => {
    const context = await contextFor(ctx, config, where)
    // LangChain's string tools (`Tool`, `DynamicTool`) take a bare string as `{ input }`, as `Tool.call` does.
    const input = typeof args === 'string' || args === null || args === undefined ? { input: args ?? undefined } : args
    const info = { toolCall, context, config }
    if (toolCall?.id !== undefined && toolCall.id !== '') {
      const report = await gate.guardAsync({ content: '', tool_calls: [{ id: toolCall.id, name, args: input as Record<string, unknown>, type: 'tool_call' }] }, { ...context, dialect: 'langchain' })
      const verdict = report.calls[0]
      if (report.calls.length !== 1 || verdict === undefined) throw new ToolGateError('E_PAYLOAD', `${where}: one tool call read as ${report.calls.length}`)
      if (onVerdict !== undefined) await onVerdict(verdict, info)
      if (verdict.allowed) return { run: true, args: report.allowed[0].arguments }
      return { run: false, refusal: toolMessage(report.feedback[0], verdict, where) }
    }
    const verdict = await gate.checkAsync(name, input as object, context)
    if (onVerdict !== undefined) await onVerdict(verdict, info)
    if (verdict.allowed && verdict.arguments !== undefined) return { run: true, args: verdict.arguments }
    // No call id to answer: refuse the way LangChain refuses input a tool's schema rejects.
    const { ToolInputParsingException } = toolsModule(where)
    const refused = new ToolInputParsingException(refusalText(verdict, where), JSON.stringify(args ?? null))
    // `instanceof` fails across LangChain's CommonJS and ESM builds: the name tells it in either.
    refused.name = 'ToolInputParsingException'
    throw refused
  }

  const gatedInvoke = async (input: unknown, config?: unknown): Promise<unknown> => {
    const original = target.invoke as unknown as Invoke
    const toolCall = isToolCall(input) ? input : undefined
    const decision = await decide(toolCall ? toolCall.args : input, toolCall, configObject(config))
    if (!decision.run) return decision.refusal
    return original.call(target, toolCall ? { ...toolCall, args: decision.args } : decision.args, config)
  }

  const gatedCall = async (arg: unknown, configArg?: unknown, tags?: unknown): Promise<unknown> => {
    const original = (target as unknown as { call?: Call }).call
    if (typeof original !== 'function') throw new ToolGateError('E_CONFIG', `${where}: tool \`${name}\` has no \`call\` method`)
    const config = configObject(configArg)
    const carried = (config as { toolCall?: unknown } | undefined)?.toolCall
    const fromConfig = isToolCall(carried) ? carried : undefined
    const toolCall = isToolCall(arg) ? arg : fromConfig
    const decision = await decide(isToolCall(arg) ? arg.args : arg, toolCall, config)
    if (!decision.run) return decision.refusal
    const repairedArg = isToolCall(arg) ? { ...arg, args: decision.args } : decision.args
    const repairedConfig = fromConfig !== undefined && config !== undefined ? { ...config, toolCall: { ...fromConfig, args: decision.args } } : configArg
    return original.call(target, repairedArg, repairedConfig, tags)
  }

  return new Proxy(target, {
    get(t, prop, receiver) {
      if (prop === 'invoke') return gatedInvoke
      if (prop === 'call') return gatedCall
      if (prop === ORIGINAL) return t
      return Reflect.get(t, prop, receiver)
    },
  }) as T
}

/** The refusal as a LangChain ToolMessage, from the gate's feedback fields for the call. */
export function toolMessage(fields: LangChainToolMessageFields | undefined, verdict: Verdict, where: string): ToolMessage {
  if (fields === undefined) {
    throw new ToolGateError('E_PAYLOAD', `${where}: the gate refused \`${verdict.tool}\` (${verdict.reason ?? verdict.outcome}) without feedback`)
  }
  const { ToolMessage: ToolMessageClass } = messagesModule(where)
  // A call without an id is answered with an empty id, as LangGraph's ToolNode answers it.
  return new ToolMessageClass({ ...fields, tool_call_id: fields.tool_call_id ?? '' } as ToolMessageFields & { tool_call_id: string })
}

/** The model-readable message of a refusal (every refusal carries one). */
function refusalText(verdict: Verdict, where: string): string {
  if (verdict.message === undefined) {
    throw new ToolGateError('E_PAYLOAD', `${where}: the gate refused \`${verdict.tool}\` (${verdict.reason ?? verdict.outcome}) without a message`)
  }
  return verdict.message
}
