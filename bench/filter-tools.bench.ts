/**
 * `filterTools` as a host calls it before each model request: the MCP corpus's 64 published tool
 * schemas as an OpenAI Chat Completions `tools` list (what the SDK is given), filtered for each
 * of the corpus's four callers, against what a Node developer writes by hand — `Map`s of
 * role → allowed and role → denied tool names built once from the policy (a deny on any of the
 * caller's roles wins, as in the gate), and `tools.filter` on `function.name`. Both sides measured in the same run, interleaved.
 *
 *   npx tsx bench/filter-tools.bench.ts            # full run (~30 s)
 *   npx tsx bench/filter-tools.bench.ts --quick    # smoke run
 *
 * Sides: the list prepared once (`gate.prepareTools`) and filtered per caller — as objects with a
 * prepared caller and with the context object, and as text (parsed after) —, then `filterTools`
 * given the same list on every call (from its second call on, the list it read is remembered by
 * its text: src-ts/tool-list-memo.ts): as parsed objects with a prepared caller (the SDK user),
 * the same with the context object, as JSON text (what the HTTP proxy filters; parsed after, as
 * the caller would); `filterTools` given a list never seen before on every call (objects: the
 * cost of reading a list); and the hand-written filter. Every side must keep the same tools for
 * every caller (checked first). Env overrides:
 * BENCH_ROUNDS (interleaved rounds, default 2000). Figures go to stdout and
 * bench/results/filter-tools.json.
 */
import { arch, cpus, loadavg, platform } from 'node:os'
import { Bench } from 'tinybench'
import { loadCorpus, roleDenied, roleTools, type CorpusCaller } from './corpus/mcp/corpus.js'
import { fmt, num, QUICK, run, writeResult } from './harness.js'
import { loadPackage } from './package.js'
import { quantile, timerOverheadNs } from './timing.js'

const ROUNDS = num('BENCH_ROUNDS', 2000, 200)

type Gate = import('../src-ts/index').ToolGate
type Ctx = import('../src-ts/index').CallContext
interface OpenAITool {
  type: 'function'
  function: { name: string; description?: string; parameters: Record<string, unknown> }
}

const now = process.hrtime.bigint
const median = (xs: number[]): number => quantile(Float64Array.from(xs).sort(), 0.5)

async function main(): Promise<void> {
  const corpus = loadCorpus()
  const { toolgate, note } = loadPackage()
  const gate: Gate = new toolgate.ToolGate(corpus.config as never)
  const tools: OpenAITool[] = corpus.config.tools.map((t) => ({
    type: 'function',
    function: { name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), parameters: t.inputSchema },
  }))
  const text = JSON.stringify(tools)
  const byRole = roleTools(corpus.config)
  const denied = roleDenied(corpus.config)
  const callerNames = Object.keys(corpus.callers)
  const prepared = Object.fromEntries(callerNames.map((k) => [k, gate.caller(corpus.callers[k] as Ctx)]))

  // what a developer writes: the role → tools map, then a filter on the function name
  const handWritten = (c: CorpusCaller): OpenAITool[] =>
    tools.filter((t) => {
      const n = t.function.name
      return c.roles.some((r) => byRole.get(r)?.has(n) === true) && !c.roles.some((r) => denied.get(r)?.has(n) === true)
    })

  let fresh = 0
  const oneOff = (): OpenAITool[] => [{ ...tools[0], function: { ...tools[0].function, description: `version ${fresh++}` } }, ...tools.slice(1)]

  // the list prepared once (what a host offering the same tools to every request does)
  const preparedObjects = gate.prepareTools(tools, { dialect: 'openai' })
  const preparedText = gate.prepareTools(text, { dialect: 'openai' })

  const sides: Record<string, (k: string) => unknown[] | string> = {
    'prepareTools(objects).filter(caller)': (k) => preparedObjects.filter(prepared[k]),
    'prepareTools(objects).filter(ctx)': (k) => preparedObjects.filter(corpus.callers[k] as Ctx),
    'prepareTools(text).filter(caller)': (k) => JSON.parse(preparedText.filter(prepared[k])) as unknown[],
    // what the HTTP proxy does: the filtered text goes upstream as it is
    'prepareTools(text).filter(caller), text': (k) => preparedText.filter(prepared[k]),
    'toolgate filterTools(objects, caller)': (k) => gate.filterTools(tools, { dialect: 'openai', caller: prepared[k] }),
    'toolgate filterTools(objects, ctx)': (k) => gate.filterTools(tools, { dialect: 'openai', ...(corpus.callers[k] as Ctx) }),
    'toolgate filterTools(text, caller)': (k) => JSON.parse(gate.filterTools(text, { dialect: 'openai', caller: prepared[k] })) as unknown[],
    // a list never seen before on every call (one description differs): filterTools' memo of
    // the lists it read never answers, so this is the cost of reading the list
    'toolgate filterTools(new objects, caller)': (k) => gate.filterTools(oneOff(), { dialect: 'openai', caller: prepared[k] }),
    'hand-written Maps + filter': (k) => handWritten(corpus.callers[k]),
  }

  console.log(`toolgate filterTools benchmark — node ${process.version} ${platform()}-${arch()}, ${cpus()[0]?.model ?? 'unknown cpu'} ×${cpus().length}, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
  console.log(`package: ${note}`)
  console.log(`list: ${tools.length} OpenAI tools (${text.length} bytes of JSON); callers: ${callerNames.join(', ')}`)

  // ---- the same tools kept by every side, for every caller
  console.log('\n== kept tools per caller (every side must agree) ==')
  for (const k of callerNames) {
    const want = handWritten(corpus.callers[k]).map((t) => t.function.name).join()
    for (const [n, f] of Object.entries(sides)) {
      const r = f(k)
      const got = ((typeof r === 'string' ? JSON.parse(r) : r) as OpenAITool[]).map((t) => t.function.name).join()
      if (got !== want) throw new Error(`${n} for ${k} kept ${got}, the hand-written filter ${want}`)
    }
    console.log(`  ${k.padEnd(12)} ${handWritten(corpus.callers[k]).length} of ${tools.length}`)
  }

  // ---- interleaved per call: every caller once per side per round, the first side rotating
  const names = Object.keys(sides)
  const empty = timerOverheadNs()
  const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]))
  for (let w = 0; w < (QUICK ? 50 : 300); w++) for (const f of Object.values(sides)) for (const k of callerNames) f(k)
  let sink = 0
  for (let r = 0; r < ROUNDS; r++) {
    for (let j = 0; j < names.length; j++) {
      const n = names[(r + j) % names.length]
      const f = sides[n]
      for (const k of callerNames) {
        const a = now()
        sink += f(k).length
        samples[n].push(Number(now() - a) - empty)
      }
    }
  }
  const peer = median(samples['hand-written Maps + filter'])
  console.log(`\n== per call, ${ROUNDS} interleaved rounds × ${callerNames.length} callers (ns, p50; empty timer pair ${fmt(empty)} ns subtracted) ==`)
  const result: Record<string, { p50: number; ratio: number }> = {}
  for (const n of names) {
    const p50 = median(samples[n])
    result[n] = { p50, ratio: p50 / peer }
    console.log(`${n.padEnd(42)} ${fmt(p50).padStart(9)}   ${n.startsWith('hand') ? '' : `ratio ${fmt(p50 / peer, 1)}`}`)
  }

  // ---- tinybench
  const bench = new Bench({ name: 'filterTools', time: QUICK ? 300 : 1500, warmupTime: 300 })
  for (const [n, f] of Object.entries(sides)) bench.add(n, () => { for (const k of callerNames) f(k) })
  await bench.run()
  console.log(`\n== tinybench (per call, ns) ==`)
  const tb: Record<string, { mean: number; p50: number }> = {}
  for (const t of bench.tasks) {
    const r = t.result
    if (r.state !== 'completed' && r.state !== 'aborted-with-statistics') continue
    tb[t.name] = { mean: (r.latency.mean * 1e6) / callerNames.length, p50: ((r.latency.p50 ?? NaN) * 1e6) / callerNames.length }
    console.log(`${t.name.padEnd(42)} mean ${fmt(tb[t.name].mean).padStart(9)}  p50 ${fmt(tb[t.name].p50).padStart(9)}`)
  }

  const out = { generatedAt: new Date().toISOString(), environment: { node: process.version, platform: platform(), arch: arch(), cpu: cpus()[0]?.model ?? null, load: loadavg(), package: note }, tools: tools.length, bytes: text.length, interleaved: result, tinybench: tb }
  writeResult('filter-tools', out, sink)
}

run(main)
