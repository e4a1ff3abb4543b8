// Adversarial: the MCP proxy hands the client each server answer only for a request it has in
// flight, once, under the id the proxy routed it by. The server is attacker-shaped (a hostile or
// compromised MCP server): after the client's requests — calls, a list, a ping, with number and
// string ids of the same value — seeded mutants of answer lines go through the real router: ids
// swapped, switched between `1` and `"1"`, made up, repeated; answers sent twice; `"id"` written
// twice as text or escaped; `result` and `error` together; batches. Every answer the client gets,
// read with `JSON.parse`, must carry an id the client sent and had not yet been answered (or
// `null`, which answers no request), and the client must never get two answers for one id.
// Deterministic.
import { describe, expect, it } from 'vitest'

import { McpProxy } from '../../src-ts/proxy/mcp/proxy'
import { rng } from '../helpers/rng'

const config = { tools: [{ name: 'echo', inputSchema: { type: 'object', properties: { n: { type: 'integer' } } } }] }
const MUTANTS = Number(process.env.FORWARDED_MUTANTS) || 1500
type Obj = Record<string, unknown>

const REQUESTS: Obj[] = [
  { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { n: 1 } } },
  { jsonrpc: '2.0', id: '1', method: 'tools/call', params: { name: 'echo', arguments: { n: 2 } } },
  { jsonrpc: '2.0', id: 'list', method: 'tools/list' },
  { jsonrpc: '2.0', id: 7, method: 'ping' },
]
const IDS: unknown[] = [1, '1', 'list', 7, '7', 2, 'x', null, 1.5, [1], { id: 1 }]

function answers(r: () => number): string[] {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]
  const lines: string[] = []
  for (let k = 2 + Math.floor(r() * 5); k > 0; k--) {
    const m: Obj = { jsonrpc: '2.0', id: pick(IDS) }
    const shape = Math.floor(r() * 4)
    if (shape === 0) m.result = { content: [{ type: 'text', text: 'ok' }] }
    else if (shape === 1) m.result = { tools: [{ name: 'echo', inputSchema: { type: 'object' } }] }
    else if (shape === 2) m.error = { code: -32000, message: 'no' }
    else {
      m.result = {}
      m.error = { code: 1, message: 'both' }
    }
    let text = JSON.stringify(m)
    switch (Math.floor(r() * 6)) {
      case 0:
        text = text.replace('{', `{"id":${JSON.stringify(pick(IDS))},`) // "id" written twice
        break
      case 1:
        text = text.replace('"id"', '"\\u0069d"')
        break
      case 2:
        text = `[${text},${JSON.stringify({ jsonrpc: '2.0', id: pick(IDS), result: {} })}]` // a batch
        break
      case 3:
        lines.push(text) // the same answer twice
        break
      default:
    }
    lines.push(text)
  }
  return lines
}

describe('the MCP proxy routes each server answer only to a request in flight, once', () => {
  it(`${MUTANTS} mutant answer sequences from a hostile server`, () => {
    const r = rng(2026)
    let delivered = 0
    for (let m = 0; m < MUTANTS; m++) {
      const toClient: string[] = []
      const proxy = new McpProxy({ config }, {
        toClient: (msg) => toClient.push(JSON.stringify(msg)),
        toClientText: (t) => toClient.push(t),
        toServer: () => {},
        toServerText: () => {},
      })
      for (const q of REQUESTS) proxy.clientLine({ kind: 'line', text: JSON.stringify(q) })
      const seq = answers(r)
      for (const line of seq) proxy.serverLine({ kind: 'line', text: line })
      const where = `mutant ${m}:\n${seq.join('\n')}\nclient:\n${toClient.join('\n')}`
      const open = new Set(REQUESTS.map((q) => JSON.stringify(q.id)))
      for (const text of toClient) {
        const msgs = JSON.parse(text) as Obj | Obj[]
        for (const msg of Array.isArray(msgs) ? msgs : [msgs]) {
          if (msg.method !== undefined) continue // a request or notification of the server's
          if (msg.id === null) continue // answers no request (JSON-RPC's error for an unread id)
          const id = JSON.stringify(msg.id)
          expect(open.has(id), `${where}\nanswer for ${id}, which is not in flight`).toBe(true)
          open.delete(id)
          delivered++
        }
      }
    }
    expect(delivered).toBeGreaterThan(MUTANTS)
  })
})
