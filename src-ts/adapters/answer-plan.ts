// The order of a turn's answers, shared by every adapter's `answer(report, results)`: each call of
// the gate's report, in payload order, paired with what answers it — the host's own result for an
// allowed call, the gate's feedback for a refused one. The adapters only shape these pairs into
// the message(s) their API requires. Nothing is decided here: allowed or not comes from the
// report, and a refused call is answered by the gate's refusal whatever result the host holds.
import { isObj } from '../json-object'
import { ToolGateError } from '../errors'
import { isGateReport } from '../turn'
import type { Dialect, TurnCall, TurnReport } from '../types'

/**
 * The host's own results for the allowed calls of a turn, keyed by each call's `callId` as the
 * report gives it (`TurnCall.callId`: the wire id, or the call's position as a string for a call
 * without one). A record or a `Map`.
 */
export type ToolResults<R> = Readonly<Record<string, R>> | ReadonlyMap<string, R>

/** One call of the turn and what answers it: the host's result (allowed), or the gate's refusal (refused). */
export type AnswerStep<R, F> = { call: TurnCall; allowed: true; result: R } | { call: TurnCall; allowed: false; refusal: F }

/**
 * The calls of `report` in payload order, each with its answer. `refusals` splits the report's
 * feedback into one unit per refused call (given in call order), in call order (the core builds
 * feedback that way).
 *
 * - `report` must be a report the gate made (`gate.guard`, `guardAsync`, a stream's `end()`):
 *   anything else is `E_CONFIG`; a report of another dialect is `E_DIALECT`.
 * - A missing result (absent or `undefined`) for an allowed call is `E_CONFIG` naming the call.
 * - A result keyed by an id that is no call of this turn is `E_CONFIG` (a result meant for another
 *   turn, or a mistyped id, would otherwise be lost without a word).
 * - A result for a refused call is ignored: the refusal wins.
 */
export function answerPlan<D extends Dialect, R, F>(
  report: unknown,
  results: unknown,
  dialects: readonly D[],
  refusals: (feedback: TurnReport<D>['feedback'], refused: TurnCall[]) => F[],
  where: string,
): AnswerStep<R, F>[] {
  if (!isGateReport(report)) {
    throw new ToolGateError('E_CONFIG', `${where}: expected the TurnReport of gate.guard / guardAsync / a stream's end(), got ${describe(report)}`)
  }
  if (!(dialects as readonly Dialect[]).includes(report.dialect)) {
    throw new ToolGateError('E_DIALECT', `${where}: this report is ${report.dialect}, expected ${dialects.join(' or ')}`)
  }
  const lookup = resultsOf(results, where)
  const ids = new Set(report.calls.map((c) => c.callId))
  const stray = lookup.keys().filter((k) => !ids.has(k))
  if (stray.length > 0) {
    throw new ToolGateError('E_CONFIG', `${where}: results for ${stray.map((k) => `\`${clip(k)}\``).join(', ')}, which ${stray.length === 1 ? 'is' : 'are'} no call of this turn (calls: ${[...ids].map((k) => clip(k)).join(', ') || 'none'})`)
  }
  const refused = report.calls.filter((c) => !c.allowed)
  const units = refused.length === 0 ? [] : refusals(report.feedback as TurnReport<D>['feedback'], refused)
  if (units.length !== refused.length) {
    throw new ToolGateError('E_PAYLOAD', `${where}: the report's feedback answers ${units.length} calls, but ${refused.length} were refused`)
  }
  let k = 0
  return report.calls.map((call): AnswerStep<R, F> => {
    if (!call.allowed) return { call, allowed: false, refusal: units[k++] }
    const result = lookup.get(call.callId) as R | undefined
    if (result === undefined) {
      throw new ToolGateError('E_CONFIG', `${where}: no result for the allowed call ${clip(call.callId)} (\`${call.tool}\`); every allowed call needs one, keyed by its callId`)
    }
    return { call, allowed: true, result }
  })
}

/** Whether a call id is the gate's stand-in for a call without a wire id (its position in the turn). */
export function hasWireId(call: TurnCall, position: number): boolean {
  return call.callId !== String(position)
}

interface Lookup {
  keys(): string[]
  get(id: string): unknown
}

function resultsOf(results: unknown, where: string): Lookup {
  if (results instanceof Map) return { keys: () => [...(results as Map<unknown, unknown>).keys()].map(String), get: (id) => results.get(id) }
  if (isObj(results)) return { keys: () => Object.keys(results), get: (id) => (Object.hasOwn(results, id) ? results[id] : undefined) }
  throw new ToolGateError('E_CONFIG', `${where}: \`results\` must be a record or a Map of results by callId, got ${describe(results)}`)
}

function describe(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : typeof v
}

function clip(s: string): string {
  return s.length > 64 ? `${s.slice(0, 61)}...` : s
}
