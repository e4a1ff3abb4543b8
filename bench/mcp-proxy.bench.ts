/**
 * What `toolgate mcp-proxy` adds to a `tools/call` (issue 6: under 200 µs p50), and how many calls
 * per second go through it, against a direct connection to the same server in the same run.
 *
 *   npm run build:ts                         # the bench spawns dist/cli/main.js
 *   npx tsx bench/mcp-proxy.bench.ts         # under a minute
 *   npx tsx bench/mcp-proxy.bench.ts --quick # smoke run
 *
 * Env overrides: BENCH_WARMUP (calls per variant before timing, default 2000), BENCH_ROUNDS
 * (interleaved rounds, default 100), BENCH_CALLS (timed calls per variant per round, default 50),
 * BENCH_THROUGHPUT (calls per throughput pass, default 5000), BENCH_TIME (tinybench ms per task,
 * default 2000).
 *
 * The server is bench/mcp-echo-server.mjs (the official SDK's McpServer over stdio, one `echo`
 * tool answering at once with its arguments). Five sides, each an official SDK `Client` with a
 * `StdioClientTransport`:
 *   - direct:            spawns `node bench/mcp-echo-server.mjs`
 *   - proxied:           spawns `node dist/cli/main.js mcp-proxy -- node bench/mcp-echo-server.mjs`
 *   - proxied, repaired: the same proxy; the call carries `"n": "5"`, which the gate repairs to 5
 *   - ref: relay, pipe / ref: relay, lines: bench/mcp-relay-server.mjs in place of the proxy, a
 *     process that pipes the bytes (or parses and re-serializes each line) and gates nothing: what
 *     any extra hop costs, so the proxy's own share can be told apart
 * The lean-client load also times the gate's own decision of the same call line in this process
 * (`guardSingleCall`, as the stdio proxy decides a call; `gate.guard`, which it used before and
 * the HTTP transport uses; and a bare `gate.check` of its arguments), to tell it apart from the rest of the
 * proxy's CPU per call (every thread's schedstat under /proc/<pid>/task, in nanoseconds).
 * Order of work: the answers are asserted equal (the repaired call's answer must be the direct
 * answer to `n: 5`, proving the repair reached the server), then interleaved per-call timing
 * (p50/p99, the added p50, the per-round differences as a noise gauge), tinybench on the same
 * calls, and calls per second sequentially and with 16 in flight. Figures go to stdout and to
 * bench/results/mcp-proxy.txt (`--load`: mcp-proxy-load.txt).
 */
import { spawn } from 'node:child_process'
import { mkdirSync, statSync, writeFileSync } from 'node:fs'
import { arch, cpus, loadavg, platform } from 'node:os'
import { join, resolve } from 'node:path'
import { Bench } from 'tinybench'

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ToolGate } from '../src-ts/index'
import { guardSingleCall } from '../src-ts/gate'
import { addonNote, cpuUs, distNote, fmt, lpad, mean, out, pad, pct, say, sortNum } from './proxy-report'

const here = typeof __dirname === 'string' ? __dirname : resolve('bench')
const root = join(here, '..')
const QUICK = process.argv.includes('--quick')
/** BENCH_PROXY_NODE_ARGS: node flags for the proxy process only (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`). */
const PROXY_NODE_ARGS = (process.env.BENCH_PROXY_NODE_ARGS ?? '').split(' ').filter((a) => a !== '')
const num = (name: string, full: number, quick: number) => Number(process.env[name] ?? (QUICK ? quick : full))
const WARMUP = num('BENCH_WARMUP', 2000, 300)
const ROUNDS = num('BENCH_ROUNDS', 100, 10)
const CALLS = num('BENCH_CALLS', 50, 30)
const THROUGHPUT = num('BENCH_THROUGHPUT', 5000, 1000)
const TB_TIME = num('BENCH_TIME', 2000, 300)
const IN_FLIGHT = 16
/** Load: calls sent at once (the issue's 1,000 concurrent `tools/call`), and passes per side. */
const LOAD = num('BENCH_LOAD', 1000, 1000)
const LOAD_PASSES = num('BENCH_LOAD_PASSES', 7, 3)
/** `--load`: only the load section (after the answers are checked). */
const LOAD_ONLY = process.argv.includes('--load')
/** BENCH_BASELINE_CLI: another build's CLI (e.g. the previous commit's dist/cli/main.js), timed beside in the lean-client load. */
const BASELINE_CLI = process.env.BENCH_BASELINE_CLI
/** The issue's target: what the proxy adds to one `tools/call`, p50. */
const TARGET_ADDED_P50_US = 200

const cli = join(root, 'dist', 'cli', 'main.js')
/** The sources the built CLI must be newer than. */
const PROXY_SOURCES = ['src-ts/proxy/mcp/proxy.ts', 'src-ts/proxy/mcp/stdio.ts', 'src-ts/proxy/mcp/jsonrpc-lines.ts', 'src-ts/cli/mcp-proxy.ts', 'src-ts/gate.ts']
const server = [process.execPath, join(here, 'mcp-echo-server.mjs')]
const ARGS = { text: 'hello toolgate', n: 5, tag: 'a' }
const REPAIR_ARGS = { text: 'hello toolgate', n: '5', tag: 'a' }

type Variant = 'direct' | 'proxied' | 'proxied, repaired' | 'ref: relay, pipe' | 'ref: relay, lines'
const VARIANTS: Variant[] = ['direct', 'proxied', 'proxied, repaired', 'ref: relay, pipe', 'ref: relay, lines']
const emptyRecord = <T>(make: () => T) => Object.fromEntries(VARIANTS.map((v) => [v, make()])) as Record<Variant, T>

interface Link {
  client: Client
  /** The last few KB the child wrote to stderr (drained all along, so a chatty proxy never blocks). */
  stderr(): string
  close(): Promise<void>
}

/** An SDK client on a `node <args…>` child it spawns. */
async function connect(args: string[]): Promise<Link> {
  const transport = new StdioClientTransport({ command: process.execPath, args, stderr: 'pipe', cwd: root })
  let tail = ''
  transport.stderr?.on('data', (d: Buffer) => (tail = (tail + d.toString()).slice(-4096)))
  const client = new Client({ name: 'toolgate-mcp-proxy-bench', version: '1.0.0' })
  try {
    await client.connect(transport)
  } catch (err) {
    throw new Error(`could not connect to \`node ${args.join(' ')}\`: ${(err as Error).message}\nits stderr: ${tail}`)
  }
  return { client, stderr: () => tail, close: () => client.close() }
}

async function main(): Promise<void> {
  try {
    statSync(cli)
  } catch {
    throw new Error('dist/cli/main.js is missing: run `npm run build:ts` first')
  }
  say(`toolgate mcp-proxy benchmark — node ${process.version} ${platform()}-${arch()}, ${cpus()[0]?.model ?? 'unknown cpu'} ×${cpus().length}, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
  say(`addon: ${addonNote(root)}; ${distNote(root, cli, PROXY_SOURCES)}`)
  say(`server: node bench/mcp-echo-server.mjs (SDK McpServer, stdio); call: echo ${JSON.stringify(ARGS)}; repaired variant: ${JSON.stringify(REPAIR_ARGS)}`)
  say(`warm-up ${WARMUP} calls per variant; ${ROUNDS} interleaved rounds × ${CALLS} calls per variant; throughput ${THROUGHPUT} calls per pass; tinybench ${TB_TIME} ms per task`)
  say('')

  const direct = await connect(server.slice(1))
  const proxied = await connect([...PROXY_NODE_ARGS, cli, 'mcp-proxy', '--', ...server])
  const relayPipe = await connect([join(here, 'mcp-relay-server.mjs'), 'pipe', '--', ...server])
  const relayLines = await connect([join(here, 'mcp-relay-server.mjs'), 'lines', '--', ...server])
  const links: Record<Variant, Link> = { direct, proxied, 'proxied, repaired': proxied, 'ref: relay, pipe': relayPipe, 'ref: relay, lines': relayLines }
  const argsOf = emptyRecord(() => ARGS as Record<string, unknown>)
  argsOf['proxied, repaired'] = REPAIR_ARGS
  const call = (v: Variant) => links[v].client.callTool({ name: 'echo', arguments: argsOf[v] })

  try {
    // 1. The same answers, and the repair reached the server.
    const answers = await Promise.all(VARIANTS.map(call))
    const texts = answers.map((a) => JSON.stringify(a))
    const expected = JSON.stringify({ content: [{ type: 'text', text: JSON.stringify(ARGS) }] })
    for (const [i, v] of VARIANTS.entries()) {
      if (texts[i] !== expected) throw new Error(`${v}: answer ${texts[i]}, expected ${expected}`)
    }
    if (!/repaired echo .*StringToInteger \/n/.test(proxied.stderr())) throw new Error(`the proxy did not report the repair; its stderr: ${proxied.stderr()}`)
    say(`answers: all ${VARIANTS.length} variants answer ${expected} (the repaired call's "5" reached the server as 5)`)
    say('')

    for (const v of VARIANTS) for (let i = 0; i < WARMUP; i++) await call(v)
    if (LOAD_ONLY) {
      await load(call)
      say('')
      await rawLoads()
      save('mcp-proxy-load.txt')
      return
    }

    // 2. Interleaved per-call latency: every round times CALLS sequential calls of each variant,
    // the first variant rotating, each call between its own hrtime pair.
    const samples = emptyRecord((): number[] => [])
    const roundP50 = emptyRecord((): number[] => [])
    for (let r = 0; r < ROUNDS; r++) {
      for (let k = 0; k < VARIANTS.length; k++) {
        const v = VARIANTS[(r + k) % VARIANTS.length]
        const mine: number[] = []
        for (let i = 0; i < CALLS; i++) {
          const t0 = process.hrtime.bigint()
          await call(v)
          mine.push(Number(process.hrtime.bigint() - t0) / 1e3)
        }
        samples[v].push(...mine)
        roundP50[v].push(pct(sortNum(mine), 50))
      }
    }
    const lat = Object.fromEntries(VARIANTS.map((v) => {
      const s = sortNum(samples[v])
      return [v, { p50: pct(s, 50), p90: pct(s, 90), p99: pct(s, 99), mean: mean(s), n: s.length }]
    })) as Record<Variant, { p50: number; p90: number; p99: number; mean: number; n: number }>
    say(`== Latency per tools/call, sequential, interleaved (µs; ${ROUNDS * CALLS} calls per variant) ==`)
    say(`${pad('', 20)}${lpad('p50', 9)}${lpad('p90', 9)}${lpad('p99', 9)}${lpad('mean', 9)}`)
    for (const v of VARIANTS) say(`${pad(v, 20)}${lpad(fmt(lat[v].p50), 9)}${lpad(fmt(lat[v].p90), 9)}${lpad(fmt(lat[v].p99), 9)}${lpad(fmt(lat[v].mean), 9)}`)
    const added = (v: Variant) => lat[v].p50 - lat.direct.p50
    const diffs = (v: Variant) => sortNum(roundP50[v].map((x, i) => x - roundP50.direct[i]))
    say('')
    for (const v of VARIANTS.slice(1)) {
      const d = diffs(v)
      say(`${v}: adds ${fmt(added(v))} µs at p50 (ratio ${fmt(lat[v].p50 / lat.direct.p50, 2)}), ${fmt(lat[v].p99 - lat.direct.p99)} µs at p99; per-round p50 difference median ${fmt(pct(d, 50))} µs (quartiles ${fmt(pct(d, 25))}–${fmt(pct(d, 75))})`)
    }
    const met = added('proxied') < TARGET_ADDED_P50_US
    say(`target: the proxy adds under ${TARGET_ADDED_P50_US} µs p50 per tools/call — ${met ? 'met' : 'NOT met'} (${fmt(added('proxied'))} µs; repaired path ${fmt(added('proxied, repaired'))} µs)`)
    // paired per round (same load): the median of the rounds' p50 differences
    const paired = (a: Variant, b: Variant) => pct(sortNum(roundP50[a].map((x, i) => x - roundP50[b][i])), 50)
    say(`split (medians of per-round p50 differences): an extra Node process ${fmt(paired('ref: relay, pipe', 'direct'))} µs (bytes piped); parsing and re-serializing each line: ${fmt(paired('ref: relay, lines', 'ref: relay, pipe'))} µs more; toolgate's own work (proxied − relay, lines) ${fmt(paired('proxied', 'ref: relay, lines'))} µs; a repair ${fmt(paired('proxied, repaired', 'proxied'))} µs more`)
    say('')

    // 3. tinybench, the same calls (tasks run one after another: load changes move the differences).
    const bench = new Bench({ name: 'mcp-proxy', time: TB_TIME, warmupTime: Math.min(500, TB_TIME) })
    for (const v of VARIANTS) bench.add(v, async () => { await call(v) })
    await bench.run()
    say(`== tinybench (${TB_TIME} ms per task; µs) ==`)
    const tb: Record<string, { p50: number; p99: number; mean: number; samples: number }> = {}
    for (const t of bench.tasks) {
      const r = t.result
      if (r.state !== 'completed' && r.state !== 'aborted-with-statistics') throw new Error(`${t.name}: ${r.state}`)
      tb[t.name] = { p50: (r.latency.p50 ?? NaN) * 1e3, p99: (r.latency.p99 ?? NaN) * 1e3, mean: r.latency.mean * 1e3, samples: r.latency.samplesCount }
      say(`${pad(t.name, 20)} p50 ${lpad(fmt(tb[t.name].p50), 7)}  p99 ${lpad(fmt(tb[t.name].p99), 7)}  mean ${lpad(fmt(tb[t.name].mean), 7)}  (${tb[t.name].samples} calls)`)
    }
    say(`tinybench: proxied adds ${fmt(tb.proxied.p50 - tb.direct.p50)} µs p50, repaired ${fmt(tb['proxied, repaired'].p50 - tb.direct.p50)} µs`)
    say('')

    // 4. Calls per second: sequential, and IN_FLIGHT callers sharing one client. Two passes per
    // variant, alternating, the better pass reported (the worse one is load from elsewhere).
    const sequential = async (v: Variant): Promise<number> => {
      const t0 = process.hrtime.bigint()
      for (let i = 0; i < THROUGHPUT; i++) await call(v)
      return THROUGHPUT / (Number(process.hrtime.bigint() - t0) / 1e9)
    }
    const concurrent = async (v: Variant): Promise<number> => {
      let next = 0
      const worker = async () => {
        while (next++ < THROUGHPUT) await call(v)
      }
      const t0 = process.hrtime.bigint()
      await Promise.all(Array.from({ length: IN_FLIGHT }, worker))
      return THROUGHPUT / (Number(process.hrtime.bigint() - t0) / 1e9)
    }
    const rate: Record<string, number[]> = {}
    for (let pass = 0; pass < 2; pass++) {
      const order = pass === 0 ? VARIANTS : [...VARIANTS].reverse()
      for (const v of order) (rate[`${v} seq`] ??= []).push(await sequential(v))
      for (const v of order) (rate[`${v} ${IN_FLIGHT}`] ??= []).push(await concurrent(v))
    }
    say(`== Calls per second (${THROUGHPUT} calls per pass, 2 passes, better one; both in brackets) ==`)
    say(`${pad('', 20)}${lpad('sequential', 22)}${lpad(`${IN_FLIGHT} in flight`, 22)}`)
    const cell = (xs: number[]) => `${Math.max(...xs).toFixed(0)} (${xs.map((x) => x.toFixed(0)).join('/')})`
    for (const v of VARIANTS) say(`${pad(v, 20)}${lpad(cell(rate[`${v} seq`]), 22)}${lpad(cell(rate[`${v} ${IN_FLIGHT}`]), 22)}`)
    const best = (k: string) => Math.max(...rate[k])
    say(`proxied / direct: sequential ${fmt(best('proxied seq') / best('direct seq'), 2)}, ${IN_FLIGHT} in flight ${fmt(best(`proxied ${IN_FLIGHT}`) / best(`direct ${IN_FLIGHT}`), 2)}`)
    say('')
    await load(call)
    say('')
    await rawLoads()
  } finally {
    for (const l of [relayLines, relayPipe, proxied, direct]) await l.close()
  }
  save('mcp-proxy.txt')
}

/**
 * 5. Under load (issue 20): LOAD `tools/call` sent at once on one client, answered all, timed;
 * LOAD_PASSES passes per variant, interleaved, the first variant rotating. Reports the median
 * calls/s of each, and the median of the per-pass ratios against direct (same load).
 */
async function load(call: (v: Variant) => Promise<unknown>): Promise<void> {
  const sides: Variant[] = ['direct', 'proxied', 'proxied, repaired', 'ref: relay, lines']
  const rates = Object.fromEntries(sides.map((v) => [v, [] as number[]])) as Record<string, number[]>
  const burst = async (v: Variant) => {
    const t0 = process.hrtime.bigint()
    await Promise.all(Array.from({ length: LOAD }, () => call(v)))
    return LOAD / (Number(process.hrtime.bigint() - t0) / 1e9)
  }
  for (const v of sides) await burst(v) // warm-up
  for (let p = 0; p < LOAD_PASSES; p++) for (let k = 0; k < sides.length; k++) {
    const v = sides[(p + k) % sides.length]
    rates[v].push(await burst(v))
  }
  const med = (xs: number[]) => pct(sortNum(xs), 50)
  say(`== Under load: ${LOAD} tools/call at once, ${LOAD_PASSES} passes per variant, interleaved (calls/s: median, and each pass) ==`)
  for (const v of sides) say(`${pad(v, 20)}${lpad(fmt(med(rates[v]), 0), 8)}  (${rates[v].map((x) => x.toFixed(0)).join(' ')})`)
  for (const v of sides.slice(1)) {
    const ratios = rates[v].map((x, i) => x / rates.direct[i])
    say(`${v} / direct: ${fmt(med(rates[v]) / med(rates.direct), 2)} (median of medians); per-pass ratios median ${fmt(med(ratios), 2)} (${sortNum(ratios).map((x) => x.toFixed(2)).join(' ')})`)
  }
}

/**
 * 5b. The same load from a lean client (raw JSON-RPC lines, one write of LOAD calls, answers
 * counted by line): the SDK client's own work no longer hides what a hop costs. Spawns its own
 * direct server and proxy (`args` as for {@link connect}); calls/s per pass.
 */
async function rawLoad(args: string[], passes: number, body: Record<string, unknown>): Promise<{ rates: number[]; cpu: number[] }> {
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['pipe', 'pipe', 'ignore'] })
  let buf = ''
  let waiting: { n: number; done: () => void } | undefined
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (d: string) => {
    buf += d
    let i: number
    while ((i = buf.indexOf('\n')) >= 0) {
      buf = buf.slice(i + 1)
      if (waiting && --waiting.n === 0) waiting.done()
    }
  })
  const send = (lines: string, n: number) => new Promise<void>((done) => {
    waiting = { n, done }
    child.stdin.write(lines)
  })
  await send(`${JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })}\n`, 1)
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`)
  let id = 1
  const burst = () => Array.from({ length: LOAD }, () => `${JSON.stringify({ jsonrpc: '2.0', id: id++, method: 'tools/call', params: { name: 'echo', arguments: body } })}\n`).join('')
  const rates: number[] = []
  const cpu: number[] = []
  await send(burst(), LOAD) // warm-up
  for (let p = 0; p < passes; p++) {
    const lines = burst()
    const c0 = cpuUs(child.pid)
    const t0 = process.hrtime.bigint()
    await send(lines, LOAD)
    rates.push(LOAD / (Number(process.hrtime.bigint() - t0) / 1e9))
    cpu.push((cpuUs(child.pid) - c0) / LOAD)
  }
  child.stdin.end()
  child.kill()
  return { rates, cpu }
}

/** Raw-client load, direct / proxied / proxied repaired interleaved in rounds of one pass each. */
async function rawLoads(): Promise<void> {
  const sides: [string, string[], Record<string, unknown>][] = [
    ['direct', server.slice(1), ARGS],
    ['proxied', [...PROXY_NODE_ARGS, cli, 'mcp-proxy', '--', ...server], ARGS],
    ['proxied, repaired', [cli, 'mcp-proxy', '--', ...server], REPAIR_ARGS],
    ['ref: relay, lines', [join(here, 'mcp-relay-server.mjs'), 'lines', '--', ...server], ARGS],
  ]
  if (BASELINE_CLI !== undefined) sides.push(['baseline proxied', [BASELINE_CLI, 'mcp-proxy', '--', ...server], ARGS])
  const rates: Record<string, number[]> = {}
  const cpu: Record<string, number[]> = {}
  for (let r = 0; r < LOAD_PASSES; r++) {
    for (const [name, args, body] of sides) {
      const got = await rawLoad(args, RAW_PASSES, body)
      ;(rates[name] ??= []).push(pct(sortNum(got.rates), 50))
      ;(cpu[name] ??= []).push(mean(got.cpu))
    }
  }
  const med = (xs: number[]) => pct(sortNum(xs), 50)
  say(`== Under load, lean client: ${LOAD} tools/call lines in one write; ${LOAD_RAW_ROUNDS(LOAD_PASSES)}; calls/s, and the CPU the first process (server, proxy or relay; not the proxy's server) used per call ==`)
  for (const [name] of sides) say(`${pad(name, 20)}${lpad(fmt(med(rates[name]), 0), 8)} calls/s (${rates[name].map((x) => x.toFixed(0)).join(' ')}); CPU ${fmt(med(cpu[name]))} µs per call`)
  for (const [name] of sides.slice(1)) {
    const ratios = rates[name].map((x, i) => x / rates.direct[i])
    say(`${name} / direct: per-round ratios median ${fmt(med(ratios), 2)} (${sortNum(ratios).map((x) => x.toFixed(2)).join(' ')})`)
  }
  say(`of the proxy's CPU per call, the gate's own decision (in this process, the same call line, as the proxy guards it): ${gateShare()}`)
}

/** µs per decision of one `tools/call` line with a prepared caller, as the proxy makes it (median of 9 runs of 20,000). */
function gateShare(): string {
  const gate = new ToolGate({ tools: [{ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string', maxLength: 200 }, n: { type: 'integer' }, tag: { type: 'string', enum: ['a', 'b'] } }, required: ['text', 'n'], additionalProperties: false } }] })
  const opts = { dialect: 'mcp' as const, caller: gate.caller({}) }
  const line = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: ARGS } })
  const check = `{"text":"hello toolgate","n":5,"tag":"a"}`
  const guard: number[] = []
  const bare: number[] = []
  const single: number[] = []
  for (let r = 0; r < 9; r++) {
    let t0 = process.hrtime.bigint()
    for (let i = 0; i < 20_000; i++) guardSingleCall(gate, line, opts)
    single.push(Number(process.hrtime.bigint() - t0) / 20_000 / 1e3)
    t0 = process.hrtime.bigint()
    for (let i = 0; i < 20_000; i++) gate.guard(line, opts)
    guard.push(Number(process.hrtime.bigint() - t0) / 20_000 / 1e3)
    t0 = process.hrtime.bigint()
    for (let i = 0; i < 20_000; i++) gate.check('echo', check, opts.caller)
    bare.push(Number(process.hrtime.bigint() - t0) / 20_000 / 1e3)
  }
  return `guardSingle ${fmt(pct(sortNum(single), 50), 2)} µs (the whole report, gate.guard: ${fmt(pct(sortNum(guard), 50), 2)} µs; a bare check of the same arguments: ${fmt(pct(sortNum(bare), 50), 2)} µs)`
}

/** Passes per process in the lean-client load (after a warm-up burst); their median is the round's figure. */
const RAW_PASSES = 5
const LOAD_RAW_ROUNDS = (rounds: number) => `${rounds} rounds, each a fresh process per side with a warm-up burst and ${RAW_PASSES} passes (median)`

/** Writes what was said to bench/results/`name` (a `--load` run to its own file, not over a full run's). */
function save(name: string): void {
  mkdirSync(join(here, 'results'), { recursive: true })
  writeFileSync(join(here, 'results', name), `${new Date().toISOString()}\n${out.join('\n')}\n`)
}

main().catch((err: unknown) => {
  console.error(err)
  process.exit(1)
})
