// Running the host's tool handlers for the allowed calls of a guarded turn (shared by
// toolgate/openai and toolgate/anthropic). Which calls run, with which arguments, and what a
// refused call is answered with all come from the turn's report; this file only calls handlers
// and turns their results (or throws) into text.
import { isObj } from '../json-object'
import { ToolGateError } from '../errors'
import { ToolGate } from '../gate'
import { isGateReport } from '../turn'
import type { Dialect, TurnCall, TurnReport } from '../types'
import { contextOf, entryOf, type ClientDialect, type ContextSource, type VerdictInfo } from './guarded-turns'

/** What a tool handler is told besides the arguments. */
export interface ToolCallInfo {
  /** The call's wire id. */
  callId: string
  /** The tool name the gate decided for. */
  tool: string
  /** The gate's verdict (`passed` or `repaired`; `flags` list each repair, `receipt` is set when receipts are configured). */
  verdict: TurnCall
}

/**
 * Runs one allowed call. `args` are the gate's exact arguments (repairs applied). The result is
 * sent to the model as the tool's output: a string as it is, anything else as JSON text
 * (`undefined` as an empty string). A throw (or rejection) becomes an error result for that
 * call; the other calls still run.
 */
export type ToolHandler = (args: Record<string, unknown>, info: ToolCallInfo) => unknown

/** Tool handlers by tool name (own properties only). */
export type ToolHandlers = Readonly<Record<string, ToolHandler>>

/** Options of `runToolCalls`. Unknown keys are `E_CONFIG`. */
export interface RunToolCallsOptions {
  /**
   * Told each verdict when `runToolCalls` guards the turn itself (a response that no guarded
   * client answered); a guarded client's `onVerdict` already told the others. Awaited; a throw
   * rejects `runToolCalls` before any handler runs.
   */
  onVerdict?: (verdict: TurnCall, info: VerdictInfo) => void | Promise<void>
  /**
   * Told each handler failure; its string return replaces the default error text sent to the
   * model (`` Tool `name` failed: <error message> ``). Keep secrets out of what you return.
   */
  onError?: (error: unknown, info: ToolCallInfo) => string | undefined
}

const OPTION_KEYS: ReadonlySet<string> = new Set(['onVerdict', 'onError'])

/** One handler's answer, as text for the model. */
export interface HandlerOutcome {
  callId: string
  tool: string
  text: string
  isError: boolean
}

/** Checks `runToolCalls`' own arguments; `E_CONFIG` names what is wrong. */
export function checkRunArgs(where: string, handlers: unknown, gate: unknown, options: unknown): void {
  if (!isObj(handlers)) throw new ToolGateError('E_CONFIG', `${where}: \`handlers\` must be an object of functions by tool name`)
  if (!(gate instanceof ToolGate)) throw new ToolGateError('E_CONFIG', `${where}: \`gate\` must be a ToolGate`)
  if (!isObj(options)) throw new ToolGateError('E_CONFIG', `${where}: options must be an object`)
  const unknown = Object.keys(options).filter((k) => !OPTION_KEYS.has(k))
  if (unknown.length > 0) throw new ToolGateError('E_CONFIG', `${where}: unknown option ${unknown.map((k) => `\`${k}\``).join(', ')} (expected onVerdict, onError)`)
  for (const k of OPTION_KEYS) {
    if (options[k] !== undefined && typeof options[k] !== 'function') throw new ToolGateError('E_CONFIG', `${where}: ${k} must be a function`)
  }
}

/**
 * The report of the turn `turn` holds: the one a guarded client kept for it (never decided
 * twice, so loop counts and confirmation tokens stay right), the report itself when the gate made
 * it (`guard`, `guardAsync`, a stream's `end()`: recognised by a mark only the gate sets, never
 * by its keys), or — for anything else — `gate.guardAsync` on it now, telling `onVerdict`.
 */
export async function reportOf<D extends ClientDialect>(
  turn: unknown,
  dialect: D,
  gate: ToolGate,
  ctx: ContextSource | undefined,
  options: RunToolCallsOptions,
  where: string,
): Promise<TurnReport<D>> {
  const entry = entryOf(turn)
  if (entry !== undefined) {
    if (entry.gate !== gate) throw new ToolGateError('E_CONFIG', `${where}: this turn was guarded by another ToolGate than the one given`)
    if (entry.dialect !== dialect) throw new ToolGateError('E_DIALECT', `${where}: this turn is ${entry.dialect}, not ${dialect}`)
    if (entry.report === undefined) throw new ToolGateError('E_PAYLOAD', `${where}: the stream has not ended; consume it to its end first (its calls are decided as they complete)`)
    return entry.report as TurnReport<D>
  }
  // a report counts only when the gate made it (a mark, never a shape): an upstream answer
  // carrying `dialect`/`calls`/`allowed` keys is a response like any other, guarded below
  if (isGateReport(turn)) {
    if ((turn.dialect as Dialect) !== dialect) throw new ToolGateError('E_DIALECT', `${where}: this report is ${turn.dialect}, not ${dialect}`)
    return turn as TurnReport<D>
  }
  if (isObj(turn) && typeof (turn as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function') {
    throw new ToolGateError('E_CONFIG', `${where}: a stream only a guarded client's create answered can be run (its calls were decided as it streamed)`)
  }
  const context = contextOf(ctx, where)
  const report = await gate.guardAsync(turn as object, { ...context, dialect })
  if (options.onVerdict !== undefined) {
    for (const c of report.calls) await options.onVerdict(c, { dialect, callId: c.callId, streamed: false, context })
  }
  return report as TurnReport<D>
}

/**
 * Runs the handler of every allowed call of `report` (those in `only`, when given), one after
 * the other in call order, and answers their results as text. A missing handler is `E_CONFIG`,
 * checked before any handler runs.
 */
export async function runAllowed(report: TurnReport, handlers: ToolHandlers, options: RunToolCallsOptions, where: string, only?: ReadonlySet<string>): Promise<HandlerOutcome[]> {
  const calls = report.calls.filter((c) => c.allowed && (only === undefined || only.has(c.callId)))
  for (const c of calls) {
    if (!Object.hasOwn(handlers, c.tool) || typeof handlers[c.tool] !== 'function') {
      throw new ToolGateError('E_CONFIG', `${where}: no handler for the allowed tool \`${c.tool}\` (call ${c.callId}); add one to \`handlers\``)
    }
  }
  const out: HandlerOutcome[] = []
  for (const c of calls) {
    const info: ToolCallInfo = { callId: c.callId, tool: c.tool, verdict: c }
    try {
      const result = await handlers[c.tool](c.arguments ?? {}, info)
      out.push({ callId: c.callId, tool: c.tool, text: typeof result === 'string' ? result : (JSON.stringify(result) ?? ''), isError: false })
    } catch (err) {
      const custom = options.onError?.(err, info)
      const text = typeof custom === 'string' ? custom : `Tool \`${c.tool}\` failed: ${err instanceof Error ? err.message : String(err)}`
      out.push({ callId: c.callId, tool: c.tool, text, isError: true })
    }
  }
  return out
}
