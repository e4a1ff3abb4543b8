// toolgate/gemini: the answer to a Gemini turn (`@google/genai`, or the REST API) once the host has
// run the calls the gate allowed. `answer(report, results)` merges the gate's refusals with the
// host's own results into the ONE user content of `functionResponse` parts the API wants, in the
// order of the calls. Shaping only: allowed or not, and every refusal, come from the gate's report
// of `gate.guard(response, { dialect: 'gemini' })` (see answer-plan.ts). No SDK import.
import { ToolGateError } from '../errors'
import type { GeminiFunctionResponse } from '../dialects/gemini'
import type { TurnReport } from '../types'
import { answerPlan, hasWireId, type ToolResults } from './answer-plan'

export type { ToolResults } from './answer-plan'

/**
 * A host's result for an allowed call: an object is the `functionResponse.response` as it is
 * (the API reads an `output` key as the function's output and an `error` key as its error; any
 * other object is the output as a whole); any other value is sent as `{ output: value }`.
 */
export type GeminiToolResult = Record<string, unknown> | string | number | boolean | unknown[] | null

/** One part of the answer: a `functionResponse`, or the text the gate answers a call that arrived empty (or a whole turn) with. */
export type GeminiAnswerPart = { functionResponse: GeminiFunctionResponse } | { text: string }

/** The answer {@link answer} builds: ONE user content with a part per call, in call order. */
export interface GeminiAnswerContent {
  role: 'user'
  parts: GeminiAnswerPart[]
}

const WHERE = 'answer (toolgate/gemini)'

/**
 * The answer to a Gemini turn: ONE user content holding a `functionResponse` part per call of
 * `report` (the `TurnReport` of `gate.guard(…, { dialect: 'gemini' })`), in the order of the
 * calls — the host's result for each allowed call, the gate's refusal (`response: { error }`)
 * for each refused one (a text part for a call that arrived empty, which has no name to answer),
 * then the text of any turn-level refusal the gate reported (a `MALFORMED_FUNCTION_CALL`
 * candidate). Append it to `contents` after the model's turn (the report's `payload`, with
 * repaired arguments written back). `undefined` for a turn without calls or refusals. A Live API
 * server message is answered by `report.feedback` itself (`E_CONFIG` here).
 *
 * `results` holds the host's result of every allowed call, keyed by its `callId` (the call's `id`,
 * or its position in the turn as a string for a call without one — such a call is answered
 * without an `id`, as the gate's feedback answers it). A missing result is `E_CONFIG` naming the
 * call; a result for a call the gate refused never replaces the refusal (the refusal is sent).
 * `E_CONFIG` also for a result keyed by no call of the turn or a report not made by the gate;
 * `E_DIALECT` for a report of another dialect.
 */
export function answer(report: TurnReport<'gemini'>, results: ToolResults<GeminiToolResult>): GeminiAnswerContent | undefined {
  let extra: GeminiAnswerPart[] = []
  const steps = answerPlan<'gemini', unknown, GeminiAnswerPart>(
    report,
    results,
    ['gemini'],
    (fb, refused) => {
      // a named call is answered by a functionResponse part, a call that arrived empty (no name)
      // by a text part; texts left over answer the turn as a whole (they go last)
      const parts = partsOf(fb as unknown[])
      const named = parts.filter((p) => 'functionResponse' in p)
      const texts = parts.filter((p) => !('functionResponse' in p))
      const units = refused.flatMap((c) => {
        const unit = c.tool === '' ? texts.shift() : named.shift()
        return unit === undefined ? [] : [unit]
      })
      extra = texts
      // a functionResponse no refused call takes means the feedback is not this turn's: the plan's count check says so
      return [...units, ...named]
    },
    WHERE,
  )
  const payload = report.payload as { toolCall?: unknown } | null
  if (typeof payload === 'object' && payload !== null && !Array.isArray(payload) && payload.toolCall !== undefined) partsOf([payload])
  if (steps.length === 0 && extra.length === 0) {
    const left = partsOf(report.feedback as unknown[])
    if (left.length === 0) return undefined
    extra = left
  }
  const parts = steps.map((s, i): GeminiAnswerPart => {
    if (!s.allowed) return s.refusal
    const response = typeof s.result === 'object' && s.result !== null && !Array.isArray(s.result) ? (s.result as Record<string, unknown>) : { output: s.result }
    const fr: GeminiFunctionResponse = hasWireId(s.call, i) ? { id: s.call.callId, name: s.call.tool, response } : { name: s.call.tool, response }
    return { functionResponse: fr }
  })
  return { role: 'user', parts: [...parts, ...extra] }
}

/** The parts of the gate's feedback contents, in order; `E_CONFIG` for the answer to a Live message, which is no content. */
function partsOf(feedback: unknown[]): GeminiAnswerPart[] {
  return feedback.flatMap((c) => {
    const parts = (c as { parts?: unknown }).parts
    if (!Array.isArray(parts)) {
      throw new ToolGateError('E_CONFIG', `${WHERE}: this turn is answered with a Live API message, not a content; send report.feedback with the session (answer builds contents only)`)
    }
    return parts as GeminiAnswerPart[]
  })
}
