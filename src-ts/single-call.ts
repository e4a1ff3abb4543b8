// Conversion only: the binding's one-call answer (crates/toolgate-wire `single_call`) to a
// SingleCallDecision, for a host that forwards the very text it decided (the MCP proxy). Every
// decision is the core's; this reads its answer without a JSON parse of a report.
import type { Flag, Outcome, Reason, TurnReport } from './types'
import { readTurnWire } from './turn'

/**
 * The decision on a turn of one call, shaped for a host that forwards the text it decided:
 *
 * - `untouched`: allowed, arguments unchanged — forward the text as it is;
 * - `changed`: allowed with `argumentsJson` in place of the call's arguments (`repaired`, or
 *   `passed` after normalisation: `null`/missing → `{}`);
 * - `refused`: not allowed — answer `feedback` (the dialect's message for the caller) instead;
 * - `report`: anything else (several calls or none, a confirmation, a receipt, shadow mode …):
 *   the whole {@link TurnReport}, as `guard` answers it.
 */
export type SingleCallDecision =
  | { kind: 'untouched' }
  | { kind: 'changed'; outcome: Outcome; argumentsJson: string; flags: Flag[] }
  | { kind: 'refused'; reason: Reason; tool: string; feedback: unknown }
  | { kind: 'report'; report: TurnReport }

const UNTOUCHED: SingleCallDecision = Object.freeze({ kind: 'untouched' })

/** Reads the `single_call` wire; `text` is the payload the core decided (for a whole report's lazy `payload`). */
export function readSingleCallWire(wire: string, text: string): SingleCallDecision {
  switch (wire.charCodeAt(0)) {
    case 61 /* '=' */:
      return UNTOUCHED
    case 126 /* '~' */: {
      // `~ARGS\nOUTCOME\nFLAGS`, read from the end: FLAGS (serialized JSON) and OUTCOME hold no
      // newline, so ARGS is everything before them whatever it holds
      const b = wire.lastIndexOf('\n')
      const a = wire.lastIndexOf('\n', b - 1)
      const flags = wire.slice(b + 1)
      return { kind: 'changed', argumentsJson: wire.slice(1, a), outcome: wire.slice(a + 1, b) as Outcome, flags: flags === '[]' ? [] : (JSON.parse(flags) as Flag[]) }
    }
    case 33 /* '!' */: {
      // `!REASON\nFEEDBACK\nTOOL`: the tool name (any text) comes last
      const a = wire.indexOf('\n')
      const b = wire.indexOf('\n', a + 1)
      return { kind: 'refused', reason: wire.slice(1, a) as Reason, feedback: JSON.parse(wire.slice(a + 1, b)), tool: wire.slice(b + 1) }
    }
    default:
      return { kind: 'report', report: readTurnWire(wire, text, text) }
  }
}
