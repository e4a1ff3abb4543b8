/**
 * The headline benchmark: toolgate as an agent host calls it — argument text plus a caller,
 * with a policy — against the plain pipeline a Node developer writes by hand (`pipeline.ts`),
 * on the MCP corpus (bench/corpus/mcp/: 64 published tool schemas, a four-role policy, four
 * callers, realistic calls with known answers). Both sides measured in the same run.
 *
 *   npx tsx bench/mcp.bench.ts            # full run (~1 min)
 *   npx tsx bench/mcp.bench.ts --quick    # smoke run
 *
 * Env overrides: BENCH_ROUNDS (interleaved rounds, default 300), BENCH_TIME (tinybench ms per
 * task, default 1500). Sections, in order: correctness (every case, both sides); `check`
 * interleaved per-call timing (p50, mean, ratio); a three-call OpenAI turn through `guard` vs
 * JSON.parse + the pipeline per call; the floor (the native crossing with the call's text and
 * the `JSON.parse` the host needs, no decision) against the pipeline; flat 10 → 10,000 tools; compile time of 1,000 schemas;
 * tinybench on the check corpus and the turn. Figures go to stdout and bench/results/mcp.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { arch, cpus, loadavg, platform } from 'node:os'
import { join, resolve } from 'node:path'
import { Ajv } from 'ajv'
import { Bench } from 'tinybench'
import { loadCorpus, roleTools, scaledConfig, turnCompletion, type CorpusCaller, type CorpusCase } from './corpus/mcp/corpus.js'
import { deepEqual } from './peer.js'
import { loadPackage } from './package.js'
import { makePipeline } from './pipeline.js'

const here = typeof __dirname === 'string' ? __dirname : resolve('bench')
const QUICK = process.argv.includes('--quick')
const envNum = (name: string, dflt: number, quick: number): number => {
  const v = Number(process.env[name])
  return Number.isInteger(v) && v > 0 ? v : QUICK ? quick : dflt
}
const ROUNDS = envNum('BENCH_ROUNDS', 300, 40)
const TB_TIME = envNum('BENCH_TIME', 1500, 300)

type Gate = import('../src-ts/index').ToolGate
type Ctx = import('../src-ts/index').CallContext
type CheckSide = (k: CorpusCase) => unknown

const now = process.hrtime.bigint
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]
}
const fmt = (n: number, d = 0): string => (Number.isFinite(n) ? n.toFixed(d) : '—')
const pad = (s: string, n: number): string => s.padEnd(n)
const lpad = (s: string, n: number): string => s.padStart(n)

/** Median cost of an empty `hrtime.bigint()` pair, subtracted from per-call samples. */
function timerCost(): number {
  const xs: number[] = []
  for (let i = 0; i < 20000; i++) {
    const a = now()
    xs.push(Number(now() - a))
  }
  return median(xs)
}

/**
 * Interleaved per-call timing: each round runs every case once per side (first side rotating),
 * each call between its own timer pair, and one untimed-inside pass for the mean.
 */
function interleaved(sides: Record<string, CheckSide>, cases: CorpusCase[], rounds: number, empty: number): Record<string, { p50: number; p90: number; p99: number; mean: number }> {
  const names = Object.keys(sides)
  const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]))
  const means: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]))
  let sink = 0
  for (let r = 0; r < rounds; r++) {
    for (let j = 0; j < names.length; j++) {
      const name = names[(r + j) % names.length]
      const f = sides[name]
      const xs = samples[name]
      for (const k of cases) {
        const a = now()
        const v = f(k)
        const b = now()
        xs.push(Number(b - a) - empty)
        if (v !== undefined) sink++
      }
      const a = now()
      for (let p = 0; p < 4; p++) for (const k of cases) if (f(k) !== undefined) sink++
      means[name].push(Number(now() - a) / (4 * cases.length))
    }
  }
  if (sink === 0) console.log('')
  return Object.fromEntries(names.map((n) => [n, { p50: median(samples[n]), p90: pct(samples[n], 0.9), p99: pct(samples[n], 0.99), mean: median(means[n]) }]))
}

async function main(): Promise<void> {
  const corpus = loadCorpus()
  const { toolgate, note } = loadPackage()
  const { ToolGate } = toolgate
  const gate: Gate = new ToolGate(corpus.config as never)
  const pipeline = makePipeline(corpus.config.tools, roleTools(corpus.config))
  const callers = corpus.callers
  const cases = corpus.cases
  // a prepared caller per corpus caller, when this build has `gate.caller`
  const canPrepare = typeof (gate as unknown as { caller?: unknown }).caller === 'function'
  const prepared: Record<string, unknown> = {}
  if (canPrepare) for (const [k, c] of Object.entries(callers)) prepared[k] = (gate as unknown as { caller(c: Ctx): unknown }).caller(c as Ctx)

  console.log(`toolgate MCP-corpus benchmark — node ${process.version} ${platform()}-${arch()}, ${cpus()[0]?.model ?? 'unknown cpu'} ×${cpus().length}, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
  console.log(`package: ${note}`)
  console.log(`corpus: ${corpus.config.tools.length} tools from ${[...corpus.servers].map(([s, t]) => `${s} (${t.length})`).join(', ')}; ${corpus.config.policy.rules.length} rules; ${Object.keys(callers).length} callers; ${cases.length} calls`)

  // ---- correctness
  console.log('\n== Correctness (outcome, and the exact arguments when allowed) ==')
  let okGate = 0
  let okPipe = 0
  for (const k of cases) {
    const ctx = callers[k.caller] as Ctx
    const v = gate.check(k.tool, k.args, ctx)
    const flags = v.flags.map((f) => f.code).sort()
    const g = v.outcome === k.expect.outcome && (!v.allowed || deepEqual(v.arguments, k.expect.arguments)) &&
      (v.allowed ? deepEqual(flags, [...(k.expect.flags ?? [])].sort()) : v.reason === k.expect.reason)
    if (canPrepare) {
      const w = gate.check(k.tool, k.args, prepared[k.caller] as Ctx)
      if (JSON.stringify(w) !== JSON.stringify(v)) throw new Error(`${k.id}: a prepared caller answered differently: ${JSON.stringify(w)} vs ${JSON.stringify(v)}`)
    }
    const p = pipeline(k.tool, k.args, callers[k.caller])
    const want = k.expect.outcome === 'repaired' ? 'passed' : k.expect.outcome
    const q = p.outcome === want && (p.outcome !== 'passed' || deepEqual(p.arguments, k.expect.arguments))
    okGate += +g
    okPipe += +q
    if (!g || !q) console.log(`  ${pad(k.id, 30)} expected ${k.expect.outcome}${k.expect.reason ? ` (${k.expect.reason})` : ''}: ${g ? '' : `toolgate ${v.outcome} ${v.reason ?? ''}; `}${q ? '' : `pipeline ${p.outcome}${p.arguments ? ` ${JSON.stringify(p.arguments)}` : ''}`}`)
  }
  console.log(`handled correctly: toolgate ${okGate}/${cases.length}, plain pipeline ${okPipe}/${cases.length} (the pipeline cannot tell passed from repaired; its allowed calls count as right when the arguments are)`)

  // ---- check, interleaved
  const empty = timerCost()
  const ctxOf = (k: CorpusCase): Ctx => callers[k.caller] as Ctx
  const sides: Record<string, CheckSide> = {
    'toolgate check(tool, text, ctx)': (k) => gate.check(k.tool, k.args, ctxOf(k)),
  }
  if (canPrepare) sides['toolgate check(tool, text, caller)'] = (k) => gate.check(k.tool, k.args, prepared[k.caller] as Ctx)
  sides['plain pipeline'] = (k) => pipeline(k.tool, k.args, callers[k.caller] as CorpusCaller)
  for (let w = 0; w < (QUICK ? 200 : 2000); w++) for (const f of Object.values(sides)) for (const k of cases) f(k)
  const chk = interleaved(sides, cases, ROUNDS, empty)
  console.log(`\n== check: per call, ${ROUNDS} interleaved rounds × ${cases.length} calls (ns; empty timer pair ${fmt(empty)} ns subtracted) ==`)
  console.log(`${pad('', 36)} ${lpad('p50', 7)} ${lpad('p90', 7)} ${lpad('p99', 7)} ${lpad('mean', 7)}`)
  for (const [n, s] of Object.entries(chk)) console.log(`${pad(n, 36)} ${lpad(fmt(s.p50), 7)} ${lpad(fmt(s.p90), 7)} ${lpad(fmt(s.p99), 7)} ${lpad(fmt(s.mean), 7)}`)
  const pipeStat = chk['plain pipeline']
  const ratios: Record<string, { p50: number; mean: number }> = {}
  for (const [n, s] of Object.entries(chk)) {
    if (n === 'plain pipeline') continue
    ratios[n] = { p50: s.p50 / pipeStat.p50, mean: s.mean / pipeStat.mean }
    console.log(`ratio ${pad(n, 36)} / plain pipeline: p50 ${fmt(ratios[n].p50, 2)}, mean ${fmt(ratios[n].mean, 2)}  (target ≤ 1.0; p50 target ≤ 1500 ns)`)
  }

  // ---- guard: one OpenAI turn of three calls
  const completion = turnCompletion()
  const dev = callers.developer as Ctx
  const devPrepared = canPrepare ? prepared.developer : undefined
  const guardOpts = { dialect: 'openai' as const, ...dev }
  const report = gate.guard(completion, guardOpts)
  const peerTurn = (text: string): number => {
    const c = JSON.parse(text) as { choices: { message: { tool_calls: { function: { name: string; arguments: string } }[] } }[] }
    let allowed = 0
    for (const tc of c.choices[0].message.tool_calls) if (pipeline(tc.function.name, tc.function.arguments, callers.developer).outcome === 'passed') allowed++
    return allowed
  }
  console.log(`\n== guard: one OpenAI chat.completion (${completion.length} bytes), three calls, caller 'developer' ==`)
  console.log(`toolgate: ${report.calls.map((c) => `${c.tool} ${c.outcome}`).join(', ')}; pipeline allows ${peerTurn(completion)} of 3`)
  if (report.allowed.length !== peerTurn(completion)) throw new Error('guard and the pipeline disagree on the turn')
  const guardSides: Record<string, CheckSide> = { 'toolgate guard(text, {dialect, ...ctx})': () => gate.guard(completion, guardOpts).allowed.length }
  if (devPrepared !== undefined) guardSides['toolgate guard(text, {dialect, caller})'] = () => gate.guard(completion, { dialect: 'openai', caller: devPrepared } as never).allowed.length
  guardSides['JSON.parse + 3 × plain pipeline'] = () => peerTurn(completion)
  const one = [cases[0]]
  for (let w = 0; w < (QUICK ? 200 : 3000); w++) for (const f of Object.values(guardSides)) f(one[0])
  const grd = interleaved(guardSides, one, ROUNDS * 10, empty)
  console.log(`${pad('per turn (ns)', 42)} ${lpad('p50', 7)} ${lpad('p90', 7)} ${lpad('p99', 7)} ${lpad('mean', 7)}`)
  for (const [n, s] of Object.entries(grd)) console.log(`${pad(n, 42)} ${lpad(fmt(s.p50), 7)} ${lpad(fmt(s.p90), 7)} ${lpad(fmt(s.p99), 7)} ${lpad(fmt(s.mean), 7)}`)
  const gp = grd['JSON.parse + 3 × plain pipeline']
  for (const [n, s] of Object.entries(grd)) if (!n.startsWith('JSON')) console.log(`ratio ${pad(n, 42)} / peer: p50 ${fmt(s.p50 / gp.p50, 2)}, mean ${fmt(s.mean / gp.mean, 2)}  (target p50 ≤ 5000 ns, ratio ≤ 1.0)`)

  // ---- the floor: what any gate in a native addon pays before it decides anything
  // The raw binding's `check` on a gate handle that names nothing reads both strings into Rust
  // and answers a fixed short text: the crossing with this call's text, no decision. Add the
  // `JSON.parse` the host needs for `arguments` (the peer pays it too) and the gap to the peer is
  // what a 1.0× target leaves for the decision itself — the core's strict parse, schema, policy,
  // verdict — whose parse alone `cargo run --release -p toolgate-core --example mcp_timing` prints.
  const raw = require(resolve(here, '..', 'binding', 'index.js')) as { check(handle: number, tool: string, args: string, caller?: number): string }
  const NO_GATE = 0xffff_ffff
  const parseOr = (text: string): unknown => {
    try {
      return JSON.parse(text)
    } catch {
      return undefined
    }
  }
  if (!raw.check(NO_GATE, 'x', '{}', 0).includes('released')) throw new Error('floor: the raw check on no gate did not answer as a released gate')
  const floorSides: Record<string, CheckSide> = {
    'JSON.parse(args)': (k) => parseOr(k.args),
    'crossing, no decision': (k) => raw.check(NO_GATE, k.tool, k.args, 0),
    'floor: crossing + JSON.parse(args)': (k) => [raw.check(NO_GATE, k.tool, k.args, 0), parseOr(k.args)],
    'plain pipeline': (k) => pipeline(k.tool, k.args, callers[k.caller] as CorpusCaller),
  }
  const turnArgs = (JSON.parse(completion) as { choices: { message: { tool_calls: { function: { arguments: string } }[] } }[] }).choices[0].message.tool_calls.map((c) => c.function.arguments)
  const turnFloorSides: Record<string, CheckSide> = {
    'floor: completion across + 3 × JSON.parse(args)': () => [raw.check(NO_GATE, 'x', completion, 0), turnArgs.map((a) => JSON.parse(a) as unknown)],
    'JSON.parse + 3 × plain pipeline': () => peerTurn(completion),
  }
  for (let w = 0; w < (QUICK ? 200 : 2000); w++) {
    for (const f of Object.values(floorSides)) for (const k of cases) f(k)
    for (const f of Object.values(turnFloorSides)) f(one[0])
  }
  const flo = interleaved(floorSides, cases, ROUNDS, empty)
  const tflo = interleaved(turnFloorSides, one, ROUNDS * 10, empty)
  console.log(`\n== floor: before any decision (ns, p50; ${ROUNDS} interleaved rounds) ==`)
  for (const [n, s] of [...Object.entries(flo), ...Object.entries(tflo)]) console.log(`${pad(n, 52)} ${lpad(fmt(s.p50), 7)}`)
  const floor = { check: flo['floor: crossing + JSON.parse(args)'].p50 / flo['plain pipeline'].p50, turn: tflo['floor: completion across + 3 × JSON.parse(args)'].p50 / tflo['JSON.parse + 3 × plain pipeline'].p50 }
  console.log(`floor / peer: check ${fmt(floor.check, 2)}, turn ${fmt(floor.turn, 2)} — a 1.0× target leaves the decision ${fmt(flo['plain pipeline'].p50 - flo['floor: crossing + JSON.parse(args)'].p50)} ns a call, ${fmt(tflo['JSON.parse + 3 × plain pipeline'].p50 - tflo['floor: completion across + 3 × JSON.parse(args)'].p50)} ns a turn`)

  // ---- scale: 10 → 10,000 tools
  console.log('\n== scale: check with the developer caller, gates of 10 → 10,000 tools (ns, p50) ==')
  const scale: Record<string, { tools: number; pass: number; unknown: number; compileMs: number }> = {}
  const passCase = cases.find((k) => k.id === 'pass-fs-read-text')!
  const unknownCase = cases.find((k) => k.id === 'unknown-typo')!
  let scaleAnswers: string[] | undefined
  for (const n of [10, 100, 1000, 10000]) {
    const cfg = scaledConfig(corpus, n)
    const t0 = now()
    const g: Gate = new ToolGate(cfg as never)
    const compileMs = Number(now() - t0) / 1e6
    const ctx = canPrepare ? (g as unknown as { caller(c: Ctx): Ctx }).caller(dev) : dev
    const s = interleaved({ pass: (k) => g.check(k.tool, k.args, ctx) }, [passCase], QUICK ? 2000 : 20000, empty)
    const u = interleaved({ unknown: (k) => g.check(k.tool, k.args, ctx) }, [unknownCase], QUICK ? 500 : 5000, empty)
    // the same work at every size: the same answers (scaledConfig keeps the names they hold);
    // only the list of available tools after the suggestion grows, to its cap of 20 names
    const answers = [passCase, unknownCase].map((k) => {
      const v = g.check(k.tool, k.args, ctx)
      return JSON.stringify({ ...v, message: v.message?.split(' Call one of the available tools')[0] })
    })
    scaleAnswers ??= answers
    if (answers.join() !== scaleAnswers.join()) throw new Error(`scale: the gate of ${n} tools answered differently from the smallest: ${answers.join(' ')} vs ${scaleAnswers.join(' ')}`)
    scale[n] = { tools: n, pass: s.pass.p50, unknown: u.unknown.p50, compileMs }
    console.log(`${lpad(String(n), 6)} tools: known tool ${lpad(fmt(s.pass.p50), 6)}  unknown tool ("did you mean") ${lpad(fmt(u.unknown.p50), 8)}  compile ${fmt(compileMs, 1)} ms`)
  }
  console.log(`ratio 10,000 / 10 tools: known ${fmt(scale[10000].pass / scale[10].pass, 2)}, unknown ${fmt(scale[10000].unknown / scale[10].unknown, 2)} (target ≤ 1.2)`)

  // ---- compile: 1,000 schemas
  const thousand = scaledConfig(corpus, 1000)
  const tc: number[] = []
  const ta: number[] = []
  for (let i = 0; i < (QUICK ? 2 : 5); i++) {
    let t0 = now()
    new ToolGate({ version: 1, tools: thousand.tools } as never)
    tc.push(Number(now() - t0) / 1e6)
    t0 = now()
    const ajv = new Ajv({ coerceTypes: 'array', useDefaults: true, removeAdditional: 'failing', strict: false, logger: false })
    for (const t of thousand.tools) ajv.compile(t.inputSchema)
    ta.push(Number(now() - t0) / 1e6)
  }
  console.log(`\n== compile: 1,000 tool schemas (ms, median of ${tc.length}) ==\nnew ToolGate ${fmt(median(tc), 1)}  ajv.compile × 1000 ${fmt(median(ta), 1)}  (target ≤ 100 ms)`)

  // ---- tinybench
  const bench = new Bench({ name: 'mcp corpus', time: TB_TIME, warmupTime: Math.min(300, TB_TIME) })
  bench.add('toolgate check, whole corpus (ctx)', () => { for (const k of cases) gate.check(k.tool, k.args, ctxOf(k)) })
  if (canPrepare) bench.add('toolgate check, whole corpus (caller)', () => { for (const k of cases) gate.check(k.tool, k.args, prepared[k.caller] as Ctx) })
  bench.add('plain pipeline, whole corpus', () => { for (const k of cases) pipeline(k.tool, k.args, callers[k.caller]) })
  for (const [n, f] of Object.entries(guardSides)) bench.add(`turn: ${n}`, () => f(one[0]))
  await bench.run()
  console.log(`\n== tinybench (${TB_TIME} ms per task; corpus tasks per call, turn tasks per turn; ns) ==`)
  const tb: Record<string, { mean: number; p50: number }> = {}
  for (const t of bench.tasks) {
    const r = t.result
    if (r.state !== 'completed' && r.state !== 'aborted-with-statistics') continue
    const per = t.name.startsWith('turn') ? 1 : cases.length
    tb[t.name] = { mean: (r.latency.mean * 1e6) / per, p50: ((r.latency.p50 ?? NaN) * 1e6) / per }
    console.log(`${pad(t.name, 52)} mean ${lpad(fmt(tb[t.name].mean), 7)}  p50 ${lpad(fmt(tb[t.name].p50), 7)}`)
  }

  const out = { generatedAt: new Date().toISOString(), environment: { node: process.version, platform: platform(), arch: arch(), cpu: cpus()[0]?.model ?? null, load: loadavg(), package: note }, correct: { toolgate: okGate, pipeline: okPipe, of: cases.length }, check: chk, ratios, guard: grd, floor: { check: flo, turn: tflo, ratios: floor }, scale, compile1000: { toolgateMs: median(tc), ajvMs: median(ta) }, tinybench: tb }
  mkdirSync(join(here, 'results'), { recursive: true })
  writeFileSync(join(here, 'results', 'mcp.json'), JSON.stringify(out, null, 2) + '\n')
  console.log(`\nwrote ${join(here, 'results', 'mcp.json')}`)
}

main().catch((e: unknown) => {
  console.error(e)
  process.exit(1)
})
