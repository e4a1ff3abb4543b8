// How the HTTP proxy tells the host which tool calls it removed from a model's answer: a text
// part written into the answer (the host's UI and logs see it; the model sees it next turn as
// its own words) and the `x-toolgate-refused` response header. Shapes only: which calls are
// refused, and the message each carries, is the gate's decision (`TurnReport.calls`).
import type { Outcome, Reason, TurnCall } from '../../types'

/** The response header naming the removed calls (absent when none was removed). */
export const REFUSED_HEADER = 'x-toolgate-refused'

/** One call the proxy removed from a model's answer. */
export interface RefusedCall {
  callId: string
  tool: string
  outcome: Outcome
  reason: Reason | undefined
  /** The gate's model-readable message (for `confirm`: approval is required; never the token). */
  message: string
}

/** The calls of a turn the gate did not allow, in turn order. */
export function refusedOf(calls: readonly TurnCall[]): RefusedCall[] {
  const out: RefusedCall[] = []
  for (const c of calls) {
    if (c.allowed) continue
    out.push({ callId: c.callId, tool: c.tool, outcome: c.outcome, reason: c.reason, message: c.message ?? `Call to \`${c.tool}\` refused.` })
  }
  return out
}

/** The text part announcing the removed calls: one paragraph per call, the gate's message. */
export function refusalText(refused: readonly RefusedCall[]): string {
  return refused.map((r) => `[toolgate] The call to \`${r.tool || '(no name)'}\` was not run (${r.reason ?? r.outcome}). ${r.message}`).join('\n\n')
}

/**
 * The `x-toolgate-refused` header value: `tool;id=…;reason=…` per call, comma-separated, each
 * part percent-encoded so any tool name or id stays one ASCII header line.
 */
export function refusedHeader(refused: readonly RefusedCall[]): string {
  const enc = (s: string) => encodeURIComponent(s).replace(/[;,]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  return refused.map((r) => `${enc(r.tool)};id=${enc(r.callId)};reason=${r.reason ?? r.outcome}`).join(', ')
}
