/**
 * `gate.guard` on whole model turns against the hand-written pipeline (bench/guard-peer.ts:
 * JSON.parse + a walk of the calls + ajv 8 + feedback messages), on the same two three-call turns
 * (bench/corpus/turns/, raw response text), with tinybench.
 *
 *   npx tsx bench/guard.bench.ts            # full run (~20 s)
 *   npx tsx bench/guard.bench.ts --quick    # shorter tinybench (smoke test)
 *
 * Env override: BENCH_TIME (tinybench ms per task, default 2000; --quick 300).
 *
 * Order of work: both sides answer each turn and their decisions are asserted equal (calls,
 * outcomes, allowed arguments, payload with repairs written back, feedback shape) — the run stops
 * if they differ; then every side is timed on the same text. Figures go to stdout and to
 * bench/results/guard.json.
 */
import { readFileSync } from 'node:fs'
import { arch, cpus, platform } from 'node:os'
import { join } from 'node:path'
import { Bench } from 'tinybench'

import { makeTurnPeer, type PeerTurn } from './guard-peer.js'
import { fmt, here, lpad, num, pad, run, writeResult } from './harness.js'
import { deepEqual, type PeerConfig } from './peer.js'
import { loadPackage } from './package.js'

const TB_TIME = num('BENCH_TIME', 2000, 300)
/** The issue's target: one three-call turn through `gate.guard`, p50. */
const TARGET_P50_NS = 10_000

type Dialect = 'openai' | 'anthropic'
interface TurnCase { dialect: Dialect; file: string; expect: string[] }
const TURNS: TurnCase[] = [
  { dialect: 'openai', file: 'openai-chat.json', expect: ['passed', 'repaired', 'rejected'] },
  { dialect: 'anthropic', file: 'anthropic-message.json', expect: ['passed', 'repaired', 'rejected'] },
]

interface ReportLike {
  calls: { callId: string; tool: string; outcome: string; arguments?: Record<string, unknown>; message?: string }[]
  allowed: { callId: string; tool: string; arguments: Record<string, unknown> }[]
  payload: unknown
  feedback: unknown[]
}

/** Messages masked (the two sides word refusals differently) and OpenAI `arguments` strings parsed. */
function normalize(v: unknown, messages: Set<string>): unknown {
  if (typeof v === 'string') return messages.has(v) ? '<message>' : v
  if (Array.isArray(v)) return v.map((x) => normalize(x, messages))
  if (v === null || typeof v !== 'object') return v
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, k === 'arguments' && typeof x === 'string' ? JSON.parse(x) : normalize(x, messages)]))
}

/** Why the two answers differ, or '' when they decide the same. */
function difference(t: ReportLike, p: PeerTurn, expect: string[]): string {
  const key = (r: { calls: { callId: string; tool: string; outcome: string }[] }) => r.calls.map((c) => `${c.callId} ${c.tool} ${c.outcome}`)
  if (!deepEqual(t.calls.map((c) => c.outcome), expect)) return `toolgate outcomes ${JSON.stringify(t.calls.map((c) => c.outcome))}, corpus expects ${JSON.stringify(expect)}`
  if (!deepEqual(key(t), key(p))) return `calls: toolgate ${JSON.stringify(key(t))} vs peer ${JSON.stringify(key(p))}`
  if (!deepEqual(t.allowed, p.allowed)) return `allowed calls differ: ${JSON.stringify(t.allowed)} vs ${JSON.stringify(p.allowed)}`
  const messages = new Set([...t.calls, ...p.calls].flatMap((c) => (c.message ? [c.message] : [])))
  if (!deepEqual(normalize(t.payload, messages), normalize(p.payload, messages))) return 'payloads (repairs written back) differ'
  if (!deepEqual(normalize(t.feedback, messages), normalize(p.feedback, messages))) return `feedback differs: ${JSON.stringify(normalize(t.feedback, messages))} vs ${JSON.stringify(normalize(p.feedback, messages))}`
  return ''
}

interface Stat { meanNs: number; p50Ns: number; p99Ns: number; rme: number; samples: number }

async function main(): Promise<void> {
  const config = JSON.parse(readFileSync(join(here, 'corpus', 'tools.json'), 'utf8')) as PeerConfig
  const texts = TURNS.map((t) => readFileSync(join(here, 'corpus', 'turns', t.file), 'utf8').trim())
  const { toolgate, note } = loadPackage()
  console.log(`package: ${note}`)
  const { ToolGate } = toolgate
  const gate = new ToolGate(config as never)
  const peer = makeTurnPeer(config)
  // Reference only: the napi call under ToolGate.guard (the report as its JSON wire string).
  const b = (await import('../binding/index.js')) as unknown as { BindingGate: new (json: string) => { handle: number }; guard(h: number, d: string, p: string, o: string): string }
  const handle = new b.BindingGate(JSON.stringify(config)).handle

  console.log(`toolgate guard benchmark — node ${process.version} ${platform()}-${arch()}, ${cpus()[0]?.model ?? 'unknown cpu'}`)
  console.log(`turns: ${TURNS.map((t, i) => `${t.file} (${t.dialect}, ${texts[i].length} bytes, 3 calls)`).join('; ')}`)
  console.log('')
  console.log('== Decisions (asserted equal before timing) ==')
  const calls: number[] = []
  for (const [i, t] of TURNS.entries()) {
    const report = gate.guard(texts[i], { dialect: t.dialect }) as unknown as ReportLike
    const why = difference(report, peer[t.dialect](texts[i]), t.expect)
    console.log(`${pad(t.file, 24)} ${report.calls.map((c) => `${c.tool}: ${c.outcome}`).join(', ')}  ${why === '' ? 'peer: same' : `PEER DIFFERS: ${why}`}`)
    if (why !== '') process.exit(1)
    calls.push(report.calls.length)
  }

  const bench = new Bench({ name: 'guard, one turn', time: TB_TIME, warmupTime: Math.min(500, TB_TIME) })
  let sink = 0
  for (const [i, t] of TURNS.entries()) {
    const text = texts[i]
    // the peer hands back its payload with repairs written in, so toolgate's is read too
    bench.add(`${t.dialect}: toolgate guard`, () => {
      const r = gate.guard(text, { dialect: t.dialect })
      sink += r.calls.length + (r.payload === null ? 0 : 1)
    })
    bench.add(`${t.dialect}: ref: guard, payload not read`, () => { sink += gate.guard(text, { dialect: t.dialect }).calls.length })
    bench.add(`${t.dialect}: JSON.parse + ajv pipeline`, () => { sink += peer[t.dialect](text).calls.length })
    bench.add(`${t.dialect}: ref: raw native guard`, () => { sink += b.guard(handle, t.dialect, text, '').length })
  }
  await bench.run()
  const stats: Record<string, Stat> = {}
  for (const task of bench.tasks) {
    const r = task.result
    if (r.state !== 'completed' && r.state !== 'aborted-with-statistics') throw new Error(`${task.name}: ${r.state}`)
    stats[task.name] = { meanNs: r.latency.mean * 1e6, p50Ns: (r.latency.p50 ?? NaN) * 1e6, p99Ns: (r.latency.p99 ?? NaN) * 1e6, rme: r.latency.rme, samples: r.latency.samplesCount }
  }

  console.log('')
  console.log(`== Time per turn and per call (tinybench, ${TB_TIME} ms per task; ns) ==`)
  console.log(`${pad('', 42)} ${lpad('mean', 8)} ${lpad('p50', 8)} ${lpad('p99', 8)} ${lpad('mean/call', 10)} ${lpad('p50/call', 9)} ${lpad('±rme', 7)}`)
  for (const [name, s] of Object.entries(stats)) {
    const n = calls[TURNS.findIndex((t) => name.startsWith(`${t.dialect}:`))]
    console.log(`${pad(name, 42)} ${lpad(fmt(s.meanNs), 8)} ${lpad(fmt(s.p50Ns), 8)} ${lpad(fmt(s.p99Ns), 8)} ${lpad(fmt(s.meanNs / n), 10)} ${lpad(fmt(s.p50Ns / n), 9)} ${lpad(fmt(s.rme, 1) + '%', 7)}`)
  }
  console.log('')
  const ratios: Record<string, { mean: number; p50: number; p50TargetMet: boolean }> = {}
  for (const t of TURNS) {
    const tg = stats[`${t.dialect}: toolgate guard`]
    const pr = stats[`${t.dialect}: JSON.parse + ajv pipeline`]
    const nat = stats[`${t.dialect}: ref: raw native guard`]
    ratios[t.dialect] = { mean: tg.meanNs / pr.meanNs, p50: tg.p50Ns / pr.p50Ns, p50TargetMet: tg.p50Ns < TARGET_P50_NS }
    console.log(`${pad(t.dialect, 10)} ratio toolgate / ajv pipeline: mean ${fmt(ratios[t.dialect].mean, 2)}, p50 ${fmt(ratios[t.dialect].p50, 2)}; ` +
      `p50 ${fmt(tg.p50Ns)} ns per turn (target < ${TARGET_P50_NS} ns: ${ratios[t.dialect].p50TargetMet ? 'met' : 'NOT met'}); ` +
      `TypeScript layer ${fmt(tg.p50Ns - nat.p50Ns)} ns of it (p50)`)
  }

  const out = {
    generatedAt: new Date().toISOString(),
    environment: { node: process.version, platform: platform(), arch: arch(), cpu: cpus()[0]?.model ?? null },
    turns: TURNS.map((t, i) => ({ file: t.file, dialect: t.dialect, bytes: texts[i].length, calls: calls[i] })),
    tinybench: { timeMsPerTask: TB_TIME, tasks: stats },
    ratios,
    targetP50NsPerTurn: TARGET_P50_NS,
  }
  writeResult('guard', out, sink)
}

run(main)
