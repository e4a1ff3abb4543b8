// Node's answers for the shared fixtures, as JSON on stdout, for the Python suite to compare with
// its own (python/tests/test_parity.py): the same cases through the built package (dist/), with
// the same normalization (python/tests/parity.py mirrors `verdict`, `report` and `failure`).
// Usage: node scripts/python-parity.mjs > answers.json  (needs `npm run build` first)
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const { ToolGate } = createRequire(import.meta.url)(join(root, 'dist', 'index.js'))
const fixtures = join(root, '__test__', 'fixtures')
const read = (p) => JSON.parse(readFileSync(p, 'utf8'))

/** Every `<dir>/<case>.json` under `base`, in name order. */
function cases(base) {
  const out = []
  for (const d of readdirSync(base).sort()) {
    if (!statSync(join(base, d)).isDirectory()) continue
    for (const f of readdirSync(join(base, d)).sort()) if (f.endsWith('.json')) out.push([`${d}/${f}`, read(join(base, d, f))])
  }
  return out
}

/** A verdict with what must agree (tokens and times are random: only the summary is kept). */
function verdict(v, withText) {
  const o = { outcome: v.outcome, allowed: v.allowed, tool: v.tool, flags: v.flags }
  if (v.callId !== undefined) o.callId = v.callId
  if (v.allowed) o.arguments = v.arguments
  if (v.allowed && withText) o.argumentsJson = v.argumentsJson
  for (const k of ['reason', 'message', 'action', 'resource']) if (v[k] !== undefined) o[k] = v[k]
  if (v.confirmation) o.confirmation = { summary: v.confirmation.summary }
  if (v.receipt) o.receipt = '<receipt>'
  if (v.shadow) Object.assign(o, { shadow: true, wouldBe: v.wouldBe })
  return o
}

function report(r) {
  return { dialect: r.dialect, calls: r.calls.map((c) => verdict(c, true)), allowed: r.allowed, payload: r.payload, feedback: r.feedback, providerExecuted: r.providerExecuted ?? [], turnRefusals: r.turnRefusals ?? [] }
}

function failure(err) {
  return { error: err.code ?? 'THROWN', message: err.message }
}

function attempt(f) {
  try {
    return f()
  } catch (err) {
    return failure(err)
  }
}

const out = { check: {}, guard: {}, stream: {}, tools: {}, policy: {} }

// bench/corpus: every case, arguments as the raw text the model sent
const corpus = new ToolGate(read(join(root, 'bench', 'corpus', 'tools.json')))
for (const c of read(join(root, 'bench', 'corpus', 'cases.json'))) out.check[c.id] = verdict(corpus.check(c.tool, c.args), true)

// dialect fixtures: whole turns
const dialectTools = read(join(fixtures, 'dialects', 'tools.json'))
const dialectGate = new ToolGate(dialectTools)
for (const [name, fx] of cases(join(fixtures, 'dialects'))) {
  const payload = fx.payloadText ?? fx.payload
  out.guard[name] = attempt(() => report(dialectGate.guard(payload, { dialect: fx.dialect, ...(fx.options ?? {}) })))
}

// stream fixtures: events pushed as text, one gate per config
for (const [name, fx] of cases(join(fixtures, 'streams'))) {
  const gate = new ToolGate({ ...dialectTools, ...(fx.config ?? {}) })
  const steps = []
  let stream
  try {
    stream = gate.stream({ dialect: fx.dialect })
  } catch (err) {
    out.stream[name] = { start: failure(err) }
    continue
  }
  for (const ev of fx.events) {
    const text = typeof ev === 'string' ? ev : JSON.stringify(ev)
    steps.push(attempt(() => ({ completed: stream.push(text).map((c) => verdict(c, true)), forwarded: stream.forward() })))
  }
  out.stream[name] = { steps, end: attempt(() => report(stream.end())) }
}

// tool lists
for (const [name, fx] of cases(join(fixtures, 'tool-lists'))) {
  out.tools[name] = attempt(() => ({ tools: dialectGate.filterTools(fx.tools, { dialect: fx.dialect }) }))
}

// policy sequences
const policyConfig = read(join(fixtures, 'policy', 'config.json'))
for (const [name, steps] of Object.entries(read(join(root, 'python', 'tests', 'fixtures', 'policy-cases.json')).cases)) {
  const gate = new ToolGate(policyConfig)
  let previous
  out.policy[name] = steps.map((s) =>
    attempt(() => {
      if (s.markSession) return gate.markSession(...s.markSession) ?? null
      const v = s.confirm !== undefined ? gate.confirm(s.confirm === 'previous' ? (previous?.confirmation?.token ?? '') : s.confirm, s.ctx) : gate.check(s.tool, s.args, s.ctx)
      if (v.confirmation) previous = v
      return verdict(v, typeof s.args === 'string')
    }),
  )
}

process.stdout.write(JSON.stringify(out))
