// `toolgate audit verify`, `toolgate replay` and `toolgate keygen` as users run them: the built CLI
// (dist/cli/main.js, from `npm run build:ts`) in a child process, on logs a real ToolGate wrote to
// temp files (and one a killed child process left behind).
import { spawn, spawnSync } from 'node:child_process'
import { appendFileSync, existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'

import { ToolGate, verifyReceipt, type ToolGateConfig } from '../src-ts/index'
import { runCli } from './helpers/cli'

const root = join(__dirname, '..')

let dir: string
let n = 0
/** A fresh file name in the temp dir. */
const fresh = (name: string) => join(dir, `${n++}-${name}`)

/** Runs the CLI; stdout is a pipe, so no color. */
const run = (args: string[], env: Record<string, string> = {}) => runCli(args, dir, env)

function verifyJson(...files: string[]) {
  const r = run(['audit', 'verify', ...files, '--format', 'json'])
  return { code: r.code, report: JSON.parse(r.stdout), stderr: r.stderr }
}

const tools: ToolGateConfig['tools'] = [
  {
    name: 'read_file',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
    action: 'read',
    resource: 'file:{path*}',
  },
  {
    name: 'search',
    inputSchema: { type: 'object', properties: { q: { type: 'string' }, limit: { type: 'integer' }, password: { type: 'string' } } },
  },
  { name: 'write_file', writes: true, inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
]

/** Config A: analysts read reports; anyone searches and writes (with confirmation). */
function configA(log: string, includeArguments = true): ToolGateConfig {
  return {
    version: 1,
    tools,
    policy: {
      rules: [
        { effect: 'allow', roles: ['analyst'], tools: ['read_file'], resources: ['file:reports/**'] },
        { effect: 'allow', tools: ['search', 'write_file'] },
      ],
    },
    audit: { jsonl: log, includeArguments, redact: ['password'] },
  }
}

const ana = { subject: 'ana', roles: ['analyst'], session: 's1' }

/** A log of every kind of decision (passed, repaired, rejected, denied, confirm, a confirmation, a guarded turn, a turn error). */
async function writeLog(log: string, includeArguments = true): Promise<ToolGate> {
  const gate = new ToolGate(configA(log, includeArguments))
  gate.check('read_file', '{"path":"reports/q3.csv"}', { ...ana, callId: 'c1' })
  gate.check('read_file', '{"path":"secret/keys"}', { ...ana, callId: 'c2' })
  gate.check('search', '{"q":"acme","limit":"5"}', ana)
  gate.check('search', '{"q":"acme","limit":"five"}', ana)
  gate.check('serch', '{}', ana)
  const v = gate.check('write_file', '{"path":"out.txt"}', ana)
  gate.confirm(v.confirmation!.token, ana)
  gate.guard(
    { choices: [{ message: { role: 'assistant', tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'read_file', arguments: '{"path":"reports/a.csv"}' } }] } }] },
    { dialect: 'openai', ...ana },
  )
  expect(() => gate.guard('{"choices":', { dialect: 'openai' })).toThrow()
  for (let i = 0; i < 6; i++) gate.check('search', `{"q":"q${i}"}`, { subject: 'bo', callId: `b${i}` })
  await gate.flush()
  return gate
}

const lines = (file: string) => readFileSync(file, 'utf8').split('\n').slice(0, -1)
const writeLines = (file: string, ls: string[]) => writeFileSync(file, ls.map((l) => l + '\n').join(''))

let log: string
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-audit-'))
  log = fresh('audit.jsonl')
  await writeLog(log)
})

describe('toolgate audit verify', () => {
  it('accepts a log a gate wrote (exit 0) and summarizes it', () => {
    const r = run(['audit', 'verify', log])
    expect(r.code).toBe(0)
    expect(r.stderr).toBe('')
    expect(r.stdout).toContain('OK the hash chain holds: 16 lines')
    expect(r.stdout).toMatch(/decisions\s+14: /)
    expect(r.stdout).not.toContain('\x1b[')

    const { code, report } = verifyJson(log)
    expect(code).toBe(0)
    expect(report.ok).toBe(true)
    expect(report.break).toBeUndefined()
    expect(report.warnings).toEqual([])
    const s = report.summary
    expect(s.lines).toBe(16)
    expect(s.types).toEqual({ open: 1, decision: 14, turn_error: 1 })
    expect(s.outcomes).toEqual({ passed: 9, repaired: 1, rejected: 2, denied: 1, confirm: 1 })
    expect(s.reasons).toEqual({ no_rule: 1, invalid: 1, unknown_tool: 1, confirm_required: 1 })
    expect(s.confirmSteps).toBe(1)
    expect(s.opens).toBe(1)
    expect(s.rotations).toBe(0)
    expect(s.configHashes).toHaveLength(1)
    expect(s.configHashes[0].records).toBe(16)
    expect(Date.parse(s.firstTime)).toBeLessThanOrEqual(Date.parse(s.lastTime))
    // the head is the hash of the last line: what the next line's prev will be
    const { createHash } = require('node:crypto') as typeof import('node:crypto')
    expect(s.head).toBe(createHash('sha256').update(lines(log).at(-1)!).digest('base64url'))
  })

  it('a changed line: the line number, expected vs found, exit 1', () => {
    const ls = lines(log)
    const f = fresh('changed.jsonl')
    // line 3: the denied read becomes "passed" — still valid JSON, still v: 1
    expect(ls[2]).toContain('"outcome":"denied"')
    ls[2] = ls[2].replace('"outcome":"denied"', '"outcome":"passed"')
    writeLines(f, ls)
    const { code, report } = verifyJson(f)
    expect(code).toBe(1)
    expect(report.ok).toBe(false)
    expect(report.break).toMatchObject({ kind: 'changed', line: 3, failedAt: 4 })
    expect(report.break.expected).toContain('the hash of line 3')
    expect(report.break.hint).toContain('line 3 was changed')
    expect(report.summary.lines).toBe(3)

    const pretty = run(['audit', 'verify', f])
    expect(pretty.code).toBe(1)
    expect(pretty.stdout).toContain('BROKEN')
    expect(pretty.stdout).toContain('line 3: changed')
  })

  it('a removed middle line: reported at the line after the gap, exit 1', () => {
    const ls = lines(log)
    ls.splice(6, 1) // line 7
    const f = fresh('removed.jsonl')
    writeLines(f, ls)
    const { code, report } = verifyJson(f)
    expect(code).toBe(1)
    expect(report.break).toMatchObject({ kind: 'removed', line: 7, failedAt: 7 })
    expect(report.break.hint).toMatch(/a line was removed before line 7/)
  })

  it('two swapped lines: reported at the first of them, exit 1', () => {
    const ls = lines(log)
    ;[ls[9], ls[10]] = [ls[10], ls[9]] // lines 10 and 11
    const f = fresh('swapped.jsonl')
    writeLines(f, ls)
    const { code, report } = verifyJson(f)
    expect(code).toBe(1)
    expect(report.break).toMatchObject({ kind: 'reordered', line: 10 })
    expect(report.break.hint).toBe('lines 10 and 11 are in the wrong order (reordered)')
  })

  it('a line that is not JSON, a wrong version, a missing start: each named', () => {
    const ls = lines(log)
    const bad = fresh('notjson.jsonl')
    writeLines(bad, [...ls.slice(0, 5), '{"v":1,', ...ls.slice(5)])
    expect(verifyJson(bad).report.break).toMatchObject({ kind: 'malformed', line: 6 })

    const v2 = fresh('v2.jsonl')
    writeLines(v2, [ls[0], ls[1].replace('"v":1', '"v":2'), ...ls.slice(2)])
    expect(verifyJson(v2).report.break).toMatchObject({ kind: 'version', line: 2, found: '"v": 2' })

    const headless = fresh('headless.jsonl')
    writeLines(headless, ls.slice(3))
    const h = verifyJson(headless)
    expect(h.code).toBe(1)
    expect(h.report.break).toMatchObject({ kind: 'start', line: 1 })
  })

  it('a torn last line fails (exit 1), and is a warning with --allow-torn-tail (exit 0)', () => {
    const f = fresh('torn.jsonl')
    const ls = lines(log)
    writeLines(f, ls)
    appendFileSync(f, ls[4].slice(0, Math.floor(ls[4].length / 2)))
    const failed = verifyJson(f)
    expect(failed.code).toBe(1)
    expect(failed.report.ok).toBe(false)
    expect(failed.report.break).toMatchObject({ kind: 'torn', line: ls.length + 1, found: `${Math.floor(ls[4].length / 2)} bytes without a newline` })
    expect(run(['audit', 'verify', f]).code).toBe(1)
    const { code, report } = verifyJson(f, '--allow-torn-tail')
    expect(code).toBe(0)
    expect(report.ok).toBe(true)
    expect(report.summary.lines).toBe(ls.length)
    expect(report.files[0].torn).toEqual({ line: ls.length + 1, bytes: Math.floor(ls[4].length / 2) })
    expect(report.warnings[0]).toContain('Accepted up to its last whole line')
    const pretty = run(['audit', 'verify', f, '--allow-torn-tail'])
    expect(pretty.code).toBe(0)
    expect(pretty.stdout).toContain('warning')
  })

  it('a gate opening a file with a torn tail cuts it off, says so in its open record, and the chain holds', async () => {
    const f = fresh('torn-reopen.jsonl')
    await writeLog(f)
    const whole = lines(f).length
    appendFileSync(f, '{"v":1,"type":"decision","ti')
    const again = new ToolGate(configA(f))
    again.check('search', '{"q":"after the crash"}', ana)
    await again.flush()
    expect(JSON.parse(lines(f)[whole])).toMatchObject({ type: 'open', tornBytesRemoved: 28 })
    const { code, report } = verifyJson(f)
    expect(code).toBe(0)
    expect(report.warnings).toEqual([])
    expect(report.summary).toMatchObject({ lines: whole + 2, opens: 2, tornBytesRemoved: 28 })
  })

  it('two gates of one process on one file write one chain, their lines interleaved', async () => {
    const f = fresh('two-gates.jsonl')
    const a = new ToolGate(configA(f))
    const b = new ToolGate(configA(f))
    for (let i = 0; i < 5; i++) {
      a.check('search', `{"q":"a${i}"}`, ana)
      await a.flush()
      b.check('search', `{"q":"b${i}"}`, ana)
      await b.flush()
    }
    const { code, report } = verifyJson(f)
    expect(code).toBe(0)
    expect(report.summary).toMatchObject({ lines: 12, opens: 2 })
  })

  it.runIf(process.platform === 'linux')('dropped gates are let go: their trails write the last records, stop, and close the file', () => {
    // Before, each trail's background timer kept its trail, its native gate and the audit file
    // open forever, so a process dropping gates (the HTTP proxy's evicted ones) grew without
    // bound. Run in a child with --expose-gc; the open file shows in /proc/self/fd.
    const f = fresh('dropped.jsonl')
    const script = `
      const { readdirSync, readlinkSync } = require('node:fs')
      const { ToolGate } = require(${JSON.stringify(join(root, 'dist', 'index.js'))})
      const open = () => readdirSync('/proc/self/fd').filter((d) => { try { return readlinkSync('/proc/self/fd/' + d) === ${JSON.stringify(f)} } catch { return false } }).length
      for (let i = 0; i < 40; i++) {
        const g = new ToolGate({ tools: [{ name: 'search', inputSchema: { type: 'object' } }], audit: { jsonl: ${JSON.stringify(f)} } })
        g.check('search', '{"i":' + i + '}')
      }
      const before = open()
      ;(async () => {
        for (let k = 0; k < 40 && open() > 0; k++) { global.gc(); await new Promise((r) => setTimeout(r, 50)) }
        console.log(JSON.stringify({ before, after: open() }))
      })()`
    const r = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' })
    expect(r.stderr).toBe('')
    expect(JSON.parse(r.stdout)).toEqual({ before: 1, after: 0 })
    const recs = readFileSync(f, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { type: string })
    expect(recs.filter((x) => x.type === 'decision')).toHaveLength(40)
    expect(recs.filter((x) => x.type === 'open')).toHaveLength(40)
    expect(verifyJson(f).code).toBe(0)
  })

  // Known bug in src-ts/audit/trail.ts lastLine(): the torn tail's length is measured on decoded
  // text, so a tail cut inside a multi-byte UTF-8 character (2 bytes here, counted as 3) makes the
  // truncation eat into the last whole line. Flip to `it` once fixed.
  it('a torn tail cut inside a multi-byte character is cut off exactly', async () => {
    const f = fresh('torn-utf8.jsonl')
    await writeLog(f)
    appendFileSync(f, Buffer.from([...Buffer.from('{"v":1,"args":{"city":"Z'), 0xc3]))
    const again = new ToolGate(configA(f))
    again.check('search', '{}')
    await again.flush()
    expect(verifyJson(f).code).toBe(0)
  })

  it('follows a rotation across files given oldest first; names files out of order', () => {
    // a rotation as the trail writes it: the old file renamed, the new one starting with a
    // rotate record whose prev is the old file's last line
    const { createHash } = require('node:crypto') as typeof import('node:crypto')
    const h = (l: string) => createHash('sha256').update(l).digest('base64url')
    const ls = lines(log)
    const old = fresh('rot.jsonl.1')
    writeLines(old, ls.slice(0, 8))
    const chain = (l: string, prev: string) => l.replace(/"prev":(null|"[^"]*")\}$/, `"prev":"${prev}"}`)
    const next: string[] = [chain(JSON.stringify({ v: 1, type: 'rotate', time: new Date().toISOString(), pid: 1, configHash: 'x', prev: null }), h(ls[7]))]
    for (const l of ls.slice(8)) next.push(chain(l, h(next[next.length - 1])))
    const live = fresh('rot.jsonl')
    writeLines(live, next)
    const both = verifyJson(old, live)
    expect(both.code).toBe(0)
    expect(both.report.summary).toMatchObject({ lines: ls.length + 1, rotations: 1 })
    expect(both.report.warnings).toEqual([])
    const alone = verifyJson(live)
    expect(alone.code).toBe(0)
    expect(alone.report.warnings[0]).toContain('rotate record continuing an earlier file')
    const swapped = verifyJson(live, old)
    expect(swapped.code).toBe(1)
    expect(swapped.report.break).toMatchObject({ kind: 'files', line: 1 })
  })

  // Known bug in src-ts/audit/trail.ts #write: the batch is chained before #rotate() runs, so the
  // rotate record links to the batch's last line instead of the old file's. Flip to `it` once fixed.
  it('a log rotated by the trail (maxFileBytes) verifies across its files', async () => {
    const f = fresh('rotated.jsonl')
    const gate = new ToolGate({ version: 1, tools, audit: { jsonl: f, maxFileBytes: 2000 } })
    for (let b = 0; b < 3; b++) {
      for (let i = 0; i < 3; i++) gate.check('search', `{"q":"${b}-${i}"}`)
      await gate.flush()
    }
    // how many files rotation made depends on record sizes: take the ones that exist, oldest first
    const rotated: string[] = []
    for (let n = 1; existsSync(`${f}.${n}`); n++) rotated.push(`${f}.${n}`)
    expect(rotated.length).toBeGreaterThanOrEqual(1)
    const { code, report, stderr } = verifyJson(...rotated, f)
    expect(code, stderr).toBe(0)
    expect(JSON.stringify(report)).toContain('rotate')
  })

  it('a gate reopening the same file continues the chain across its open record', async () => {
    const f = fresh('reopen.jsonl')
    await writeLog(f)
    const before = lines(f).length
    const again = new ToolGate(configA(f))
    again.check('search', '{"q":"after restart"}', ana)
    await again.flush()
    const ls = lines(f)
    expect(JSON.parse(ls[before])).toMatchObject({ type: 'open' })
    expect(JSON.parse(ls[before]).prev).not.toBeNull()
    const { code, report } = verifyJson(f)
    expect(code).toBe(0)
    expect(report.summary.opens).toBe(2)
    expect(report.summary.lines).toBe(before + 2)
  })

  it('a child killed with SIGKILL mid-burst leaves a log verify accepts up to its last whole line', async () => {
    const f = fresh('killed.jsonl')
    const script = fresh('burst.js')
    writeFileSync(
      script,
      `const { ToolGate } = require(${JSON.stringify(join(root, 'dist', 'index.js'))})
const gate = new ToolGate({ version: 1, tools: [{ name: 'search', inputSchema: { type: 'object', properties: { q: { type: 'string' }, limit: { type: 'integer' } } } }],
  audit: { jsonl: ${JSON.stringify(f)}, includeArguments: true } })
for (let i = 0; ; i++) gate.check('search', '{"q":"burst ' + i + '","limit":"' + (i % 100) + '"}', { subject: 'ana', callId: 'k' + i })
`,
    )
    const child = spawn(process.execPath, [script], { stdio: 'ignore' })
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)))
    const deadline = Date.now() + 30_000
    for (;;) {
      let size = 0
      try {
        size = statSync(f).size
      } catch {
        // not created yet
      }
      if (size > 2_000_000 || Date.now() > deadline) break
      await new Promise((r) => setTimeout(r, 5))
    }
    child.kill('SIGKILL')
    expect(await exited).toBe('SIGKILL')
    const { code, report } = verifyJson(f)
    expect(code).toBe(0)
    expect(report.ok).toBe(true)
    expect(report.summary.lines).toBeGreaterThan(1024)
    expect(report.summary.types.open).toBe(1)
    // every whole line is a record; a torn tail, if the kill cut a write, is only a warning
    const torn = report.files[0].torn
    if (torn !== undefined) expect(report.warnings[0]).toContain(`line ${torn.line} is torn`)
    // a gate opening the file after the crash cuts any torn tail off and continues the chain
    const after = new ToolGate({ version: 1, tools: [{ name: 'search', inputSchema: { type: 'object' } }], audit: { jsonl: f } })
    after.check('search', '{}')
    await after.flush()
    const again = verifyJson(f)
    expect(again.code).toBe(0)
    expect(again.report.warnings).toEqual([])
    expect(again.report.summary.opens).toBe(2)
    expect(again.report.summary.lines).toBe(report.summary.lines + 2)
  })

  it('usage: --help (exit 0), a missing file or no file (exit 2)', () => {
    const h = run(['audit', 'verify', '--help'])
    expect(h.code).toBe(0)
    for (const s of ['Usage:', '--format', 'Exit codes:', 'Examples:', 'toolgate audit verify']) expect(h.stdout).toContain(s)
    expect(run(['--help']).stdout).toContain('toolgate audit verify FILE')
    const missing = run(['audit', 'verify', 'nope.jsonl'])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('nope.jsonl: no such file')
    expect(run(['audit', 'verify']).code).toBe(2)
    expect(run(['audit']).code).toBe(2)
    expect(run(['audit', 'verify', log, '--format', 'yaml']).code).toBe(2)
  })
})

describe('toolgate replay', () => {
  let configFileA: string
  let configFileB: string
  beforeAll(() => {
    configFileA = fresh('A.json')
    writeFileSync(configFileA, JSON.stringify(configA('replay-would-write-here.jsonl')))
    // B: the analysts' read rule removed
    const b = configA('replay-would-write-here.jsonl')
    b.policy!.rules = b.policy!.rules!.slice(1)
    configFileB = fresh('B.json')
    writeFileSync(configFileB, JSON.stringify(b))
  })

  it('against the config that wrote the log: no drift (exit 0)', () => {
    const r = run(['replay', '--log', log, '--config', configFileA, '--format', 'json'])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const report = JSON.parse(r.stdout)
    // every decision carries args: 12 checks, 1 guarded call, 1 confirmation step
    expect(report).toMatchObject({ replayed: 14, same: 14, drift: 0, drifted: [], gates: 1 })
    expect(report.skipped).toMatchObject({ turnErrors: 1, redacted: 0, withoutArguments: 0 })
    const pretty = run(['replay', '--log', log, '--config', configFileA])
    expect(pretty.code).toBe(0)
    expect(pretty.stdout).toContain('no drift')
    // the proposed config's audit block is ignored: replay writes no log
    expect(() => statSync(join(dir, 'replay-would-write-here.jsonl'))).toThrow()
  })

  it('against a config with a rule removed: the drifted calls with old and new reasons (exit 1)', () => {
    const r = run(['replay', '--log', log, '--config', configFileB, '--format', 'json'])
    expect(r.code).toBe(1)
    const report = JSON.parse(r.stdout)
    expect(report.drift).toBe(2)
    expect(report.same).toBe(12)
    expect(report.drifted).toEqual([
      expect.objectContaining({ line: 2, tool: 'read_file', callId: 'c1', sub: 'ana', session: 's1', old: { outcome: 'passed' }, new: expect.objectContaining({ outcome: 'denied', reason: 'no_rule' }) }),
      expect.objectContaining({ tool: 'read_file', callId: 'call_9', old: { outcome: 'passed' }, new: expect.objectContaining({ outcome: 'denied', reason: 'no_rule' }) }),
    ])
    expect(typeof report.drifted[0].time).toBe('string')
    const pretty = run(['replay', '--log', log, '--config', configFileB])
    expect(pretty.code).toBe(1)
    expect(pretty.stdout).toContain('2 would change')
    expect(pretty.stdout).toContain('passed → denied (no_rule)')
    expect(pretty.stdout).toContain('call c1')
  })

  it('a write no longer allowed: its first step drifts and its confirmation step is skipped', () => {
    const c = configA('unused.jsonl')
    c.policy!.rules = [c.policy!.rules![0], { effect: 'allow', tools: ['search'] }]
    const f = fresh('C.yaml')
    writeFileSync(f, JSON.stringify(c)) // YAML is a superset of JSON
    const r = run(['replay', '--log', log, '--config', f, '--format', 'json'])
    expect(r.code).toBe(1)
    const report = JSON.parse(r.stdout)
    expect(report.drifted).toEqual([
      expect.objectContaining({ tool: 'write_file', old: { outcome: 'confirm', reason: 'confirm_required' }, new: expect.objectContaining({ outcome: 'denied', reason: 'no_rule' }) }),
    ])
    expect(report.skipped.confirmAfterDrift).toBe(1)
  })

  it('a log without arguments: says so (exit 2)', async () => {
    const bare = fresh('bare.jsonl')
    await writeLog(bare, false)
    const r = run(['replay', '--log', bare, '--config', configFileA])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toContain('carries its arguments')
    expect(r.stderr).toContain('"includeArguments": true')
  })

  it('redacted arguments are reported as not replayable, never compared', async () => {
    const f = fresh('redacted.jsonl')
    const gate = new ToolGate(configA(f))
    gate.check('search', '{"q":"x","password":"hunter2"}', ana)
    gate.check('search', '{"q":"y"}', ana)
    await gate.flush()
    expect(readFileSync(f, 'utf8')).not.toContain('hunter2')
    const r = run(['replay', '--log', f, '--config', configFileA, '--format', 'json'])
    expect(r.code).toBe(0)
    const report = JSON.parse(r.stdout)
    expect(report).toMatchObject({ replayed: 1, same: 1, skipped: expect.objectContaining({ redacted: 1 }), redactedLines: [2] })
  })

  it('usage: --help (exit 0), missing flags and a broken config (exit 2)', () => {
    const h = run(['replay', '--help'])
    expect(h.code).toBe(0)
    for (const s of ['Usage:', '--log', '--config', '--format', 'Exit codes:', 'Examples:', 'cannot reproduce', 'redacted']) expect(h.stdout).toContain(s)
    expect(run(['replay', '--config', configFileA]).stderr).toContain('missing --log')
    expect(run(['replay', '--log', log]).code).toBe(2)
    const broken = fresh('broken.json')
    writeFileSync(broken, JSON.stringify({ version: 1, tools: [], polcy: {} }))
    const b = run(['replay', '--log', log, '--config', broken])
    expect(b.code).toBe(2)
    expect(b.stderr).toContain('E_CONFIG')
  })
})

describe('toolgate keygen', () => {
  it('json: a key pair that signs receipts verifyReceipt accepts with the printed publicKey', async () => {
    const r = run(['keygen', '--format', 'json'])
    expect(r.code).toBe(0)
    const k = JSON.parse(r.stdout) as { privateKey: string; publicKey: string; kid: string }
    for (const v of Object.values(k)) expect(v).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const gate = new ToolGate({ version: 1, tools, receipts: { privateKey: k.privateKey } })
    expect(gate.publicKey).toBe(k.publicKey)
    const v = gate.check('search', '{"q":"acme"}', { subject: 'ana' })
    expect(v.allowed).toBe(true)
    const claims = verifyReceipt(v.receipt!, k.publicKey, { tool: 'search', arguments: { q: 'acme' }, sub: 'ana' })
    expect(claims.tool).toBe('search')
    // another key pair does not verify it
    const other = JSON.parse(run(['keygen', '--format', 'json']).stdout)
    expect(other.privateKey).not.toBe(k.privateKey)
    expect(() => verifyReceipt(v.receipt!, other.publicKey)).toThrow(/wrong_key|bad_signature/)
  })

  it('env: one line for an env file, which works with receipts.privateKeyEnv', () => {
    const r = run(['keygen', '--format', 'env'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^TOOLGATE_KEY=[A-Za-z0-9_-]{43}\n$/)
    const seed = r.stdout.trim().slice('TOOLGATE_KEY='.length)
    process.env.TOOLGATE_KEY_TEST = seed
    try {
      const gate = new ToolGate({ version: 1, tools, receipts: { privateKeyEnv: 'TOOLGATE_KEY_TEST' } })
      const v = gate.check('search', '{}')
      const pub = new ToolGate({ version: 1, tools, receipts: { privateKey: seed } }).publicKey!
      expect(verifyReceipt(v.receipt!, pub).tool).toBe('search')
    } finally {
      delete process.env.TOOLGATE_KEY_TEST
    }
  })

  it('pretty: the three values and how to use them; usage errors exit 2', () => {
    const r = run(['keygen'])
    expect(r.code).toBe(0)
    for (const s of ['privateKey', 'publicKey', 'kid', 'TOOLGATE_KEY=', '"receipts": { "privateKeyEnv": "TOOLGATE_KEY" }']) expect(r.stdout).toContain(s)
    const h = run(['keygen', '--help'])
    expect(h.code).toBe(0)
    for (const s of ['Usage:', '--format', 'Exit codes:', 'Examples:']) expect(h.stdout).toContain(s)
    expect(run(['keygen', '--format', 'pem']).code).toBe(2)
    expect(run(['keygen', 'extra']).code).toBe(2)
  })
})
