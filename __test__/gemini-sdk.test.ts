// The Gemini fixtures are @google/genai values: each payload and feedback written with the SDK's
// types in gemini-sdk-shapes.ts (type-checked) equals its fixture, and guard, given the SDK
// value itself, answers that fixture's feedback.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

import { feedback, payloads } from './gemini-sdk-shapes'
import { mask } from './helpers/fixtures'
import { ToolGate } from '../src-ts/index'

const root = join(__dirname, 'fixtures')
const gate = ToolGate.fromFile(join(root, 'dialects', 'tools.json'))

interface Fixture {
  payload?: unknown
  expect: { feedback?: unknown[] }
}

const read = (name: string): Fixture => JSON.parse(readFileSync(join(root, name), 'utf8')) as Fixture

describe('Gemini fixtures are @google/genai values', () => {
  for (const [name, value] of Object.entries(payloads)) {
    it(`${name}: the payload is the SDK-typed value`, () => {
      expect(JSON.parse(JSON.stringify(value))).toEqual(read(name).payload)
    })
    it(`${name}: guard reads the SDK value and answers in the SDK's shape`, () => {
      const report = gate.guard(value, { dialect: 'gemini' })
      const messages = new Set([...report.calls.flatMap((c) => (c.message ? [c.message] : [])), ...report.turnRefusals.map((t) => t.message)])
      const want = feedback[name]
      if (want !== undefined) expect(mask(report.feedback, messages)).toEqual(want)
    })
  }
  for (const [name, value] of Object.entries(feedback)) {
    it(`${name}: the feedback is the SDK-typed value`, () => {
      expect(read(name).expect.feedback).toEqual(value)
    })
  }
})
