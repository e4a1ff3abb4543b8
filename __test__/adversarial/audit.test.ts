// Adversarial: the decision log as an attacker who can write the file sees it, and `toolgate audit
// verify` / `toolgate replay` as users run them (the built CLI, dist/cli/main.js from
// `npm run build:ts`, in a child process) on logs a real ToolGate wrote through a real config file.
// - A plain hash chain can be recomputed by anyone: a forged line, re-chained with SHA-256,
//   verifies. With a chain key (audit.chainKeyEnv / chainKeyFile) it cannot: verify --key-* fails
//   it, and verify without the key refuses to vouch for a keyed log.
// - A torn or edited last line (no newline) fails unless --allow-torn-tail.
// - Text from a tampered line cannot repaint the report (escape sequences, bidi overrides).
// - One hostile record does not stop replay or lose the drift found before it.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'

import { ToolGate, ToolGateError, type ToolGateConfig } from '../../src-ts/index'
import { runCli } from '../helpers/cli'

const KEY = 'k3y-0f-the-audit-chain-2026-long-enough'

let dir: string
let n = 0
const fresh = (name: string) => join(dir, `${n++}-${name}`)

const run = (args: string[], env: Record<string, string> = {}) => runCli(args, dir, env)
const verify = (...args: string[]) => {
  const r = run(['audit', 'verify', ...args, '--format', 'json'], { AUDIT_KEY: KEY })
  return { ...r, report: r.stdout === '' ? undefined : JSON.parse(r.stdout) }
}

const tools: ToolGateConfig['tools'] = [
  { name: 'read_file', inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }, resource: 'file:{path*}' },
]
const policy: ToolGateConfig['policy'] = {
  rules: [
    { effect: 'allow', tools: ['read_file'], resources: ['file:reports/**'] },
    { effect: 'deny', tools: ['read_file'], resources: ['file:secret/**'] },
  ],
}

/** Writes a config file and a log through `ToolGate.fromFile`; returns the log's lines. */
async function writeLog(name: string, audit: Record<string, unknown>, env: Record<string, string> = {}): Promise<{ log: string; lines: string[] }> {
  const log = fresh(`${name}.jsonl`)
  const config = fresh(`${name}.json`)
  writeFileSync(config, JSON.stringify({ tools, policy, audit: { jsonl: log, includeArguments: true, ...audit } }))
  const saved = { ...process.env }
  Object.assign(process.env, env)
  try {
    const gate = ToolGate.fromFile(config)
    gate.check('read_file', '{"path":"reports/q3.csv"}', { subject: 'ana', callId: 'c1' })
    gate.check('read_file', '{"path":"secret/keys.pem"}', { subject: 'mallory', callId: 'c2' })
    gate.check('read_file', '{"path":"reports/q4.csv"}', { subject: 'ana', callId: 'c3' })
    await gate.flush()
  } finally {
    process.env = saved
  }
  return { log, lines: readFileSync(log, 'utf8').split('\n').slice(0, -1) }
}

/** What an attacker without the key does: change line `i`, then recompute every later `prev` with SHA-256. */
function forgeAndRechain(lines: string[], i: number, edit: (rec: Record<string, unknown>) => void, from = i): string[] {
  const out = [...lines]
  const rec = JSON.parse(out[i])
  edit(rec)
  out[i] = JSON.stringify(rec)
  for (let j = Math.max(from, 1); j < out.length; j++) {
    const r = JSON.parse(out[j])
    r.prev = createHash('sha256').update(out[j - 1]).digest('base64url')
    out[j] = JSON.stringify(r)
  }
  if (from === 0) {
    const r = JSON.parse(out[0])
    out[0] = JSON.stringify(r)
  }
  return out
}
const save = (lines: string[], name: string) => {
  const f = fresh(name)
  writeFileSync(f, lines.map((l) => l + '\n').join(''))
  return f
}
/** Turns mallory's denied read into an allowed one. */
const allowMallory = (r: Record<string, unknown>) => {
  r.outcome = 'passed'
  delete r.reason
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-adv-audit-'))
})

describe('a plain hash chain is only as good as the file’s permissions', () => {
  it('a forged, re-chained plain log verifies (this is what the key is for)', async () => {
    const { lines } = await writeLog('plain', {})
    expect(JSON.parse(lines[2])).toMatchObject({ sub: 'mallory', outcome: 'denied' })
    const forged = save(forgeAndRechain(lines, 2, allowMallory), 'plain-forged.jsonl')
    expect(verify(forged).code).toBe(0)
  })
})

describe('a keyed chain (audit.chainKeyEnv / chainKeyFile)', () => {
  it('the gate writes HMAC links; verify with the key passes, without it fails, with another key fails', async () => {
    const { log, lines } = await writeLog('keyed-env', { chainKeyEnv: 'AUDIT_KEY' }, { AUDIT_KEY: KEY })
    expect(JSON.parse(lines[0])).toMatchObject({ type: 'open', chain: 'hmac-sha256', chainKeyId: expect.any(String), prev: null })
    const good = verify(log, '--key-env', 'AUDIT_KEY')
    expect([good.code, good.report.ok, good.report.keyed, good.report.summary.lines]).toEqual([0, true, true, 4])

    const without = verify(log)
    expect(without.code).toBe(1)
    expect(without.report.break).toMatchObject({ kind: 'key', line: 1 })
    expect(run(['audit', 'verify', log]).stdout).toContain('BROKEN')

    const keyFile = fresh('other.key')
    writeFileSync(keyFile, 'another-key-entirely-0123456789\n')
    const other = verify(log, '--key-file', keyFile)
    expect([other.code, other.report.break.kind]).toEqual([1, 'key'])
  })

  it('a key file relative to the config (trailing newline ignored) keys the chain the same way', async () => {
    const keyFile = fresh('audit.key')
    writeFileSync(keyFile, `${KEY}\n`)
    const { log } = await writeLog('keyed-file', { chainKeyFile: keyFile.slice(dir.length + 1) })
    expect(verify(log, '--key-file', keyFile).code).toBe(0)
    expect(verify(log, '--key-env', 'AUDIT_KEY').code).toBe(0) // the same bytes, from a variable
  })

  it('a forged line re-chained with SHA-256 (an attacker without the key) fails verify --key', async () => {
    const { lines } = await writeLog('keyed-forge', { chainKeyEnv: 'AUDIT_KEY' }, { AUDIT_KEY: KEY })
    // the forged line and every later link recomputed with plain SHA-256
    const rechained = verify(save(forgeAndRechain(lines, 2, allowMallory), 'forged-1.jsonl'), '--key-env', 'AUDIT_KEY')
    expect(rechained.code).toBe(1)
    expect(rechained.report.break).toMatchObject({ kind: 'key', line: 3 })
    // the whole log re-chained, the keyed marker removed: nothing keyed is left
    const stripped = forgeAndRechain(lines, 2, allowMallory, 1).map((l, i) => {
      if (i !== 0) return l
      const r = JSON.parse(l)
      delete r.chain
      delete r.chainKeyId
      return JSON.stringify(r)
    })
    const rechainedAll = forgeAndRechain(stripped, 0, () => {}, 1)
    const all = verify(save(rechainedAll, 'forged-2.jsonl'), '--key-env', 'AUDIT_KEY')
    expect(all.code).toBe(1)
    expect(all.report.break.kind).toBe('key')
    // … which a verifier without the key would have accepted: keep the key where verify runs
    expect(verify(save(rechainedAll, 'forged-3.jsonl')).code).toBe(0)
    // a plain open record appended after the keyed part (a downgrade) fails too
    const downgraded = [...lines, JSON.stringify({ v: 1, type: 'open', time: 't', pid: 1, configHash: 'x', prev: createHash('sha256').update(lines[lines.length - 1]).digest('base64url') })]
    const down = verify(save(downgraded, 'forged-4.jsonl'), '--key-env', 'AUDIT_KEY')
    expect([down.code, down.report.break.kind, down.report.break.line]).toEqual([1, 'key', lines.length + 1])
  })

  it('a plain log a keyed gate continues: the keyed open covers the plain part before it', async () => {
    const { log } = await writeLog('mixed', {})
    // the process restarts with a chain key (a child process: this one still holds the plain chain)
    const script = `const { ToolGate } = require(${JSON.stringify(join(__dirname, '..', '..', 'dist', 'index.js'))})
      const g = new ToolGate(${JSON.stringify({ tools, policy, audit: { jsonl: log, chainKeyEnv: 'AUDIT_KEY' } })})
      g.check('read_file', '{"path":"reports/q5.csv"}', { subject: 'ana' })`
    const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, AUDIT_KEY: KEY } })
    expect(child.status, child.stderr).toBe(0)
    const r = verify(log, '--key-env', 'AUDIT_KEY')
    expect([r.code, r.report.keyed, r.report.summary.lines]).toEqual([0, true, 6])
    expect(r.report.warnings.join('\n')).toContain('lines before line 5 are not keyed')
    expect(verify(log).report.break).toMatchObject({ kind: 'key', line: 5 })
    // a forged plain line before the keyed part, re-chained: the keyed open's link breaks
    const lines = readFileSync(log, 'utf8').split('\n').slice(0, -1)
    const forged = forgeAndRechain(lines.slice(0, 4), 2, allowMallory).concat(lines.slice(4))
    expect(verify(save(forged, 'mixed-forged.jsonl'), '--key-env', 'AUDIT_KEY').code).toBe(1)
  })

  it('a keyed chain runs on across rotated files, and a gate reopening the file continues it', async () => {
    const log = fresh('rotating.jsonl')
    process.env.AUDIT_KEY = KEY
    try {
      const config = { tools, policy, audit: { jsonl: log, maxFileBytes: 1500, chainKeyEnv: 'AUDIT_KEY' } }
      const a = new ToolGate(config)
      for (let i = 0; i < 12; i++) a.check('read_file', `{"path":"reports/r${i}.csv"}`, { subject: 'ana' })
      await a.flush()
    } finally {
      delete process.env.AUDIT_KEY
    }
    const files = [`${log}.1`, `${log}.2`, `${log}.3`, log].filter((f) => existsSync(f))
    expect(files.length).toBeGreaterThan(1)
    expect(JSON.parse(readFileSync(log, 'utf8').split('\n')[0])).toMatchObject({ type: 'rotate', chain: 'hmac-sha256' })
    const r = verify(...files, '--key-env', 'AUDIT_KEY')
    expect([r.code, r.report.keyed]).toEqual([0, true])
    // a rotated file alone, without the key: refused, not vouched for
    expect(verify(log).code).toBe(1)
  })

  it('a chain key shorter than 16 bytes, or a missing variable, is E_CONFIG naming the key', () => {
    const config = { tools, audit: { chainKeyEnv: 'SHORT_KEY' } }
    process.env.SHORT_KEY = 'short\n'
    try {
      expect(() => new ToolGate(config)).toThrow(/`audit.chainKeyEnv`: the chain key is 5 bytes; at least 16/)
    } finally {
      delete process.env.SHORT_KEY
    }
    expect(() => new ToolGate(config)).toThrow(/SHORT_KEY is not set/)
    expect(() => new ToolGate(config)).toThrow(ToolGateError)
  })

  it('two gates of one process writing one file must share its chain key', () => {
    const log = fresh('shared.jsonl')
    process.env.AUDIT_KEY = KEY
    try {
      const a = new ToolGate({ tools, audit: { jsonl: log, chainKeyEnv: 'AUDIT_KEY' } })
      expect(() => new ToolGate({ tools, audit: { jsonl: log } })).toThrow(/another gate of this process writes it with another chain key|with another chain key|no chain key/)
      void a
    } finally {
      delete process.env.AUDIT_KEY
    }
  })
})

describe('a torn or edited last line', () => {
  it('fails verify (exit 1) unless --allow-torn-tail', async () => {
    const { lines } = await writeLog('torn', {})
    // the last line edited and left without its newline
    const last = JSON.parse(lines[lines.length - 1])
    last.outcome = 'passed'
    const f = fresh('torn.jsonl')
    writeFileSync(f, lines.slice(0, -1).map((l) => l + '\n').join('') + JSON.stringify(last))
    const r = verify(f)
    expect([r.code, r.report.ok, r.report.break.kind, r.report.break.line]).toEqual([1, false, 'torn', lines.length])
    expect(verify(f, '--allow-torn-tail').code).toBe(0)
  })
})

describe('text from a tampered line never reaches the terminal raw', () => {
  it('escape sequences, C1 controls and bidi overrides are shown as \\u escapes in both formats', async () => {
    const { lines } = await writeLog('escapes', {})
    const evil = '\u001b]0;owned\u0007\u001b[2J\u001b[1;1HOK the hash chain holds\u202e\u009b31m'
    const tampered = [...lines]
    const r = JSON.parse(tampered[1])
    r.configHash = evil
    r.type = `decision${evil}`
    r.time = evil
    tampered[1] = JSON.stringify(r)
    // a chain that holds around the evil line (re-chained, as an attacker would), so it is summarized
    const f = save(forgeAndRechain(tampered, 1, () => {}), 'evil.jsonl')
    const pretty = run(['audit', 'verify', f])
    expect(pretty.code).toBe(0)
    for (const raw of ['\u001b', '\u0007', '\u202e', '\u009b']) expect(pretty.stdout).not.toContain(raw)
    expect(pretty.stdout).toContain('\\u001b]0;owned\\u0007')
    expect(pretty.stdout).toContain('\\u202e')
    const json = run(['audit', 'verify', f, '--format', 'json'])
    for (const raw of ['\u001b', '\u202e', '\u009b']) expect(json.stdout).not.toContain(raw)
    expect(JSON.parse(json.stdout).summary.configHashes.map((c: { hash: string }) => c.hash)).toContain(evil)

    // a broken line's text, in the break report
    const broken = [...lines]
    broken[2] = broken[2].replace('"prev":', `"x":"${'\\u001b[31m\\u202e'}","prev":`)
    const b = run(['audit', 'verify', save(broken, 'evil-broken.jsonl')])
    expect(b.code).toBe(1)
    expect(b.stdout).not.toContain('\u001b')
  })
})

describe('toolgate check shows the model’s text escaped too', () => {
  it('C1 controls and bidi overrides in the arguments are \\u escapes, in both formats', () => {
    const schema = fresh('schema.json')
    writeFileSync(schema, JSON.stringify({ type: 'object', properties: { q: { type: 'string' }, n: { type: 'integer' } } }))
    const input = fresh('call.json')
    writeFileSync(input, '{"q":"\u009b2J\u202eevil","n":"7"}')
    const pretty = run(['check', '--schema', schema, '--input', input, '--tool-name', 't'])
    const json = run(['check', '--schema', schema, '--input', input, '--tool-name', 't', '--format', 'json'])
    for (const out of [pretty.stdout, json.stdout]) {
      expect(out).not.toMatch(/[\u009b\u202e]/)
      expect(out).toContain('\\u202e')
    }
    expect(JSON.parse(json.stdout).arguments.q).toBe('\u009b2J\u202eevil')
  })
})

describe('replay goes on past a hostile record', () => {
  it('a non-string context value and bad JSON are reported with their lines, a 200,000-deep object replays; the drift around them is kept', async () => {
    const { lines } = await writeLog('replay', {})
    const proposed = fresh('proposed.json')
    // the proposed policy also allows secret/**: mallory's denied read drifts
    writeFileSync(proposed, JSON.stringify({ tools, policy: { rules: [{ effect: 'allow', tools: ['read_file'] }] } }))
    const decision = JSON.parse(lines[2])
    const hostileContext = JSON.stringify({ ...decision, context: { tenant: 1 } })
    const deep = `${JSON.stringify({ ...decision, callId: 'deep' }).slice(0, -1)},"args":${'['.repeat(200_000)}${']'.repeat(200_000)}}`
    const log = save([lines[0], lines[1], lines[2], hostileContext, deep, '{"v":1,"type":"decision",', lines[2], lines[3]], 'hostile.jsonl')
    const r = run(['replay', '--log', log, '--config', proposed, '--format', 'json'])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(1)
    const report = JSON.parse(r.stdout)
    // the deep arguments replay as what a gate answers them today (bad_arguments), a drift like any other
    expect(report.drifted.map((d: { line: number; new: { reason?: string } }) => [d.line, d.new.reason])).toEqual([
      [3, undefined],
      [5, 'bad_arguments'],
      [7, undefined],
    ])
    expect(report.skipped).toMatchObject({ invalid: 1, unreadable: 1 })
    expect(report.badRecords).toEqual([
      { line: 4, why: 'E_CONFIG: call context at `context.tenant`: values must be strings' },
      { line: 6, why: expect.stringMatching(/^not a record: /) },
    ])
    const pretty = run(['replay', '--log', log, '--config', proposed])
    expect(pretty.code).toBe(1)
    expect(pretty.stdout).toContain('1 record that could not be replayed')
    expect(pretty.stdout).toMatch(/line 4 {2}/)
  })
})
