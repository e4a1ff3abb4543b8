// toolgate/openai-agents: one line to guard an agent built with the OpenAI Agents SDK for
// JavaScript (`@openai/agents` 0.20).
// - toolgateGuardrail: the gate as a tool input guardrail (`tool({ inputGuardrails: [...] })`):
//   refused calls never run and the model reads the gate's message as the call's output.
// - gateAgentTool / gateAgentTools / gateAgent: the same guardrail, plus the tool runs with the
//   gate's repaired arguments (which a guardrail alone cannot give it) and is only offered to the
//   model when the caller may call it. Tools the provider runs pass through; any other tool the SDK
//   would run in this process (a local shell, computer, apply_patch, an unknown kind) is E_CONFIG.
// - toolsFromAgentTools: the gate's tool declarations from the tools' own JSON Schemas.
// Nothing here decides anything: allowed or not, the arguments and the refusal message all come
// from the gate. The SDK is an optional peer dependency, imported for its types only.
import type { Agent, AgentOutputType, ToolInputGuardrailDefinition } from '@openai/agents'

import { ToolGateError } from '../errors'
import type { ToolGate } from '../gate'
import { checkArgs, makeGuardrail, type AgentContextSource, type AgentGateOptions } from './openai-agents-guardrail'
import { isFunctionTool, refuseUngateable, wrapAgentTool, type AgentFunctionTool, type GateableAgentTool, type ToolContextOf } from './openai-agents-tool'

export { toolsFromAgentTools, type AgentToolDeclaration } from './openai-agents-declare'
export type { AgentContextSource, AgentGateOptions, AgentVerdictInfo, ToolgateGuardrailInfo } from './openai-agents-guardrail'
export type { GateableAgentTool, ToolContextOf } from './openai-agents-tool'

/**
 * The gate as a tool input guardrail: put it in a function tool's `inputGuardrails`
 * (`tool({ …, inputGuardrails: [toolgateGuardrail(gate, ctx)] })`). The SDK runs it right before
 * the tool; it decides the call with `gate.checkAsync(toolCall.name, toolCall.arguments, caller)`
 * (the model's own arguments text, the call id, the caller from `ctx`; async engines awaited):
 *
 * - allowed (`passed` / `repaired`): `allow`. The SDK gives a guardrail no way to replace the
 *   arguments, so the tool runs with the arguments **the model sent**. Use {@link gateAgentTool}
 *   to run with the repaired arguments.
 * - refused (also `confirm`): `rejectContent` with the gate's message. The tool does not run; the
 *   message becomes the call's output, so the model reads it and its call id is answered once;
 *   `result.toolInputGuardrailResults` records it (with {@link ToolgateGuardrailInfo}, never a
 *   confirmation token).
 *
 * What the SDK hands a guardrail limits it: when the tool's own parser (its zod schema) refuses
 * the arguments, the SDK has already failed the call — by default it gives guardrails that call
 * with its arguments redacted to `''` (unless `OPENAI_AGENTS_DONT_LOG_TOOL_DATA=0`) and answers
 * the model with its own redacted error whatever the guardrail says. So calls needing repair, and
 * the gate's messages about bad arguments, only work with {@link gateAgentTool}; the guardrail
 * alone is the policy check (deny by default, confirm, loop, taint) for calls the tool parses.
 * The SDK runs tool guardrails after a tool's approval step: a refused call that `needsApproval`
 * asks the human first unless the Runner config or run options set `toolExecution: { preApprovalInputGuardrails:
 * true }`. `E_CONFIG` for a `gate` that is not a ToolGate or unknown options.
 */
export function toolgateGuardrail<TContext = unknown>(
  gate: ToolGate,
  ctx: AgentContextSource<TContext> = {},
  options: AgentGateOptions<TContext> = {},
): ToolInputGuardrailDefinition<TContext> {
  checkArgs('toolgateGuardrail', gate, ctx, options)
  return makeGuardrail(gate, ctx, options, 'toolgateGuardrail')
}

/**
 * Returns a copy of the function tool `tool` (same type; the caller's object is untouched) gated
 * by `gate` for the caller `ctx`:
 *
 * - its `inputGuardrails` start with the toolgate guardrail (decided as {@link toolgateGuardrail}
 *   does, for the tool's own name): a refused call (also `confirm`) never runs and the model
 *   reads the gate's message as the call's output;
 * - an allowed call runs with the gate's exact arguments (`verdict.argumentsJson`: the model's
 *   text when nothing changed, else the repaired arguments), which the tool's own parser then
 *   checks as always — the verdict the guardrail reached for that very call, so the gate is asked
 *   once per call (invoked outside the SDK's guardrail step, `invoke` asks the gate itself and
 *   answers a refusal with the gate's message);
 * - `isEnabled` also asks `gate.filterTools` for the run's caller: the model is offered the tool
 *   only when this caller could call it.
 *
 * Calls whose arguments are not JSON never reach the gate: the SDK answers them itself before
 * any guardrail runs. `E_CONFIG` for a `gate` that is not a ToolGate, a value that is not a
 * function tool, or unknown options. Do not also add {@link toolgateGuardrail} to it (calls would
 * be decided twice).
 */
export function gateAgentTool<T extends GateableAgentTool>(
  tool: T,
  gate: ToolGate,
  ctx: AgentContextSource<ToolContextOf<T>> = {},
  options: AgentGateOptions<ToolContextOf<T>> = {},
): T {
  checkArgs('gateAgentTool', gate, ctx, options)
  if (!isFunctionTool(tool)) throw new ToolGateError('E_CONFIG', 'gateAgentTool: expected a function tool (what `tool()` from @openai/agents returns)')
  return wrapAgentTool(tool as unknown as AgentFunctionTool<ToolContextOf<T>>, gate, ctx, options, 'gateAgentTool') as unknown as T
}

/**
 * {@link gateAgentTool} for each function tool of `tools`, in order; the tools the provider runs
 * itself — hosted tools (web search, file search, code interpreter, hosted MCP, tool search …)
 * and a shell tool in a hosted container (`environment.type` `container_auto` /
 * `container_reference`) — are returned as they are. A new array.
 *
 * Fails closed: a tool the SDK runs in this process that has no function to wrap (a local
 * `shellTool`, `computerTool`, `applyPatchTool`, a client `toolSearchTool` with its own `execute`)
 * and any tool type toolgate does not know are `E_CONFIG`, naming the tool: the SDK would run
 * every call of it the model sends, and the gate would never see one. Expose what it does as a
 * function tool (`tool()`) or leave it off the agent.
 */
export function gateAgentTools<T, TContext = unknown>(tools: readonly T[], gate: ToolGate, ctx: AgentContextSource<TContext> = {}, options: AgentGateOptions<TContext> = {}): T[] {
  checkArgs('gateAgentTools', gate, ctx, options)
  if (!Array.isArray(tools)) throw new ToolGateError('E_CONFIG', 'gateAgentTools: `tools` must be an array of Agents SDK tools')
  refuseUngateable(tools, 'gateAgentTools', 'tools') // every tool checked before any is wrapped
  return tools.map((t) => (isFunctionTool(t) ? (wrapAgentTool(t as unknown as AgentFunctionTool<TContext>, gate, ctx, options, 'gateAgentTools') as unknown as T) : t))
}

/**
 * A clone of `agent` (`agent.clone`, same type; the original is untouched) whose function tools
 * are gated with {@link gateAgentTools} (hosted tools passed through; a local shell, computer or
 * apply_patch tool, or an unknown tool, is `E_CONFIG`). Handoff agents and tools from
 * `mcpServers` (listed by the SDK at run time) are not gated: gate each agent, and MCP servers
 * with toolgate/mcp or the MCP proxy. `E_CONFIG` as {@link gateAgentTool} and
 * {@link gateAgentTools}.
 */
export function gateAgent<TContext, TOutput extends AgentOutputType>(
  agent: Agent<TContext, TOutput>,
  gate: ToolGate,
  ctx: AgentContextSource<TContext> = {},
  options: AgentGateOptions<TContext> = {},
): Agent<TContext, TOutput> {
  checkArgs('gateAgent', gate, ctx, options)
  if (agent === null || typeof agent !== 'object' || typeof agent.clone !== 'function' || !Array.isArray(agent.tools)) {
    throw new ToolGateError('E_CONFIG', 'gateAgent: expected an Agent from @openai/agents')
  }
  refuseUngateable(agent.tools, 'gateAgent', 'agent.tools')
  return agent.clone({ tools: gateAgentTools(agent.tools, gate, ctx, options) })
}
