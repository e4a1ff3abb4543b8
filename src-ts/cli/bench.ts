// `toolgate bench`: runs a corpus of recorded tool calls (DIR/tools.json, a toolgate config, and
// DIR/cases.json, the calls with the answer each must get; see bench/corpus/README.md) through
// `gate.check`, scores every answer, then times every call many times.
// Exit codes: 0 every case handled correctly, 1 some case handled wrongly, 2 usage or corpus error.
import { sameJson } from '../canonical-json'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

import { ToolGate } from '../gate'
import { ToolGateError } from '../errors'
import type { Verdict } from '../types'
import { formatFlag, parseOrHelp, UsageError, usageFailure, useColor } from './args'

/** The corpus shipped in the package (dist/cli → the package root's bench/corpus). */
export const SHIPPED_CORPUS = resolve(__dirname, '..', '..', 'bench', 'corpus')

const OUTCOMES = ['passed', 'repaired', 'rejected', 'denied', 'confirm']
/** Default timing budget when --iterations is not given (the run takes about this long). */
const TARGET_NS = 1e9

const USAGE = 'toolgate bench --corpus-dir DIR    run a corpus of recorded calls; correctness and latency'

const HELP = `toolgate bench — run a corpus of recorded tool calls: correctness, then latency

Usage:
  toolgate bench [--corpus-dir DIR] [--iterations N] [--format pretty|json]

Flags:
  --corpus-dir DIR   a directory holding tools.json (a toolgate config) and cases.json
                     ([{ id, tool, args, expect: { outcome, arguments?, flags?, reason? } }]);
                     default: the corpus shipped in the package (49 cases, 8 tools)
  --iterations N     how many times every case is timed (default: as many as fit in about 1 s)
  --format FORMAT    pretty (default) or json (one JSON object, for machines)
  --help, -h         this text

A case is handled correctly when the outcome equals expect.outcome and, when the case gives
expect.arguments, the arguments to run with deep-equal them (key order ignored). Flag codes and
the refusal reason, when given, are checked too and listed apart; they do not change the exit code.
Latency is per gate.check call (p50/p95/p99 over every timed call, timer cost subtracted).

Exit codes: 0 every case handled correctly, 1 some case handled wrongly, 2 usage or corpus error.

Examples:
  toolgate bench
  toolgate bench --corpus-dir ./my-corpus --iterations 5000
  toolgate bench --format json > bench.json
`

/** One corpus case (bench/corpus/README.md). */
interface Case {
  id: string
  tool: string
  args: string
  expect: { outcome: string; arguments?: unknown; flags?: string[]; reason?: string }
  note?: string
}

const short = (v: unknown, max = 80): string => {
  const s = JSON.stringify(v) ?? String(v)
  return s.length > max ? s.slice(0, max - 1) + '…' : s
}

/** Reads and checks DIR/cases.json; errors name the file and the case. */
function loadCases(dir: string, label: string): Case[] {
  const file = join(dir, 'cases.json')
  let raw: string
  try {
    raw = readFileSync(file, 'utf8')
  } catch (err) {
    throw new UsageError(`${label}: cannot read cases.json (${(err as Error).message})`)
  }
  let data: unknown
  try {
    data = JSON.parse(raw)
  } catch (err) {
    throw new UsageError(`${label}: cases.json is not JSON (${(err as Error).message})`)
  }
  if (!Array.isArray(data)) throw new UsageError(`${label}: cases.json must be an array of cases`)
  const ids = new Set<string>()
  data.forEach((c: unknown, i: number) => {
    const where = `${label}: cases.json[${i}]`
    if (c === null || typeof c !== 'object' || Array.isArray(c)) throw new UsageError(`${where}: expected a case object`)
    const o = c as Record<string, unknown>
    if (typeof o.id !== 'string' || o.id === '') throw new UsageError(`${where}: \`id\` must be a non-empty string`)
    if (ids.has(o.id)) throw new UsageError(`${where}: id \`${o.id}\` is used twice`)
    ids.add(o.id)
    if (typeof o.tool !== 'string') throw new UsageError(`${where} (${o.id}): \`tool\` must be a string`)
    if (typeof o.args !== 'string') throw new UsageError(`${where} (${o.id}): \`args\` must be a string (the raw text the model sent)`)
    const e = o.expect as Record<string, unknown> | undefined
    if (e === null || typeof e !== 'object' || Array.isArray(e)) throw new UsageError(`${where} (${o.id}): \`expect\` must be an object`)
    if (typeof e.outcome !== 'string' || !OUTCOMES.includes(e.outcome)) {
      throw new UsageError(`${where} (${o.id}): \`expect.outcome\` must be one of ${OUTCOMES.join(', ')}`)
    }
    if (e.flags !== undefined && (!Array.isArray(e.flags) || e.flags.some((f) => typeof f !== 'string'))) {
      throw new UsageError(`${where} (${o.id}): \`expect.flags\` must be an array of flag codes`)
    }
    if (e.reason !== undefined && typeof e.reason !== 'string') throw new UsageError(`${where} (${o.id}): \`expect.reason\` must be a string`)
  })
  return data as Case[]
}

/** Loads DIR/tools.json as a gate; errors name the flag and carry the ToolGateError message. */
function loadGate(dir: string, label: string): ToolGate {
  try {
    return ToolGate.fromFile(join(dir, 'tools.json'))
  } catch (err) {
    throw new UsageError(`${label}: ${err instanceof ToolGateError ? `${err.code}: ` : ''}${(err as Error).message}`)
  }
}

/** Why a verdict is wrong for a case (outcome + arguments), or undefined when it is right. */
function judge(c: Case, v: Verdict): string | undefined {
  const got = `${v.outcome}${v.reason ? ` (${v.reason})` : ''}`
  if (v.outcome !== c.expect.outcome) {
    return `got ${got}${v.allowed ? ` ${short(v.arguments)}` : ''}; expected ${c.expect.outcome}`
  }
  if (c.expect.arguments !== undefined && !sameJson(v.arguments, c.expect.arguments)) {
    return `arguments ${short(v.arguments)}; expected ${short(c.expect.arguments)}`
  }
  return undefined
}

/** Flag codes (as a multiset) and reason against the case, when it gives them. */
function contract(c: Case, v: Verdict): string | undefined {
  const why: string[] = []
  if (c.expect.flags !== undefined) {
    const got = v.flags.map((f) => f.code).sort()
    const want = [...c.expect.flags].sort()
    if (!sameJson(got, want)) why.push(`flags [${got.join(', ')}]; expected [${want.join(', ')}]`)
  }
  if (c.expect.reason !== undefined && v.reason !== c.expect.reason) {
    why.push(`reason ${v.reason ?? '(none)'}; expected ${c.expect.reason}`)
  }
  return why.length > 0 ? why.join('; ') : undefined
}

/** Median cost of an empty `hrtime.bigint()` pair, subtracted from every sample. */
function timerOverheadNs(): number {
  const n = 20_000
  const s = new Float64Array(n)
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint()
    s[i] = Number(process.hrtime.bigint() - t0)
  }
  s.sort()
  return s[n >> 1]
}

const quantile = (sorted: Float64Array, q: number): number =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]

interface Latency {
  iterations: number
  calls: number
  timerOverheadNs: number
  p50Ns: number
  p95Ns: number
  p99Ns: number
  meanNs: number
  maxNs: number
  callsPerSecond: number
}

/** Times every case `iterations` times (or as many as fit in TARGET_NS), interleaved. */
function time(gate: ToolGate, cases: Case[], iterationsFlag: number | undefined): Latency {
  const overhead = timerOverheadNs()
  const pass = () => {
    for (const c of cases) gate.check(c.tool, c.args)
  }
  // warm-up, which also calibrates the default iteration count
  const warm = Math.max(1, Math.min(200, Math.ceil(20_000 / Math.max(1, cases.length))))
  const w0 = process.hrtime.bigint()
  for (let i = 0; i < warm; i++) pass()
  const passNs = Math.max(1, Number(process.hrtime.bigint() - w0) / warm)
  const iterations = iterationsFlag ?? Math.max(10, Math.min(100_000, Math.round(TARGET_NS / passNs)))

  const samples = new Float64Array(iterations * cases.length)
  const progress = process.stderr.isTTY === true
  let lastShown = 0
  let k = 0
  const start = process.hrtime.bigint()
  for (let i = 0; i < iterations; i++) {
    for (const c of cases) {
      const t0 = process.hrtime.bigint()
      gate.check(c.tool, c.args)
      const t1 = process.hrtime.bigint()
      samples[k++] = Number(t1 - t0)
    }
    if (progress && (i & 63) === 0) {
      const now = Number(process.hrtime.bigint() - start)
      if (now - lastShown > 100e6) {
        lastShown = now
        process.stderr.write(`\rtoolgate bench: timing ${i}/${iterations} passes over ${cases.length} cases…`)
      }
    }
  }
  const elapsed = Number(process.hrtime.bigint() - start)
  if (progress && lastShown > 0) process.stderr.write('\r\x1b[2K')

  let sum = 0
  for (let i = 0; i < samples.length; i++) {
    samples[i] = Math.max(0, samples[i] - overhead)
    sum += samples[i]
  }
  samples.sort()
  return {
    iterations,
    calls: samples.length,
    timerOverheadNs: overhead,
    p50Ns: quantile(samples, 0.5),
    p95Ns: quantile(samples, 0.95),
    p99Ns: quantile(samples, 0.99),
    meanNs: samples.length > 0 ? sum / samples.length : NaN,
    maxNs: samples.length > 0 ? samples[samples.length - 1] : NaN,
    callsPerSecond: elapsed > 0 ? Math.round((samples.length / elapsed) * 1e9) : NaN,
  }
}

const ns = (n: number): string => (!Number.isFinite(n) ? 'n/a' : n < 1000 ? `${Math.round(n)} ns` : `${(n / 1000).toFixed(2)} µs`)

function run(argv: string[]): number {
  try {
    const flags = parseOrHelp(argv, {
      values: {
        'corpus-dir': 'a directory holding tools.json and cases.json',
        iterations: 'a positive integer (how many times every case is timed)',
        format: '`pretty` or `json`',
      },
      switches: ['help'],
      aliases: { h: 'help' },
    }, HELP)
    if (flags === undefined) return 0
    const { values } = flags
    const format = formatFlag(values)
    let iterations: number | undefined
    if (values.iterations !== undefined) {
      iterations = Number(values.iterations)
      if (!/^[0-9]+$/.test(values.iterations) || !Number.isSafeInteger(iterations) || iterations < 1) {
        throw new UsageError(`--iterations must be a positive integer, got \`${values.iterations}\``)
      }
    }
    const dir = values['corpus-dir'] ?? SHIPPED_CORPUS
    // errors name the flag, or say the default corpus was used and how to give another
    const label = values['corpus-dir'] !== undefined ? `--corpus-dir ${dir}` : `the shipped corpus ${dir} (give --corpus-dir DIR for another)`
    const gate = loadGate(dir, label)
    const cases = loadCases(dir, label)

    // correctness first: every case once, on a gate that has seen nothing else
    const results = cases.map((c) => {
      const v = gate.check(c.tool, c.args)
      const wrong = judge(c, v)
      return { c, v, wrong, contract: wrong === undefined ? contract(c, v) : undefined }
    })
    const count = (outcome: string) => {
      const of = results.filter((r) => r.c.expect.outcome === outcome)
      return { ok: of.filter((r) => r.wrong === undefined).length, of: of.length }
    }
    const correct = results.filter((r) => r.wrong === undefined).length
    const wrong = results.filter((r) => r.wrong !== undefined)
    const mismatches = results.filter((r) => r.contract !== undefined)
    const latency = time(gate, cases, iterations)

    if (format === 'json') {
      const summary = {
        corpusDir: resolve(dir),
        tools: gate.tools.length,
        cases: cases.length,
        handledCorrectly: correct,
        passed: count('passed'),
        repaired: count('repaired'),
        rejected: count('rejected'),
        wrong: wrong.map((r) => ({ id: r.c.id, tool: r.c.tool, expected: r.c.expect.outcome, got: r.v.outcome, why: r.wrong })),
        contractMismatches: mismatches.map((r) => ({ id: r.c.id, tool: r.c.tool, why: r.contract })),
        latency,
      }
      process.stdout.write(JSON.stringify(summary) + '\n')
    } else {
      const color = useColor()
      const c = (code: number) => (s: string) => (color ? `\x1b[${code}m${s}\x1b[0m` : s)
      const [green, red, dim, bold] = [c(32), c(31), c(2), c(1)]
      const score = (ok: number, of: number) => (ok === of ? green : red)(`${ok}/${of}`)
      const where = values['corpus-dir'] === undefined ? `the shipped corpus (${dir})` : dir
      const lines = [
        `${bold('toolgate bench')} ${dim(`— ${cases.length} cases, ${gate.tools.length} tools, ${where}`)}`,
        '',
        bold('correctness'),
        `  handled correctly    ${score(correct, cases.length)}  ${dim('outcome, and the exact arguments where the case gives them')}`,
      ]
      const p = count('passed')
      const rp = count('repaired')
      const rj = count('rejected')
      if (p.of > 0) lines.push(`  passed as sent       ${score(p.ok, p.of)}`)
      if (rp.of > 0) lines.push(`  auto-repaired        ${score(rp.ok, rp.of)}`)
      if (rj.of > 0) lines.push(`  correctly rejected   ${score(rj.ok, rj.of)}`)
      if (wrong.length > 0) {
        lines.push('', bold(red(`handled wrongly (${wrong.length})`)))
        for (const r of wrong) {
          lines.push(`  ${red('✗')} ${r.c.id} ${dim(`(${r.c.tool})`)}: ${r.wrong}`)
          if (r.c.note) lines.push(`    ${dim(r.c.note)}`)
        }
      }
      if (mismatches.length > 0) {
        lines.push('', bold(`flags or reason not as the case says (${mismatches.length})`) + dim(' — informational, exit code unchanged'))
        for (const r of mismatches) lines.push(`  ${r.c.id} ${dim(`(${r.c.tool})`)}: ${r.contract}`)
      }
      lines.push(
        '',
        `${bold('latency')} ${dim(`per gate.check call — ${latency.iterations} iterations × ${cases.length} cases = ${latency.calls} calls`)}`,
        `  p50 ${ns(latency.p50Ns)}   p95 ${ns(latency.p95Ns)}   p99 ${ns(latency.p99Ns)}   ${dim(`mean ${ns(latency.meanNs)}, ${latency.callsPerSecond.toLocaleString('en-US')} calls/s`)}`,
      )
      process.stdout.write(lines.join('\n') + '\n')
    }
    return wrong.length === 0 ? 0 : 1
  } catch (err) {
    return usageFailure('toolgate bench', err)
  }
}

/** `toolgate bench`. */
export const command = { usage: USAGE, run }
