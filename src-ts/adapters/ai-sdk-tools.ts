// gateTools and gateRepairToolCall: the gate at the AI SDK's tool level. A gated tool runs a call
// only on an allowed verdict — the one the middleware (or the repair function) recorded for that
// call, else one it asks the gate for now — and answers a refused call by throwing the refusal,
// which the AI SDK sends the model as the call's `error-text` tool result. The repair function
// hands the model's argument text the AI SDK's own schema rejected to the gate, and the gate's
// repaired arguments back. Conversion only: every verdict is the gate's.
import type { Tool, ToolCallRepairFunction, ToolExecutionOptions, ToolSet } from 'ai'

import { ToolGateError } from '../errors'
import type { ToolGate } from '../gate'
import type { CallContext } from '../types'
import { checkArgs, contextOf, GATED_KEY, gatedArgs, record, take, tell, ToolRefusedError, type AiSdkContextSource, type AiSdkGateOptions } from './ai-sdk-shared'

/** Where the AI SDK marks its `Schema` values (`jsonSchema()`, `zodSchema()`). */
const AI_SDK_SCHEMA = Symbol.for('vercel.ai.schema')

type Execute = (input: unknown, options: ToolExecutionOptions<unknown>) => unknown

/**
 * Returns `tools` (same keys, same type) with every tool that has an `execute` gated: a call runs
 * only when the gate allows it, and a refused call is answered with the refusal — `execute`
 * throws a {@link ToolRefusedError}, which the AI SDK sends the model as the call's tool result
 * `{ type: 'error-text', value: verdict.message }` (the `ai-sdk` feedback of `gate.guard`), and
 * the tool's own `execute` never runs. Every call id is answered exactly once, by the AI SDK.
 *
 * - With {@link toolgateMiddleware}, the call's verdict was decided on the model's own argument
 *   text (and the repairs are already in the input the AI SDK parsed): the tool takes that
 *   verdict, once, and decides nothing again — but only when the input it is invoked with is
 *   exactly the arguments the gate allowed (canonical JSON, key order ignored). Any other input
 *   (a host's own `experimental_repairToolCall` re-asking the model, an approved call whose input
 *   a client edited in the history it sent back, a zod transform or default) is decided again
 *   here with `gate.checkAsync`, as if no middleware had decided it; a stored "allowed" never
 *   runs other arguments.
 * - Alone, each call is decided here with `gate.checkAsync` on the input the AI SDK parsed with
 *   the tool's schema (so a zod transform has already run: use the middleware for such tools);
 *   repaired arguments are parsed by the tool's own schema again before the tool runs. Add
 *   {@link gateRepairToolCall} so calls the tool's schema rejects reach the gate too.
 *
 * Provider-defined tools (`type: 'provider'`) are gated the same way when they have an `execute`
 * (a local shell, a computer-use tool the host runs): the gate must declare them by their name in
 * the tool set. Their `args` are copied into a fresh object the middleware recognises (the
 * provider receives the same values).
 *
 * A tool without `execute` (run by the host) is only marked, and a tool whose `execute` is an
 * `async function*` (streamed results) stays one (a plain function returning an async iterable
 * does not: write it as `async function*`). `confirm` outcomes are refusals for this turn
 * (the token reaches only `onVerdict`). The caller's objects are not changed: each tool is copied
 * (with a `providerOptions.toolgate` marker the middleware checks and strips).
 */
export function gateTools<T extends ToolSet>(tools: T, gate: ToolGate, ctx?: AiSdkContextSource, options?: AiSdkGateOptions): T {
  checkArgs(gate, ctx, options, 'gateTools')
  if (tools === null || typeof tools !== 'object' || Array.isArray(tools)) {
    throw new ToolGateError('E_CONFIG', 'gateTools: expected an AI SDK tool record ({ name: tool(…) })')
  }
  const gated = Object.entries(tools as Record<string, Tool>).map(([name, tool]): [string, Tool] => {
    const copy = { ...tool, providerOptions: { ...tool.providerOptions, [GATED_KEY]: { gated: true } } } as Tool
    // a provider-defined tool reaches the middleware as { type, name, id, args } only: its
    // fresh `args` object is its marker (the provider gets the same values)
    if (tool.type === 'provider') (copy as { args: unknown }).args = gatedArgs((tool as { args?: unknown }).args)
    if (typeof tool.execute === 'function') (copy as { execute: Execute }).execute = gatedExecute(name, tool, gate, ctx, options)
    return [name, copy]
  })
  return Object.fromEntries(gated) as T // own keys only, whatever the names
}

/** `tool.execute`, behind the gate. */
function gatedExecute(name: string, tool: Tool, gate: ToolGate, ctx: AiSdkContextSource | undefined, options: AiSdkGateOptions | undefined): Execute {
  const run = tool.execute as Execute
  const decide = async (input: unknown, exec: ToolExecutionOptions<unknown>): Promise<unknown> => {
    const context = await contextOf(ctx, 'gateTools')
    const callId = exec.toolCallId
    // a verdict recorded for this call is used once, and an allowed one only for the exact
    // arguments it allowed: any other input (a host's repair, an edited call) is decided now
    const taken = take(gate, callId, name, context, input)
    if (taken !== undefined) {
      if (!taken.allowed) throw new ToolRefusedError(taken, callId)
      return input // exactly the arguments the gate allowed
    }
    const verdict = await gate.checkAsync(name, input as object, { ...context, callId })
    await tell(options, verdict, callId, 'tool', context)
    if (!verdict.allowed) throw new ToolRefusedError(verdict, callId)
    return verdict.outcome === 'repaired' ? ownParse(tool.inputSchema, verdict.arguments, name) : input
  }
  if (Object.prototype.toString.call(run) === '[object AsyncGeneratorFunction]') {
    return async function* (input: unknown, exec: ToolExecutionOptions<unknown>) {
      const args = await decide(input, exec)
      yield* run.call(tool, args, exec) as AsyncIterable<unknown>
    }
  }
  return async (input: unknown, exec: ToolExecutionOptions<unknown>) => run.call(tool, await decide(input, exec), exec)
}

/** The tool's own schema on the gate's repaired arguments (its refinements and transforms run here). */
async function ownParse(schema: unknown, value: unknown, name: string): Promise<unknown> {
  let s = schema
  if (typeof s === 'function' && !('~standard' in s)) s = (s as () => unknown)() // an AI SDK lazySchema
  if (s === null || (typeof s !== 'object' && typeof s !== 'function')) return value
  const o = s as Record<string | symbol, unknown>
  if (o[AI_SDK_SCHEMA] === true) {
    if (typeof o.validate !== 'function') return value
    const r = (await (o.validate as (v: unknown) => unknown)(value)) as { success: boolean; value?: unknown; error?: unknown }
    if (r.success) return r.value
    throw r.error
  }
  const standard = o['~standard'] as { validate?: (v: unknown) => unknown } | undefined
  if (typeof standard?.validate !== 'function') return value
  const r = (await standard.validate(value)) as { value?: unknown; issues?: readonly { message: string; path?: readonly unknown[] }[] }
  if (r.issues === undefined) return r.value
  const issues = r.issues.map((i) => `${(i.path ?? []).map((p) => String(typeof p === 'object' && p !== null && 'key' in p ? (p as { key: unknown }).key : p)).join('.') || '(root)'}: ${i.message}`)
  throw new Error(`Invalid input for tool \`${name}\`: ${issues.join('; ')}`)
}

/** The value of a call's argument text (the text itself when it is not JSON). */
function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

type RepairOptions = Parameters<ToolCallRepairFunction<ToolSet>>[0]

/**
 * An `experimental_repairToolCall` for `generateText` / `streamText` that hands a call the AI SDK
 * could not parse (arguments its tool schema rejects, or a tool it does not know) to the gate:
 *
 * - decided here with `gate.checkAsync` on the model's own argument text: an allowed call is
 *   returned with the gate's repaired arguments (the AI SDK parses them against the tool's schema
 *   again, and the gated tool runs the call without deciding it again); a call the gate passes
 *   unchanged is left to the AI SDK (`null`: the tool's own schema has the last word);
 * - a refused call — here, or by the middleware before — throws a {@link ToolRefusedError}: the
 *   AI SDK answers the call itself, as an invalid call whose tool result is
 *   `'AI_ToolCallRepairError: Error repairing tool call: ' + verdict.message` (its own framing of
 *   a repair function's error), and nothing runs;
 * - a call the middleware allowed is left to the AI SDK (`null`): the gate's repairs are in it
 *   already, and what the tool's schema still rejects (a refinement) is the tool's to say.
 *
 * Calls the provider ran itself are left alone.
 */
export function gateRepairToolCall<T extends ToolSet = ToolSet>(gate: ToolGate, ctx?: AiSdkContextSource, options?: AiSdkGateOptions): ToolCallRepairFunction<T> {
  checkArgs(gate, ctx, options, 'gateRepairToolCall')
  const repair = async ({ toolCall }: RepairOptions): Promise<RepairOptions['toolCall'] | null> => {
    if (toolCall.providerExecuted === true) return null
    const context: CallContext = await contextOf(ctx, 'gateRepairToolCall')
    const callId = toolCall.toolCallId
    const taken = take(gate, callId, toolCall.toolName, context, jsonOrText(toolCall.input))
    if (taken !== undefined) {
      if (!taken.allowed) throw new ToolRefusedError(taken, callId)
      return null
    }
    const verdict = await gate.checkAsync(toolCall.toolName, toolCall.input, { ...context, callId })
    await tell(options, verdict, callId, 'repair', context)
    if (!verdict.allowed) throw new ToolRefusedError(verdict, callId)
    if (verdict.argumentsJson === toolCall.input) return null
    record(gate, callId, toolCall.toolName, context, verdict)
    return { ...toolCall, input: verdict.argumentsJson! }
  }
  return repair as ToolCallRepairFunction<T>
}
