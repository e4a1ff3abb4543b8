// Adversarial: the file `audit.jsonl` names, when the config comes from a repository or a tenant.
// The writer opened any path `a+` — absolute, `..`, through symlinks, a FIFO — cut its "torn tail"
// (the bytes after its last newline) and appended JSON lines: one `toolgate check --config
// repo/t.json` destroyed the end of `../victim/data.bin`, and with `includeArguments` a model's
// argument `"$(touch …)"` was appended verbatim to a shell rc file (and ran when it was sourced).
// Now the writer modifies only a toolgate audit log (a new file, an empty one, or one whose first
// line is a toolgate record): anything else is E_CONFIG before a byte is cut or written; a final
// symlink is never followed, and only a regular file is opened. Real files in a temp dir, real
// gates (the native binding) and the built CLI (dist/, from `npm run build:ts`).
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync, appendFileSync, existsSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'

import { ToolGate, ToolGateError, type ToolGateConfig } from '../../src-ts/index'
import { runCli } from '../helpers/cli'

const KEY = 'k3y-0f-the-audit-chain-2026-long-enough'

let dir: string
let n = 0
/** A fresh folder holding `repo/` (where the untrusted config sits) and `victim/`. */
function place(): { repo: string; victim: string } {
  const at = join(dir, String(n++))
  mkdirSync(join(at, 'repo'), { recursive: true })
  mkdirSync(join(at, 'victim'))
  return { repo: join(at, 'repo'), victim: join(at, 'victim') }
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-adv-audit-file-'))
})

const tools: ToolGateConfig['tools'] = [{ name: 'x', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } }]
const ARG = '{"q":"$(touch /tmp/toolgate-should-never-exist)"}'

/** `toolgate check --config <config>` with one call of `x` (exit code and stderr). */
function check(config: string, cwd: string, env: Record<string, string> = {}) {
  const input = join(cwd, `call-${n++}.json`)
  writeFileSync(input, ARG)
  return runCli(['check', '--config', config, '--tool-name', 'x', '--input', input], cwd, env)
}

/** Writes `repo/t.json` with this `audit` block. */
function config(repo: string, audit: Record<string, unknown>): string {
  const f = join(repo, `t-${n++}.json`)
  writeFileSync(f, JSON.stringify({ tools, audit }))
  return f
}

const NOT_A_LOG = 'is not a toolgate audit log'
const records = (f: string) =>
  readFileSync(f, 'utf8')
    .split('\n')
    .slice(0, -1)
    .map((l) => JSON.parse(l) as Record<string, unknown>)
const verify = (...args: string[]) => runCli(['audit', 'verify', ...args, '--format', 'json'], dir, { AUDIT_KEY: KEY })

describe('a file that is not a toolgate audit log is never modified', () => {
  it('a binary file with a torn tail, named by `..` (before: its last 25 bytes were cut and JSON lines appended)', () => {
    const { repo, victim } = place()
    const data = join(victim, 'data.bin')
    const bytes = Buffer.concat([Buffer.from('header\n'), Buffer.from([0, 1, 2, 255, 254]), Buffer.from('the last 25 bytes, no NL')])
    writeFileSync(data, bytes)
    const r = check(config(repo, { jsonl: '../victim/data.bin' }), repo)
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toContain('E_CONFIG')
    expect(r.stderr).toContain(`audit.jsonl ${data}: ${NOT_A_LOG}`)
    expect(readFileSync(data).equals(bytes)).toBe(true)
    // the gate itself, in this process: the same refusal, nothing touched
    expect(() => new ToolGate({ tools, audit: { jsonl: data } })).toThrow(ToolGateError)
    expect(() => ToolGate.fromFile(config(repo, { jsonl: '../victim/data.bin' }))).toThrow(NOT_A_LOG)
    expect(readFileSync(data).equals(bytes)).toBe(true)
  })

  it('an rc-like file (absolute path, includeArguments) is never appended to: the model’s `$(…)` never lands in it', () => {
    const { repo, victim } = place()
    const rc = join(victim, 'fakerc')
    const text = 'export PATH=$HOME/bin:$PATH\necho rc-loaded\n'
    writeFileSync(rc, text)
    const r = check(config(repo, { jsonl: rc, includeArguments: true }), repo)
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toContain(`audit.jsonl ${rc}: ${NOT_A_LOG}`)
    expect(readFileSync(rc, 'utf8')).toBe(text)
    let err: unknown
    try {
      new ToolGate({ tools, audit: { jsonl: rc, includeArguments: true } })
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(ToolGateError)
    expect((err as ToolGateError).code).toBe('E_CONFIG')
    expect(readFileSync(rc, 'utf8')).toBe(text)
  })

  it('JSON lines that are not toolgate records (another program’s JSONL, a record of another version) are refused too', () => {
    const { victim } = place()
    for (const first of ['{"level":"info","msg":"x"}\n', '{"v":2,"type":"open"}\n', '{"type":"open","v":1}\n', '{"v":1,"type":"check"}\n', '\n{"v":1,"type":"open"}\n']) {
      const f = join(victim, `other-${n++}.jsonl`)
      writeFileSync(f, `${first}torn`)
      expect(() => new ToolGate({ tools, audit: { jsonl: f } })).toThrow(NOT_A_LOG)
      expect(readFileSync(f, 'utf8')).toBe(`${first}torn`)
    }
  })
})

describe('only a regular file, never through a final symlink', () => {
  it('a symlink to a log, or to any file, is refused; neither target changes', () => {
    const { repo, victim } = place()
    const log = join(victim, 'real.jsonl')
    const gate = new ToolGate({ tools, audit: { jsonl: log } })
    gate.check('x', '{}')
    void gate.flush()
    const before = readFileSync(log)
    symlinkSync(log, join(repo, 'link.jsonl'))
    const rc = join(victim, 'rc')
    writeFileSync(rc, 'echo hi\n')
    symlinkSync(rc, join(repo, 'rc.jsonl'))
    for (const name of ['link.jsonl', 'rc.jsonl']) {
      const r = check(config(repo, { jsonl: name, includeArguments: true }), repo)
      expect(r.code, r.stderr).toBe(2)
      expect(r.stderr).toContain(`audit.jsonl ${join(repo, name)}: is a symbolic link`)
    }
    expect(() => new ToolGate({ tools, audit: { jsonl: join(repo, 'link.jsonl') } })).toThrow(/is a symbolic link/)
    expect(readFileSync(log).equals(before)).toBe(true)
    expect(readFileSync(rc, 'utf8')).toBe('echo hi\n')
  })

  it('a FIFO and a directory are E_CONFIG naming what they are (the CLI neither hangs nor writes)', () => {
    const { repo } = place()
    const fifo = join(repo, 'pipe.jsonl')
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0)
    const r = runCli(['check', '--config', config(repo, { jsonl: 'pipe.jsonl' }), '--tool-name', 'x', '--input', '-'], repo, {}, 10_000)
    expect(r.signal).toBeNull()
    expect([r.code, r.stderr]).toEqual([2, expect.stringContaining(`audit.jsonl ${fifo}: is a FIFO (named pipe); expected a regular file`)])
    expect(() => new ToolGate({ tools, audit: { jsonl: fifo } })).toThrow(/is a FIFO \(named pipe\)/)
    mkdirSync(join(repo, 'd.jsonl'))
    expect(() => new ToolGate({ tools, audit: { jsonl: join(repo, 'd.jsonl') } })).toThrow(/d\.jsonl: is a directory; expected a regular file/)
  })
})

describe('a toolgate audit log still works', () => {
  it('plain, with a torn tail: the torn bytes are cut, the gate appends, verify passes', () => {
    const { repo } = place()
    const log = join(repo, 'audit.jsonl')
    const cfg = config(repo, { jsonl: 'audit.jsonl' })
    expect(check(cfg, repo).code).toBe(0)
    appendFileSync(log, '{"v":1,"type":"decision","ti')
    const r = check(cfg, repo)
    expect(r.code, r.stderr).toBe(0)
    const recs = records(log)
    expect(recs.filter((x) => x.type === 'open')).toHaveLength(2)
    expect(recs[2].tornBytesRemoved).toBe('{"v":1,"type":"decision","ti'.length)
    const v = verify(log)
    expect(v.code, v.stdout).toBe(0)
  })

  it('keyed, with a torn tail: the chain runs on and verifies with the key', () => {
    const { repo } = place()
    const log = join(repo, 'audit.jsonl')
    const cfg = config(repo, { jsonl: 'audit.jsonl', chainKeyEnv: 'AUDIT_KEY' })
    expect(check(cfg, repo, { AUDIT_KEY: KEY }).code).toBe(0)
    appendFileSync(log, '{"v":1,"type":"decision","id":"torn')
    const r = check(cfg, repo, { AUDIT_KEY: KEY })
    expect(r.code, r.stderr).toBe(0)
    const recs = records(log)
    expect(recs[2]).toMatchObject({ type: 'open', chain: 'hmac-sha256', tornBytesRemoved: '{"v":1,"type":"decision","id":"torn'.length })
    expect(recs[2].unprovenTail).toBeUndefined()
    const v = runCli(['audit', 'verify', log, '--key-env', 'AUDIT_KEY'], dir, { AUDIT_KEY: KEY })
    expect(v.code, v.stdout).toBe(0)
  })

  it('a file holding only a torn first record, and a log whose first lines were trimmed off, are logs too', () => {
    const { repo } = place()
    const torn = join(repo, 'torn.jsonl')
    writeFileSync(torn, '{"v":1,"type":"open","time":"2026-')
    void new ToolGate({ tools, audit: { jsonl: torn } }).flush()
    expect(records(torn)[0]).toMatchObject({ type: 'open', tornBytesRemoved: '{"v":1,"type":"open","time":"2026-'.length })
    const log = join(repo, 'full.jsonl')
    expect(check(config(repo, { jsonl: 'full.jsonl' }), repo).code).toBe(0)
    const trimmed = join(repo, 'trimmed.jsonl')
    writeFileSync(trimmed, readFileSync(log, 'utf8').split('\n').slice(1).join('\n'))
    expect(check(config(repo, { jsonl: 'trimmed.jsonl' }), repo).code).toBe(0)
    expect(records(trimmed).map((r) => r.type)).toEqual(['decision', 'open', 'decision'])
  })

  it('rotation still works (each fresh file is created, never an existing one) and the chain verifies across files', () => {
    const { repo } = place()
    const log = join(repo, 'rot.jsonl')
    const gate = new ToolGate({ tools, audit: { jsonl: log, maxFileBytes: 1500 } })
    for (let i = 0; i < 30; i++) {
      gate.check('x', `{"q":"${i}"}`)
      void gate.flush()
    }
    const rotated = readdirSync(repo)
      .filter((f) => /^rot\.jsonl\.\d+$/.test(f))
      .sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop()))
      .map((f) => join(repo, f))
    expect(rotated.length).toBeGreaterThan(1)
    expect(records(log)[0].type).toBe('rotate')
    const v = verify(...rotated, log)
    expect(v.code, v.stdout).toBe(0)
    expect(existsSync(`${log}.${rotated.length + 1}`)).toBe(false)
  })
})
