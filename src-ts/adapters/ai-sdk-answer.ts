// `answer(report, results)` for toolgate/ai-sdk: the gate's refusals and the host's own results for
// the allowed calls, merged into ONE tool message (`ToolModelMessage`) with a `tool-result` part
// per call, in the order of the calls — for hosts that run tools themselves (tools without
// `execute`, or a hand-written loop over `gate.guard(…, { dialect: 'ai-sdk' })`). Shaping only:
// allowed or not, and every refusal, come from the gate's report (see answer-plan.ts).
import type { ToolModelMessage, ToolResultPart } from 'ai'

import type { TurnReport } from '../types'
import { answerPlan, type ToolResults } from './answer-plan'

/**
 * A host's result for an allowed call: a `ToolResultOutput` (`{ type: 'text' | 'json' |
 * 'error-text' | 'error-json' | 'content' | 'execution-denied', … }`) as it is; a string as
 * `{ type: 'text', value }`; any other value as `{ type: 'json', value }` (as the AI SDK turns a
 * tool's return value into its output).
 */
export type AiSdkToolResult = ToolResultPart['output'] | string | number | boolean | null | readonly unknown[] | Record<string, unknown>

const WHERE = 'answer (toolgate/ai-sdk)'
const OUTPUT_TYPES: ReadonlySet<string> = new Set(['text', 'json', 'error-text', 'error-json', 'content', 'execution-denied'])

/**
 * The answer to an AI SDK turn whose tools the host runs itself: ONE tool message
 * (`ToolModelMessage`) with a `tool-result` part per call of `report` (the `TurnReport` of
 * `gate.guard(…, { dialect: 'ai-sdk' })`), in the order of the calls — the host's result for each
 * allowed call, the gate's refusal (`{ type: 'error-text', value: message }`) for each refused one.
 * Append it to `messages` after the assistant turn. `undefined` for a turn without calls.
 * (Tools from `gateTools` need none of this: the AI SDK answers their calls itself.)
 *
 * `results` holds the host's result of every allowed call, keyed by its `callId` (the call's
 * `toolCallId`). A missing result is `E_CONFIG` naming the call; a result for a call the gate
 * refused never replaces the refusal (the refusal is sent). `E_CONFIG` also for a result keyed by
 * no call of the turn or a report not made by the gate; `E_DIALECT` for a report of another dialect.
 */
export function answer(report: TurnReport<'ai-sdk'>, results: ToolResults<AiSdkToolResult>): ToolModelMessage | undefined {
  const steps = answerPlan<'ai-sdk', unknown, ToolResultPart>(report, results, ['ai-sdk'], (fb) => (fb as unknown[]).flatMap(refusalParts), WHERE)
  if (steps.length === 0) return undefined
  const content = steps.map((s): ToolResultPart => (s.allowed ? { type: 'tool-result', toolCallId: s.call.callId, toolName: s.call.tool, output: outputOf(s.result) } : s.refusal))
  return { role: 'tool', content }
}

function outputOf(r: unknown): ToolResultPart['output'] {
  if (typeof r === 'string') return { type: 'text', value: r }
  if (typeof r === 'object' && r !== null && !Array.isArray(r) && OUTPUT_TYPES.has(String((r as { type?: unknown }).type))) return r as ToolResultPart['output']
  return { type: 'json', value: r as never }
}

/**
 * The `tool-result` parts of one feedback item: a tool message's parts, or the one part made of
 * a UI message's refused tool part (`state: 'output-error'`, the gate's message as `errorText`).
 */
function refusalParts(item: unknown): ToolResultPart[] {
  const it = item as { content?: unknown; toolCallId?: unknown; type?: unknown; toolName?: unknown; errorText?: unknown }
  if (Array.isArray(it.content)) return it.content as ToolResultPart[]
  const type = String(it.type)
  const toolName = type === 'dynamic-tool' ? String(it.toolName) : type.slice('tool-'.length)
  return [{ type: 'tool-result', toolCallId: String(it.toolCallId), toolName, output: { type: 'error-text', value: String(it.errorText) } }]
}
