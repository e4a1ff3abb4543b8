/**
 * `gate.check` against the hand-written baseline (JSON.parse + ajv 8 + a role Map), on the same
 * corpus of realistic tool calls (bench/corpus/).
 *
 *   npx tsx bench/check.bench.ts              # full run (~1 min)
 *   npx tsx bench/check.bench.ts --quick      # fewer rounds, shorter tinybench (smoke test)
 *   npx tsx bench/check.bench.ts --peer-only  # corpus against the baseline only (no native binding)
 *
 * Env overrides: BENCH_WARMUP (corpus passes per side, default 2000), BENCH_ROUNDS (default 200),
 * BENCH_PASSES (corpus passes per side per round for the mean, default 5), BENCH_TIME (tinybench ms
 * per task, default 2000).
 *
 * Order of work: correctness first (every case, both sides, against the corpus' expectations),
 * then timing of every case on both sides — including the cases the baseline gets wrong, so both
 * sides always do the same calls. Figures go to stdout and to bench/results/check.json.
 */
import { readFileSync } from 'node:fs'
import { arch, cpus, platform } from 'node:os'
import { join } from 'node:path'
import { fmt, here, lpad, num, pad, run, writeResult } from './harness.js'
import { deepEqual, makePeer, type PeerConfig } from './peer.js'
import { quantile, timerOverheadNs } from './timing.js'
import { loadPackage } from './package.js'

// ---------------------------------------------------------------------------------------------
// Corpus

type Outcome = 'passed' | 'repaired' | 'rejected'
type Category = 'passing' | 'repairable' | 'broken'
const CATEGORIES: Category[] = ['passing', 'repairable', 'broken']
const CATEGORY_OF: Record<Outcome, Category> = { passed: 'passing', repaired: 'repairable', rejected: 'broken' }

/** One corpus case (see bench/corpus/README.md). */
interface Case {
  id: string
  tool: string
  args: string
  expect: { outcome: Outcome; arguments?: Record<string, unknown>; flags?: string[]; reason?: string }
  note: string
}

/** The part of a toolgate Verdict the harness reads. */
interface VerdictLike {
  outcome: string
  allowed?: boolean
  arguments?: Record<string, unknown>
  argumentsJson?: string
  flags?: { code: string; path: string }[]
  reason?: string
  message?: string
}

/** What either side answered for one case, normalised for comparison. */
interface Answer {
  outcome: string
  arguments?: Record<string, unknown>
  threw?: string
  verdict?: VerdictLike
}

type CheckFn = (tool: string, args: string) => { outcome: string }

const PEER_ONLY = process.argv.slice(2).includes('--peer-only')
const WARMUP = num('BENCH_WARMUP', 2000, 200)
const ROUNDS = num('BENCH_ROUNDS', 200, 20)
const PASSES = num('BENCH_PASSES', 5, 2)
const TB_TIME = num('BENCH_TIME', 2000, 300)

// ---------------------------------------------------------------------------------------------
// Small helpers

const short = (v: unknown, max = 90) => {
  const s = JSON.stringify(v) ?? String(v)
  return s.length > max ? s.slice(0, max - 1) + '…' : s
}
const sortedCodes = (codes: string[]) => [...codes].sort()

function summarize(samples: number[], overhead: number) {
  const a = Float64Array.from(samples, (x) => Math.max(0, x - overhead)).sort()
  let sum = 0
  for (const x of a) sum += x
  return { n: a.length, mean: sum / a.length, p50: quantile(a, 0.5), p90: quantile(a, 0.9), p99: quantile(a, 0.99), max: a[a.length - 1] }
}

function answer(fn: () => { outcome: string; arguments?: Record<string, unknown> }): Answer {
  try {
    const r = fn()
    return { outcome: r.outcome, arguments: r.arguments, verdict: r as VerdictLike }
  } catch (e) {
    return { outcome: 'threw', threw: e instanceof Error ? `${e.name}: ${e.message}` : String(e) }
  }
}

/** Outcome + arguments against the expectation: the criterion both sides are scored on. */
function judge(c: Case, a: Answer): { ok: boolean; why: string } {
  if (a.threw !== undefined) return { ok: false, why: `threw ${a.threw}` }
  if (a.outcome !== c.expect.outcome) {
    const got = a.outcome === 'rejected' || a.arguments === undefined ? a.outcome : `${a.outcome} ${short(a.arguments, 70)}`
    return { ok: false, why: `${got}; expected ${c.expect.outcome}` }
  }
  if (a.outcome !== 'rejected') {
    const want = c.expect.arguments ?? (JSON.parse(c.args) as Record<string, unknown>)
    if (!deepEqual(a.arguments, want)) return { ok: false, why: `arguments ${short(a.arguments, 70)}; expected ${short(want, 70)}` }
  }
  return { ok: true, why: '' }
}

/**
 * Toolgate-only contract checks beyond outcome + arguments: flag codes, reason, `allowed`,
 * `argumentsJson` (the caller's own string when passed, else the repaired arguments), message.
 * Reported separately; they do not change the "handled correctly" score both sides share.
 */
function contractNotes(c: Case, a: Answer): string[] {
  const v = a.verdict
  if (v === undefined || a.outcome !== c.expect.outcome) return []
  const notes: string[] = []
  const allowed = v.outcome === 'passed' || v.outcome === 'repaired'
  if (v.allowed !== allowed) notes.push(`allowed=${String(v.allowed)}`)
  if (c.expect.flags !== undefined) {
    const got = sortedCodes((v.flags ?? []).map((f) => f.code))
    const want = sortedCodes(c.expect.flags)
    if (!deepEqual(got, want)) notes.push(`flags [${got.join(',')}], expected [${want.join(',')}]`)
  }
  if (c.expect.reason !== undefined && v.reason !== c.expect.reason) notes.push(`reason ${String(v.reason)}, expected ${c.expect.reason}`)
  if (allowed) {
    if (typeof v.argumentsJson !== 'string') notes.push('argumentsJson missing')
    else if (v.outcome === 'passed' && v.argumentsJson !== c.args) notes.push('argumentsJson is not the caller\'s own string')
    else {
      try {
        if (!deepEqual(JSON.parse(v.argumentsJson), v.arguments)) notes.push('argumentsJson differs from arguments')
      } catch {
        notes.push('argumentsJson is not JSON')
      }
    }
  } else if (v.outcome === 'rejected' && (typeof v.message !== 'string' || v.message.length === 0)) {
    notes.push('no message for the model')
  }
  return notes
}

// ---------------------------------------------------------------------------------------------

interface Side {
  key: 'toolgate' | 'peer' | 'peerBare' | 'native'
  label: string
  check: CheckFn
  /** Reference lines are timed for context only; ratios compare toolgate and peer. */
  reference?: boolean
}

async function main(): Promise<void> {
  const toolsConfig = JSON.parse(readFileSync(join(here, 'corpus', 'tools.json'), 'utf8')) as PeerConfig
  const cases = JSON.parse(readFileSync(join(here, 'corpus', 'cases.json'), 'utf8')) as Case[]
  const N = cases.length
  const categoryOf = cases.map((c) => CATEGORY_OF[c.expect.outcome])
  const idxByCat = Object.fromEntries(CATEGORIES.map((k) => [k, cases.flatMap((_, i) => (categoryOf[i] === k ? [i] : []))])) as Record<Category, number[]>
  const tools = cases.map((c) => c.tool)
  const argsList = cases.map((c) => c.args)

  // --- the sides ------------------------------------------------------------------------------
  const peer = makePeer(toolsConfig)
  const peerBare = makePeer(toolsConfig, { detectChanges: false })
  let gateCheck: CheckFn | undefined
  let nativeCheck: CheckFn | undefined
  if (!PEER_ONLY) {
    let mod: { ToolGate: new (config: unknown) => { check(tool: string, args: string): VerdictLike } }
    try {
      const loaded = loadPackage()
      console.log(`package: ${loaded.note}`)
      mod = loaded.toolgate as unknown as typeof mod
    } catch (e) {
      console.error('Cannot load toolgate from dist/ (is it built? run `npm install`, or `npm run build:native && npm run build:ts`).')
      console.error(`  ${e instanceof Error ? e.message : String(e)}`)
      console.error('Run with --peer-only to exercise the corpus against the ajv baseline alone.')
      process.exit(1)
    }
    const gate = new mod.ToolGate(toolsConfig)
    gateCheck = (tool, args) => gate.check(tool, args)
    // Reference only: the raw napi call under ToolGate (verdict as a JSON string, '' when passed),
    // to show how a toolgate call's time splits between the native side and the TypeScript layer.
    try {
      const b = (await import('../binding/index.js')) as unknown as {
        BindingGate: new (json: string) => { handle: number }
        check(handle: number, t: string, a: string): string
      }
      const raw = new b.BindingGate(JSON.stringify(toolsConfig))
      const handle = raw.handle
      nativeCheck = (tool, args) => ({ outcome: b.check(handle, tool, args) })
    } catch {
      nativeCheck = undefined
    }
  }
  const sides: Side[] = [
    ...(gateCheck ? [{ key: 'toolgate' as const, label: 'toolgate', check: gateCheck }] : []),
    { key: 'peer', label: 'JSON.parse + ajv + Map', check: peer },
  ]
  const tg = sides.find((s) => s.key === 'toolgate')
  const pr = sides.find((s) => s.key === 'peer')!

  console.log(`toolgate check benchmark — node ${process.version} ${platform()}-${arch()}, ${cpus()[0]?.model ?? 'unknown cpu'}`)
  console.log(`corpus: ${N} cases (${CATEGORIES.map((k) => `${idxByCat[k].length} ${k}`).join(', ')}), ${toolsConfig.tools.length} tools`)
  console.log('')

  // --- a. correctness ---------------------------------------------------------------------------
  console.log('== Correctness (outcome, and for allowed calls the exact arguments) ==')
  console.log('')
  const W = 30
  console.log(`${pad('case', W)} ${pad('expected', 9)} ${pad('toolgate', 13)} ${pad('ajv pipeline', 13)}`)
  console.log('-'.repeat(W + 38))
  const perCase = cases.map((c) => {
    const t = tg ? answer(() => tg.check(c.tool, c.args)) : undefined
    const p = answer(() => pr.check(c.tool, c.args))
    const tj = t ? judge(c, t) : undefined
    const pj = judge(c, p)
    const notes = t ? contractNotes(c, t) : []
    const cell = (a: Answer | undefined, j: { ok: boolean } | undefined) =>
      a === undefined || j === undefined ? '-' : `${pad(a.outcome, 9)} ${j.ok ? 'ok' : 'XX'}`
    console.log(`${pad(c.id, W)} ${pad(c.expect.outcome, 9)} ${pad(cell(t, tj), 13)} ${pad(cell(p, pj), 13)}${notes.length ? '  (flags/contract: see below)' : ''}`)
    return { c, t, p, tj, pj, notes }
  })
  const tgCorrect = perCase.filter((r) => r.tj?.ok).length
  const prCorrect = perCase.filter((r) => r.pj.ok).length
  console.log('')
  console.log(`handled correctly: toolgate ${tg ? `${tgCorrect}/${N}` : 'n/a (--peer-only)'}, ajv pipeline ${prCorrect}/${N}`)
  for (const k of CATEGORIES) {
    const rs = perCase.filter((r) => CATEGORY_OF[r.c.expect.outcome] === k)
    console.log(`  ${pad(k, 11)} toolgate ${tg ? `${rs.filter((r) => r.tj?.ok).length}/${rs.length}` : 'n/a'}, ajv pipeline ${rs.filter((r) => r.pj.ok).length}/${rs.length}`)
  }

  const differ = perCase.filter((r) => !tg || r.tj?.ok !== r.pj.ok || r.t?.outcome !== r.p.outcome || !deepEqual(r.t?.arguments, r.p.arguments))
  console.log('')
  console.log(tg ? `Cases where the two sides differ (${differ.length}):` : `Cases the ajv pipeline gets wrong (${perCase.filter((r) => !r.pj.ok).length}):`)
  for (const r of differ) {
    if (!tg && r.pj.ok) continue
    const parts: string[] = []
    if (r.tj && !r.tj.ok) parts.push(`toolgate ${r.tj.why}`)
    if (!r.pj.ok) parts.push(`ajv ${r.pj.why}`)
    if (parts.length === 0) parts.push(`both right, different answers: toolgate ${r.t?.outcome}, ajv ${r.p.outcome}`)
    console.log(`  ${pad(r.c.id, W)} ${parts.join(' | ')} — ${r.c.note}`)
  }
  const withNotes = perCase.filter((r) => r.notes.length > 0)
  if (tg) {
    console.log('')
    console.log(`toolgate flags/reason/contract checks: ${N - withNotes.length}/${N} clean`)
    for (const r of withNotes) console.log(`  ${pad(r.c.id, W)} ${r.notes.join('; ')}`)
    const wrong = perCase.filter((r) => r.tj && !r.tj.ok)
    if (wrong.length > 0) {
      console.log('')
      console.log('toolgate answers that disagree with the corpus (full verdicts):')
      for (const r of wrong) console.log(`  ${pad(r.c.id, W)} ${short(r.t?.verdict ?? r.t?.threw, 400)}`)
    }
  }
  console.log('')

  // --- b. timing --------------------------------------------------------------------------------
  // Every case is timed on every side, including those a side answers wrongly: the same calls,
  // in the same order, on both sides — a benchmark over unequal work would be worthless.
  const timed: Side[] = [
    ...sides,
    { key: 'peerBare', label: 'ref: ajv pipeline, no passed/repaired detection', check: peerBare, reference: true },
    ...(nativeCheck ? [{ key: 'native' as const, label: 'ref: raw binding check (no Verdict object)', check: nativeCheck, reference: true }] : []),
  ]
  let sink = 0
  const passOnce = (check: CheckFn) => {
    for (let i = 0; i < N; i++) sink += check(tools[i], argsList[i]).outcome.length
  }

  console.log(`== Timing: warm-up ${WARMUP} corpus passes per side, then ${ROUNDS} interleaved rounds ==`)
  const overhead = timerOverheadNs()
  for (const s of timed) for (let w = 0; w < WARMUP; w++) passOnce(s.check)

  const bulkNs: Record<string, Record<Category, number>> = {}
  const perCall: Record<string, number[][]> = {}
  for (const s of timed) {
    bulkNs[s.key] = { passing: 0, repairable: 0, broken: 0 }
    perCall[s.key] = cases.map(() => [])
  }
  for (let round = 0; round < ROUNDS; round++) {
    // Rotate which side goes first so drift (thermal, GC, JIT) does not favour one side.
    const order = timed.map((_, i) => timed[(i + round) % timed.length])
    // Mean: whole-corpus passes timed per category group, no per-call timer in the loop.
    for (const s of order) {
      const acc = bulkNs[s.key]
      for (let p = 0; p < PASSES; p++) {
        for (const k of CATEGORIES) {
          const idx = idxByCat[k]
          const t0 = process.hrtime.bigint()
          for (let j = 0; j < idx.length; j++) sink += s.check(tools[idx[j]], argsList[idx[j]]).outcome.length
          acc[k] += Number(process.hrtime.bigint() - t0)
        }
      }
    }
    // Percentiles: one timer pair around each individual call.
    for (const s of order) {
      const samples = perCall[s.key]
      for (let i = 0; i < N; i++) {
        const t0 = process.hrtime.bigint()
        const r = s.check(tools[i], argsList[i])
        const t1 = process.hrtime.bigint()
        sink += r.outcome.length
        samples[i].push(Number(t1 - t0))
      }
    }
  }

  const stats: Record<string, {
    meanNsPerCall: number
    byCategory: Record<Category, number>
    perCall?: ReturnType<typeof summarize>
  }> = {}
  for (const s of timed) {
    const b = bulkNs[s.key]
    const total = b.passing + b.repairable + b.broken
    const byCategory = Object.fromEntries(CATEGORIES.map((k) => [k, b[k] / (ROUNDS * PASSES * idxByCat[k].length)])) as Record<Category, number>
    stats[s.key] = {
      meanNsPerCall: total / (ROUNDS * PASSES * N),
      byCategory,
      perCall: summarize(perCall[s.key].flat(), overhead),
    }
  }

  console.log(`timer overhead (median empty hrtime.bigint pair): ${fmt(overhead)} ns — subtracted from per-call samples`)
  console.log('')
  const LW = 48
  console.log(`${pad('', LW)} ${lpad('mean ns/call', 12)} ${lpad('p50', 8)} ${lpad('p90', 8)} ${lpad('p99', 8)} ${lpad('max', 9)}`)
  for (const s of timed) {
    const st = stats[s.key]
    const pc = st.perCall
    console.log(`${pad(s.label, LW)} ${lpad(fmt(st.meanNsPerCall), 12)} ${lpad(pc ? fmt(pc.p50) : '-', 8)} ${lpad(pc ? fmt(pc.p90) : '-', 8)} ${lpad(pc ? fmt(pc.p99) : '-', 8)} ${lpad(pc ? fmt(pc.max) : '-', 9)}`)
  }
  console.log('')
  console.log('mean ns per call by category:')
  console.log(`${pad('', LW)} ${CATEGORIES.map((k) => lpad(k, 11)).join(' ')}`)
  for (const s of timed) console.log(`${pad(s.label, LW)} ${CATEGORIES.map((k) => lpad(fmt(stats[s.key].byCategory[k]), 11)).join(' ')}`)

  let ratios: { mean: number; p50: number; byCategory: Record<Category, number> } | undefined
  if (tg) {
    const a = stats.toolgate
    const b = stats.peer
    ratios = {
      mean: a.meanNsPerCall / b.meanNsPerCall,
      p50: a.perCall!.p50 / b.perCall!.p50,
      byCategory: Object.fromEntries(CATEGORIES.map((k) => [k, a.byCategory[k] / b.byCategory[k]])) as Record<Category, number>,
    }
    console.log('')
    console.log(`ratio toolgate / ajv pipeline, mean: ${fmt(ratios.mean, 3)}  (target <= 1.0: ${ratios.mean <= 1 ? 'met' : 'NOT met'})`)
    console.log(`ratio toolgate / ajv pipeline, p50:  ${fmt(ratios.p50, 3)}`)
    console.log(`ratio by category: ${CATEGORIES.map((k) => `${k} ${fmt(ratios!.byCategory[k], 3)}`).join(', ')}`)
    console.log(`(reference: toolgate / ajv pipeline without passed/repaired detection, mean: ${fmt(a.meanNsPerCall / stats.peerBare.meanNsPerCall, 3)})`)
    if (stats.native) {
      console.log(`(reference: raw native call / ajv pipeline, mean: ${fmt(stats.native.meanNsPerCall / b.meanNsPerCall, 3)}; ` +
        `the TypeScript layer is ${fmt(a.meanNsPerCall - stats.native.meanNsPerCall)} ns of toolgate's ${fmt(a.meanNsPerCall)} ns mean)`)
    }
  }

  // Per-case medians: where each side spends its time.
  console.log('')
  console.log('per-case p50 ns/call:')
  const hasNative = perCall.native !== undefined
  console.log(`${pad('case', W)} ${lpad('toolgate', 9)} ${lpad('ajv', 9)} ${lpad('ratio', 7)}${hasNative ? ` ${lpad('ref: raw native', 16)}` : ''}`)
  const med = (xs: number[]) => quantile(Float64Array.from(xs, (x) => Math.max(0, x - overhead)).sort(), 0.5)
  const caseP50 = cases.map((c, i) => {
    const t = tg ? med(perCall.toolgate[i]) : NaN
    const p = med(perCall.peer[i])
    const n = hasNative ? med(perCall.native[i]) : NaN
    console.log(`${pad(c.id, W)} ${lpad(tg ? fmt(t) : '-', 9)} ${lpad(fmt(p), 9)} ${lpad(tg ? fmt(t / p, 2) : '-', 7)}${hasNative ? ` ${lpad(fmt(n), 16)}` : ''}`)
    return { id: c.id, category: categoryOf[i], toolgateP50: tg ? t : null, peerP50: p, nativeP50: hasNative ? n : null }
  })

  // --- tinybench --------------------------------------------------------------------------------
  console.log('')
  console.log(`== tinybench (${TB_TIME} ms per task; one iteration = the whole corpus, ${N} calls) ==`)
  const { Bench } = await import('tinybench')
  const bench = new Bench({ name: 'check, whole corpus', time: TB_TIME, warmupTime: Math.min(500, TB_TIME) })
  const TB_TG = 'toolgate check (whole corpus)'
  const TB_PEER = 'JSON.parse + ajv + Map (whole corpus)'
  if (tg) bench.add(TB_TG, () => passOnce(tg.check), { async: false })
  bench.add(TB_PEER, () => passOnce(pr.check), { async: false })
  await bench.run()
  console.table(bench.table())
  const tinybench: Record<string, { meanNsPerIteration: number; p50NsPerIteration: number; meanNsPerCall: number; rme: number; samples: number } | { state: string }> = {}
  for (const task of bench.tasks) {
    const r = task.result
    if (r.state === 'completed' || r.state === 'aborted-with-statistics') {
      tinybench[task.name] = {
        meanNsPerIteration: r.latency.mean * 1e6,
        p50NsPerIteration: (r.latency.p50 ?? NaN) * 1e6,
        meanNsPerCall: (r.latency.mean * 1e6) / N,
        rme: r.latency.rme,
        samples: r.latency.samplesCount,
      }
    } else {
      tinybench[task.name] = { state: r.state }
    }
  }
  for (const [name, r] of Object.entries(tinybench)) {
    if ('meanNsPerCall' in r) console.log(`${pad(name, 40)} ${fmt(r.meanNsPerCall)} ns/call (mean), ±${fmt(r.rme, 2)}%`)
    else console.log(`${pad(name, 40)} ${r.state}`)
  }
  const tbT = tinybench[TB_TG]
  const tbP = tinybench[TB_PEER]
  const tbRatio = tbT && tbP && 'meanNsPerCall' in tbT && 'meanNsPerCall' in tbP ? tbT.meanNsPerCall / tbP.meanNsPerCall : undefined
  if (tbRatio !== undefined) console.log(`tinybench ratio toolgate / ajv pipeline, mean: ${fmt(tbRatio, 3)}`)

  // --- results file -----------------------------------------------------------------------------
  const out = {
    generatedAt: new Date().toISOString(),
    environment: { node: process.version, platform: platform(), arch: arch(), cpu: cpus()[0]?.model ?? null },
    corpus: { cases: N, tools: toolsConfig.tools.length, byCategory: Object.fromEntries(CATEGORIES.map((k) => [k, idxByCat[k].length])) },
    correctness: {
      criterion: 'outcome equals expect.outcome; for passed/repaired, arguments deep-equal expect.arguments',
      toolgate: tg ? { correct: tgCorrect, total: N } : null,
      peer: { correct: prCorrect, total: N },
      cases: perCase.map((r) => ({
        id: r.c.id,
        category: CATEGORY_OF[r.c.expect.outcome],
        expected: r.c.expect.outcome,
        toolgate: r.t ? { outcome: r.t.outcome, correct: r.tj!.ok, why: r.tj!.why || undefined, contractNotes: r.notes.length ? r.notes : undefined } : null,
        peer: { outcome: r.p.outcome, correct: r.pj.ok, why: r.pj.why || undefined },
      })),
    },
    timing: {
      warmupPasses: WARMUP,
      rounds: ROUNDS,
      passesPerRound: PASSES,
      timerOverheadNs: overhead,
      toolgate: stats.toolgate ?? null,
      peer: stats.peer,
      peerWithoutChangeDetection: stats.peerBare,
      nativeCallOnly: stats.native ?? null,
      ratioToolgateOverPeer: ratios ?? null,
      perCaseP50: caseP50,
    },
    tinybench: { timeMsPerTask: TB_TIME, callsPerIteration: N, tasks: tinybench, ratioMean: tbRatio ?? null },
  }
  writeResult('check', out, sink)
}

run(main)
