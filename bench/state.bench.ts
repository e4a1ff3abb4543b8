/**
 * What keeping gate state in Redis adds per decision (issue 16: "added latency per decision with
 * Redis on loopback (p50/p99) against the in-memory store, same run; target ≤ 1 round trip per
 * decision").
 *
 *   npx tsx bench/state.bench.ts            # full run (~20 s); needs redis-server installed
 *   npx tsx bench/state.bench.ts --quick    # smoke
 *
 * Env overrides: BENCH_CALLS (timed calls per variant per round, default 2000), BENCH_ROUNDS
 * (interleaved rounds, default 10), BENCH_TIME (tinybench ms per task, default 2000).
 *
 * One config, a stateful call (`search`: a loop guard, a sink check and a rate limit, so every
 * decision reads and records state), decided with `checkAsync`:
 * - memory: the default in-memory store (the decision runs in place);
 * - redis: `state.redis` on a redis-server this bench starts on a free loopback port (the decision
 *   runs on libuv's thread pool: one EVALSHA per decision).
 * Calls are awaited one at a time (latency, not throughput), the two variants interleaved per
 * round. Round trips are counted by Redis itself: the top-level commands this store sends on the
 * decision path are EVALSHA (and, once after a restart, SCRIPT LOAD + EVAL), so `INFO
 * commandstats` calls of those before and after, divided by the decisions (the commands a
 * script runs are counted separately by Redis and are not round trips). Figures go to stdout and
 * bench/results/state.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { join } from 'node:path'
import { Bench } from 'tinybench'
import { ToolGate } from '../src-ts/index'
import { redisCommand, startRedis } from '../__test__/helpers/redis'
import { here, num, run } from './harness.js'

const CALLS = num('BENCH_CALLS', 2000, 200)
const ROUNDS = num('BENCH_ROUNDS', 10, 3)
const TB_TIME = num('BENCH_TIME', 2000, 300)

function config(redisUrl?: string) {
  return {
    labels: ['public', 'secret'],
    tools: [{ name: 'search', sink: { maxLabel: 'secret' }, loop: { maxIdentical: 10_000, windowSeconds: 60 }, inputSchema: { type: 'object', properties: { q: { type: 'string' } } } }],
    rateLimits: [{ tools: ['search'], per: 'subject' as const, max: 1_000_000_000, windowSeconds: 3600 }],
    ...(redisUrl === undefined ? {} : { state: { redis: { url: redisUrl, keyPrefix: 'bench:', timeoutMs: 1000 } } }),
  }
}

const ctx = { subject: 'bench-user', session: 'bench-session' }
const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
const us = (ns: number): string => (ns / 1000).toFixed(1)

/** Calls of the commands a decision sends (EVALSHA, EVAL, SCRIPT), from `INFO commandstats`. */
async function roundTrips(port: number): Promise<number> {
  const info = await redisCommand(port, 'INFO', 'commandstats')
  let n = 0
  for (const m of info.matchAll(/^cmdstat_(evalsha|eval|script\|load|script):calls=(\d+)/gm)) n += Number(m[2])
  return n
}

async function main(): Promise<void> {
  const redis = await startRedis()
  try {
    const gates = { memory: new ToolGate(config()), redis: new ToolGate(config(redis.url)) }
    let n = 0
    const decide = async (g: ToolGate): Promise<void> => {
      const v = await g.checkAsync('search', `{"q":"${n++ % 1000}"}`, ctx)
      if (!v.allowed) throw new Error(`refused: ${v.reason} ${v.message}`)
    }
    for (const g of Object.values(gates)) for (let i = 0; i < 500; i++) await decide(g)
    const samples: Record<keyof typeof gates, number[]> = { memory: [], redis: [] }
    const before = await roundTrips(redis.port)
    let redisDecisions = 0
    for (let r = 0; r < ROUNDS; r++) {
      for (const name of ['memory', 'redis'] as const) {
        const g = gates[name]
        for (let i = 0; i < CALLS; i++) {
          const t = process.hrtime.bigint()
          await decide(g)
          samples[name].push(Number(process.hrtime.bigint() - t))
        }
        if (name === 'redis') redisDecisions += CALLS
      }
    }
    const perDecision = ((await roundTrips(redis.port)) - before) / redisDecisions
    const stats = Object.fromEntries(
      Object.entries(samples).map(([k, v]) => {
        const s = [...v].sort((a, b) => a - b)
        return [k, { p50: pct(s, 50), p99: pct(s, 99), n: s.length }]
      }),
    ) as Record<keyof typeof gates, { p50: number; p99: number; n: number }>
    const bench = new Bench({ time: TB_TIME })
    bench.add('checkAsync, in-memory state', () => decide(gates.memory))
    bench.add('checkAsync, state in Redis (loopback)', () => decide(gates.redis))
    await bench.run()

    console.log(`node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? '?'}, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
    console.log(`per decision, awaited one at a time (${ROUNDS} interleaved rounds × ${CALLS} calls):`)
    for (const k of ['memory', 'redis'] as const) console.log(`  ${k.padEnd(7)} p50 ${us(stats[k].p50).padStart(7)} µs   p99 ${us(stats[k].p99).padStart(7)} µs`)
    console.log(`  Redis adds p50 +${us(stats.redis.p50 - stats.memory.p50)} µs, p99 +${us(stats.redis.p99 - stats.memory.p99)} µs; ratio p50 ${(stats.redis.p50 / stats.memory.p50).toFixed(1)}×, p99 ${(stats.redis.p99 / stats.memory.p99).toFixed(1)}×`)
    console.log(`  round trips per decision (EVALSHA/EVAL/SCRIPT calls in INFO commandstats): ${perDecision.toFixed(3)} (target ≤ 1)`)
    console.table(bench.table())
    mkdirSync(join(here, 'results'), { recursive: true })
    writeFileSync(
      join(here, 'results', 'state.json'),
      `${JSON.stringify({ date: new Date().toISOString(), node: process.version, cpus: cpus().length, load: loadavg(), calls: CALLS, rounds: ROUNDS, ns: stats, roundTripsPerDecision: perDecision, tinybench: bench.table() }, null, 2)}\n`,
    )
    await gates.redis.close()
  } finally {
    await redis.stop()
  }
}

run(main)
