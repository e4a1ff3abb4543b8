// Conversion only: a turn payload to JSON text for the binding, and the binding's report wire
// (crates/toolgate-core/src/turn.rs `to_wire`) to a TurnReport. Every decision is the core's.
import { ToolGateError } from './errors'
import type { Dialect, Flag, Outcome, Reason, TurnCall, TurnReport, ProviderExecutedCall } from './types'

interface WireCall {
  callId: string
  tool: string
  outcome: Outcome
  argumentsJson?: string
  flags: Flag[]
  message?: string
  reason?: Reason
}

interface WireReport {
  dialect: Dialect
  calls: WireCall[]
  payload?: unknown
  feedback: TurnReport['feedback']
  providerExecuted: ProviderExecutedCall[]
}

/**
 * JSON text of a payload given as text or as a parsed value. A value that cannot be JSON (a
 * cycle, a BigInt) or text holding a lone UTF-16 surrogate is `E_PAYLOAD`: the gate and the host
 * would read different calls.
 */
export function payloadText(payload: unknown, what: string): string {
  let text: string | undefined
  if (typeof payload === 'string') {
    text = payload
  } else {
    try {
      text = JSON.stringify(payload)
    } catch (err) {
      throw new ToolGateError('E_PAYLOAD', `${what}: cannot be read as JSON (${(err as Error).message})`, { cause: err })
    }
    if (typeof text !== 'string') {
      throw new ToolGateError('E_PAYLOAD', `${what}: expected JSON text or a JSON value, got ${typeof payload}`)
    }
  }
  if (!text.isWellFormed()) {
    throw new ToolGateError('E_PAYLOAD', `${what}: the text holds a lone UTF-16 surrogate`)
  }
  return text
}

function readCall(c: WireCall): TurnCall {
  if (c.argumentsJson !== undefined) {
    const args = JSON.parse(c.argumentsJson) as Record<string, unknown>
    return { callId: c.callId, outcome: c.outcome, allowed: true, tool: c.tool, arguments: args, argumentsJson: c.argumentsJson, flags: c.flags }
  }
  return { callId: c.callId, outcome: c.outcome, allowed: false, tool: c.tool, flags: c.flags, reason: c.reason, message: c.message }
}

/** Reads a JSON array of calls in the per-call wire (`calls_to_wire` in turn.rs), e.g. a stream's `push` answer. */
export function readCallsWire(wire: string): TurnCall[] {
  return (JSON.parse(wire) as WireCall[]).map(readCall)
}

/** Builds the public report from the binding's wire; `original` is the payload as the caller gave it. */
export function readTurnWire(wire: string, original: unknown, text: string): TurnReport {
  const w = JSON.parse(wire) as WireReport
  const calls: TurnCall[] = w.calls.map(readCall)
  const allowed: TurnReport['allowed'] = []
  for (const c of calls) {
    if (c.allowed) allowed.push({ callId: c.callId, tool: c.tool, arguments: c.arguments! })
  }
  const payload = 'payload' in w ? w.payload : typeof original === 'string' ? JSON.parse(text) : original
  return { dialect: w.dialect, calls, allowed, payload, feedback: w.feedback, providerExecuted: w.providerExecuted }
}
