/**
 * What a policy costs per `gate.check` (issue 4: "with a policy of 50 rules (all missing but the
 * last, half with `when`), `check` is measured with the policy on and off in the same run; the
 * policy must add under 1 µs p50").
 *
 *   npx tsx bench/policy.bench.ts            # full run (~15 s)
 *   npx tsx bench/policy.bench.ts --quick    # fewer rounds, shorter tinybench (smoke test)
 *   cargo run --release -p toolgate-core --example policy_timing   # the core alone, same configs
 *
 * Env overrides: BENCH_WARMUP (calls per variant before timing, default 20000), BENCH_ROUNDS
 * (interleaved rounds, default 300), BENCH_CALLS (timed calls per variant per round, default
 * 400), BENCH_TIME (tinybench ms per task, default 2000).
 *
 * The same tools (ten, `read_file` with the resource template `file:{path*}`) are compiled three
 * times: with no `policy` block, and with a policy of 50 rules in two shapes (built the same way
 * as crates/toolgate-core/examples/policy_timing.rs; both print the configs' fingerprints):
 * - worst case: every rule names the called tool (`read_file`, `*`, `read_*` or action `read`),
 *   so the compile-time pruning by tool and action (`Policy::candidates`) keeps all 50 and every
 *   call evaluates all 50; the first 49 miss on roles, subjects, resources or `when` — most pass
 *   the cheap selectors and miss late — and the last allows;
 * - pruned: the same rules, but 44 of the misses name other tools (the common case), so 6 are
 *   evaluated per call.
 * The 25 odd-numbered rules have a `when`. Loop and taint are not configured.
 *
 * Order of work: decisions first (every variant passes the call with the same action and
 * resource; the 49 missing rules alone answer `no_rule` — they neither allow nor deny), then
 * interleaved per-call timing of the four variants, then tinybench. Figures go to stdout and to
 * bench/results/policy.json.
 */
import { statSync } from 'node:fs'
import { arch, cpus, loadavg, platform } from 'node:os'
import { join } from 'node:path'
import { Bench } from 'tinybench'

import { here, lpad, num, pad, run, writeResult } from './harness.js'
import { quantile, timerOverheadNs } from './timing.js'
import { loadPackage } from './package.js'

const WARMUP = num('BENCH_WARMUP', 20_000, 2_000)
const ROUNDS = num('BENCH_ROUNDS', 300, 30)
const CALLS = num('BENCH_CALLS', 400, 200)
const TB_TIME = num('BENCH_TIME', 2000, 300)
/** The issue's target: what the policy adds to one `check`, p50. */
const TARGET_ADDED_P50_NS = 1000

// ---------------------------------------------------------------------------------------------
// The configs (keep in step with crates/toolgate-core/examples/policy_timing.rs: the printed
// fingerprints must agree)

const TOOL = 'read_file'
const ARGS = '{"path":"reports/2026/q3-summary.md"}'
const RESOURCE = 'file:reports/2026/q3-summary.md'
/** The caller: a realistic CallContext (a context is passed on every policy-on call). */
// `identity` is given so every deny rule's `when` can be decided (a deny rule whose condition
// cannot be decided — `identity.tenant` of a caller without identity — refuses: fail closed)
const CTX = { subject: 'u-1842', roles: ['employee', 'analyst'], identity: { tenant: 'initech' }, purpose: 'audit', session: 'sess-9f2c' }

/** Tools other than the called one: the pruned variant's misses name these. */
const OTHER_TOOLS = ['write_file', 'search_docs', 'send_email', 'list_orders', 'get_doc', 'transfer', 'post_webhook', 'export_report', 'delete_user']

/** `when` conditions that are false for the call (each reads something different). */
const WHEN_MISSES = [
  "purpose == 'billing'",
  "purpose == 'audit' and roles has 'admin'",
  "context.region == 'eu' and purpose == 'audit'",
  "identity.tenant == 'acme'",
  "args.path matches 'reports/private/**'",
  "subject == 'u-0001' or roles has 'auditor'",
  "purpose in ['support', 'sales', 'billing'] and roles has 'analyst'",
  "resource matches 'file:secrets/**' or not (roles has 'employee')",
]

function tools(): unknown[] {
  const s = (props: Record<string, unknown>, required: string[]) => ({ type: 'object', properties: props, required, additionalProperties: false })
  return [
    { name: 'read_file', action: 'read', resource: 'file:{path*}', inputSchema: s({ path: { type: 'string' } }, ['path']) },
    { name: 'write_file', action: 'write', resource: 'file:{path*}', inputSchema: s({ path: { type: 'string' }, content: { type: 'string' } }, ['path', 'content']) },
    { name: 'search_docs', inputSchema: s({ q: { type: 'string' }, limit: { type: 'integer', default: 10 } }, ['q']) },
    { name: 'send_email', inputSchema: s({ to: { type: 'string' }, body: { type: 'string' } }, ['to', 'body']) },
    { name: 'list_orders', resource: 'orders:{owner}', inputSchema: s({ owner: { type: 'string' } }, ['owner']) },
    { name: 'get_doc', resource: 'doc:{id}', inputSchema: s({ id: { type: 'string' } }, ['id']) },
    { name: 'transfer', inputSchema: s({ amount: { type: 'number' }, to: { type: 'string' } }, ['amount', 'to']) },
    { name: 'post_webhook', inputSchema: s({ url: { type: 'string' }, body: { type: 'string' } }, ['url']) },
    { name: 'export_report', inputSchema: s({ path: { type: 'string' } }, ['path']) },
    { name: 'delete_user', inputSchema: s({ id: { type: 'string' } }, ['id']) },
  ]
}

/** Rule `i` (0..49); `pruned`: most misses name other tools. */
function rule(i: number, pruned: boolean): Record<string, unknown> {
  if (i === 49) {
    return { id: 'analysts-read-reports', effect: 'allow', roles: ['analyst'], tools: ['read_file'], resources: ['file:reports/**'], when: "purpose == 'audit'" }
  }
  const r: Record<string, unknown> = { id: `r${i}` }
  if (i % 2 === 1) {
    // a `when` rule: the caller and resource selectors pass, the condition misses
    r.effect = i % 4 === 3 ? 'deny' : 'allow'
    r.roles = ['analyst']
    if (i % 3 !== 0) r.resources = ['file:reports/**']
    r.when = WHEN_MISSES[Math.floor(i / 2) % WHEN_MISSES.length]
  } else {
    switch (Math.floor(i / 2) % 5) {
      case 0: Object.assign(r, { effect: 'allow', roles: ['admin', 'finance'] }); break
      case 1: Object.assign(r, { effect: 'allow', roles: ['analyst'], subjects: ['svc-*', 'bot-*'] }); break
      case 2: Object.assign(r, { effect: 'allow', roles: ['analyst', 'employee'], resources: ['file:secrets/**', 'file:home/{subject}/**'] }); break
      case 3: Object.assign(r, { effect: 'deny', resources: ['file:reports/private/**', 'file:tmp/**'] }); break
      default: Object.assign(r, { effect: 'deny', subjects: ['mallory', 'guest-*'] })
    }
  }
  // the selector: the called tool (never pruned), or — pruned variant — another tool
  if (pruned && i % 10 !== 0) r.tools = [OTHER_TOOLS[i % OTHER_TOOLS.length]]
  else if (i % 4 === 0) r.tools = ['read_file']
  else if (i % 4 === 1) r.tools = ['*']
  else if (i % 4 === 2) r.tools = ['read_*', 'list_*']
  else r.actions = ['read']
  return r
}

/** The config text: no policy block, or the first `take` rules of one shape. */
function config(policy?: { pruned: boolean; take: number }): string {
  const c: Record<string, unknown> = { version: 1, tools: tools() }
  if (policy) c.policy = { rules: Array.from({ length: policy.take }, (_, i) => rule(i, policy.pruned)) }
  return JSON.stringify(c)
}

/** FNV-1a 64 of the (ASCII) config text, as the Rust example prints it. */
function fingerprint(s: string): string {
  let h = 0xcbf29ce484222325n
  for (let i = 0; i < s.length; i++) {
    h ^= BigInt(s.charCodeAt(i))
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn
  }
  return h.toString(16).padStart(16, '0')
}

// ---------------------------------------------------------------------------------------------
// Small helpers

const us = (ns: number, digits = 3) => (Number.isFinite(ns) ? (ns / 1000).toFixed(digits) : 'n/a')
const sus = (ns: number) => (ns >= 0 ? '+' : '') + us(ns)

interface VerdictLike { outcome: string; reason?: string; action?: string; resource?: string; message?: string }
interface Stat { p50: number; p90: number; p99: number; mean: number; n: number }

async function main(): Promise<void> {
  const { toolgate, note } = loadPackage()
  console.log(`package: ${note}`)
  const { ToolGate } = toolgate
  const texts = {
    off: config(),
    worst: config({ pruned: false, take: 50 }),
    pruned: config({ pruned: true, take: 50 }),
  }
  const gates = {
    off: new ToolGate(texts.off),
    worst: new ToolGate(texts.worst),
    pruned: new ToolGate(texts.pruned),
  }
  const addon = join(here, '..', 'binding', `toolgate.${platform()}-${arch()}${platform() === 'linux' ? '-gnu' : ''}.node`)
  let addonNote = ''
  try {
    const mb = statSync(addon).size / 1e6
    // a release addon is stripped (a few MB); a debug one carries its symbols (tens of MB)
    addonNote = `${addon.split('/').slice(-2).join('/')} ${mb.toFixed(1)} MB${mb > 30 ? ' — LOOKS LIKE A DEBUG BUILD: run `npm run build:native` first' : ''}`
  } catch {
    addonNote = 'addon file not found at the usual path'
  }

  console.log(`toolgate policy benchmark — node ${process.version} ${platform()}-${arch()}, ${cpus()[0]?.model ?? 'unknown cpu'} ×${cpus().length}, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
  console.log(`addon: ${addonNote}`)
  console.log(`call: check('${TOOL}', '${ARGS}', ${JSON.stringify(CTX)})`)
  console.log(`config fingerprints (FNV-1a; examples/policy_timing.rs prints the same): off ${fingerprint(texts.off)}, worst ${fingerprint(texts.worst)}, pruned ${fingerprint(texts.pruned)}`)
  console.log('')

  // --- decisions ------------------------------------------------------------------------------
  console.log('== Decisions (asserted before timing) ==')
  const problems: string[] = []
  const expectPass = (label: string, v: VerdictLike, facts: boolean) => {
    const ok = v.outcome === 'passed' && v.resource === RESOURCE && (!facts || v.action === 'read')
    console.log(`${pad(label, 44)} ${v.outcome}${v.reason ? ` (${v.reason})` : ''}, action ${v.action ?? '-'}, resource ${v.resource ?? '-'}${ok ? '' : '  UNEXPECTED'}`)
    if (!ok) problems.push(`${label}: ${JSON.stringify(v)}`)
  }
  expectPass('policy off, no ctx', gates.off.check(TOOL, ARGS) as VerdictLike, false)
  expectPass('policy off, ctx', gates.off.check(TOOL, ARGS, CTX) as VerdictLike, false)
  expectPass('policy on, pruned, ctx', gates.pruned.check(TOOL, ARGS, CTX) as VerdictLike, true)
  expectPass('policy on, worst case, ctx', gates.worst.check(TOOL, ARGS, CTX) as VerdictLike, true)
  for (const pruned of [false, true]) {
    const v = new ToolGate(config({ pruned, take: 49 })).check(TOOL, ARGS, CTX) as VerdictLike
    const ok = v.outcome === 'denied' && v.reason === 'no_rule'
    console.log(`${pad(`the 49 missing rules alone (${pruned ? 'pruned' : 'worst case'})`, 44)} ${v.outcome} (${v.reason ?? '-'})${ok ? ': none allows, none denies' : '  UNEXPECTED'}`)
    if (!ok) problems.push(`49 rules (pruned: ${pruned}): ${JSON.stringify(v)}`)
  }
  if (problems.length > 0) {
    console.error(`decisions differ from what the benchmark assumes:\n  ${problems.join('\n  ')}`)
    process.exit(1)
  }

  // --- the variants ---------------------------------------------------------------------------
  let sink = 0
  const variants: { key: string; label: string; fn: () => void }[] = [
    { key: 'offBare', label: 'policy off, check(tool, args) — no ctx', fn: () => { sink += gates.off.check(TOOL, ARGS).flags.length } },
    { key: 'off', label: 'policy off, check(tool, args, ctx)', fn: () => { sink += gates.off.check(TOOL, ARGS, CTX).flags.length } },
    { key: 'pruned', label: 'policy on, pruned (6 rules evaluated), ctx', fn: () => { sink += gates.pruned.check(TOOL, ARGS, CTX).flags.length } },
    { key: 'worst', label: 'policy on, worst case (50 evaluated), ctx', fn: () => { sink += gates.worst.check(TOOL, ARGS, CTX).flags.length } },
  ]
  for (const v of variants) for (let i = 0; i < WARMUP; i++) v.fn()

  // --- interleaved per-call timing --------------------------------------------------------------
  // Every round times CALLS calls of each variant, the variant that goes first rotating, so a
  // slow stretch of a shared machine falls on all variants alike. Each call has its own timer
  // pair; the median cost of an empty pair is subtracted.
  const overhead = timerOverheadNs()
  const samples = variants.map(() => new Float64Array(ROUNDS * CALLS))
  const roundP50 = variants.map(() => new Float64Array(ROUNDS))
  const buf = new Float64Array(CALLS)
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < variants.length; k++) {
      const vi = (r + k) % variants.length
      const fn = variants[vi].fn
      for (let i = 0; i < CALLS; i++) {
        const t0 = process.hrtime.bigint()
        fn()
        const t1 = process.hrtime.bigint()
        buf[i] = Math.max(0, Number(t1 - t0) - overhead)
      }
      samples[vi].set(buf, r * CALLS)
      const sorted = Float64Array.from(buf).sort()
      roundP50[vi][r] = quantile(sorted, 0.5)
    }
  }
  const stats: Record<string, Stat> = {}
  for (const [vi, v] of variants.entries()) {
    const a = samples[vi].sort()
    let sum = 0
    for (const x of a) sum += x
    stats[v.key] = { p50: quantile(a, 0.5), p90: quantile(a, 0.9), p99: quantile(a, 0.99), mean: sum / a.length, n: a.length }
  }
  /** Per-round p50 differences a − b: their median and interquartile range (a noise gauge). */
  const roundDiff = (a: string, b: string) => {
    const ia = variants.findIndex((v) => v.key === a)
    const ib = variants.findIndex((v) => v.key === b)
    const d = Float64Array.from({ length: ROUNDS }, (_, r) => roundP50[ia][r] - roundP50[ib][r]).sort()
    return { median: quantile(d, 0.5), q1: quantile(d, 0.25), q3: quantile(d, 0.75) }
  }

  console.log('')
  console.log(`== Per call: ${ROUNDS} interleaved rounds × ${CALLS} calls per variant, each call timed (empty timer pair ${overhead} ns subtracted); µs ==`)
  console.log(`${pad('', 46)} ${lpad('p50', 7)} ${lpad('p90', 7)} ${lpad('p99', 7)} ${lpad('mean', 7)}`)
  for (const v of variants) {
    const s = stats[v.key]
    console.log(`${pad(v.label, 46)} ${lpad(us(s.p50), 7)} ${lpad(us(s.p90), 7)} ${lpad(us(s.p99), 7)} ${lpad(us(s.mean), 7)}`)
  }
  console.log('')
  console.log('policy on − policy off (same ctx), µs:')
  console.log(`${pad('', 14)} ${lpad('p50', 7)} ${lpad('p99', 7)} ${lpad('ratio p50', 10)}   per-round p50 difference: median [q1, q3]`)
  const added: Record<string, { p50: number; p99: number; ratioP50: number; perRound: { median: number; q1: number; q3: number }; targetMet: boolean }> = {}
  for (const key of ['worst', 'pruned']) {
    const on = stats[key]
    const off = stats.off
    const pr = roundDiff(key, 'off')
    added[key] = { p50: on.p50 - off.p50, p99: on.p99 - off.p99, ratioP50: on.p50 / off.p50, perRound: pr, targetMet: on.p50 - off.p50 < TARGET_ADDED_P50_NS }
    console.log(`${pad(key === 'worst' ? '  worst case' : '  pruned', 14)} ${lpad(sus(added[key].p50), 7)} ${lpad(sus(added[key].p99), 7)} ${lpad(added[key].ratioP50.toFixed(2), 10)}   ${sus(pr.median)} [${sus(pr.q1)}, ${sus(pr.q3)}]`)
  }
  const ctxCost = { p50: stats.off.p50 - stats.offBare.p50, p99: stats.off.p99 - stats.offBare.p99, perRound: roundDiff('off', 'offBare') }
  console.log(`passing a context (policy off, ctx − no ctx): p50 ${sus(ctxCost.p50)}, p99 ${sus(ctxCost.p99)} (JSON.stringify of the ctx, the string crossing, the core's parse of it)`)
  for (const key of ['worst', 'pruned']) {
    console.log(`target: the policy adds < ${us(TARGET_ADDED_P50_NS, 0)} µs at p50 — ${key === 'worst' ? 'worst case' : 'pruned'}: ${added[key].targetMet ? 'MET' : 'NOT MET'} (${sus(added[key].p50)} µs)`)
  }

  // --- tinybench ----------------------------------------------------------------------------------
  // A second opinion: tasks run one after the other here, so load that changes between them
  // moves the differences (the interleaved figures above do not have that problem).
  const bench = new Bench({ name: 'policy, one check', time: TB_TIME, warmupTime: Math.min(500, TB_TIME) })
  for (const v of variants) bench.add(v.label, v.fn)
  await bench.run()
  const tb: Record<string, { meanNs: number; p50Ns: number; p99Ns: number; rme: number; samples: number }> = {}
  for (const task of bench.tasks) {
    const r = task.result
    if (r.state !== 'completed' && r.state !== 'aborted-with-statistics') throw new Error(`${task.name}: ${r.state}`)
    tb[task.name] = { meanNs: r.latency.mean * 1e6, p50Ns: (r.latency.p50 ?? NaN) * 1e6, p99Ns: (r.latency.p99 ?? NaN) * 1e6, rme: r.latency.rme, samples: r.latency.samplesCount }
  }
  console.log('')
  console.log(`== tinybench (${TB_TIME} ms per task, one iteration = one call; µs) ==`)
  console.log(`${pad('', 46)} ${lpad('p50', 7)} ${lpad('p99', 7)} ${lpad('mean', 7)} ${lpad('±rme', 7)}`)
  for (const v of variants) {
    const s = tb[v.label]
    console.log(`${pad(v.label, 46)} ${lpad(us(s.p50Ns), 7)} ${lpad(us(s.p99Ns), 7)} ${lpad(us(s.meanNs), 7)} ${lpad(s.rme.toFixed(1) + '%', 7)}`)
  }
  const tbOff = tb[variants[1].label]
  console.log(`policy on − off (same ctx), p50: worst case ${sus(tb[variants[3].label].p50Ns - tbOff.p50Ns)} µs, pruned ${sus(tb[variants[2].label].p50Ns - tbOff.p50Ns)} µs`)

  const out = {
    generatedAt: new Date().toISOString(),
    environment: { node: process.version, platform: platform(), arch: arch(), cpu: cpus()[0]?.model ?? null, cpus: cpus().length, loadavg: loadavg(), addon: addonNote },
    call: { tool: TOOL, args: ARGS, ctx: CTX },
    fingerprints: { off: fingerprint(texts.off), worst: fingerprint(texts.worst), pruned: fingerprint(texts.pruned) },
    interleaved: { warmupCalls: WARMUP, rounds: ROUNDS, callsPerRound: CALLS, timerOverheadNs: overhead, statsNs: stats },
    addedByPolicyNs: added,
    contextCostNs: ctxCost,
    targetAddedP50Ns: TARGET_ADDED_P50_NS,
    tinybench: { timeMsPerTask: TB_TIME, tasks: tb },
  }
  writeResult('policy', out, sink)
}

run(main)
