// `answer(report, results)` for toolgate/langchain: the gate's refusals and the host's own results
// for the allowed calls, merged into one `ToolMessage` per call, in the order of the calls (what a
// hand-written agent loop appends after the AIMessage). Shaping only: allowed or not, and every
// refusal, come from the gate's report (see answer-plan.ts). Loads @langchain/core on first use.
import type { MessageContent, ToolMessage } from '@langchain/core/messages'

import type { LangChainToolMessageFields } from '../dialects/langchain'
import { ToolGateError } from '../errors'
import type { TurnReport } from '../types'
import { answerPlan, hasWireId, type ToolResults } from './answer-plan'
import { messagesModule } from './langchain-runtime'
import { toolMessage } from './langchain-tool'

/** A host's result for an allowed call: the ToolMessage's `content` (text, or content blocks), or a whole `ToolMessage` for that call. */
export type LangChainToolResult = string | MessageContent | ToolMessage

const WHERE = 'answer (toolgate/langchain)'

/**
 * The answer to a LangChain turn run by a hand-written loop: one `ToolMessage` per call of
 * `report` (the `TurnReport` of `gate.guard(aiMessage, { dialect: 'langchain' })`), in the order
 * of the calls — the host's result for each allowed call, the gate's refusal (`status: 'error'`)
 * for each refused one, `invalid_tool_calls` included. Append them after the AIMessage.
 * ({@link gatedToolNode} does all of this inside a LangGraph graph.)
 *
 * `results` holds the host's result of every allowed call, keyed by its `callId` (the call's id,
 * or its position in the turn as a string for a call without one — answered with an empty
 * `tool_call_id`, as LangGraph's ToolNode answers it). A missing result is `E_CONFIG` naming the
 * call; a result for a call the gate refused never replaces the refusal (the refusal is sent).
 * `E_CONFIG` also for a result keyed by no call of the turn or a report not made by the gate;
 * `E_DIALECT` for a report of another dialect. Loads `@langchain/core` (`E_CONFIG` when missing).
 */
export function answer(report: TurnReport<'langchain'>, results: ToolResults<LangChainToolResult>): ToolMessage[] {
  const steps = answerPlan<'langchain', unknown, LangChainToolMessageFields>(report, results, ['langchain'], (fb) => fb, WHERE)
  const { ToolMessage: ToolMessageClass } = messagesModule(WHERE)
  return steps.map((s, i) => {
    if (!s.allowed) return toolMessage(s.refusal, s.call, WHERE)
    // a call without an id is answered with an empty id, as LangGraph's ToolNode answers it
    const id = hasWireId(s.call, i) ? s.call.callId : ''
    const r = s.result
    if (ToolMessageClass.isInstance(r)) {
      if (r.tool_call_id !== id) throw new ToolGateError('E_CONFIG', `${WHERE}: the result keyed ${s.call.callId} is a ToolMessage for \`${r.tool_call_id}\``)
      return r
    }
    if (typeof r !== 'string' && !Array.isArray(r)) {
      throw new ToolGateError('E_CONFIG', `${WHERE}: the result for call ${s.call.callId} (\`${s.call.tool}\`) must be a string, content blocks or a ToolMessage, got ${typeof r} (JSON.stringify a value yourself)`)
    }
    return new ToolMessageClass({ content: r as MessageContent, tool_call_id: id, name: s.call.tool })
  })
}
