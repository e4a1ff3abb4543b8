// Adversarial: files the host names are attacker-shaped (a config or policy from a repository, a
// log from a shared disk, a key path from an environment). Each is read only when it is a regular
// file within a bound: `/dev/zero` aborted the process (std::bad_alloc), a FIFO hung it, and a
// 2 MB YAML config with 99 aliases of one anchor grew memory by ~840 MB. Through
// `ToolGate.fromFile` in a child process (so a regression that hangs or aborts shows as that) and
// the built CLI (dist/cli/main.js from `npm run build:ts`).
import { spawnSync } from 'node:child_process'
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, writeFileSync, ftruncateSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'

import { ToolGate } from '../../src-ts/index'
import { CLI, runCli } from '../helpers/cli'

const root = join(__dirname, '..', '..')
const dist = join(root, 'dist', 'index.js')

let dir: string
let n = 0
const fresh = (name: string) => join(dir, `${n++}-${name}`)

const TOOLS = [{ name: 'read_file', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } }]

/** `ToolGate.fromFile(path)` in a child process (10 s at most): what it threw, and the child's peak memory. */
function fromFileInChild(path: string, env: Record<string, string> = {}) {
  const script = `
    const { ToolGate } = require(${JSON.stringify(dist)})
    let out
    try { ToolGate.fromFile(process.argv[1]); out = { ok: true } }
    catch (e) { out = { code: e.code, message: e.message } }
    out.rssMb = Math.round(process.resourceUsage().maxRSS / 1024)
    process.stdout.write(JSON.stringify(out))`
  const r = spawnSync(process.execPath, ['-e', script, path], { encoding: 'utf8', timeout: 10_000, env: { ...process.env, ...env } })
  expect(r.signal, `child ended by ${r.signal} (hung or aborted): ${r.stderr}`).toBeNull()
  expect(r.status, r.stderr).toBe(0)
  return JSON.parse(r.stdout) as { ok?: true; code?: string; message?: string; rssMb: number }
}

function run(args: string[], env: Record<string, string> = {}) {
  const r = runCli(args, dir, env, 10_000)
  expect(r.signal, `the CLI was ended by ${r.signal}: ${r.stderr}`).toBeNull()
  return r
}

let fifo: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-adv-files-'))
  fifo = fresh('config.json')
  const made = spawnSync('mkfifo', [fifo])
  expect(made.status).toBe(0)
})

describe('config files: regular files only, within a bound', () => {
  it('/dev/zero, a FIFO and a directory are E_CONFIG naming the path and why — never read', () => {
    expect(fromFileInChild('/dev/zero')).toMatchObject({ code: 'E_CONFIG', message: 'config file /dev/zero: is a character device; expected a regular file' })
    expect(fromFileInChild(fifo)).toMatchObject({ code: 'E_CONFIG', message: `config file ${fifo}: is a FIFO (named pipe); expected a regular file` })
    const d = fresh('config.yaml')
    mkdirSync(d)
    expect(fromFileInChild(d)).toMatchObject({ code: 'E_CONFIG', message: `config file ${d}: is a directory; expected a regular file` })
  })

  it('a file over 16 MiB is refused before it is read; the bound is configurable', () => {
    const big = fresh('big.json')
    const fd = openSync(big, 'w')
    ftruncateSync(fd, 16 * 1024 * 1024 + 1) // sparse: size without the bytes
    closeSync(fd)
    const r = fromFileInChild(big)
    expect(r).toMatchObject({ code: 'E_CONFIG', message: `config file ${big}: is 16777217 bytes, over the limit of 16777216 bytes` })
    expect(r.rssMb).toBeLessThan(200)
    const small = fresh('small.json')
    writeFileSync(small, JSON.stringify({ tools: TOOLS, labels: Array.from({ length: 200 }, (_, i) => `label-${i}`) }))
    expect(fromFileInChild(small)).toMatchObject({ ok: true })
    expect(fromFileInChild(small, { TOOLGATE_MAX_CONFIG_BYTES: '1000' })).toMatchObject({ code: 'E_CONFIG', message: expect.stringContaining('over the limit of 1000 bytes') })
  })

  it('a 2 MB YAML config with 99 aliases of one anchor is E_CONFIG, in little memory', () => {
    const f = fresh('aliases.yaml')
    const anchor = 'x'.repeat(2 * 1024 * 1024)
    const aliases = Array.from({ length: 99 }, (_, i) => `  a${i}: *big`).join('\n')
    writeFileSync(f, `version: 1\ntools: []\nlabels: [public]\nx-anchor: &big "${anchor}"\nx-copies:\n${aliases}\n`)
    const r = fromFileInChild(f)
    expect(r).toMatchObject({ code: 'E_CONFIG', message: expect.stringContaining('its aliases expand it past 16777216 bytes') })
    expect(r.rssMb).toBeLessThan(300)
  })

  it('nested aliases (a billion laughs) and an alias cycle are E_CONFIG; a config with a few aliases loads', () => {
    const laughs = fresh('laughs.yaml')
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for (let i = 1; i < 10; i++) levels.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`)
    writeFileSync(laughs, `tools: []\n${levels.join('\n')}\n`)
    expect(fromFileInChild(laughs)).toMatchObject({ code: 'E_CONFIG', message: expect.stringMatching(/aliases expand it past|Excessive alias count/) })

    const cycle = fresh('cycle.yaml')
    writeFileSync(cycle, 'tools: &t [*t]\n')
    expect(fromFileInChild(cycle)).toMatchObject({ code: 'E_CONFIG' })

    const ok = fresh('ok.yaml')
    writeFileSync(ok, `schema: &s { type: object, properties: { path: { type: string } } }\ntools:\n  - { name: a, inputSchema: *s }\n  - { name: b, inputSchema: *s }\n`)
    // unknown top-level key `schema`: the core names it, which shows the YAML loaded and reached it
    expect(fromFileInChild(ok)).toMatchObject({ code: 'E_CONFIG', message: expect.stringContaining('schema') })
    const good = fresh('good.yaml')
    writeFileSync(good, `tools:\n  - &t { name: a, inputSchema: { type: object } }\nlabels: [public]\n`)
    expect(ToolGate.fromFile(good).tools).toEqual(['a'])
  })

  it('key files are regular files within a bound: receipts.privateKeyFile and audit.chainKeyFile', () => {
    const c1 = fresh('receipts.json')
    writeFileSync(c1, JSON.stringify({ tools: TOOLS, receipts: { privateKeyFile: '/dev/zero' } }))
    expect(fromFileInChild(c1)).toMatchObject({ code: 'E_CONFIG', message: expect.stringContaining('`receipts.privateKeyFile`: /dev/zero: is a character device') })
    const c2 = fresh('chain.json')
    writeFileSync(c2, JSON.stringify({ tools: TOOLS, audit: { chainKeyFile: fifo } }))
    expect(fromFileInChild(c2)).toMatchObject({ code: 'E_CONFIG', message: expect.stringContaining('is a FIFO') })
  })
})

describe('the CLI: configs, proposed policies and logs', () => {
  it('check, replay and audit verify refuse a FIFO, /dev/zero and a directory with exit 2, naming the path', () => {
    const log = fresh('a.jsonl')
    writeFileSync(log, '')
    const good = fresh('good.json')
    writeFileSync(good, JSON.stringify({ tools: TOOLS }))
    const check = run(['check', '--config', '/dev/zero', '--tool-name', 'read_file', '--input', '-'])
    expect([check.code, check.stderr]).toEqual([2, expect.stringContaining('/dev/zero: is a character device')])
    const input = run(['check', '--config', good, '--tool-name', 'read_file', '--input', fifo])
    expect([input.code, input.stderr]).toEqual([2, expect.stringContaining('is a FIFO (named pipe)')])
    const proposed = run(['replay', '--log', log, '--config', fifo])
    expect([proposed.code, proposed.stderr]).toEqual([2, expect.stringContaining(`--config ${fifo}: is a FIFO (named pipe)`)])
    const replayLog = run(['replay', '--log', '/dev/zero', '--config', good])
    expect([replayLog.code, replayLog.stderr]).toEqual([2, expect.stringContaining('log /dev/zero: is a character device')])
    const verify = run(['audit', 'verify', fifo])
    expect([verify.code, verify.stderr]).toEqual([2, expect.stringContaining('is a FIFO (named pipe)')])
    expect(run(['audit', 'verify', dir]).code).toBe(2)
  })

  it('check reads stdin within the same bound', () => {
    const schema = fresh('schema.json')
    writeFileSync(schema, '{"type":"object"}')
    const r = spawnSync(process.execPath, [CLI, 'check', '--schema', schema, '--input', '-', '--tool-name', 't'], {
      input: `{"q":"${'a'.repeat(5000)}"}`, encoding: 'utf8', timeout: 10_000, env: { ...process.env, TOOLGATE_MAX_CONFIG_BYTES: '1000' },
    })
    expect([r.status, r.stderr]).toEqual([2, expect.stringContaining('--input stdin: is over the limit of 1000 bytes')])
  })

  it('the proxies read their --config the same way (exit 2, naming the path)', () => {
    const proxy = run(['proxy', '--config', fifo, '--upstream', 'http://127.0.0.1:9', '--port', '0'])
    expect([proxy.code, proxy.stderr]).toEqual([2, expect.stringContaining(`config file ${fifo}: is a FIFO (named pipe)`)])
    const mcp = run(['mcp-proxy', '--config', '/dev/zero', '--', process.execPath, '-e', ''])
    expect([mcp.code, mcp.stderr]).toEqual([2, expect.stringContaining('config file /dev/zero: is a character device')])
  })

  it('a proposed JSON policy with a duplicate key is refused (JSON.parse would keep the last one)', () => {
    const log = fresh('b.jsonl')
    writeFileSync(log, '')
    const dup = fresh('dup.json')
    writeFileSync(dup, `{"tools": ${JSON.stringify(TOOLS)}, "policy": {"rules": [{"effect": "deny", "tools": ["read_file"], "effect": "allow"}]}}`)
    const r = run(['replay', '--log', log, '--config', dup])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/E_CONFIG: --config .*dup\.json: .*(unique|duplicate)/i)
  })

  it('a log line past 16 MiB is reported by verify, not read into memory', () => {
    const log = fresh('long.jsonl')
    const open = JSON.stringify({ v: 1, type: 'open', time: '2026-01-01T00:00:00.000Z', pid: 1, configHash: 'x', prev: null })
    writeFileSync(log, `${open}\n{"v":1,"pad":"${'y'.repeat(17 * 1024 * 1024)}"}\n`)
    const r = run(['audit', 'verify', log, '--format', 'json'])
    expect(r.code).toBe(1)
    expect(JSON.parse(r.stdout).break).toMatchObject({ kind: 'malformed', line: 2, found: `a line of ${17 * 1024 * 1024 + 16} bytes` })
  })

  it('a YAML proposed policy with aliases past the bound is refused by replay', () => {
    const log = fresh('c.jsonl')
    writeFileSync(log, '')
    const f = fresh('proposed.yaml')
    writeFileSync(f, `tools: []\nx: &x "${'z'.repeat(200_000)}"\ny: [${Array(99).fill('*x').join(',')}]\n`)
    const r = run(['replay', '--log', log, '--config', f], { TOOLGATE_MAX_CONFIG_BYTES: String(1024 * 1024) })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('its aliases expand it past 1048576 bytes')
    expect(readFileSync(f, 'utf8').length).toBeLessThan(1024 * 1024)
  })
})
