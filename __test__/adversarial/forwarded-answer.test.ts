// Adversarial: what the HTTP proxy forwards is what the gate decided. An upstream answer is
// attacker-shaped (a hostile or compromised model endpoint, a man in the middle of a plain-HTTP
// upstream): for every answer fixture of the three answer dialects, seeded structural mutations
// — members dropped, added, renamed or retyped, call parts duplicated or moved, ids and names
// swapped — are guarded as the proxy guards them (`gate.guard`, then `decidedAnswer`, the
// proxy's own rewrite). Whenever both succeed, the answer the proxy would send, guarded again,
// must hold exactly the allowed calls of the first decision: the same tools with the same
// arguments, in order, each `passed` as it stands, and nothing refused. Anything else is a call
// the gate refused (or arguments it did not decide) reaching the client's SDK. Through the real
// native addon; deterministic (a fixed seed per fixture), so a failure names its mutant.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

import { ToolGateError } from '../../src-ts/errors'
import { ToolGate, type ToolGateConfig, type TurnReport } from '../../src-ts/index'
import { decidedAnswer } from '../../src-ts/proxy/http/rewrite'
import type { RequestDialect } from '../../src-ts/request-dialect'
import { rng } from '../helpers/rng'

const fixtures = join(__dirname, '..', 'fixtures', 'dialects')
const tools = JSON.parse(readFileSync(join(fixtures, 'tools.json'), 'utf8')) as ToolGateConfig
/** The fixtures' tools, and the same with a role policy (`get_weather` and `search` only for role `a`). */
const gates: { name: string; gate: ToolGate; ctx: Record<string, unknown> }[] = [
  { name: 'no policy', gate: new ToolGate(tools), ctx: {} },
  {
    name: 'role policy',
    gate: new ToolGate({ ...tools, policy: { rules: [{ effect: 'allow', roles: ['a'], tools: ['get_weather', 'search'] }] } }),
    ctx: { roles: ['a'] },
  },
]
const DIALECTS: RequestDialect[] = ['openai', 'openai-responses', 'anthropic']
/** Mutants per fixture; `FORWARDED_MUTANTS=20000 npx vitest run __test__/adversarial/forwarded-answer.test.ts` searches deeper. */
const MUTANTS = Number(process.env.FORWARDED_MUTANTS) || 400

type Json = null | boolean | number | string | Json[] | { [k: string]: Json }


/** Member names the three answer shapes are read by, and values a hostile answer would try. */
const KEYS = ['tool_calls', 'function', 'custom', 'function_call', 'arguments', 'input', 'name', 'id', 'call_id', 'type', 'content', 'output', 'choices', 'message', 'finish_reason', 'stop_reason', 'namespace', 'status', 'text', 'role']
const VALUES: Json[] = [
  null, '', 0, 1.5, true, 'search', 'get_weather', 'delete_file', 'ping', 'function', 'function_call', 'tool_use', 'custom', 'call_a', 'toolu_1',
  '{"query":"x"}', '{"path":"/etc/passwd"}', '{"city":"Paris","days":"3"}', {}, [], { query: 'x' }, { path: '/etc/passwd' }, [{ type: 'tool_use', id: 't9', name: 'delete_file', input: { path: '/' } }],
]

/** Every container in `v` with the path to it. */
function containers(v: Json, out: Json[] = []): Json[] {
  if (v !== null && typeof v === 'object') {
    out.push(v)
    for (const c of Array.isArray(v) ? v : Object.values(v)) containers(c, out)
  }
  return out
}

/** One structural mutation of `root` in place (its root object stays an object). */
function mutate(root: Json, r: () => number): void {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]
  const all = containers(root)
  const node = pick(all)
  const copy = (): Json => structuredClone(pick(all))
  const value = (): Json => (r() < 0.3 ? copy() : structuredClone(pick(VALUES)))
  if (Array.isArray(node)) {
    const i = Math.floor(r() * (node.length + 1))
    switch (Math.floor(r() * 4)) {
      case 0:
        if (node.length > 0) node.splice(Math.min(i, node.length - 1), 1)
        break
      case 1:
        if (node.length > 0) node.splice(i, 0, structuredClone(node[Math.min(i, node.length - 1)]))
        break
      case 2:
        node.splice(i, 0, value())
        break
      default:
        if (node.length > 1) node.reverse()
    }
    return
  }
  const obj = node as { [k: string]: Json }
  const keys = Object.keys(obj)
  switch (Math.floor(r() * 4)) {
    case 0:
      if (keys.length > 0) delete obj[pick(keys)]
      break
    case 1:
      obj[pick(KEYS)] = value()
      break
    case 2:
      if (keys.length > 0) obj[pick(keys)] = value()
      break
    default:
      if (keys.length > 0) {
        const from = pick(keys)
        const v = obj[from]
        delete obj[from]
        obj[pick(KEYS)] = v
      }
  }
}

/**
 * The answer fixtures of `dialect`: whole model answers the proxy forwards as they are (not
 * conversations, single items or tool lists, which an upstream does not answer with).
 */
function answers(dialect: RequestDialect): { name: string; payload: Json }[] {
  const dir = join(fixtures, dialect)
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => ({ name: `${dialect}/${f}`, payload: (JSON.parse(readFileSync(join(dir, f), 'utf8')) as { payload: Json }).payload }))
    .filter((f) => {
      const text = JSON.stringify(f.payload)
      const report = guarded(gates[0].gate, text, dialect, {})
      if (report === undefined || !f.payload || typeof f.payload !== 'object' || Array.isArray(f.payload)) return false
      try {
        decidedAnswer(dialect, text, report.calls)
        return true
      } catch {
        return false
      }
    })
}

/** The allowed calls of a report as the client would run them. */
const allowedOf = (r: TurnReport) => r.calls.filter((c) => c.allowed).map((c) => [c.tool, c.arguments])

function guarded(gate: ToolGate, text: string, dialect: RequestDialect, ctx: Record<string, unknown>): TurnReport | undefined {
  try {
    return gate.guard(text, { ...ctx, dialect })
  } catch (e) {
    if (e instanceof ToolGateError) return undefined // the proxy answers 502: nothing is forwarded
    throw e
  }
}

describe('the answer the HTTP proxy forwards holds exactly the calls the gate allowed', () => {
  it('has answer fixtures with calls in each dialect', () => {
    for (const dialect of DIALECTS) expect(answers(dialect).length, dialect).toBeGreaterThanOrEqual(2)
  })
  for (const dialect of DIALECTS) {
    for (const fx of answers(dialect)) {
      it(`${fx.name}: ${MUTANTS} mutants`, () => {
        let seed = 0
        for (const ch of fx.name) seed = (Math.imul(seed, 31) + ch.charCodeAt(0)) >>> 0
        const r = rng(seed)
        let forwarded = 0
        let withCalls = 0
        for (let m = 0; m < MUTANTS; m++) {
          const mutant = structuredClone(fx.payload)
          const ops = 1 + Math.floor(r() * 3)
          for (let k = 0; k < ops; k++) mutate(mutant, r)
          const text = JSON.stringify(mutant)
          for (const { name, gate, ctx } of gates) {
            const first = guarded(gate, text, dialect, ctx)
            if (first === undefined) continue
            let out: string
            try {
              out = decidedAnswer(dialect, text, first.calls).text
            } catch (e) {
              if (e instanceof ToolGateError) continue // refused whole: the proxy answers 502
              throw e
            }
            forwarded++
            if (first.calls.some((c) => c.allowed)) withCalls++
            const again = guarded(gate, out, dialect, ctx)
            const where = `mutant ${m} (${name}): ${text}\nforwarded: ${out}`
            expect(again, `the forwarded answer no longer reads as one: ${where}`).toBeDefined()
            expect(again!.calls.map((c) => c.outcome).filter((o) => o !== 'passed'), where).toEqual([])
            expect(allowedOf(again!), where).toEqual(allowedOf(first))
          }
        }
        // the mutants must reach the rewrite, with allowed calls in them, or this tests nothing
        expect(forwarded).toBeGreaterThan(MUTANTS / 20)
        const own = guarded(gates[0].gate, JSON.stringify(fx.payload), dialect, {})
        if (own !== undefined && allowedOf(own).length > 0) expect(withCalls).toBeGreaterThan(0)
      })
    }
  }
})
