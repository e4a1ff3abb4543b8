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

import { ToolGateError } from '../errors'
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

/** The shell environments the provider hosts: the SDK runs no local action for their calls (it does for any other). */
const HOSTED_SHELL_ENVIRONMENTS: ReadonlySet<unknown> = new Set(['container_auto', 'container_reference'])

/** Why the SDK would run a tool's calls in this process without asking the gate, and what to do instead. */
interface Ungateable {
  why: string
  instead: string
}

const USE_FUNCTION_TOOL = 'Expose what it does as a function tool (`tool()` from @openai/agents), whose every call the gate decides, or leave it off the agent'

/**
 * Why `tool` cannot be on a gated agent, or undefined when it can: a function tool (gated) or a
 * tool the provider runs itself, so nothing of it runs in this process (passed through as it
 * is): a hosted tool (`type: 'hosted_tool'`: web search, file search, code interpreter, image
 * generation, hosted MCP, tool search run by OpenAI or the SDK's built-in client search, which
 * loads only the agent's own tools) and a shell tool in a provider-hosted container
 * (`environment.type` `container_auto` / `container_reference`: the SDK queues no local action for
 * its calls). Anything else the SDK runs here with no `invoke` to wrap (a local shell, a
 * computer, apply_patch, a client tool search with its own `execute`), and any tool type this
 * SDK version does not have, is refused: the gate would never see its calls.
 */
function ungateable(tool: object): Ungateable | undefined {
  const t = tool as { type?: unknown; environment?: unknown }
  if (isFunctionTool(tool)) return undefined
  if (t.type === 'hosted_tool') {
    // the SDK keeps a client tool search's `execute` under a symbol (`attachClientToolSearchExecutor`)
    const callbacks = Object.getOwnPropertySymbols(tool).filter((k) => typeof (tool as Record<symbol, unknown>)[k] === 'function')
    if (callbacks.length === 0) return undefined
    return {
      why: 'is a client tool search whose `execute` runs in this process and can hand the SDK tools the gate never sees',
      instead: 'Drop `execute` (the built-in client search loads only the agent\'s own tools, which are gated) or leave it off the agent',
    }
  }
  if (t.type === 'shell') {
    const env = t.environment as { type?: unknown } | null | undefined
    const envType = env === undefined || env === null ? 'local' : env.type
    if (HOSTED_SHELL_ENVIRONMENTS.has(envType)) return undefined
    if (envType === 'local' || envType === undefined) {
      return { why: "runs the model's commands in this process (a local `shell`)", instead: `${USE_FUNCTION_TOOL} (a shell in a hosted container, \`environment: { type: 'container_auto' }\`, is passed through)` }
    }
    return { why: `has a shell environment toolgate does not know (\`${String(envType)}\`) and may run the model's commands in this process`, instead: USE_FUNCTION_TOOL }
  }
  if (t.type === 'computer') return { why: 'drives a computer from this process (its `computer`)', instead: USE_FUNCTION_TOOL }
  if (t.type === 'apply_patch') return { why: 'edits files from this process (its `editor`)', instead: USE_FUNCTION_TOOL }
  return { why: 'is a tool type toolgate does not know, which the SDK may run in this process', instead: USE_FUNCTION_TOOL }
}

/**
 * Throws `E_CONFIG` for the first of `tools` that the gate cannot decide and the provider does not
 * run (see {@link ungateable}), naming it (`label[i]`, name and type), why, and what to do.
 */
export function refuseUngateable(tools: readonly unknown[], where: string, label: string): void {
  for (const [i, tool] of tools.entries()) {
    if (tool === null || typeof tool !== 'object') {
      throw new ToolGateError('E_CONFIG', `${where}: ${label}[${i}] is not an Agents SDK tool (got ${tool === null ? 'null' : typeof tool})`)
    }
    const refusal = ungateable(tool)
    if (refusal === undefined) continue
    const { name, type } = tool as { name?: unknown; type?: unknown }
    const named = typeof name === 'string' ? `\`${name}\` ` : ''
    const typed = typeof type === 'string' ? `type \`${type}\`` : 'no `type`'
    throw new ToolGateError(
      'E_CONFIG',
      `${where}: ${label}[${i}] ${named}(${typed}) ${refusal.why}: the gate cannot decide its calls, and the SDK would run every one the model sends without asking it. ${refusal.instead}`,
    )
  }
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
