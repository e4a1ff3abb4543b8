#!/usr/bin/env node
// Regenerates the dialect fuzz seeds from the shared fixture corpus: every
// __test__/fixtures/dialects/<dialect>/<case>.json becomes fuzz/corpus/dialect_<dialect>/seed-fx-<case>
// holding the turn's exact text (`payloadText`, else `payload` serialized). The folder, not the
// fixture's `dialect` field (which may be "auto"), picks the target. Stale `seed-fx-*` files are
// removed; other seeds (`seed-doc-*`, written by hand) are left alone.
//
//   node fuzz/seeds.mjs          # from anywhere; prints what it wrote
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const fuzzDir = dirname(fileURLToPath(import.meta.url))
const fixtures = join(fuzzDir, '..', '__test__', 'fixtures', 'dialects')
const DIALECTS = ['openai', 'openai-responses', 'anthropic', 'langchain', 'pydantic-ai', 'mcp', 'ai-sdk', 'gemini']

let written = 0
for (const dialect of DIALECTS) {
  const target = `dialect_${dialect.replaceAll('-', '_')}`
  const out = join(fuzzDir, 'corpus', target)
  mkdirSync(out, { recursive: true })
  for (const f of readdirSync(out)) if (f.startsWith('seed-fx-')) rmSync(join(out, f))
  const dir = join(fixtures, dialect)
  const cases = statSync(dir, { throwIfNoEntry: false })?.isDirectory() ? readdirSync(dir).filter((f) => f.endsWith('.json')).sort() : []
  for (const f of cases) {
    const fx = JSON.parse(readFileSync(join(dir, f), 'utf8'))
    const text = typeof fx.payloadText === 'string' ? fx.payloadText : JSON.stringify(fx.payload)
    if (typeof text !== 'string') throw new Error(`${dialect}/${f}: neither payloadText nor payload`)
    writeFileSync(join(out, `seed-fx-${f.slice(0, -'.json'.length)}`), text)
    written++
  }
  const total = readdirSync(out).filter((f) => f.startsWith('seed-')).length
  console.log(`${target}: ${cases.length} from fixtures, ${total} seeds in all`)
}

// Stream seeds: every __test__/fixtures/streams/<dialect>/<case>.json becomes
// fuzz/corpus/stream_<dialect>/seed-fx-<case>: its events, one per line (strings as they are,
// objects as compact JSON), which is how the stream targets split their input.
const streams = join(fuzzDir, '..', '__test__', 'fixtures', 'streams')
for (const dialect of ['openai', 'openai-responses', 'anthropic', 'ai-sdk', 'gemini']) {
  const target = `stream_${dialect.replaceAll('-', '_')}`
  const out = join(fuzzDir, 'corpus', target)
  mkdirSync(out, { recursive: true })
  for (const f of readdirSync(out)) if (f.startsWith('seed-fx-')) rmSync(join(out, f))
  const dir = join(streams, dialect)
  const cases = statSync(dir, { throwIfNoEntry: false })?.isDirectory() ? readdirSync(dir).filter((f) => f.endsWith('.json')).sort() : []
  for (const f of cases) {
    const fx = JSON.parse(readFileSync(join(dir, f), 'utf8'))
    if (!Array.isArray(fx.events)) throw new Error(`streams/${dialect}/${f}: no events`)
    const lines = fx.events.map((e) => (typeof e === 'string' ? e : JSON.stringify(e)))
    writeFileSync(join(out, `seed-fx-${f.slice(0, -'.json'.length)}`), lines.join('\n'))
    written++
  }
  console.log(`${target}: ${cases.length} from fixtures`)
}
console.log(`wrote ${written} seeds`)
