/**
 * `guard` on a gate with a plugged policy engine: the MCP corpus (64 published tool schemas, its
 * four-role policy), the three-call OpenAI turn of `mcp.bench.ts` with the `developer` caller
 * prepared once, and a synchronous engine that delegates (it reads the request, as a real engine
 * would, and leaves the rules' answer). The engines' two steps run in one read of the payload:
 * the core keeps the turn decided up to the engines (by handle: `guardStep`) and the second step
 * runs only what comes after them.
 *
 * Sides, interleaved per turn in one process (p50 / p90 / mean, ns), then tinybench:
 * - `toolgate guard, engine` — this build;
 * - `previous build, engine` — with `BENCH_BASELINE_DIST=<worktree>/dist`, that build's package
 *   on this build's binding. It must speak this binding's exports: a build with `guardStep`
 *   (2fa4c2b or later). The builds before decided a turn in two passes through `guard`'s
 *   `engines` option, which the binding refuses since 28ebadb; fff1fdc was timed on 86a1e09's
 *   binding, the last that still took it (docs/performance.md "Engines");
 * - `toolgate guard, no engine` — the same gate without the engine, for reference;
 * - `JSON.parse + 3 × (plain pipeline + engine)` — the peer: what a Node developer writes, the
 *   same engine asked for each call the pipeline allows.
 *
 * Then one call through `check` (the turn's repaired call, `list_issues`), the same way: this
 * build with the engine, without it, and the peer (`JSON.parse` + plain pipeline + engine).
 *
 * `npm run build:ts && npx tsx bench/engines.bench.ts [--quick]`; figures to stdout and
 * bench/results/engines.json.
 */
import { arch, cpus, loadavg, platform } from 'node:os'
import { Bench } from 'tinybench'
import { loadCorpus, roleTools, turnCompletion } from './corpus/mcp/corpus.js'
import { fmt, lpad, num, pad, QUICK, run, writeResult } from './harness.js'
import { loadPackage } from './package.js'
import { makePipeline } from './pipeline.js'
import { quantile, timerOverheadNs } from './timing.js'

type Pkg = typeof import('../src-ts/index')
type EngineRequest = import('../src-ts/index').EngineRequest
type Side = () => number

const ROUNDS = num('BENCH_ROUNDS', 20000, 2000)
const TB_TIME = num('BENCH_TIME', 1500, 300)

/** A synchronous engine that reads the request and delegates: the work a real engine does to say "no opinion". */
let asked = 0
function engine(r: EngineRequest): 'delegate' | 'deny' {
  asked++
  return r.tool === 'forbidden' && r.context.subject === 'nobody' ? 'deny' : 'delegate'
}

/** Per-turn samples of each side, interleaved (the first side rotating each round). */
function interleaved(sides: Record<string, Side>, rounds: number, empty: number): Record<string, { p50: number; p90: number; mean: number }> {
  const names = Object.keys(sides)
  const samples = names.map(() => new Float64Array(rounds))
  const total = names.map(() => 0)
  let sink = 0
  for (let r = 0; r < rounds; r++) {
    for (let j = 0; j < names.length; j++) {
      const i = (r + j) % names.length
      const f = sides[names[i]]
      const a = process.hrtime.bigint()
      sink += f()
      const ns = Number(process.hrtime.bigint() - a) - empty
      samples[i][r] = ns
      total[i] += ns
    }
  }
  if (sink === 0) console.log('')
  return Object.fromEntries(
    names.map((n, i) => {
      const s = samples[i].sort()
      return [n, { p50: quantile(s, 0.5), p90: quantile(s, 0.9), mean: total[i] / rounds }]
    }),
  )
}

async function main(): Promise<void> {
  const corpus = loadCorpus()
  const { toolgate, note } = loadPackage()
  const baselineDist = process.env.BENCH_BASELINE_DIST
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const before = baselineDist === undefined ? undefined : (require(baselineDist) as Pkg)
  const completion = turnCompletion()
  const dev = corpus.callers.developer

  const gate = new toolgate.ToolGate(corpus.config as never, { engines: [engine] })
  const plain = new toolgate.ToolGate(corpus.config as never)
  const caller = gate.caller(dev as never)
  const plainCaller = plain.caller(dev as never)
  const old = before === undefined ? undefined : new before.ToolGate(corpus.config as never, { engines: [engine] })
  const oldCaller = old?.caller(dev as never)

  const pipeline = makePipeline(corpus.config.tools, roleTools(corpus.config))
  const peer = (): number => {
    const c = JSON.parse(completion) as { choices: { message: { tool_calls: { function: { name: string; arguments: string } }[] } }[] }
    let allowed = 0
    for (const tc of c.choices[0].message.tool_calls) {
      const p = pipeline(tc.function.name, tc.function.arguments, dev)
      if (p.outcome !== 'passed') continue
      if (engine({ tool: tc.function.name, action: tc.function.name, arguments: p.arguments as Record<string, unknown>, context: dev as never, rules: 'allow' }) !== 'deny') allowed++
    }
    return allowed
  }

  const sides: Record<string, Side> = {
    'toolgate guard, engine': () => gate.guard(completion, { dialect: 'openai', caller }).allowed.length,
  }
  if (old !== undefined) sides['previous build, engine'] = () => old.guard(completion, { dialect: 'openai', caller: oldCaller }).allowed.length
  sides['toolgate guard, no engine'] = () => plain.guard(completion, { dialect: 'openai', caller: plainCaller }).allowed.length
  sides['JSON.parse + 3 × (plain pipeline + engine)'] = peer

  console.log(`toolgate engines bench — node ${process.version} ${platform()}-${arch()}, ${cpus()[0]?.model ?? 'unknown cpu'} ×${cpus().length}, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
  console.log(`package: ${note}${baselineDist === undefined ? '' : `; previous build: ${baselineDist}`}`)
  // every side answers the same turn the same way before it is timed
  const reports = [gate.guard(completion, { dialect: 'openai', caller }), plain.guard(completion, { dialect: 'openai', caller: plainCaller })]
  if (old !== undefined) reports.push(old.guard(completion, { dialect: 'openai', caller: oldCaller }))
  const shapes = reports.map((r) => JSON.stringify(r.calls))
  if (new Set(shapes).size !== 1) throw new Error(`the sides answer the turn differently:\n${shapes.join('\n')}`)
  if (reports[0]!.allowed.length !== peer()) throw new Error('toolgate and the peer disagree on the turn')
  asked = 0
  gate.guard(completion, { dialect: 'openai', caller })
  console.log(`turn: ${completion.length} bytes, ${reports[0]!.calls.map((c) => `${c.tool} ${c.outcome}`).join(', ')}; the engine is asked ${asked} times a turn`)

  for (let w = 0; w < (QUICK ? 500 : 5000); w++) for (const f of Object.values(sides)) f()
  const empty = timerOverheadNs()
  const t = interleaved(sides, ROUNDS, empty)
  console.log(`\n== per turn, ${ROUNDS} interleaved rounds (ns; empty timer pair ${fmt(empty)} ns subtracted) ==`)
  console.log(`${pad('', 46)} ${lpad('p50', 7)} ${lpad('p90', 7)} ${lpad('mean', 7)}`)
  for (const [n, s] of Object.entries(t)) console.log(`${pad(n, 46)} ${lpad(fmt(s.p50), 7)} ${lpad(fmt(s.p90), 7)} ${lpad(fmt(s.mean), 7)}`)
  const peerStat = t['JSON.parse + 3 × (plain pipeline + engine)']!
  const ratios: Record<string, number> = {}
  for (const [n, s] of Object.entries(t)) {
    if (n.startsWith('JSON')) continue
    ratios[n] = s.p50 / peerStat.p50
    console.log(`ratio ${pad(n, 40)} / peer: p50 ${fmt(ratios[n], 2)}`)
  }
  if (t['previous build, engine'] !== undefined) console.log(`this build / previous build (engine): p50 ${fmt(t['toolgate guard, engine']!.p50 / t['previous build, engine'].p50, 2)}`)

  // ---- one call through check
  const call = (JSON.parse(completion) as { choices: { message: { tool_calls: { function: { name: string; arguments: string } }[] } }[] }).choices[0].message.tool_calls[1].function
  const checkSides: Record<string, Side> = {
    'toolgate check, engine': () => (gate.check(call.name, call.arguments, caller).allowed ? 1 : 0),
    'toolgate check, no engine': () => (plain.check(call.name, call.arguments, plainCaller).allowed ? 1 : 0),
    'plain pipeline + engine': () => {
      const p = pipeline(call.name, call.arguments, dev)
      return p.outcome === 'passed' && engine({ tool: call.name, action: call.name, arguments: p.arguments as Record<string, unknown>, context: dev as never, rules: 'allow' }) !== 'deny' ? 1 : 0
    },
  }
  const checked = [gate.check(call.name, call.arguments, caller), plain.check(call.name, call.arguments, plainCaller)]
  if (JSON.stringify(checked[0]) !== JSON.stringify(checked[1])) throw new Error(`check answers differently with the engine: ${JSON.stringify(checked)}`)
  for (let w = 0; w < (QUICK ? 2000 : 20000); w++) for (const f of Object.values(checkSides)) f()
  const c = interleaved(checkSides, ROUNDS * 5, empty)
  console.log(`\n== check of \`${call.name}\` (${checked[0]!.outcome}), per call, ${ROUNDS * 5} interleaved rounds (ns) ==`)
  console.log(`${pad('', 46)} ${lpad('p50', 7)} ${lpad('p90', 7)} ${lpad('mean', 7)}`)
  for (const [n, s] of Object.entries(c)) console.log(`${pad(n, 46)} ${lpad(fmt(s.p50), 7)} ${lpad(fmt(s.p90), 7)} ${lpad(fmt(s.mean), 7)}`)
  const cp = c['plain pipeline + engine']!
  for (const [n, s] of Object.entries(c)) if (!n.startsWith('plain')) console.log(`ratio ${pad(n, 40)} / peer: p50 ${fmt(s.p50 / cp.p50, 2)}`)

  const bench = new Bench({ name: 'engines', time: TB_TIME, warmupTime: Math.min(300, TB_TIME) })
  for (const [n, f] of Object.entries(sides)) bench.add(n, f)
  for (const [n, f] of Object.entries(checkSides)) bench.add(n, f)
  await bench.run()
  console.log(`\n== tinybench (${TB_TIME} ms per task; ns per turn) ==`)
  const tb: Record<string, { mean: number; p50: number }> = {}
  for (const task of bench.tasks) {
    const r = task.result
    if (r.state !== 'completed' && r.state !== 'aborted-with-statistics') continue
    tb[task.name] = { mean: r.latency.mean * 1e6, p50: (r.latency.p50 ?? NaN) * 1e6 }
    console.log(`${pad(task.name, 46)} mean ${lpad(fmt(tb[task.name].mean), 7)}  p50 ${lpad(fmt(tb[task.name].p50), 7)}`)
  }
  const tbPeer = tb['JSON.parse + 3 × (plain pipeline + engine)']
  if (tbPeer !== undefined) for (const [n, s] of Object.entries(tb)) if (n.includes('guard')) console.log(`tinybench ratio ${pad(n, 40)} / peer: p50 ${fmt(s.p50 / tbPeer.p50, 2)}`)

  writeResult('engines', { generatedAt: new Date().toISOString(), environment: { node: process.version, platform: platform(), arch: arch(), load: loadavg(), package: note, baseline: baselineDist ?? null }, perTurn: t, ratios, check: c, tinybench: tb }, 1)
}

run(main)
