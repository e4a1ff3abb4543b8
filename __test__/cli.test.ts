// `toolgate check` and `toolgate bench` as users run them: the built CLI (dist/cli/main.js, from
// `npm run build:ts`) in a child process, on real temp files.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'

const root = join(__dirname, '..')
const cli = join(root, 'dist', 'cli', 'main.js')

/** Runs the CLI; stdout is a pipe, so no color. */
function run(args: string[], opts: { input?: string; cwd?: string } = {}) {
  const env = { ...process.env }
  delete env.FORCE_COLOR
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: opts.cwd ?? dir, input: opts.input ?? '', encoding: 'utf8', env })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

let dir: string
const schema = {
  type: 'object',
  properties: {
    query: { type: 'string' },
    limit: { type: 'integer', minimum: 1 },
    status: { type: 'string', enum: ['active', 'inactive'] },
  },
  required: ['query'],
  additionalProperties: false,
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-cli-'))
  writeFileSync(join(dir, 'schema.json'), JSON.stringify(schema))
  writeFileSync(join(dir, 'clean.json'), '{"query":"acme", "limit":10}')
  writeFileSync(join(dir, 'almost.json'), '{"query":"acme","limit":"10","status":"ACTIVE"}\n')
  writeFileSync(join(dir, 'wrong.json'), '{"query":"acme","limit":"ten"}')
  writeFileSync(join(dir, 'truncated.json'), '{"query":"acme","limit":')
  writeFileSync(join(dir, 'not-json.json'), '{"type": "object",')
  writeFileSync(join(dir, 'bad-schema.json'), JSON.stringify({ type: 'object', properties: { limit: { type: 'int' } } }))
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ version: 1, tools: [{ name: 'search_db', inputSchema: schema }] }))
  writeFileSync(
    join(dir, 'config.yaml'),
    'version: 1\ntools:\n  - name: get_weather\n    inputSchema:\n      type: object\n      properties:\n        city: { type: string }\n        days: { type: integer, default: 3 }\n      required: [city]\n',
  )
  writeFileSync(join(dir, 'bad-config.json'), JSON.stringify({ version: 1, tools: [{ name: 't' }], polcy: {} }))
})

describe('toolgate check', () => {
  const schemaArgs = ['--schema', 'schema.json', '--tool-name', 'search_db']

  it('pretty: a clean call passes (exit 0) and runs with the caller\'s own text', () => {
    const r = run(['check', ...schemaArgs, '--input', 'clean.json'])
    expect(r.code).toBe(0)
    expect(r.stderr).toBe('')
    expect(r.stdout).toContain('search_db')
    expect(r.stdout).toContain('PASSED')
    expect(r.stdout).toContain('run with {"query":"acme", "limit":10}')
    expect(r.stdout).not.toContain('\x1b[')
  })

  it('pretty: an almost-right call is repaired (exit 0): outcome, each flag, the arguments to run with', () => {
    const r = run(['check', ...schemaArgs, '--input', 'almost.json'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('REPAIRED')
    expect(r.stdout).toContain('flag StringToInteger at /limit: "10" → 10')
    expect(r.stdout).toContain('flag EnumCaseNormalized at /status: "ACTIVE" → "active"')
    expect(r.stdout).toContain('run with {"query":"acme","limit":10,"status":"active"}')
  })

  it('pretty: a wrong call is rejected (exit 1) with the model-readable message', () => {
    const r = run(['check', ...schemaArgs, '--input', 'wrong.json'])
    expect(r.code).toBe(1)
    expect(r.stdout).toContain('REJECTED (invalid)')
    expect(r.stdout).toContain('`limit`: expected integer, got "ten".')
    expect(r.stdout).not.toContain('run with')
  })

  it('json: one Verdict object on one line, for each exit code', () => {
    const ok = run(['check', ...schemaArgs, '--input', 'almost.json', '--format', 'json'])
    expect(ok.code).toBe(0)
    expect(ok.stdout.trim().split('\n')).toHaveLength(1)
    const v = JSON.parse(ok.stdout)
    expect(v).toMatchObject({ outcome: 'repaired', allowed: true, tool: 'search_db', arguments: { query: 'acme', limit: 10, status: 'active' } })
    expect(v.flags.map((f: { code: string }) => f.code)).toEqual(['StringToInteger', 'EnumCaseNormalized'])

    const clean = JSON.parse(run(['check', ...schemaArgs, '--input', 'clean.json', '--format=json']).stdout)
    expect(clean).toMatchObject({ outcome: 'passed', argumentsJson: '{"query":"acme", "limit":10}', flags: [] })

    const bad = run(['check', ...schemaArgs, '--input', 'truncated.json', '--format', 'json'])
    expect(bad.code).toBe(1)
    const b = JSON.parse(bad.stdout)
    expect(b).toMatchObject({ outcome: 'rejected', allowed: false, reason: 'bad_arguments' })
    expect(typeof b.message).toBe('string')
    expect(b.arguments).toBeUndefined()
  })

  it('reads the call from stdin with --input -', () => {
    const r = run(['check', ...schemaArgs, '--input', '-', '--format', 'json'], { input: '{"query":"acme","limit":"7"}' })
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ outcome: 'repaired', arguments: { query: 'acme', limit: 7 } })
    const wrong = run(['check', ...schemaArgs, '--input', '-'], { input: '{"limit":3.7}' })
    expect(wrong.code).toBe(1)
    expect(wrong.stdout).toContain('REJECTED (invalid)')
    expect(wrong.stdout).toContain('stdin')
  })

  it('builds the gate from --config (JSON or YAML) instead of --schema', () => {
    const json = run(['check', '--config', 'config.json', '--tool-name', 'search_db', '--input', 'almost.json', '--format', 'json'])
    expect(json.code).toBe(0)
    expect(JSON.parse(json.stdout).outcome).toBe('repaired')

    writeFileSync(join(dir, 'weather.json'), '{"city":"Oslo","days":"5"}')
    const yaml = run(['check', '--config', 'config.yaml', '--tool-name', 'get_weather', '--input', 'weather.json', '--format', 'json'])
    expect(yaml.code).toBe(0)
    expect(JSON.parse(yaml.stdout)).toMatchObject({ outcome: 'repaired', arguments: { city: 'Oslo', days: 5 } })

    // a tool the config does not declare is refused, not an error
    const unknown = run(['check', '--config', 'config.json', '--tool-name', 'serch_db', '--input', 'clean.json'])
    expect(unknown.code).toBe(1)
    expect(unknown.stdout).toContain('REJECTED (unknown_tool)')
  })

  it('--context decides for a caller under a policy config (exit 0 allowed, 1 denied, 2 bad context)', () => {
    const policy = join(__dirname, 'fixtures', 'policy', 'config.json')
    writeFileSync(join(dir, 'report.json'), '{"path":"reports/q3.csv"}')
    const base = ['check', '--config', policy, '--tool-name', 'read_file', '--input', 'report.json']
    const ok = run([...base, '--context', '{"subject":"ana","roles":["analyst"]}'])
    expect(ok.code).toBe(0)
    expect(ok.stdout).toContain('PASSED read on file:reports/q3.csv')
    writeFileSync(join(dir, 'ctx.json'), '{"subject":"x"}')
    const denied = run([...base, '--context', 'ctx.json', '--format', 'json'])
    expect(denied.code).toBe(1)
    expect(JSON.parse(denied.stdout)).toMatchObject({ outcome: 'denied', reason: 'no_rule', resource: 'file:reports/q3.csv' })
    const typo = run([...base, '--context', '{"role":["analyst"]}'])
    expect(typo.code).toBe(2)
    expect(typo.stderr).toMatch(/--context: E_CONFIG: .*role/)
  })

  it('--help prints usage with examples (exit 0)', () => {
    const r = run(['check', '--help'])
    expect(r.code).toBe(0)
    for (const s of ['--schema', '--config', '--tool-name', '--input', '--format', 'Examples:', 'toolgate check --schema']) expect(r.stdout).toContain(s)
    expect(run(['check', '-h']).stdout).toBe(r.stdout)
    expect(run(['--help']).stdout).toContain('toolgate check --schema')
  })

  it('demo --help prints its usage like every other command (exit 0), other arguments are refused', () => {
    const r = run(['demo', '--help'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('Usage: toolgate demo')
    expect(run(['demo', '-h']).stdout).toBe(r.stdout)
    const bad = run(['demo', '--fast'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('takes no arguments')
  })

  it.each([
    ['no --schema or --config', ['--tool-name', 'search_db', '--input', 'clean.json'], ['--schema', '--config']],
    ['no --tool-name', ['--schema', 'schema.json', '--input', 'clean.json'], ['--tool-name']],
    ['no --input', ['--schema', 'schema.json', '--tool-name', 'search_db'], ['--input']],
    ['an unknown flag', [...schemaArgs, '--input', 'clean.json', '--verbose'], ['--verbose']],
    ['a stray argument', [...schemaArgs, '--input', 'clean.json', 'extra'], ['extra']],
    ['a flag without its value', ['--schema', 'schema.json', '--tool-name', '--input', 'clean.json'], ['--tool-name']],
    ['a flag given twice', [...schemaArgs, '--input', 'clean.json', '--input', 'wrong.json'], ['--input', 'twice']],
    ['both --schema and --config', [...schemaArgs, '--config', 'config.json', '--input', 'clean.json'], ['--schema', '--config']],
    ['a bad --format', [...schemaArgs, '--input', 'clean.json', '--format', 'yaml'], ['--format', 'pretty', 'json']],
    ['an unreadable --input', [...schemaArgs, '--input', 'missing.json'], ['--input', 'missing.json']],
    ['an unreadable --schema', ['--schema', 'missing.json', '--tool-name', 'search_db', '--input', 'clean.json'], ['--schema', 'missing.json']],
    ['a --schema that is not JSON', ['--schema', 'not-json.json', '--tool-name', 't', '--input', 'clean.json'], ['--schema', 'not-json.json', 'JSON']],
    ['a --schema that is no schema', ['--schema', 'bad-schema.json', '--tool-name', 't', '--input', 'clean.json'], ['--schema', 'E_CONFIG', '/properties/limit/type']],
    ['an unreadable --config', ['--config', 'missing.yaml', '--tool-name', 't', '--input', 'clean.json'], ['--config', 'missing.yaml']],
    ['a bad --config', ['--config', 'bad-config.json', '--tool-name', 't', '--input', 'clean.json'], ['--config', 'E_CONFIG', 'polcy']],
  ])('usage error (exit 2, nothing on stdout): %s', (_what, args, words) => {
    const r = run(['check', ...args])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/^toolgate check: /)
    for (const w of words) expect(r.stderr).toContain(w)
    expect(r.stderr).toContain('toolgate check --help')
  })
})

describe('toolgate bench', () => {
  it('runs the shipped corpus: every case handled correctly (exit 0), with latency', () => {
    const r = run(['bench', '--iterations', '20'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('handled correctly    49/49')
    expect(r.stdout).toContain('passed as sent       15/15')
    expect(r.stdout).toContain('auto-repaired        17/17')
    expect(r.stdout).toContain('correctly rejected   17/17')
    expect(r.stdout).toMatch(/20 iterations × 49 cases = 980 calls/)
    expect(r.stdout).toMatch(/p50 [\d.]+ (ns|µs) +p95 [\d.]+ (ns|µs) +p99 [\d.]+ (ns|µs)/)
    expect(r.stdout).not.toContain('handled wrongly')
    // a pipe is no terminal: no progress line
    expect(r.stderr).toBe('')
  })

  it('by default times as many iterations as fit in about a second', () => {
    const t0 = Date.now()
    const r = run(['bench', '--format', 'json'])
    expect(r.code).toBe(0)
    const s = JSON.parse(r.stdout)
    expect(s.latency.iterations).toBeGreaterThanOrEqual(10)
    expect(Date.now() - t0).toBeLessThan(15_000)
  })

  it('--format json: one object for machines', () => {
    const r = run(['bench', '--corpus-dir', join(root, 'bench', 'corpus'), '--iterations', '5', '--format', 'json'])
    expect(r.code).toBe(0)
    const s = JSON.parse(r.stdout)
    expect(s).toMatchObject({
      cases: 49,
      tools: 8,
      handledCorrectly: 49,
      passed: { ok: 15, of: 15 },
      repaired: { ok: 17, of: 17 },
      rejected: { ok: 17, of: 17 },
      wrong: [],
      contractMismatches: [],
    })
    expect(s.latency).toMatchObject({ iterations: 5, calls: 245 })
    for (const k of ['p50Ns', 'p95Ns', 'p99Ns']) expect(s.latency[k]).toBeGreaterThan(0)
    expect(s.latency.p50Ns).toBeLessThanOrEqual(s.latency.p95Ns)
    expect(s.latency.p95Ns).toBeLessThanOrEqual(s.latency.p99Ns)
  })

  it('names a case handled wrongly and exits 1', () => {
    const corpus = join(dir, 'corpus-wrong')
    mkdirSync(corpus)
    writeFileSync(join(corpus, 'tools.json'), readFileSync(join(dir, 'config.json')))
    writeFileSync(
      join(corpus, 'cases.json'),
      JSON.stringify([
        { id: 'ok-pass', tool: 'search_db', args: '{"query":"a"}', expect: { outcome: 'passed', arguments: { query: 'a' }, flags: [] } },
        { id: 'ok-repair', tool: 'search_db', args: '{"query":"a","limit":"3"}', expect: { outcome: 'repaired', arguments: { query: 'a', limit: 3 } } },
        { id: 'ok-reject', tool: 'search_db', args: '{"limit":1}', expect: { outcome: 'rejected', reason: 'invalid' } },
        // wrong expectation: 3.7 is never truncated to 3, the gate rejects it
        { id: 'expects-truncation', tool: 'search_db', args: '{"query":"a","limit":3.7}', expect: { outcome: 'repaired', arguments: { query: 'a', limit: 3 } }, note: 'a wrong expectation' },
        // right outcome, wrong arguments
        { id: 'expects-other-args', tool: 'search_db', args: '{"query":"a","status":"ACTIVE"}', expect: { outcome: 'repaired', arguments: { query: 'a', status: 'ACTIVE' } } },
      ]),
    )
    const r = run(['bench', '--corpus-dir', corpus, '--iterations', '3'])
    expect(r.code).toBe(1)
    expect(r.stdout).toContain('handled correctly    3/5')
    expect(r.stdout).toContain('handled wrongly (2)')
    expect(r.stdout).toMatch(/✗ expects-truncation \(search_db\): got rejected \(invalid\); expected repaired/)
    expect(r.stdout).toContain('a wrong expectation')
    expect(r.stdout).toMatch(/✗ expects-other-args \(search_db\): arguments .*"active".*; expected .*"ACTIVE"/)
    expect(r.stdout).not.toContain('✗ ok-')

    const j = run(['bench', '--corpus-dir', corpus, '--iterations', '3', '--format', 'json'])
    expect(j.code).toBe(1)
    const s = JSON.parse(j.stdout)
    expect(s.handledCorrectly).toBe(3)
    expect(s.wrong.map((w: { id: string }) => w.id)).toEqual(['expects-truncation', 'expects-other-args'])
    expect(s.wrong[0]).toMatchObject({ expected: 'repaired', got: 'rejected' })
  })

  it('lists flag and reason mismatches apart, without failing the run', () => {
    const corpus = join(dir, 'corpus-flags')
    mkdirSync(corpus)
    writeFileSync(join(corpus, 'tools.json'), readFileSync(join(dir, 'config.json')))
    writeFileSync(
      join(corpus, 'cases.json'),
      JSON.stringify([
        { id: 'wrong-flag', tool: 'search_db', args: '{"query":"a","limit":"3"}', expect: { outcome: 'repaired', arguments: { query: 'a', limit: 3 }, flags: ['StringToFloat'] } },
      ]),
    )
    const r = run(['bench', '--corpus-dir', corpus, '--iterations', '2'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('handled correctly    1/1')
    expect(r.stdout).toContain('wrong-flag (search_db): flags [StringToInteger]; expected [StringToFloat]')
  })

  it('--help prints usage with examples (exit 0)', () => {
    const r = run(['bench', '--help'])
    expect(r.code).toBe(0)
    for (const s of ['--corpus-dir', '--iterations', '--format', 'Examples:', 'toolgate bench']) expect(r.stdout).toContain(s)
  })

  it.each([
    ['an unknown flag', ['--corpus', 'x'], ['--corpus']],
    ['--iterations not a number', ['--iterations', 'many'], ['--iterations', 'positive integer']],
    ['--iterations zero', ['--iterations', '0'], ['--iterations', 'positive integer']],
    ['--corpus-dir without a value', ['--corpus-dir'], ['--corpus-dir']],
    ['a bad --format', ['--format', 'csv'], ['--format']],
    ['a missing corpus', ['--corpus-dir', 'no-such-dir'], ['--corpus-dir', 'no-such-dir', 'tools.json']],
  ])('usage error (exit 2): %s', (_what, args, words) => {
    const r = run(['bench', ...args])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('')
    for (const w of words) expect(r.stderr).toContain(w)
  })

  it('a broken cases.json is a corpus error naming the file and the case (exit 2)', () => {
    const corpus = join(dir, 'corpus-broken')
    mkdirSync(corpus)
    writeFileSync(join(corpus, 'tools.json'), readFileSync(join(dir, 'config.json')))
    writeFileSync(join(corpus, 'cases.json'), JSON.stringify([{ id: 'a', tool: 'search_db', args: { query: 'a' }, expect: { outcome: 'passed' } }]))
    const r = run(['bench', '--corpus-dir', corpus])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('cases.json[0] (a): `args` must be a string')
    writeFileSync(join(corpus, 'cases.json'), '[')
    expect(run(['bench', '--corpus-dir', corpus]).stderr).toContain('cases.json is not JSON')
  })
})
