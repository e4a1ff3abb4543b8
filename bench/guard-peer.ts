/**
 * The whole-turn baseline `gate.guard` is measured against: what a Node developer writes by hand
 * to gate one model turn without toolgate. `JSON.parse` the turn, walk its tool calls,
 * `JSON.parse` each OpenAI `arguments` string, validate with one ajv 8 validator per tool
 * compiled up front with the same repair options as `peer.ts` (`coerceTypes: 'array'`,
 * `useDefaults`, `removeAdditional: 'failing'`), tell passed from repaired, write repaired
 * arguments back into the turn, collect the allowed calls, and build the feedback messages the
 * API expects for refused ones (with ajv's error text as the message).
 */
import { Ajv, type ValidateFunction } from 'ajv'

import type { PeerConfig } from './peer.js'

/** One call's decision, in the shape the benchmark compares with toolgate's `TurnReport.calls`. */
export interface PeerCall {
  callId: string
  tool: string
  outcome: 'passed' | 'repaired' | 'rejected'
  arguments?: Record<string, unknown>
  message?: string
}

/** What the baseline answers for one turn (the parts of a `TurnReport` a host uses). */
export interface PeerTurn {
  calls: PeerCall[]
  allowed: { callId: string; tool: string; arguments: Record<string, unknown> }[]
  payload: unknown
  feedback: unknown[]
}

type Decide = (tool: string, data: unknown) => { outcome: PeerCall['outcome']; message?: string }

interface OpenAIToolCall { id: string; function: { name: string; arguments: string } }
interface AnthropicBlock { type: string; id?: string; name?: string; input?: unknown }

/** Compiles the validators once; returns the two turn gates. */
export function makeTurnPeer(config: PeerConfig): { openai(text: string): PeerTurn; anthropic(text: string): PeerTurn } {
  const ajv = new Ajv({ coerceTypes: 'array', useDefaults: true, removeAdditional: 'failing', allErrors: false, strict: false })
  const validators = new Map<string, ValidateFunction>()
  for (const t of config.tools) validators.set(t.name, ajv.compile(t.inputSchema))

  // Validates `data` in place (ajv coerces, injects defaults, prunes); a serialization taken
  // before tells passed from repaired.
  const decide: Decide = (tool, data) => {
    const validate = validators.get(tool)
    if (validate === undefined) return { outcome: 'rejected', message: `Unknown tool \`${tool}\`.` }
    if (data === null || typeof data !== 'object' || Array.isArray(data)) return { outcome: 'rejected', message: `Arguments for \`${tool}\` must be an object.` }
    const before = JSON.stringify(data)
    if (!validate(data)) return { outcome: 'rejected', message: `Invalid arguments for \`${tool}\`: ${ajv.errorsText(validate.errors)}` }
    return { outcome: JSON.stringify(data) === before ? 'passed' : 'repaired' }
  }

  function finish(calls: PeerCall[], payload: unknown, feedback: unknown[]): PeerTurn {
    const allowed = calls.filter((c) => c.outcome !== 'rejected').map((c) => ({ callId: c.callId, tool: c.tool, arguments: c.arguments! }))
    return { calls, allowed, payload, feedback }
  }

  return {
    openai(text) {
      const completion = JSON.parse(text) as { choices: { message: { tool_calls?: OpenAIToolCall[] } }[] }
      const calls: PeerCall[] = []
      const feedback: unknown[] = []
      for (const choice of completion.choices) {
        for (const tc of choice.message.tool_calls ?? []) {
          const tool = tc.function.name
          let data: unknown
          try {
            data = JSON.parse(tc.function.arguments)
          } catch (e) {
            const message = `Arguments for \`${tool}\` are not JSON: ${(e as Error).message}`
            calls.push({ callId: tc.id, tool, outcome: 'rejected', message })
            feedback.push({ role: 'tool', tool_call_id: tc.id, content: message })
            continue
          }
          const d = decide(tool, data)
          if (d.outcome === 'rejected') {
            calls.push({ callId: tc.id, tool, outcome: 'rejected', message: d.message })
            feedback.push({ role: 'tool', tool_call_id: tc.id, content: d.message })
          } else {
            const args = data as Record<string, unknown>
            if (d.outcome === 'repaired') tc.function.arguments = JSON.stringify(args)
            calls.push({ callId: tc.id, tool, outcome: d.outcome, arguments: args })
          }
        }
      }
      return finish(calls, completion, feedback)
    },
    anthropic(text) {
      const message = JSON.parse(text) as { content: AnthropicBlock[] }
      const calls: PeerCall[] = []
      const blocks: unknown[] = []
      for (const b of message.content) {
        if (b.type !== 'tool_use') continue
        const tool = b.name!
        const d = decide(tool, b.input ?? {})
        if (d.outcome === 'rejected') {
          calls.push({ callId: b.id!, tool, outcome: 'rejected', message: d.message })
          blocks.push({ type: 'tool_result', tool_use_id: b.id, content: d.message, is_error: true })
        } else {
          calls.push({ callId: b.id!, tool, outcome: d.outcome, arguments: b.input as Record<string, unknown> })
        }
      }
      return finish(calls, message, blocks.length > 0 ? [{ role: 'user', content: blocks }] : [])
    },
  }
}
