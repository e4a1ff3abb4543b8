// `answer(report, results)` for toolgate/anthropic: the gate's refusals and the host's own results
// for the allowed calls, merged into the ONE user message the Messages API wants after a turn with
// `tool_use` blocks: a `tool_result` block per call, in the order of the calls (refused ones with
// `is_error: true`). Shaping only: allowed or not, and every refusal, come from the gate's report
// (see answer-plan.ts).
import type Anthropic from '@anthropic-ai/sdk'

import { ToolGateError } from '../errors'
import type { TurnReport } from '../types'
import { answerPlan, type ToolResults } from './answer-plan'

type MessageParam = Anthropic.Messages.MessageParam
type ToolResultBlockParam = Anthropic.Messages.ToolResultBlockParam

/**
 * A host's result for an allowed call: the `tool_result` block's `content` (text, or content
 * blocks), or the whole `tool_result` block (to set `is_error`, `cache_control` …), its
 * `tool_use_id` filled in when absent.
 */
export type AnthropicToolResult = string | NonNullable<ToolResultBlockParam['content']> | (Omit<ToolResultBlockParam, 'tool_use_id'> & { tool_use_id?: string })

const WHERE = 'answer (toolgate/anthropic)'

/**
 * The answer to a Messages API turn: ONE user message holding a `tool_result` block per call of
 * `report` (the `TurnReport` of `gate.guard(…, { dialect: 'anthropic' })`, or
 * `toolgateReport(message)` of a guarded client), in the order of the calls — the host's result
 * for each allowed call, the gate's refusal (`is_error: true`) for each refused one. Send the
 * assistant turn first (`report.payload`'s content: repaired input written back, refused calls
 * kept), then this message; add your own content after these blocks in the same message. `undefined`
 * for a turn without calls. ({@link runToolCalls} runs handlers and answers in one step.)
 *
 * `results` holds the host's result of every allowed call, keyed by its `callId` (the `tool_use`
 * id). A missing result is `E_CONFIG` naming the call; a result for a call the gate refused never
 * replaces the refusal (the refusal is sent). `E_CONFIG` also for a result keyed by no call of the
 * turn or a report not made by the gate; `E_DIALECT` for a report of another dialect.
 */
export function answer(report: TurnReport<'anthropic'>, results: ToolResults<AnthropicToolResult>): MessageParam | undefined {
  const steps = answerPlan<'anthropic', unknown, ToolResultBlockParam>(
    report,
    results,
    ['anthropic'],
    (fb) => fb.flatMap((m) => m.content) as ToolResultBlockParam[],
    WHERE,
  )
  if (steps.length === 0) return undefined
  const blocks = steps.map((s): ToolResultBlockParam => {
    if (!s.allowed) return s.refusal
    const r = s.result
    if (typeof r === 'string' || Array.isArray(r)) return { type: 'tool_result', tool_use_id: s.call.callId, content: r as ToolResultBlockParam['content'] }
    if (typeof r === 'object' && r !== null && (r as { type?: unknown }).type === 'tool_result') {
      const id = (r as { tool_use_id?: unknown }).tool_use_id
      if (id !== undefined && id !== s.call.callId) throw new ToolGateError('E_CONFIG', `${WHERE}: the result keyed ${s.call.callId} is a tool_result for \`${String(id)}\``)
      return { ...(r as ToolResultBlockParam), tool_use_id: s.call.callId }
    }
    throw new ToolGateError(
      'E_CONFIG',
      `${WHERE}: the result for call ${s.call.callId} (\`${s.call.tool}\`) must be a string, content blocks or a tool_result block, got ${typeof r} (JSON.stringify a value yourself)`,
    )
  })
  return { role: 'user', content: blocks }
}
