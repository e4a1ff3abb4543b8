// gateAgentTool: an OpenAI Agents SDK function tool whose calls the gate decides AND whose runs
// use the gate's repaired arguments (a guardrail alone cannot change them). The tool is copied
// (the caller's object is untouched) with three things changed:
// - `inputGuardrails`: the toolgate guardrail goes first, so a refusal is the SDK's own
//   `rejectContent` (the tool does not run, the model reads the gate's message as the call's
//   output, the result records it in `toolInputGuardrailResults`);
// - `invoke`: runs the original with the allowed verdict's arguments text (`argumentsJson`) — the
//   verdict the guardrail reached for this very call, so the gate is asked once per call;
// - `isEnabled`: also asks `gate.filterTools`, so the model is only offered what the caller may call.
// Nothing is decided here.
import type { FunctionCallItem, FunctionTool, RunContext } from '@openai/agents'

import type { ToolGate } from '../gate'
import type { Verdict } from '../types'
import { contextFor, decide, guardrailOutput, makeGuardrail, type AgentContextSource, type AgentGateOptions } from './openai-agents-guardrail'

/** A function tool of the Agents SDK (what `tool()` and `agent.asTool()` make) for context `TContext`. */
export type AgentFunctionTool<TContext = unknown> = FunctionTool<TContext, never, unknown>

/**
 * What toolgate needs of a function tool: any tool `tool()` or `agent.asTool()` makes, whatever its
 * context, parameters and result types (the SDK's `FunctionTool` is invariant in all three).
 */
export type GateableAgentTool = Pick<FunctionTool<never, never, unknown>, 'type' | 'name' | 'invoke'>

/** The context type a function tool is written for. */
export type ToolContextOf<T> = T extends { invoke: (runContext: RunContext<infer C>, input: string) => unknown } ? C : unknown

/** Whether `value` is a function tool the SDK runs locally (not a hosted, computer, shell … tool). */
export function isFunctionTool(value: unknown): value is AgentFunctionTool {
  const v = value as { type?: unknown; name?: unknown; invoke?: unknown } | null
  return v !== null && typeof v === 'object' && v.type === 'function' && typeof v.name === 'string' && typeof v.invoke === 'function'
}

/** A copy of `tool` gated by `gate` (see {@link gateAgentTool} in toolgate/openai-agents for the contract). */
export function wrapAgentTool<T extends AgentFunctionTool<TContext>, TContext>(
  tool: T,
  gate: ToolGate,
  ctx: AgentContextSource<TContext> | undefined,
  options: AgentGateOptions<TContext>,
  where: string,
): T {
  const name = tool.name
  // The allowed verdict the guardrail reached for a call, by the SDK's call item (the object the
  // guardrail and `invoke` both receive); kept with the arguments text it was decided on.
  const decided = new WeakMap<FunctionCallItem, { input: string; verdict: Verdict }>()
  const guardrail = makeGuardrail(gate, ctx, options, where, name, (toolCall, verdict) => {
    decided.set(toolCall, { input: toolCall.arguments, verdict })
  })
  const original = tool.invoke
  const invoke: AgentFunctionTool<TContext>['invoke'] = async (runContext, input, details) => {
    const toolCall = details?.toolCall
    const kept = toolCall === undefined ? undefined : decided.get(toolCall)
    if (toolCall !== undefined) decided.delete(toolCall)
    let verdict = kept !== undefined && kept.input === input ? kept.verdict : undefined
    if (verdict === undefined) {
      // Invoked without the SDK's guardrail step (directly, or with a call item the guardrail did not see): ask now.
      const call: FunctionCallItem = toolCall !== undefined && toolCall.arguments === input ? toolCall : { type: 'function_call', callId: toolCall?.callId ?? '', name, arguments: input }
      verdict = await decide(gate, name, call, runContext, ctx, options, where)
      // The same answer the guardrail gives: the gate's message is the call's output.
      if (!verdict.allowed) return refusalOf(verdict, where)
    }
    return original.call(tool, runContext, verdict.argumentsJson ?? input, details)
  }
  const enabled = tool.isEnabled
  const isEnabled: AgentFunctionTool<TContext>['isEnabled'] = async (runContext, agent) => {
    if (typeof enabled === 'function' && !(await enabled.call(tool, runContext, agent))) return false
    const context = await contextFor(ctx, runContext, undefined, where)
    return gate.filterTools([{ type: 'function', name, parameters: {} }], { ...context, dialect: 'openai-responses' }).length === 1
  }
  return { ...tool, invoke, isEnabled, inputGuardrails: [guardrail, ...(tool.inputGuardrails ?? [])] }
}

/** The model-readable message of a refusal, as the guardrail would send it. */
function refusalOf(verdict: Verdict, where: string): string {
  const { behavior } = guardrailOutput(verdict, where)
  return behavior.type === 'rejectContent' ? behavior.message : ''
}
