// toolgate/langchain: one line to guard a LangChain.js or LangGraph.js agent.
// - gateTool / gateTools: the caller's tools (same objects seen through a Proxy, same types) ask
//   the gate before their own input validation; use them anywhere a tool is invoked (LangGraph's
//   ToolNode, createReactAgent, your own loop).
// - gatedToolNode: LangGraph's ToolNode guarding the model's whole turn with `gate.guardAsync`,
//   answering refused calls with `ToolMessage`s (`status: 'error'`).
// - toolsFromLangChain: the gate's tool declarations from the tools' own schemas.
// Nothing here decides anything: allowed or not, the arguments to run with, the refusal and its
// wire shape all come from the gate. @langchain/core and @langchain/langgraph are optional peer
// dependencies, loaded on first use only.
import type { BaseMessage, ToolMessage } from '@langchain/core/messages'
import type { Runnable } from '@langchain/core/runnables'

import { ToolGateError } from '../errors'
import type { ToolGate } from '../gate'
import { checkArgs, type GatedToolNodeOptions, type GateToolOptions, type LangChainContextSource } from './langchain-context'
import { makeGatedToolNode } from './langchain-node'
import { wrapTool, type GateableTool } from './langchain-tool'

export { toolsFromLangChain, type LangChainToolDeclaration } from './langchain-declare'
export type { GatedToolNodeOptions, GateToolOptions, LangChainContextSource, LangChainVerdictInfo } from './langchain-context'
export type { GateableTool } from './langchain-tool'
export { answer, type LangChainToolResult } from './langchain-answer'
export type { ToolResults } from './answer-plan'

/** The graph state {@link gatedToolNode} reads: LangGraph's `MessagesAnnotation` state, or any state with `messages`. */
export interface GatedToolNodeState {
  messages: BaseMessage[]
}

/** What {@link gatedToolNode} answers: one ToolMessage per call of the turn, in call order. */
export interface GatedToolNodeUpdate {
  messages: ToolMessage[]
}

/**
 * A gated tool node: at runtime a LangGraph `ToolNode` (so `createReactAgent` takes it as its
 * `tools`), typed as the Runnable a `StateGraph` node is.
 */
export type GatedToolNode = Runnable<GatedToolNodeState, GatedToolNodeUpdate> & {
  /** The tools the node runs (never gated twice: gated tools are unwrapped). */
  tools: GateableTool[]
}

/**
 * Returns `tool` guarded by `gate` for the caller `ctx`: the same tool object seen through a
 * Proxy, same type; its name, description and schema (everything `bindTools` shows the model)
 * are untouched. Each `invoke` (and the deprecated `call`) asks the gate first — before the
 * tool's own zod / JSON Schema parse, so the gate's repairs (`"3"` → `3`, `"ACTIVE"` → `"active"`)
 * reach the tool, which then validates the repaired arguments as always. The gate decides for
 * the tool that runs (`tool.name`), with the caller `ctx` gives for this run's config. Async
 * engines are awaited.
 *
 * - Allowed: the tool runs with the gate's exact arguments (the `ToolCall`'s `args` replaced).
 * - Refused (also `confirm`), invoked with a `ToolCall` that has an id: the tool does not run and
 *   `invoke` answers the gate's refusal as a `ToolMessage` (`status: 'error'`, the gate's
 *   message, the call's id) — what LangGraph's ToolNode and agents send back to the model.
 * - Refused, invoked with bare arguments (nothing to answer): the tool does not run and
 *   `invoke` throws LangChain's `ToolInputParsingException` with the gate's message, as LangChain
 *   does for input a tool's schema rejects.
 *
 * A bare string (LangChain's string tools) is decided as `{ input }`, as `Tool.call` reads it.
 * `E_CONFIG` for a `gate` that is not a ToolGate, a value that is not a tool, or unknown options.
 * Gating a gated tool gates the original once.
 */
export function gateTool<T extends GateableTool>(tool: T, gate: ToolGate, ctx: LangChainContextSource = {}, options: GateToolOptions = {}): T {
  checkArgs('gateTool', gate, ctx, options, 'tool')
  return wrapTool(tool, gate, ctx, options, 'gateTool')
}

/** {@link gateTool} for each tool of `tools`, in order (a new array of the same tools, gated). */
export function gateTools<T extends GateableTool>(tools: readonly T[], gate: ToolGate, ctx: LangChainContextSource = {}, options: GateToolOptions = {}): T[] {
  checkArgs('gateTools', gate, ctx, options, 'tool')
  if (!Array.isArray(tools)) throw new ToolGateError('E_CONFIG', 'gateTools: `tools` must be an array of LangChain tools')
  return tools.map((t) => wrapTool(t, gate, ctx, options, 'gateTools'))
}

/**
 * A LangGraph.js tool node for `tools` that guards the model's whole turn: a node for a
 * `StateGraph` over `MessagesAnnotation` (or any state with `messages`), and a `ToolNode` at
 * runtime (`createReactAgent({ llm, tools: node })` works). For the last AIMessage:
 *
 * - its pending calls (those no ToolMessage answers yet, `invalid_tool_calls` included) go
 *   through `gate.guardAsync(message, { dialect: 'langchain', ...caller })`, the caller from `ctx`
 *   and the run's config; `onVerdict` hears every verdict before anything runs;
 * - the allowed calls run through ToolNode with the gate's repaired arguments (ToolNode's error
 *   handling, tool runtime and Commands unchanged);
 * - each refused call (also `confirm`) never reaches its tool and is answered with a
 *   `ToolMessage` built from the gate's feedback: `status: 'error'`, the gate's message, the
 *   call's id and name;
 * - the answer is one ToolMessage per call, in the order the model sent them (`{ messages }` for
 *   a state, a list for a list of messages); when a tool returns a LangGraph `Command`, ToolNode's
 *   list of updates with the refusals added as one more update.
 *
 * Pass plain tools (a gated tool is unwrapped, so nothing is gated twice). Show the model only
 * what the caller may call with `gate.filterTools(tools, { dialect: 'langchain', ...ctx })` where
 * you bind tools. Loads `@langchain/langgraph` (`E_CONFIG` when it is not installed); `E_CONFIG`
 * also for a `gate` that is not a ToolGate or unknown options.
 */
export function gatedToolNode(tools: readonly GateableTool[], gate: ToolGate, ctx: LangChainContextSource = {}, options: GatedToolNodeOptions = {}): GatedToolNode {
  checkArgs('gatedToolNode', gate, ctx, options, 'node')
  return makeGatedToolNode(tools, { gate, ctx, options, where: 'gatedToolNode' }) as unknown as GatedToolNode
}
