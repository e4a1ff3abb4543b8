// What the `openai` and `@anthropic-ai/sdk` adapter tests share around the five-call turn of
// helpers/turns.ts: the host's tools (each records what it ran with), a report read as one line
// per call, the lines the adapter config decides, and the check that a confirmation token never
// reached the model.
import { expect } from 'vitest'

import type { ToolHandlers, VerdictInfo } from '../../src-ts/adapters/openai'
import type { TurnCall, TurnReport } from '../../src-ts/index'
import type { Upstream } from './upstream'

/** A call's arguments as a handler gets them. */
export type Args = Record<string, unknown>

/** The host's four declared tools; every run is pushed to `ran` (clear it between tests). */
export function recordingHandlers(opts: { asyncWeather?: boolean } = {}): { ran: { tool: string; args: Args }[]; handlers: ToolHandlers } {
  const ran: { tool: string; args: Args }[] = []
  const weather = (a: Args) => (ran.push({ tool: 'get_weather', args: a }), `${String(a.city)}: sunny for ${String(a.days)} days`)
  const handlers: ToolHandlers = {
    search: (a) => (ran.push({ tool: 'search', args: a }), { hits: [`${String(a.query)} in action`] }),
    get_weather: opts.asyncWeather === true ? async (a) => weather(a) : weather,
    send_email: (a) => ran.push({ tool: 'send_email', args: a }),
    save_note: (a) => ran.push({ tool: 'save_note', args: a }),
  }
  return { ran, handlers }
}

/** A report as `<callId> <tool> <outcome>[ <reason>]`, one line per call. */
export const outcomes = (report: TurnReport): string[] => report.calls.map((c) => `${c.callId} ${c.tool} ${c.outcome}${c.reason ? ` ${c.reason}` : ''}`)

/** What `ADAPTER_CONFIG` decides for the five calls, with these call ids, as `outcomes` reads it. */
export const expectedOutcomes = (ids: string[]): string[] => [
  `${ids[0]} search passed`,
  `${ids[1]} get_weather repaired`,
  `${ids[2]} send_email denied no_rule`,
  `${ids[3]} launch_rockets rejected unknown_tool`,
  `${ids[4]} save_note confirm confirm_required`,
]

/** A confirmation was asked for, and its token is in no request the upstream got (no model-facing text). */
export function expectNoToken(verdicts: [TurnCall, VerdictInfo][], upstream: Upstream): void {
  const token = verdicts.find(([v]) => v.outcome === 'confirm')?.[0].confirmation?.token
  expect(token).toMatch(/.{8,}/)
  expect(JSON.stringify(upstream.requests)).not.toContain(token)
}
