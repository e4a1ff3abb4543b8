/**
 * What `toolgate proxy` adds to a Chat Completions request (issue 6), against the same official
 * `openai` client pointed at the upstream directly, in the same run: the added latency of a
 * non-streaming request whose answer is a three-tool-call turn, and one whose answer is text only;
 * and, streaming, the time to the first text byte.
 *
 *   npm run build:ts                          # the bench spawns dist/cli/main.js
 *   npx tsx bench/http-proxy.bench.ts         # about a minute
 *   npx tsx bench/http-proxy.bench.ts --quick # smoke run
 *
 * Env overrides: BENCH_WARMUP (requests per variant before timing, default 300), BENCH_ROUNDS
 * (interleaved rounds, default 60), BENCH_CALLS (timed requests per variant per round, default
 * 20), BENCH_STREAM_ROUNDS (default 40, 5 streams per side per round), BENCH_STREAM_TAIL_MS
 * (how long the upstream holds a stream's rest after its first text, default 10), BENCH_TIME
 * (tinybench ms per task, default 1000), BENCH_CLI (the CLI script, default dist/cli/main.js),
 * BENCH_TOOLS=mcp (the request offers the MCP corpus's 64 tool schemas too, not only three).
 *
 * The upstream is bench/chat-upstream-server.mjs, its own process: a node:http server answering
 * at once with fixed responses built here (the streaming ones cut by chatChunks from
 * __test__/helpers/upstream.ts, as the API cuts them). The proxy is `node dist/cli/main.js proxy
 * --upstream <upstream> --port 0`, ready when it prints `toolgate proxy: listening on …`. A
 * reference lines put bench/http-relay-server.mjs in the proxy's place: a node:http hop that
 * parses the request and passes the answer on as it comes, gating nothing — forwarding with
 * node:http `request` as toolgate proxy does (`ref: http relay`), or with `fetch` (`ref: fetch
 * relay`, for scale): what any Node proxy costs, and what toolgate's own work adds on top.
 * Order of work: every answer through the proxy is asserted equal to the direct one (the repaired
 * variant: the same calls with `"limit": "10"` arriving as 10), then interleaved per-request
 * timing (p50/p99, the added p50, per-round differences as a noise gauge), tinybench on the same
 * requests, and the streams' time to first text byte and to the end; then, under load, 500
 * requests at 50 in flight through the `openai` client and through a lean node:http client (which
 * shows what the hop and the proxy cost without the `openai` client's own work in the way), with
 * the proxy's CPU per request. Figures go to stdout and to bench/results/http-proxy.txt (`--load`: http-proxy-load.txt).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { Agent, request as httpRequest } from 'node:http'
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { arch, cpus, loadavg, platform, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import OpenAI from 'openai'
import { VERSION as OPENAI_VERSION } from 'openai/version'
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming, ChatCompletionTool } from 'openai/resources/chat/completions'
import { Bench } from 'tinybench'

import { chatChunks, sseText } from '../__test__/helpers/upstream'
import { loadCorpus } from './corpus/mcp/corpus.js'
import { deepEqual } from './peer'
import { addonNote, cpuUs, distNote, fmt, lpad, mean, out, pad, pct, say, sortNum } from './proxy-report'

const here = typeof __dirname === 'string' ? __dirname : resolve('bench')
const root = join(here, '..')
const QUICK = process.argv.includes('--quick')
/** BENCH_PROXY_NODE_ARGS: node flags for the proxy process only (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`). */
const PROXY_NODE_ARGS = (process.env.BENCH_PROXY_NODE_ARGS ?? '').split(' ').filter((a) => a !== '')
const num = (name: string, full: number, quick: number) => Number(process.env[name] ?? (QUICK ? quick : full))
const WARMUP = num('BENCH_WARMUP', 300, 50)
const ROUNDS = num('BENCH_ROUNDS', 60, 8)
const CALLS = num('BENCH_CALLS', 20, 10)
const STREAM_ROUNDS = num('BENCH_STREAM_ROUNDS', 40, 6)
const STREAMS_PER_ROUND = 5
const TAIL_MS = num('BENCH_STREAM_TAIL_MS', 10, 10)
const TB_TIME = num('BENCH_TIME', 1000, 200)
/** Load (issue 20): requests per pass and how many in flight, and passes per side. */
const LOAD = num('BENCH_LOAD', 500, 500)
const LOAD_CONCURRENCY = num('BENCH_LOAD_CONCURRENCY', 50, 50)
const LOAD_PASSES = num('BENCH_LOAD_PASSES', 7, 3)
/** `--load`: only the load section (after the answers are checked). */
const LOAD_ONLY = process.argv.includes('--load')
/** BENCH_BASELINE_CLI: another build's CLI (e.g. the previous commit's dist/cli/main.js), timed beside in the load section. */
const BASELINE_CLI = process.env.BENCH_BASELINE_CLI
/** The CLI to run (BENCH_CLI overrides it, e.g. to time another build). */
const cli = resolve(process.env.BENCH_CLI ?? join(root, 'dist', 'cli', 'main.js'))
/** The sources the built CLI must be newer than. */
const PROXY_SOURCES = ['src-ts/proxy/http/proxy.ts', 'src-ts/proxy/http/upstream.ts', 'src-ts/proxy/http/gates.ts', 'src-ts/proxy/http/rewrite.ts', 'src-ts/proxy/http/sse.ts', 'src-ts/cli/proxy.ts', 'src-ts/gate.ts']

// --- the conversation: three tools from bench/corpus/tools.json, and the recorded answers ---

const BASE_TOOLS: ChatCompletionTool[] = [
  { type: 'function', function: { name: 'read_file', description: 'Read the complete contents of a text file from the workspace.', parameters: { type: 'object', properties: { path: { type: 'string', minLength: 1 }, head: { type: 'integer', minimum: 1 }, tail: { type: 'integer', minimum: 1 } }, required: ['path'], additionalProperties: false } } },
  { type: 'function', function: { name: 'search_db', description: 'Full-text search over the customer database.', parameters: { type: 'object', properties: { query: { type: 'string', minLength: 1 }, status: { type: 'string', enum: ['active', 'inactive', 'archived'] }, limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 } }, required: ['query'], additionalProperties: false } } },
  { type: 'function', function: { name: 'get_weather', description: 'Current conditions and a daily forecast for a location.', parameters: { type: 'object', properties: { location: { type: 'string', minLength: 1 }, units: { type: 'string', enum: ['metric', 'imperial'], default: 'metric' }, days: { type: 'integer', minimum: 1, maximum: 14, default: 3 } }, required: ['location'], additionalProperties: false } } },
]
/**
 * The request's tools: the three above, or with BENCH_TOOLS=mcp those and the MCP corpus's 64
 * published tool schemas (bench/corpus/mcp; a name already above is left out), as an agent
 * offering a whole MCP toolbox sends them with every request (~40 KB of JSON).
 */
const TOOLS: ChatCompletionTool[] =
  process.env.BENCH_TOOLS === 'mcp'
    ? [
        ...BASE_TOOLS,
        ...loadCorpus()
          .config.tools.filter((t) => !BASE_TOOLS.some((b) => b.type === 'function' && b.function.name === t.name))
          .map((t): ChatCompletionTool => ({ type: 'function', function: { name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), parameters: t.inputSchema as Record<string, unknown> } })),
      ]
    : BASE_TOOLS
const MESSAGES: ChatCompletionCreateParamsNonStreaming['messages'] = [
  { role: 'system', content: 'You are a support analyst. Use the tools when they help.' },
  { role: 'user', content: 'Check src/main.rs, find the churned active accounts and tell me the weather in Lyon.' },
]
const usage = { prompt_tokens: 412, completion_tokens: 96, total_tokens: 508 }
const head = (id: string) => ({ id, object: 'chat.completion', created: 1741569952, model: 'gpt-4.1-2025-04-14', service_tier: 'default', system_fingerprint: 'fp_b3f1157249' })

/** A turn of three calls (every argument given, defaults included, so all three pass unchanged). */
function callsTurn(limit: number | string, text: string | null = null): ChatCompletion {
  const call = (id: string, name: string, args: string) => ({ id, type: 'function' as const, function: { name, arguments: args } })
  return {
    ...head('chatcmpl-bench-calls'),
    choices: [{
      index: 0,
      message: {
        role: 'assistant', content: text, refusal: null, annotations: [],
        tool_calls: [
          call('call_Zr5mWq2yV7cNfB1kLx0aTg9H', 'read_file', '{"path":"src/main.rs","head":40}'),
          call('call_3hPq8VnR0dKsY6tEwJ2mXc4L', 'search_db', `{"query":"churned accounts","status":"active","limit":${JSON.stringify(limit)}}`),
          call('call_Lm9Tb4Xe1QwZ7oRc5Vy8Nk2D', 'get_weather', '{"location":"Lyon, France","units":"metric","days":3}'),
        ],
      },
      logprobs: null, finish_reason: 'tool_calls',
    }],
    usage,
  } as ChatCompletion
}
const TEXT = 'Your churn report is ready: 42 accounts moved from active to inactive this quarter, mostly after the pricing change in August.'
const textTurn: ChatCompletion = {
  ...head('chatcmpl-bench-text'),
  choices: [{ index: 0, message: { role: 'assistant', content: TEXT, refusal: null, annotations: [] }, logprobs: null, finish_reason: 'stop' }],
  usage,
} as ChatCompletion

/** The models the upstream answers (by request `model`): non-streaming bodies, and the stream. */
const ANSWERS: Record<string, ChatCompletion> = {
  'bench-calls': callsTurn(10),
  'bench-repair': callsTurn('10'),
  'bench-text': textTurn,
  // streamed: some text, then the three calls
  'bench-stream': callsTurn(10, 'Let me look at the file, the accounts and the weather.'),
}

function responsesFile(dir: string): string {
  const out: Record<string, unknown> = { tailMs: TAIL_MS }
  for (const [model, turn] of Object.entries(ANSWERS)) {
    const events = chatChunks(turn)
    // chunks: [role, first text half, …]: the role chunk and the first text go out at once
    out[model] = { json: JSON.stringify(turn), sse: [sseText(events.slice(0, 2)), sseText(events.slice(2))] }
  }
  const file = join(dir, 'responses.json')
  writeFileSync(file, JSON.stringify(out))
  return file
}

// --- processes ---

/** Every child spawned, killed when the bench exits however it exits (none outlives a crash or ^C). */
const children = new Set<ChildProcess>()
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill()
})
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => process.exit(130))

/** Spawns `node <args>` and resolves with the first match of `ready` on its `stream`. */
function start(args: string[], stream: 'stdout' | 'stderr', ready: RegExp): Promise<{ child: ChildProcess; match: RegExpMatchArray; tail: () => string }> {
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
  children.add(child)
  let tail = ''
  let seen = ''
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => fail(new Error('not ready after 20 s')), 20_000)
    const fail = (err: Error) => {
      clearTimeout(timer)
      child.kill()
      reject(new Error(`\`node ${args.join(' ')}\`: ${err.message}\nits output: ${tail}`))
    }
    const onData = (which: string) => (d: Buffer) => {
      tail = (tail + d.toString()).slice(-4096)
      if (which !== stream || seen === '\0') return
      seen += d.toString()
      const m = seen.match(ready)
      if (m) {
        seen = '\0'
        clearTimeout(timer)
        resolvePromise({ child, match: m, tail: () => tail })
      }
    }
    child.stdout!.on('data', onData('stdout'))
    child.stderr!.on('data', onData('stderr'))
    child.on('error', fail)
    child.on('exit', (code, signal) => {
      if (seen !== '\0') fail(new Error(`exited (${code ?? signal}) before it was ready`))
    })
  })
}

// --- timing ---

const now = () => Number(process.hrtime.bigint()) / 1e3 // µs

/** Tool calls as (id, name, parsed arguments): what a host acts on, independent of spacing. */
const callsOf = (c: ChatCompletion) => (c.choices[0]?.message.tool_calls ?? []).map((t) => (t.type === 'function' ? { id: t.id, name: t.function.name, args: JSON.parse(t.function.arguments) as unknown } : t))

/** A stream read to the end: µs to the first non-empty text delta and to the end, and what it said. */
async function readStream(client: OpenAI): Promise<{ firstText: number; end: number; text: string; calls: { id?: string; name?: string; args: string }[]; finish: string | null }> {
  const t0 = now()
  const stream = await client.chat.completions.create({ model: 'bench-stream', messages: MESSAGES, tools: TOOLS, stream: true })
  let firstText = NaN
  let text = ''
  let finish: string | null = null
  const calls: { id?: string; name?: string; args: string }[] = []
  for await (const chunk of stream) {
    const choice = chunk.choices[0]
    if (choice === undefined) continue
    const d = choice.delta
    if (d.content) {
      if (Number.isNaN(firstText)) firstText = now() - t0
      text += d.content
    }
    for (const tc of d.tool_calls ?? []) {
      const c = (calls[tc.index] ??= { args: '' })
      if (tc.id) c.id = tc.id
      if (tc.function?.name) c.name = tc.function.name
      c.args += tc.function?.arguments ?? ''
    }
    if (choice.finish_reason) finish = choice.finish_reason
  }
  return { firstText, end: now() - t0, text, calls, finish }
}

type Side = 'direct' | 'proxied' | 'ref: http relay' | 'ref: fetch relay'
const SIDES: Side[] = ['direct', 'proxied', 'ref: http relay', 'ref: fetch relay']
type Variant = `${'text' | '3 calls'}, ${Side}` | '3 calls (1 repaired), proxied'
const VARIANTS: Variant[] = [
  'text, direct', 'text, proxied', 'text, ref: http relay', 'text, ref: fetch relay',
  '3 calls, direct', '3 calls, proxied', '3 calls (1 repaired), proxied', '3 calls, ref: http relay', '3 calls, ref: fetch relay',
]
/** (measured, baseline): what each line adds is its p50 minus the baseline's. */
const PAIRS: [Variant, Variant][] = [
  ['text, proxied', 'text, direct'], ['3 calls, proxied', '3 calls, direct'], ['3 calls (1 repaired), proxied', '3 calls, direct'],
  ['text, ref: http relay', 'text, direct'], ['3 calls, ref: http relay', '3 calls, direct'],
  ['text, ref: fetch relay', 'text, direct'], ['3 calls, ref: fetch relay', '3 calls, direct'],
]
const sideOf = (v: Variant): Side => SIDES.find((s) => v.endsWith(`, ${s}`)) ?? 'proxied'

async function main(): Promise<void> {
  try {
    statSync(cli)
  } catch {
    throw new Error('dist/cli/main.js is missing: run `npm run build:ts` first')
  }
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-http-bench-'))
  const upstream = await start([join(here, 'chat-upstream-server.mjs'), responsesFile(dir)], 'stdout', /listening on (http:\/\/\S+)/)
  const upstreamUrl = upstream.match[1]
  let proxy: Awaited<ReturnType<typeof start>> | undefined
  let relay: Awaited<ReturnType<typeof start>> | undefined
  let fetchRelay: Awaited<ReturnType<typeof start>> | undefined
  let baseline: Awaited<ReturnType<typeof start>> | undefined
  try {
    proxy = await start([...PROXY_NODE_ARGS, cli, 'proxy', '--upstream', upstreamUrl, '--port', '0'], 'stderr', /toolgate proxy: listening on (http:\/\/[^\s/]+)/)
    const proxyUrl = proxy.match[1]
    relay = await start([join(here, 'http-relay-server.mjs'), '--upstream', upstreamUrl], 'stdout', /listening on (http:\/\/\S+)/)
    fetchRelay = await start([join(here, 'http-relay-server.mjs'), '--upstream', upstreamUrl, '--via', 'fetch'], 'stdout', /listening on (http:\/\/\S+)/)
    // the other build starts now and is warmed as much as this one (a proxy warmed less — JIT,
    // heap sizes — used ~20 % more CPU per request under load for the same code)
    if (BASELINE_CLI !== undefined) baseline = await start([BASELINE_CLI, 'proxy', '--upstream', upstreamUrl, '--port', '0'], 'stderr', /toolgate proxy: listening on (http:\/\/[^\s/]+)/)
    say(`toolgate proxy benchmark — node ${process.version} ${platform()}-${arch()}, ${cpus()[0]?.model ?? 'unknown cpu'} ×${cpus().length}, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
    say(`addon: ${addonNote(root)}; ${distNote(root, cli, PROXY_SOURCES)}`)
    say(`upstream ${upstreamUrl} (bench/chat-upstream-server.mjs); proxy ${proxyUrl} (node dist/cli/main.js proxy --upstream ${upstreamUrl} --port 0)`)
    say(`client: openai ${OPENAI_VERSION} chat.completions.create, ${TOOLS.length} tools in the request; warm-up ${WARMUP} per variant; ${ROUNDS} interleaved rounds × ${CALLS} requests per variant; ${STREAM_ROUNDS} × ${STREAMS_PER_ROUND} streams per side (upstream holds the rest ${TAIL_MS} ms after the first text); tinybench ${TB_TIME} ms per task`)
    say('')

    const client = (origin: string) => new OpenAI({ apiKey: 'sk-bench', baseURL: `${origin}/v1`, maxRetries: 0 })
    const clients: Record<Side, OpenAI> = { direct: client(upstreamUrl), proxied: client(proxyUrl), 'ref: http relay': client(relay.match[1]), 'ref: fetch relay': client(fetchRelay.match[1]) }
    const request = (v: Variant): Promise<ChatCompletion> => {
      const client = clients[sideOf(v)]
      const model = v.startsWith('text') ? 'bench-text' : v.includes('repaired') ? 'bench-repair' : 'bench-calls'
      return client.chat.completions.create({ model, messages: MESSAGES, tools: TOOLS })
    }

    // 1. The same answers.
    const got = Object.fromEntries(await Promise.all(VARIANTS.map(async (v) => [v, await request(v)] as const))) as Record<Variant, ChatCompletion>
    if (!deepEqual(got['text, direct'], textTurn)) throw new Error(`direct text answer differs from the recorded one: ${JSON.stringify(got['text, direct'])}`)
    if (!deepEqual(got['3 calls, direct'], ANSWERS['bench-calls'])) throw new Error(`direct calls answer differs from the recorded one: ${JSON.stringify(got['3 calls, direct'])}`)
    if (!deepEqual(got['text, proxied'], got['text, direct'])) throw new Error(`text turn: proxied ${JSON.stringify(got['text, proxied'])}\n  direct ${JSON.stringify(got['text, direct'])}`)
    for (const v of ['text, ref: http relay', '3 calls, ref: http relay', 'text, ref: fetch relay', '3 calls, ref: fetch relay'] as const) if (!deepEqual(got[v], v.startsWith('text') ? textTurn : ANSWERS['bench-calls'])) throw new Error(`${v}: ${JSON.stringify(got[v])}`)
    if (!deepEqual(got['3 calls, proxied'], got['3 calls, direct'])) throw new Error(`3-call turn: proxied ${JSON.stringify(got['3 calls, proxied'])}\n  direct ${JSON.stringify(got['3 calls, direct'])}`)
    const repaired = got['3 calls (1 repaired), proxied']
    if (!deepEqual(callsOf(repaired), callsOf(got['3 calls, direct'])) || repaired.choices[0]?.finish_reason !== 'tool_calls') {
      throw new Error(`repaired turn: the calls through the proxy are ${JSON.stringify(callsOf(repaired))}, expected ${JSON.stringify(callsOf(got['3 calls, direct']))} (limit "10" repaired to 10)`)
    }
    const sd = await readStream(clients.direct)
    const sp = await readStream(clients.proxied)
    const streamed = (s: typeof sd) => ({ text: s.text, finish: s.finish, calls: s.calls.map((c) => ({ id: c.id, name: c.name, args: JSON.parse(c.args) as unknown })) })
    if (!deepEqual(streamed(sp), streamed(sd))) throw new Error(`stream: proxied ${JSON.stringify(streamed(sp))}\n  direct ${JSON.stringify(streamed(sd))}`)
    say('answers: the proxy returns the direct answers (text turn and 3-call turn deep-equal; the repaired turn\'s calls equal the direct ones with limit 10; the stream assembles to the same text, calls and finish reason)')
    say('')

    const baseClient = baseline === undefined ? undefined : client(baseline.match[1])
    const baseRequest = (model: string) => baseClient!.chat.completions.create({ model, messages: MESSAGES, tools: TOOLS })
    for (const v of VARIANTS) for (let i = 0; i < WARMUP; i++) await request(v)
    if (baseClient !== undefined) for (const model of ['bench-text', 'bench-calls', 'bench-repair']) for (let i = 0; i < WARMUP; i++) await baseRequest(model)
    const loadSides = async (): Promise<LoadSide[]> => {
      const x: LoadSide[] = [
        { name: '3 calls, direct', send: () => request('3 calls, direct') },
        { name: '3 calls, proxied', send: () => request('3 calls, proxied'), base: '3 calls, direct', pid: proxy!.child.pid },
        { name: '3 calls (1 repaired), proxied', send: () => request('3 calls (1 repaired), proxied'), base: '3 calls, direct', pid: proxy!.child.pid },
        { name: '3 calls, ref: http relay', send: () => request('3 calls, ref: http relay'), base: '3 calls, direct', pid: relay!.child.pid },
        { name: 'text, direct', send: () => request('text, direct') },
        { name: 'text, proxied', send: () => request('text, proxied'), base: 'text, direct', pid: proxy!.child.pid },
      ]
      if (baseline !== undefined) x.push({ name: '3 calls, baseline proxied', send: () => baseRequest('bench-calls'), base: '3 calls, direct', pid: baseline.child.pid })
      return x
    }
    const leanSides = (): LeanSide[] => {
      const x: LeanSide[] = [
        { name: '3 calls, direct', origin: upstreamUrl },
        { name: '3 calls, proxied', origin: proxyUrl, pid: proxy!.child.pid },
        { name: '3 calls, ref: http relay', origin: relay!.match[1], pid: relay!.child.pid },
      ]
      if (baseline !== undefined) x.push({ name: '3 calls, baseline proxied', origin: baseline.match[1], pid: baseline.child.pid })
      return x
    }
    if (LOAD_ONLY) {
      await load(await loadSides())
      say('')
      await leanLoad(leanSides())
      save('http-proxy-load.txt')
      return
    }

    // 2. Interleaved per-request latency, the first variant rotating every round.
    const samples = Object.fromEntries(VARIANTS.map((v) => [v, [] as number[]])) as Record<Variant, number[]>
    const roundP50 = Object.fromEntries(VARIANTS.map((v) => [v, [] as number[]])) as Record<Variant, number[]>
    for (let r = 0; r < ROUNDS; r++) {
      for (let k = 0; k < VARIANTS.length; k++) {
        const v = VARIANTS[(r + k) % VARIANTS.length]
        const mine: number[] = []
        for (let i = 0; i < CALLS; i++) {
          const t0 = now()
          await request(v)
          mine.push(now() - t0)
        }
        samples[v].push(...mine)
        roundP50[v].push(pct(sortNum(mine), 50))
      }
    }
    const lat = Object.fromEntries(VARIANTS.map((v) => {
      const s = sortNum(samples[v])
      return [v, { p50: pct(s, 50), p90: pct(s, 90), p99: pct(s, 99), mean: mean(s) }]
    })) as Record<Variant, { p50: number; p90: number; p99: number; mean: number }>
    say(`== Latency per non-streaming request, interleaved (µs; ${ROUNDS * CALLS} requests per variant) ==`)
    say(`${pad('', 32)}${lpad('p50', 9)}${lpad('p90', 9)}${lpad('p99', 9)}${lpad('mean', 9)}`)
    for (const v of VARIANTS) say(`${pad(v, 32)}${lpad(fmt(lat[v].p50), 9)}${lpad(fmt(lat[v].p90), 9)}${lpad(fmt(lat[v].p99), 9)}${lpad(fmt(lat[v].mean), 9)}`)
    say('')
    for (const [p, d] of PAIRS) {
      const diffs = sortNum(roundP50[p].map((x, i) => x - roundP50[d][i]))
      say(`${p}: adds ${fmt(lat[p].p50 - lat[d].p50)} µs at p50 over ${d} (ratio ${fmt(lat[p].p50 / lat[d].p50, 2)}), ${fmt(lat[p].p99 - lat[d].p99)} µs at p99; per-round p50 difference median ${fmt(pct(diffs, 50))} µs (quartiles ${fmt(pct(diffs, 25))}–${fmt(pct(diffs, 75))})`)
    }
    // paired per round (same load): the median of the rounds' p50 differences
    const paired = (a: Variant, b: Variant) => pct(sortNum(roundP50[a].map((x, i) => x - roundP50[b][i])), 50)
    for (const t of ['text', '3 calls'] as const) {
      const v = (x: Side): Variant => `${t}, ${x}`
      say(`${t}, split (medians of per-round p50 differences): a Node hop ${fmt(paired(v('ref: http relay'), v('direct')))} µs + toolgate's own work ${fmt(paired(v('proxied'), v('ref: http relay')))} µs (proxied − direct: ${fmt(paired(v('proxied'), v('direct')))} µs); for scale, fetch instead of node:http would add ${fmt(paired(v('ref: fetch relay'), v('ref: http relay')))} µs`)
    }
    say('')

    // 3. tinybench, the same requests (tasks one after another).
    const bench = new Bench({ name: 'http-proxy', time: TB_TIME, warmupTime: Math.min(300, TB_TIME) })
    for (const v of VARIANTS) bench.add(v, async () => { await request(v) })
    await bench.run()
    say(`== tinybench (${TB_TIME} ms per task; µs) ==`)
    const tb: Record<string, number> = {}
    for (const t of bench.tasks) {
      const r = t.result
      if (r.state !== 'completed' && r.state !== 'aborted-with-statistics') throw new Error(`${t.name}: ${r.state}`)
      tb[t.name] = (r.latency.p50 ?? NaN) * 1e3
      say(`${pad(t.name, 32)} p50 ${lpad(fmt(tb[t.name]), 8)}  p99 ${lpad(fmt((r.latency.p99 ?? NaN) * 1e3), 8)}  mean ${lpad(fmt(r.latency.mean * 1e3), 8)}  (${r.latency.samplesCount} requests)`)
    }
    say(`tinybench added p50: ${PAIRS.map(([p, d]) => `${p} ${fmt(tb[p] - tb[d])} µs`).join('; ')}`)
    say('')

    // 4. Streaming: time to the first text delta, and to the end of the stream.
    const ttf = Object.fromEntries(SIDES.map((x) => [x, [] as number[]])) as Record<Side, number[]>
    const end = Object.fromEntries(SIDES.map((x) => [x, [] as number[]])) as Record<Side, number[]>
    for (let i = 0; i < 5; i++) for (const side of SIDES) await readStream(clients[side])
    for (let r = 0; r < STREAM_ROUNDS; r++) {
      for (let k = 0; k < SIDES.length; k++) {
        const side = SIDES[(r + k) % SIDES.length]
        for (let i = 0; i < STREAMS_PER_ROUND; i++) {
          const s = await readStream(clients[side])
          ttf[side].push(s.firstText)
          end[side].push(s.end)
        }
      }
    }
    const st = (xs: number[]) => {
      const s = sortNum(xs)
      return { p50: pct(s, 50), p99: pct(s, 99) }
    }
    const first = Object.fromEntries(SIDES.map((x) => [x, st(ttf[x])])) as Record<Side, { p50: number; p99: number }>
    const last = Object.fromEntries(SIDES.map((x) => [x, st(end[x])])) as Record<Side, { p50: number; p99: number }>
    say(`== Streaming (text, then 3 calls; ${STREAM_ROUNDS * STREAMS_PER_ROUND} streams per side; µs) ==`)
    say(`${pad('', 32)}${lpad('first text p50', 16)}${lpad('p99', 10)}${lpad('end p50', 10)}${lpad('p99', 10)}`)
    for (const x of SIDES) say(`${pad(`stream, ${x}`, 32)}${lpad(fmt(first[x].p50), 16)}${lpad(fmt(first[x].p99), 10)}${lpad(fmt(last[x].p50), 10)}${lpad(fmt(last[x].p99), 10)}`)
    const tp = first.proxied
    const td = first.direct
    say(`time to first text byte: the proxy adds ${fmt(tp.p50 - td.p50)} µs at p50 (ratio ${fmt(tp.p50 / td.p50, 2)}); the http relay ${fmt(first['ref: http relay'].p50 - td.p50)} µs, the fetch relay ${fmt(first['ref: fetch relay'].p50 - td.p50)} µs; end of stream: proxy +${fmt(last.proxied.p50 - last.direct.p50)} µs, http relay +${fmt(last['ref: http relay'].p50 - last.direct.p50)} µs, fetch relay +${fmt(last['ref: fetch relay'].p50 - last.direct.p50)} µs`)
    say(tp.p50 < TAIL_MS * 1000
      ? `the first text came through before the upstream sent the rest (${TAIL_MS} ms later): text streams live`
      : `the first text came through only after the upstream's rest (${TAIL_MS} ms later): the proxy holds text back`)
    say('')
    await load(await loadSides())
    say('')
    await leanLoad(leanSides())
  } finally {
    baseline?.child.kill()
    fetchRelay?.child.kill()
    relay?.child.kill()
    proxy?.child.kill()
    upstream.child.kill()
    rmSync(dir, { recursive: true, force: true })
  }
  save('http-proxy.txt')
}

/** Writes what was said to bench/results/`name` (a `--load` run to its own file, not over a full run's). */
function save(name: string): void {
  mkdirSync(join(here, 'results'), { recursive: true })
  writeFileSync(join(here, 'results', name), `${new Date().toISOString()}\n${out.join('\n')}\n`)
}

/** One line of the load section: how to send a request, its baseline line, and the process whose CPU to count. */
interface LoadSide {
  name: string
  send: () => Promise<unknown>
  base?: string
  pid?: number
}

/**
 * 5. Under load (issue 20): LOAD requests, LOAD_CONCURRENCY in flight, per side; LOAD_PASSES
 * passes, interleaved, the first side rotating. Median requests/s of each, the median of the
 * per-pass ratios against direct (same load), and the proxy process's CPU per request.
 */
async function load(sides: LoadSide[]): Promise<void> {
  const rates: Record<string, number[]> = {}
  const cpu: Record<string, number[]> = {}
  for (const x of sides) {
    rates[x.name] = []
    cpu[x.name] = []
  }
  const pass = async (x: LoadSide) => {
    let next = 0
    const worker = async () => {
      while (next++ < LOAD) await x.send()
    }
    const c0 = cpuUs(x.pid)
    const t0 = now()
    await Promise.all(Array.from({ length: LOAD_CONCURRENCY }, worker))
    const t = now() - t0
    cpu[x.name].push((cpuUs(x.pid) - c0) / LOAD)
    return LOAD / (t / 1e6)
  }
  for (const x of sides) await pass(x) // warm-up
  for (const x of sides) cpu[x.name] = []
  for (let p = 0; p < LOAD_PASSES; p++) for (let k = 0; k < sides.length; k++) {
    const x = sides[(p + k) % sides.length]
    rates[x.name].push(await pass(x))
  }
  const med = (xs: number[]) => pct(sortNum(xs), 50)
  say(`== Under load: ${LOAD} requests, ${LOAD_CONCURRENCY} in flight, ${LOAD_PASSES} passes per side, interleaved (requests/s: median, and each pass; the proxy process's CPU per request) ==`)
  for (const x of sides) say(`${pad(x.name, 32)}${lpad(fmt(med(rates[x.name]), 0), 8)}  (${rates[x.name].map((r) => r.toFixed(0)).join(' ')})${x.pid === undefined ? '' : `; CPU ${fmt(mean(cpu[x.name]))} µs per request`}`)
  for (const x of sides) {
    if (x.base === undefined) continue
    const ratios = rates[x.name].map((r, i) => r / rates[x.base!][i])
    say(`${x.name} / ${x.base}: ${fmt(med(rates[x.name]) / med(rates[x.base]), 2)} (median of medians); per-pass ratios median ${fmt(med(ratios), 2)} (${sortNum(ratios).map((r) => r.toFixed(2)).join(' ')})`)
  }
}

/** One side of the lean-client load: where it listens, and the process whose CPU to count. */
interface LeanSide {
  name: string
  origin: string
  pid?: number
}

/**
 * 5b. The same load from a lean client: node:http `request` over one keep-alive agent of
 * LOAD_CONCURRENCY sockets, sending the body the `openai` client sends (model, messages, tools)
 * and reading the answer whole. The `openai` client's own work (most of this process's CPU)
 * no longer hides what the hop and the proxy cost. LOAD_PASSES passes per side, interleaved,
 * the first side rotating; requests/s, the per-pass ratio to direct, and CPU per request.
 */
async function leanLoad(sides: LeanSide[]): Promise<void> {
  const body = JSON.stringify({ model: 'bench-calls', messages: MESSAGES, tools: TOOLS })
  const pass = async (origin: string): Promise<number> => {
    const u = new URL(origin)
    const agent = new Agent({ keepAlive: true, maxSockets: LOAD_CONCURRENCY })
    const one = () => new Promise<void>((done, fail) => {
      const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: 'Bearer sk-bench' }
      const r = httpRequest({ host: u.hostname, port: u.port, path: '/v1/chat/completions', method: 'POST', agent, headers }, (res) => {
        res.resume()
        res.on('end', () => (res.statusCode === 200 ? done() : fail(new Error(`${origin}: status ${res.statusCode}`))))
      })
      r.on('error', fail)
      r.end(body)
    })
    let next = 0
    const t0 = now()
    await Promise.all(Array.from({ length: LOAD_CONCURRENCY }, async () => {
      while (next++ < LOAD) await one()
    }))
    const t = now() - t0
    agent.destroy()
    return LOAD / (t / 1e6)
  }
  const rates: Record<string, number[]> = {}
  const cpu: Record<string, number[]> = {}
  for (const x of sides) {
    rates[x.name] = []
    cpu[x.name] = []
    await pass(x.origin) // warm-up
  }
  for (let p = 0; p < LOAD_PASSES; p++) for (let k = 0; k < sides.length; k++) {
    const x = sides[(p + k) % sides.length]
    const c0 = cpuUs(x.pid)
    rates[x.name].push(await pass(x.origin))
    cpu[x.name].push((cpuUs(x.pid) - c0) / LOAD)
  }
  const med = (xs: number[]) => pct(sortNum(xs), 50)
  say(`== Under load, lean client (node:http, the openai client's body): ${LOAD} requests, ${LOAD_CONCURRENCY} in flight, ${LOAD_PASSES} passes per side, interleaved (requests/s: median, and each pass; CPU per request, median) ==`)
  for (const x of sides) say(`${pad(x.name, 32)}${lpad(fmt(med(rates[x.name]), 0), 8)}  (${rates[x.name].map((r) => r.toFixed(0)).join(' ')})${x.pid === undefined ? '' : `; CPU ${fmt(med(cpu[x.name]))} µs per request`}`)
  for (const x of sides.slice(1)) {
    const ratios = rates[x.name].map((r, i) => r / rates[sides[0].name][i])
    say(`${x.name} / ${sides[0].name}: per-pass ratios median ${fmt(med(ratios), 2)} (${sortNum(ratios).map((r) => r.toFixed(2)).join(' ')})`)
  }
}

main().catch((err: unknown) => {
  console.error(err)
  process.exit(1)
})
