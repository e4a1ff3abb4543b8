/**
 * What proof and record cost (issue 5): `gate.check` with no audit and no receipts, with the
 * audit trail writing a JSONL file, and with signed receipts, measured in the same run (the
 * differences are the costs); `verifyReceipt` on its own; and the sustained records per second
 * the trail writes to disk under a long synchronous burst.
 *
 *   npx tsx bench/proof.bench.ts            # ~30 s
 *   npx tsx bench/proof.bench.ts --quick
 *
 * Build the addon in release mode first (`npm run build`): a debug build is several times slower.
 * Figures go to stdout and to bench/results/proof.json.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { arch, cpus, platform, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { Bench } from 'tinybench'

import { ToolGate, verifyReceipt, type ToolGateConfig } from '../src-ts/index'

const here = typeof __dirname === 'string' ? __dirname : resolve('bench')
const QUICK = process.argv.includes('--quick')
const TB_TIME = QUICK ? 300 : 3000
const BURST = QUICK ? 20_000 : 200_000
/** The target for the audit sink: under 1 µs added per `check`, p50. */
const AUDIT_TARGET_NS = 1000

const tools: ToolGateConfig['tools'] = [
  {
    name: 'search_db',
    inputSchema: {
      type: 'object',
      properties: { query: { type: 'string' }, limit: { type: 'integer', minimum: 1 }, status: { type: 'string', enum: ['active', 'inactive'] } },
      required: ['query'],
      additionalProperties: false,
    },
  },
]
const ARGS = '{"query":"acme corp","limit":10,"status":"active"}'
const CTX = { subject: 'user-42', roles: ['analyst'], session: 'chat-9' }

const dir = mkdtempSync(join(tmpdir(), 'toolgate-proof-bench-'))
const plain = new ToolGate({ tools })
const audited = new ToolGate({ tools, audit: { jsonl: join(dir, 'bench.jsonl') } })
const signed = new ToolGate({ tools, receipts: {} })
const both = new ToolGate({ tools, receipts: {}, audit: { jsonl: join(dir, 'both.jsonl') } })
for (const g of [plain, audited, signed, both]) {
  const v = g.check('search_db', ARGS, CTX)
  if (v.outcome !== 'passed') throw new Error(`unexpected outcome ${v.outcome}`)
}
const receipt = signed.check('search_db', ARGS, CTX).receipt!
const key = signed.publicKey!
const args = JSON.parse(ARGS)
verifyReceipt(receipt, key, { tool: 'search_db', arguments: args })

interface Stat { p50Ns: number; p99Ns: number; meanNs: number; samples: number }
const fmt = (n: number, d = 0) => n.toFixed(d)

async function main(): Promise<void> {
  const bench = new Bench({ name: 'proof', time: TB_TIME, warmupTime: Math.min(500, TB_TIME) })
  let sink = 0
  bench.add('check (ctx), no audit, no receipts', () => { sink += plain.check('search_db', ARGS, CTX).flags.length })
  bench.add('check (ctx), audit to a JSONL file', () => { sink += audited.check('search_db', ARGS, CTX).flags.length })
  bench.add('check (ctx), receipts', () => { sink += signed.check('search_db', ARGS, CTX).flags.length })
  bench.add('check (ctx), receipts + audit', () => { sink += both.check('search_db', ARGS, CTX).flags.length })
  bench.add('verifyReceipt (tool + arguments)', () => { sink += verifyReceipt(receipt, key, { tool: 'search_db', arguments: args }).iat })
  await bench.run()
  const stats: Record<string, Stat> = {}
  for (const t of bench.tasks) {
    const r = t.result
    if (r.state !== 'completed' && r.state !== 'aborted-with-statistics') throw new Error(`${t.name}: ${r.state}`)
    stats[t.name] = { p50Ns: (r.latency.p50 ?? NaN) * 1e6, p99Ns: (r.latency.p99 ?? NaN) * 1e6, meanNs: r.latency.mean * 1e6, samples: r.latency.samplesCount }
  }
  console.log(`== Time per call (tinybench, ${TB_TIME} ms per task; ns) ==`)
  for (const [name, s] of Object.entries(stats)) console.log(`${name.padEnd(40)} p50 ${fmt(s.p50Ns).padStart(7)}  p99 ${fmt(s.p99Ns).padStart(8)}  mean ${fmt(s.meanNs).padStart(7)}`)
  const base = stats['check (ctx), no audit, no receipts']
  const auditCost = stats['check (ctx), audit to a JSONL file'].p50Ns - base.p50Ns
  const receiptCost = stats['check (ctx), receipts'].p50Ns - base.p50Ns
  console.log('')
  console.log(`audit trail adds ${fmt(auditCost)} ns per check at p50 (target < ${AUDIT_TARGET_NS} ns: ${auditCost < AUDIT_TARGET_NS ? 'met' : 'NOT met'}); ratio ${fmt(stats['check (ctx), audit to a JSONL file'].p50Ns / base.p50Ns, 2)}`)
  console.log(`receipts add ${fmt(receiptCost)} ns per allowed check at p50 (an ed25519 signature; reported apart from the hot-path targets)`)
  console.log(`verifyReceipt: ${fmt(stats['verifyReceipt (tool + arguments)'].p50Ns)} ns p50`)

  // sustained: a long synchronous burst, every record written (the trail drains every 1024)
  const file = join(dir, 'burst.jsonl')
  const burst = new ToolGate({ tools, audit: { jsonl: file } })
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < BURST; i++) burst.check('search_db', `{"query":"q${i % 100}","limit":${(i % 50) + 1}}`, CTX)
  await burst.flush()
  const secs = Number(process.hrtime.bigint() - t0) / 1e9
  const lines = readFileSync(file, 'utf8').split('\n').length - 2 // minus the open record and the final newline
  if (lines !== BURST) throw new Error(`burst: ${lines} records for ${BURST} checks`)
  const perSec = BURST / secs
  console.log(`sustained: ${BURST} checks with every record on disk in ${fmt(secs, 2)} s = ${fmt(perSec)} records/s (${fmt(statSync(file).size / BURST)} bytes per record)`)

  mkdirSync(join(here, 'results'), { recursive: true })
  writeFileSync(join(here, 'results', 'proof.json'), JSON.stringify({ machine: { platform: platform(), arch: arch(), cpus: cpus().length, node: process.version }, stats, auditCostNs: auditCost, receiptCostNs: receiptCost, sustainedRecordsPerSec: perSec, sink }, null, 2) + '\n')
  rmSync(dir, { recursive: true, force: true })
}

void main()
