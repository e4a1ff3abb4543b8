// Every fixture under __test__/fixtures/dialects/ (shared with the Rust tests) through the real
// native binding: `gate.guard` with the payload as raw text and as a parsed value.
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

import { mask, readFixtures } from './helpers/fixtures'
import { ToolGate, ToolGateError, type TurnReport } from '../src-ts/index'

const root = join(__dirname, 'fixtures', 'dialects')
const gate = ToolGate.fromFile(join(root, 'tools.json'))

interface Fixture {
  description: string
  dialect: string
  payload?: unknown
  payloadText?: string
  options?: { protocolVersion?: string }
  expect?: {
    dialect?: string
    calls: { callId: string; tool: string; outcome: string; reason?: string; arguments?: unknown }[]
    providerExecuted?: unknown[]
    payload?: unknown
    feedback?: unknown[]
    turnRefusals?: unknown[]
  }
  error?: { code: string; contains?: string }
}

function fixtures(): [string, Fixture][] {
  return readFixtures<Fixture>(root)
}


function verify(fx: Fixture, report: TurnReport): void {
  const want = fx.expect!
  if (want.dialect) expect(report.dialect).toBe(want.dialect)
  expect(report.calls.map((c) => c.callId)).toEqual(want.calls.map((c) => c.callId))
  want.calls.forEach((w, i) => {
    const got = report.calls[i]
    expect(got.tool).toBe(w.tool)
    expect(got.outcome, got.message).toBe(w.outcome)
    expect(got.allowed).toBe(w.outcome === 'passed' || w.outcome === 'repaired')
    if (w.reason) expect(got.reason).toBe(w.reason)
    if (w.arguments !== undefined) expect(got.arguments).toEqual(w.arguments)
    if (got.allowed) expect(JSON.parse(got.argumentsJson!)).toEqual(got.arguments)
  })
  expect(report.allowed.map((a) => a.callId)).toEqual(report.calls.filter((c) => c.allowed).map((c) => c.callId))
  if (want.providerExecuted) expect(report.providerExecuted).toEqual(want.providerExecuted)
  if (want.payload !== undefined) expect(report.payload).toEqual(want.payload)
  const messages = new Set([...report.calls.flatMap((c) => (c.message ? [c.message] : [])), ...report.turnRefusals.map((t) => t.message)])
  expect(mask(report.turnRefusals, messages)).toEqual(want.turnRefusals ?? [])
  if (want.feedback) expect(mask(report.feedback, messages)).toEqual(want.feedback)
}

describe('dialect fixtures through the binding', () => {
  const all = fixtures()
  it('has fixtures for every dialect', () => {
    const dialects = new Set(all.map(([n]) => n.split('/')[0]))
    expect([...dialects].length).toBeGreaterThanOrEqual(2)
  })
  for (const [name, fx] of all) {
    it(`${name}: ${fx.description.slice(0, 80)}`, () => {
      const text = fx.payloadText ?? JSON.stringify(fx.payload)
      const opts = { dialect: fx.dialect as never, ...(fx.options ?? {}) }
      const inputs: (string | object)[] = [text]
      if (fx.payloadText === undefined && fx.payload !== null && typeof fx.payload === 'object') inputs.push(fx.payload as object)
      for (const input of inputs) {
        if (fx.error) {
          let thrown: unknown
          try {
            gate.guard(input, opts)
          } catch (err) {
            thrown = err
          }
          expect(thrown).toBeInstanceOf(ToolGateError)
          expect((thrown as ToolGateError).code).toBe(fx.error.code)
          if (fx.error.contains) expect((thrown as ToolGateError).message).toContain(fx.error.contains)
        } else {
          verify(fx, gate.guard(input, opts))
        }
      }
    })
  }
})

describe('guard options', () => {
  it('requires a dialect and names unknown ones', () => {
    expect(() => gate.guard('{}', {} as never)).toThrow(expect.objectContaining({ code: 'E_DIALECT' }))
    expect(() => gate.guard('{}', { dialect: 'cohere' as never })).toThrow(/unknown dialect "cohere"/)
  })
  it('refuses payloads that are not JSON as E_PAYLOAD, never a crash', () => {
    for (const bad of ['', '{', 'null', '[1,2', '{"a":1}x', '"\uD800"']) {
      expect(() => gate.guard(bad, { dialect: 'openai' })).toThrow(ToolGateError)
    }
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    expect(() => gate.guard(cyclic, { dialect: 'openai' })).toThrow(expect.objectContaining({ code: 'E_PAYLOAD' }))
  })
})
