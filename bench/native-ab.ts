/**
 * Two builds of the native addon side by side in one process, interleaved: the raw binding calls
 * (no TypeScript layer) on the MCP corpus — `check` over every call of bench/corpus/mcp with the
 * prepared caller, `guard` of the three-call OpenAI turn of bench/mcp.bench.ts, and an unknown
 * tool ("did you mean") on the scale bench's gate of 10,000 tools. For a
 * before/after of a native change on this noisy VM, where two separate runs differ by 20%.
 *
 *   npx tsx bench/native-ab.ts BEFORE.node [AFTER.node]   # AFTER defaults to binding/'s addon
 *
 * A build of another commit: `git worktree add --detach /tmp/before <commit>`, then in it
 * `CARGO_TARGET_DIR=/tmp/before-target cargo build --release -p toolgate-node` and pass
 * `/tmp/before-target/release/libtoolgate_node.so` (copy it to a name ending in `.node`).
 */
import { copyFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { loadCorpus, scaledConfig, turnCompletion } from './corpus/mcp/corpus.js'
import { quantile } from './timing.js'

const [before, after = resolve(__dirname, '..', 'binding', 'toolgate.linux-x64-gnu.node')] = process.argv.slice(2)
if (before === undefined) {
  console.error('usage: npx tsx bench/native-ab.ts BEFORE.node [AFTER.node]')
  process.exit(2)
}
// Node loads an addon by its file name ending in `.node`
const dir = mkdtempSync(join(tmpdir(), 'toolgate-ab-'))
const load = (file: string, name: string) => {
  const to = join(dir, `${name}.node`)
  copyFileSync(file, to)
  return require(to)
}
const corpus = loadCorpus()
const completion = turnCompletion()
const config = JSON.stringify(corpus.config)
const tenThousand = JSON.stringify(scaledConfig(corpus, 10_000))
const unknownCase = corpus.cases.find((k) => k.id === 'unknown-typo')!
const keep: unknown[] = []
/** The raw exports this bench calls (binding/index.d.ts, as of both builds). */
interface Addon {
  BindingGate: new (config: string, state: null, learning: boolean) => { handle: number }
  BindingCaller: new (ctx: string) => { handle: number }
  guard(handle: number, dialect: string, payload: string, options: string): string
  check(handle: number, tool: string, args: string, caller?: number): string
}
const side = (m: Addon) => {
  const gate = new m.BindingGate(config, null, false)
  const callers = Object.fromEntries(Object.entries(corpus.callers).map(([k, c]) => [k, new m.BindingCaller(JSON.stringify(c))]))
  keep.push(gate, callers)
  const dev = `{"caller":${callers.developer.handle}}`
  const cases = corpus.cases.map((k) => [k.tool, k.args, callers[k.caller].handle] as const)
  const big = new m.BindingGate(tenThousand, null, false)
  const bigCaller = new m.BindingCaller(JSON.stringify(corpus.callers.developer))
  keep.push(big, bigCaller)
  return {
    unknown: () => m.check(big.handle, unknownCase.tool, unknownCase.args, bigCaller.handle),
    guard: () => m.guard(gate.handle, 'openai', completion, dev),
    check: () => {
      for (const [tool, args, c] of cases) m.check(gate.handle, tool, args, c)
    },
  }
}
const median = (xs: number[]): number => quantile(Float64Array.from(xs).sort(), 0.5)
const sides = { before: side(load(before, 'before')), after: side(load(after, 'after')) }
const rounds = Number(process.env.BENCH_ROUNDS) > 0 ? Number(process.env.BENCH_ROUNDS) : 60
const samples: Record<string, number[]> = {}
const time = (label: string, reps: number, per: number, f: () => unknown) => {
  const t = process.hrtime.bigint()
  for (let i = 0; i < reps; i++) f()
  ;(samples[label] ??= []).push(Number(process.hrtime.bigint() - t) / reps / per)
}
for (let r = 0; r < rounds; r++) {
  for (const [name, s] of Object.entries(sides)) {
    time(`${name}: guard, ns per turn`, 300, 1, s.guard)
    time(`${name}: check, ns per call`, 30, corpus.cases.length, s.check)
    time(`${name}: unknown tool at 10,000 tools, ns`, 10, 1, s.unknown)
  }
}
console.log(`${rounds} interleaved rounds; medians of the per-round means`)
for (const what of ['guard, ns per turn', 'check, ns per call', 'unknown tool at 10,000 tools, ns']) {
  const b = median(samples[`before: ${what}`])
  const a = median(samples[`after: ${what}`])
  console.log(`${what.padEnd(34)} before ${b.toFixed(0).padStart(7)}  after ${a.toFixed(0).padStart(7)}  after/before ${(a / b).toFixed(3)}`)
}
