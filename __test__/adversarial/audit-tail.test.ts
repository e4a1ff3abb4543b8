// Adversarial: the last line of a decision log, where a gate (re)opening the file picks the chain
// up. Real gates (the native binding) write real files in a temp dir — restarts are child
// processes running the built package (dist/, from `npm run build:ts`), as a restarted host is —
// and the built CLI verifies them.
// - Keyed chain: someone who can write the file but has no key rewrites the last record and waits
//   for a restart (or, in one process, a new gate on the file: the HTTP proxy makes one per unseen
//   tool list). The gate must not vouch for that line with an HMAC: every keyed line carries its
//   own mac, the gate links to the last line only when that mac proves it, and verify checks every
//   line's mac — the forged line fails, and a tail nobody could prove is reported, never silently.
// - A last line over 1 MiB (a tool named with a million characters, arguments of a megabyte) is
//   read back whole; a record over the line bound is cut to size before it is written; a last
//   line longer than any a gate writes is never hashed in part.
import { spawnSync } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { appendFileSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'

import { MAX_LINE_BYTES } from '../../src-ts/audit/lines'
import { ToolGate, type ToolGateConfig } from '../../src-ts/index'
import { runCli } from '../helpers/cli'

const KEY = 'k3y-0f-the-audit-chain-2026-long-enough'
const DIST = join(__dirname, '..', '..', 'dist', 'index.js')

let dir: string
let n = 0
const fresh = (name: string) => join(dir, `${n++}-${name}`)

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-adv-audit-tail-'))
})

const tools: ToolGateConfig['tools'] = [{ name: 'transfer' }, { name: 'read' }, { name: 'note' }]

const verify = (...args: string[]) => {
  const r = runCli(['audit', 'verify', ...args, '--format', 'json'], dir, { AUDIT_KEY: KEY })
  return { code: r.code, stderr: r.stderr, report: r.stdout === '' ? undefined : JSON.parse(r.stdout) }
}
const lines = (f: string) => readFileSync(f, 'utf8').split('\n').slice(0, -1)
const records = (f: string) => lines(f).map((l) => JSON.parse(l) as Record<string, unknown>)

/**
 * One process of a host (a start, some decisions, its exit): a child process running the built
 * package. `calls`: [subject, tool, arguments][].
 */
function processRun(log: string, calls: [string, string, unknown][], audit: Record<string, unknown> = { chainKeyEnv: 'AUDIT_KEY' }): void {
  // the calls go in a file: a tool name of a million characters is over the limit of one argv string
  const input = fresh('calls.json')
  writeFileSync(input, JSON.stringify(calls))
  const script = `const { ToolGate } = require(${JSON.stringify(DIST)})
    const g = new ToolGate(${JSON.stringify({ tools, audit: { jsonl: log, ...audit } })})
    for (const [subject, tool, args] of JSON.parse(require('node:fs').readFileSync(${JSON.stringify(input)}, 'utf8'))) g.check(tool, args, { subject })
    g.flush()`
  const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, AUDIT_KEY: KEY } })
  expect(child.status, child.stderr).toBe(0)
}

/** What someone with write access to the file and no key does: rewrite a line, keeping its `prev` (and `mac`). */
function rewrite(log: string, index: number, edit: (line: string) => string): void {
  const ls = lines(log)
  const at = index < 0 ? ls.length + index : index
  const edited = edit(ls[at])
  expect(edited).not.toBe(ls[at])
  ls[at] = edited
  writeFileSync(log, ls.map((l) => l + '\n').join(''))
}
const malloryToAlice = (l: string) => l.replace('"sub":"mallory"', '"sub":"alice"').replace('"tool":"transfer"', '"tool":"read"')

describe('keyed chain: a rewritten last record is never laundered by the next open', () => {
  it('rewritten while the host is down, then a restart: verify --key reports the line (before: OK, the forged line HMAC-covered)', () => {
    const log = fresh('restart.jsonl')
    processRun(log, [['mallory', 'transfer', { amount: 9000 }]])
    rewrite(log, -1, malloryToAlice)
    processRun(log, [['bob', 'read', {}]])
    const r = verify(log, '--key-env', 'AUDIT_KEY')
    expect(r.code, r.stderr).toBe(1)
    expect(r.report.break).toMatchObject({ kind: 'changed', line: 2 })
    const recs = records(log)
    expect(recs.map((x) => x.type)).toEqual(['open', 'decision', 'open', 'decision'])
    // the restarted gate did not vouch for line 2: its open record says so, and its prev is no HMAC
    expect(recs[2]).toMatchObject({ unprovenTail: true, chain: 'hmac-sha256' })
    // and the option for legacy tails does not accept a forged one: the line's own mac fails
    expect(verify(log, '--key-env', 'AUDIT_KEY', '--allow-unproven-tail').report.break).toMatchObject({ kind: 'changed', line: 2 })
  })

  it('repeated over restarts, no rewritten record passes (each one is reported)', () => {
    const log = fresh('repeated.jsonl')
    processRun(log, [['mallory', 'transfer', { amount: 1 }]])
    rewrite(log, -1, malloryToAlice)
    processRun(log, [['mallory', 'transfer', { amount: 2 }]])
    rewrite(log, -1, malloryToAlice)
    processRun(log, [['bob', 'read', {}]])
    expect(verify(log, '--key-env', 'AUDIT_KEY').report.break).toMatchObject({ kind: 'changed', line: 2 })
    // the first forgery undone: the open record after it fixed the hash of the bytes it found, so that breaks
    rewrite(log, 1, (l) => l.replace('"sub":"alice"', '"sub":"mallory"').replace('"tool":"read"', '"tool":"transfer"'))
    expect(verify(log, '--key-env', 'AUDIT_KEY').report.break).toMatchObject({ kind: 'changed_or_removed', line: 3 })
    // verify stops at the first break; the second forgery's own mac does not hold either
    const holds = lines(log).map((l) => createHmac('sha256', KEY).update(l.replace(/,"mac":"[^"]*"\}$/, '}')).digest('base64url') === JSON.parse(l).mac)
    expect(holds).toEqual([true, true, true, false, true, true])
  })

  it('in one process: a new gate on the file (a new tool list at the HTTP proxy) after the rewrite (before: OK)', async () => {
    const log = fresh('in-process.jsonl')
    process.env.AUDIT_KEY = KEY
    try {
      const cfg = (extra: ToolGateConfig['tools']) => ({ tools: [...tools, ...extra], audit: { jsonl: log, chainKeyEnv: 'AUDIT_KEY' } })
      const g1 = new ToolGate(cfg([]))
      g1.check('transfer', { amount: 9000 }, { subject: 'mallory' })
      await g1.flush()
      rewrite(log, -1, malloryToAlice)
      const g2 = new ToolGate(cfg([{ name: 'new_tool' }]))
      g1.check('read', {}, { subject: 'bob' })
      await g1.flush()
      await g2.flush()
    } finally {
      delete process.env.AUDIT_KEY
    }
    const r = verify(log, '--key-env', 'AUDIT_KEY')
    expect(r.code).toBe(1)
    expect(r.report.break).toMatchObject({ kind: 'changed', line: 2 })
    expect(records(log)[2]).toMatchObject({ type: 'open', unprovenTail: true })
  })

  it('the mac stripped from the rewritten line, or a line appended with a copied mac: reported too', () => {
    const log = fresh('stripped.jsonl')
    processRun(log, [['mallory', 'transfer', { amount: 9000 }]])
    const original = lines(log)
    rewrite(log, -1, (l) => malloryToAlice(l).replace(/,"mac":"[^"]*"\}$/, '}'))
    processRun(log, [['bob', 'read', {}]])
    expect(verify(log, '--key-env', 'AUDIT_KEY').report.break).toMatchObject({ kind: 'changed', line: 2 })
    // a forged record carrying the last line's (valid) mac as its own
    const appended = fresh('appended.jsonl')
    const mac = /"mac":"([^"]*)"\}$/.exec(original[1])![1]
    writeFileSync(appended, original.map((l) => l + '\n').join('') + `${original[1].replace(/"prev":"[^"]*","mac":"[^"]*"\}$/, `"prev":"${mac}","mac":"${mac}"}`).replace('"mallory"', '"alice"')}\n`)
    processRun(appended, [['bob', 'read', {}]])
    expect(records(appended)[3]).toMatchObject({ type: 'open', unprovenTail: true })
    expect(verify(appended, '--key-env', 'AUDIT_KEY').report.break).toMatchObject({ kind: 'changed', line: 3 })
  })

  it('an honest restart links to the last line by its mac: no unprovenTail, verify OK, one HMAC per line', () => {
    const log = fresh('honest.jsonl')
    processRun(log, [['ana', 'read', {}]])
    processRun(log, [['ana', 'transfer', { amount: 5 }]])
    const ls = lines(log)
    const recs = ls.map((l) => JSON.parse(l))
    expect(recs[2].unprovenTail).toBeUndefined()
    // each line ends in its own mac: the HMAC of the line as it reads without it; the next prev is that mac
    for (let i = 0; i < ls.length; i++) {
      const body = ls[i].replace(/,"mac":"[^"]*"\}$/, '}')
      expect(recs[i].mac).toBe(createHmac('sha256', KEY).update(body).digest('base64url'))
      if (i > 0) expect(recs[i].prev).toBe(recs[i - 1].mac)
    }
    const r = verify(log, '--key-env', 'AUDIT_KEY')
    expect([r.code, r.report.keyed, r.report.summary.lines, r.report.summary.head]).toEqual([0, true, 4, recs[3].mac])
  })
})

/** A keyed log as toolgate wrote it before lines carried a mac: every `prev` the HMAC of the whole line before. */
function legacyLog(path: string, subjects: string[]): string[] {
  const keyId = createHmac('sha256', KEY).update('toolgate audit chain key id').digest('base64url').slice(0, 16)
  const out: string[] = []
  const link = () => (out.length === 0 ? null : createHmac('sha256', KEY).update(out[out.length - 1]).digest('base64url'))
  out.push(JSON.stringify({ v: 1, type: 'open', time: '2026-03-01T09:30:00.000Z', pid: 1, configHash: 'c', chain: 'hmac-sha256', chainKeyId: keyId, prev: link() }))
  subjects.forEach((sub, i) => {
    out.push(JSON.stringify({ v: 1, type: 'decision', time: '2026-03-01T09:30:00.001Z', id: `old-${i}`, sub, tool: 'transfer', outcome: 'passed', flags: [], latencyUs: 1, configHash: 'c', prev: link() }))
  })
  writeFileSync(path, out.map((l) => l + '\n').join(''))
  return out
}

describe('keyed logs written before lines carried a mac', () => {
  it('verify as before; a gate continuing one marks its last line unproven, reported unless --allow-unproven-tail', () => {
    const log = fresh('legacy.jsonl')
    legacyLog(log, ['ana', 'bob'])
    const before = verify(log, '--key-env', 'AUDIT_KEY')
    expect([before.code, before.report.keyed, before.report.summary.lines]).toEqual([0, true, 3])
    // a changed line of it is still found by the next line's HMAC link
    const changed = fresh('legacy-changed.jsonl')
    writeFileSync(changed, readFileSync(log, 'utf8').replace('"sub":"ana"', '"sub":"eve"'))
    expect(verify(changed, '--key-env', 'AUDIT_KEY').report.break).toMatchObject({ kind: 'changed', line: 2 })

    // the upgraded gate cannot prove line 3 (it has no mac): it says so rather than vouching for it
    processRun(log, [['carol', 'read', {}]])
    expect(records(log)[3]).toMatchObject({ type: 'open', unprovenTail: true })
    const r = verify(log, '--key-env', 'AUDIT_KEY')
    expect([r.code, r.report.break.kind, r.report.break.line, r.report.break.failedAt]).toEqual([1, 'unproven', 3, 4])
    const ok = verify(log, '--key-env', 'AUDIT_KEY', '--allow-unproven-tail')
    expect([ok.code, ok.report.summary.lines]).toEqual([0, 5])
    expect(ok.report.warnings.join('\n')).toMatch(/line 4 opened the log over an unproven last line \(line 3\)/)

    // a legacy (no mac) keyed part after a part with macs: an older writer vouched unchecked
    const keyId = records(log)[0].chainKeyId
    const tail = lines(log)
    const old = JSON.stringify({ v: 1, type: 'open', time: 't', pid: 2, configHash: 'c', chain: 'hmac-sha256', chainKeyId: keyId, prev: createHmac('sha256', KEY).update(tail[tail.length - 1]).digest('base64url') })
    appendFileSync(log, old + '\n')
    expect(verify(log, '--key-env', 'AUDIT_KEY', '--allow-unproven-tail').report.break).toMatchObject({ kind: 'key', line: 6 })
  })

  it('a legacy log whose last line was rewritten before the upgrade: reported (before: OK)', () => {
    const log = fresh('legacy-forged.jsonl')
    legacyLog(log, ['mallory'])
    rewrite(log, -1, (l) => l.replace('"sub":"mallory"', '"sub":"alice"'))
    processRun(log, [['bob', 'read', {}]])
    expect(verify(log, '--key-env', 'AUDIT_KEY').report.break).toMatchObject({ kind: 'unproven', line: 2 })
  })

  it('a plain log a keyed gate continues: the plain part is fixed by its SHA-256, with the documented warning', () => {
    const log = fresh('plain-then-keyed.jsonl')
    processRun(log, [['ana', 'read', {}]], {})
    processRun(log, [['ana', 'read', {}]])
    expect(records(log)[2]).toMatchObject({ type: 'open', unprovenTail: true, chain: 'hmac-sha256' })
    const r = verify(log, '--key-env', 'AUDIT_KEY')
    expect([r.code, r.report.keyed]).toEqual([0, true])
    expect(r.report.warnings.join('\n')).toContain('lines before line 3 are not keyed')
  })
})

describe('long last lines', () => {
  it('a last line over 1 MiB (a tool named with 1.1 M characters; 1.1 MB of arguments) is read back whole: the next open links to it (before: BROKEN)', () => {
    const log = fresh('long.jsonl')
    processRun(log, [['mallory', 'n'.repeat(1_100_000), {}]], {})
    processRun(log, [['ana', 'note', {}]], {})
    const args = fresh('long-args.jsonl')
    processRun(args, [['mallory', 'note', { text: 'x'.repeat(1_100_000) }]], { includeArguments: true })
    processRun(args, [['ana', 'note', {}]], { includeArguments: true })
    for (const f of [log, args]) {
      expect(statSync(f).size).toBeGreaterThan(1_100_000)
      const r = verify(f)
      expect([r.code, r.report.summary.opens], JSON.stringify(r.report.break)).toEqual([0, 2])
    }
    // keyed, the same: the long line's mac is checked and proves it
    const keyed = fresh('long-keyed.jsonl')
    processRun(keyed, [['mallory', 'n'.repeat(1_100_000), {}]])
    processRun(keyed, [['ana', 'note', {}]])
    expect(records(keyed)[2].unprovenTail).toBeUndefined()
    expect(verify(keyed, '--key-env', 'AUDIT_KEY').code).toBe(0)
  })

  it('a record over the line bound is cut to size, so verify and the next open read it (before: malformed)', () => {
    const log = fresh('huge.jsonl')
    processRun(log, [['mallory', 't'.repeat(MAX_LINE_BYTES + 1000), {}]])
    processRun(log, [['ana', 'note', {}]])
    const ls = lines(log)
    expect(Math.max(...ls.map((l) => Buffer.byteLength(l)))).toBeLessThanOrEqual(MAX_LINE_BYTES)
    const cut = JSON.parse(ls[1])
    expect(cut).toMatchObject({ type: 'decision', outcome: 'rejected', reason: 'unknown_tool', truncated: { bytes: expect.any(Number), cut: ['tool'] } })
    expect(cut.tool).toBe('t'.repeat(4096))
    expect(records(log)[2].unprovenTail).toBeUndefined()
    expect(verify(log, '--key-env', 'AUDIT_KEY').code).toBe(0)
  })

  it('a last line longer than any a gate writes is never hashed in part: the open says unproven and verify reports that line', () => {
    const log = fresh('overlong.jsonl')
    processRun(log, [['ana', 'note', {}]], {})
    appendFileSync(log, `{"v":1,"type":"decision","x":"${'y'.repeat(MAX_LINE_BYTES)}","prev":null}\n`)
    processRun(log, [['ana', 'note', {}]], {})
    const tail = readFileSync(log, 'utf8').split('\n').slice(-3, -1).map((l) => JSON.parse(l))
    expect(tail[0]).toMatchObject({ type: 'open', unprovenTail: true, prev: null })
    const r = verify(log)
    expect([r.code, r.report.break.kind, r.report.break.line]).toEqual([1, 'malformed', 3])
  })

  it('a torn tail over 1 MiB is cut off whole, and the chain holds (before: kept, and the open linked to nothing)', () => {
    const log = fresh('torn-long.jsonl')
    processRun(log, [['ana', 'note', {}]], {})
    const torn = `{"v":1,"type":"decision","x":"${'z'.repeat(1_200_000)}`
    appendFileSync(log, torn)
    processRun(log, [['ana', 'note', {}]], {})
    expect(records(log)[2]).toMatchObject({ type: 'open', tornBytesRemoved: torn.length })
    expect(verify(log).code).toBe(0)
  })
})
