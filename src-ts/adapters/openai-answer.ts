// `answer(report, results)` for toolgate/openai: the gate's refusals and the host's own results for
// the allowed calls, merged into what the API wants next, in the order of the calls — Chat
// Completions: one `tool` message per call; Responses: one output item per call (plus the note a
// refused `computer_call` / client `tool_search_call` carries). Shaping only: allowed or not,
// and every refusal, come from the gate's report (see answer-plan.ts).
import { isObj } from '../json-object'
import type OpenAI from 'openai'

import { ToolGateError } from '../errors'
import { isGateReport } from '../turn'
import type { TurnCall, TurnReport } from '../types'
import { answerPlan, type ToolResults } from './answer-plan'

type ChatCompletionToolMessageParam = OpenAI.Chat.Completions.ChatCompletionToolMessageParam
type ResponseInputItem = OpenAI.Responses.ResponseInputItem

/** A host's result for an allowed Chat Completions call: the `tool` message's `content` (text, or text parts). */
export type ChatToolResult = ChatCompletionToolMessageParam['content']

/**
 * A host's result for an allowed Responses call: for a `function_call` / `custom_tool_call`, the
 * output item's `output` (text, or the API's output content list); for any call, the whole
 * answer item (an object with its `type`, e.g. a `shell_call_output`), its `call_id` filled in
 * when absent.
 */
export type ResponsesToolResult = string | OpenAI.Responses.ResponseFunctionCallOutputItemList | ResponseInputItem

const WHERE = 'answer (toolgate/openai)'

/**
 * The answer to a turn, once the host has run the calls the gate allowed — what the API wants
 * next, in the order of the calls:
 * - Chat Completions (an `'openai'` report): one `tool` message per call — the host's result
 *   for each allowed call, the gate's refusal for each refused one. Append them after the
 *   assistant message (`report.payload`'s `choices[0].message`: repaired arguments written back,
 *   refused calls kept).
 * - Responses (an `'openai-responses'` report): the answer item of each call — a
 *   `function_call_output` / `custom_tool_call_output` holding the host's result, or the whole
 *   item the host gave (a `shell_call_output` …); the gate's answer item(s) for each refused call.
 *   Send them as `input` (after the response's `output` items when not chaining with
 *   `previous_response_id`).
 *
 * `report` is the `TurnReport` of `gate.guard` / `guardAsync` (or `toolgateReport(…)` of a guarded
 * client). `results` holds the host's result of every allowed call, keyed by its `callId` (the
 * `tool_call_id` / `call_id`). A missing result is `E_CONFIG` naming the call; a result for a call
 * the gate refused never replaces the refusal (the refusal is sent). `E_CONFIG` also for a result
 * keyed by no call of the turn, a result of the wrong shape, or a report not made by the gate.
 * ({@link runToolCalls} runs handlers and answers in one step.)
 */
export function answer(report: TurnReport<'openai'>, results: ToolResults<ChatToolResult>): ChatCompletionToolMessageParam[]
export function answer(report: TurnReport<'openai-responses'>, results: ToolResults<ResponsesToolResult>): ResponseInputItem[]
export function answer(report: TurnReport<'openai' | 'openai-responses'>, results: ToolResults<ChatToolResult | ResponsesToolResult>): ChatCompletionToolMessageParam[] | ResponseInputItem[] {
  if (isGateReport(report) && report.dialect === 'openai-responses') return responsesAnswer(report as TurnReport<'openai-responses'>, results as ToolResults<ResponsesToolResult>)
  return chatAnswer(report as TurnReport<'openai'>, results as ToolResults<ChatToolResult>)
}

function chatAnswer(report: TurnReport<'openai'>, results: ToolResults<ChatToolResult>): ChatCompletionToolMessageParam[] {
  const steps = answerPlan<'openai', unknown, ChatCompletionToolMessageParam>(report, results, ['openai'], (fb) => fb as ChatCompletionToolMessageParam[], WHERE)
  return steps.map((s) => {
    if (!s.allowed) return s.refusal
    if (typeof s.result !== 'string' && !Array.isArray(s.result)) {
      throw new ToolGateError('E_CONFIG', `${WHERE}: the result for call ${s.call.callId} (\`${s.call.tool}\`) must be a string or an array of text parts, got ${typeof s.result} (JSON.stringify a value yourself)`)
    }
    return { role: 'tool', tool_call_id: s.call.callId, content: s.result as ChatToolResult }
  })
}

/** Responses: the answer item(s) of each call, in call order. */
function responsesAnswer(report: TurnReport<'openai-responses'>, results: ToolResults<ResponsesToolResult>): ResponseInputItem[] {
  const steps = answerPlan<'openai-responses', unknown, ResponseInputItem[]>(report, results, ['openai-responses'], (fb) => refusalGroups(fb as ResponseInputItem[]), WHERE)
  const kinds = steps.some((s) => s.allowed) ? itemKinds(report.payload) : new Map<string, string>()
  return steps.flatMap((s) => (s.allowed ? [answerItem(s.call, s.result, kinds.get(s.call.callId) ?? 'function_call')] : s.refusal))
}

/**
 * The gate's Responses feedback, one group per refused call: each answer item, with the user
 * message that follows it when its item has no room for the refusal text.
 */
function refusalGroups(feedback: ResponseInputItem[]): ResponseInputItem[][] {
  const groups: ResponseInputItem[][] = []
  for (const item of feedback) {
    if ((item as { type?: unknown }).type === 'message' && groups.length > 0) groups[groups.length - 1].push(item)
    else groups.push([item])
  }
  return groups
}

/** The type of the item each call of a Responses payload is (a Response, its items, or one item), by call id. */
export function itemKinds(payload: unknown): Map<string, string> {
  const items = Array.isArray(payload) ? payload : isObj(payload) && Array.isArray(payload.output) ? payload.output : [payload]
  const kinds = new Map<string, string>()
  for (const it of items) {
    if (!isObj(it) || typeof it.type !== 'string') continue
    if (typeof it.call_id === 'string') kinds.set(it.call_id, it.type)
    else if (it.type === 'local_shell_call' && typeof it.id === 'string') kinds.set(it.id, it.type)
  }
  return kinds
}

/** The answer item of an allowed call of `kind`, from the host's result. */
function answerItem(call: TurnCall, result: unknown, kind: string): ResponseInputItem {
  if (isObj(result)) {
    if (typeof result.type !== 'string') {
      throw new ToolGateError('E_CONFIG', `${WHERE}: the result for call ${call.callId} (\`${call.tool}\`) is an object without \`type\`: give the output as text, or the whole answer item`)
    }
    const idKey = kind === 'local_shell_call' ? 'id' : 'call_id'
    if (result[idKey] !== undefined && result[idKey] !== call.callId) {
      throw new ToolGateError('E_CONFIG', `${WHERE}: the result keyed ${call.callId} answers \`${String(result[idKey])}\``)
    }
    return { ...result, [idKey]: call.callId } as unknown as ResponseInputItem
  }
  if (kind !== 'function_call' && kind !== 'custom_tool_call') {
    throw new ToolGateError('E_CONFIG', `${WHERE}: the allowed call ${call.callId} is a \`${kind}\`; its result must be the whole answer item (\`${kind}_output\`)`)
  }
  if (typeof result !== 'string' && !(kind === 'function_call' && Array.isArray(result))) {
    throw new ToolGateError('E_CONFIG', `${WHERE}: the result for call ${call.callId} (\`${call.tool}\`) must be a string${kind === 'function_call' ? ' or an output content list' : ''}, got ${typeof result} (JSON.stringify a value yourself)`)
  }
  return { type: `${kind}_output`, call_id: call.callId, output: result } as ResponseInputItem
}
