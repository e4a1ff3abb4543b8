// The published type surface: a strict consumer of every public export compiles (through the
// package's `exports` map, as CommonJS and as ESM), misuses fail to compile for the right
// reason, and docs/api.md is what scripts/api-docs.mjs generates from dist/*.d.ts today.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const root = join(__dirname, '..')
const tscJs = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
const consumer = join(root, '__test__', 'types', 'consumer.ts')

function tsc(args: string[]) {
  const r = spawnSync(process.execPath, [tscJs, ...args], { cwd: root, encoding: 'utf8', timeout: 120_000 })
  if (r.error) throw r.error
  return { status: r.status, out: `${r.stdout}${r.stderr}` }
}

const compilerOptions = JSON.parse(
  // the shared strict options, from the committed tsconfig (comments stripped)
  readFileSync(join(root, '__test__', 'types', 'tsconfig.json'), 'utf8').replace(/^\s*\/\/.*$/gm, ''),
).compilerOptions as Record<string, unknown>

describe('type surface', () => {
  let project = ''

  beforeAll(() => {
    // a consumer project that installed toolgate: node_modules/toolgate is the checkout
    project = mkdtempSync(join(tmpdir(), 'toolgate-types-'))
    mkdirSync(join(project, 'node_modules'))
    symlinkSync(root, join(project, 'node_modules', 'toolgate'), 'junction')
  })
  afterAll(() => {
    if (project) rmSync(project, { recursive: true, force: true })
  })

  function compileIn(type: 'module' | 'commonjs', files: Record<string, string>) {
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type }))
    for (const [name, text] of Object.entries(files)) writeFileSync(join(project, name), text)
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: Object.keys(files) }))
    return tsc(['-p', join(project, 'tsconfig.json')])
  }

  it('a strict consumer of every export compiles (tsc -p __test__/types/tsconfig.json)', () => {
    const r = tsc(['-p', join(root, '__test__', 'types', 'tsconfig.json')])
    expect(r.out).toBe('')
    expect(r.status).toBe(0)
  })

  it('the same consumer compiles as an ESM project that installed toolgate', () => {
    const r = compileIn('module', {
      'consumer.ts': readFileSync(consumer, 'utf8'),
      'dialects.ts': readFileSync(join(root, '__test__', 'types', 'dialects.ts'), 'utf8'),
    })
    expect(r.out).toBe('')
    expect(r.status).toBe(0)
  })

  it('wrong uses fail to compile, each for its own reason', () => {
    const bad = [
      `import { ToolGate, defineConfig, type Outcome } from 'toolgate'`,
      `const gate = new ToolGate({ tools: [{ name: 'search' }] })`,
      `gate.check(1, '{}')`, // line 3: the tool name is a string
      `defineConfig({ tools: [], tols: [] })`, // line 4: misspelled config key
      `const o: Outcome = 'allowed'`, // line 5: not an outcome
      `export { o }`,
      '',
    ].join('\n')
    const r = compileIn('commonjs', { 'bad.ts': bad })
    expect(r.status).not.toBe(0)
    const errors = [...r.out.matchAll(/bad\.ts\((\d+),\d+\): error (TS\d+)/g)].map((m) => `${m[1]} ${m[2]}`)
    expect(errors).toEqual(['3 TS2345', '4 TS2561', '5 TS2322'])
    expect(r.out).toContain("'tols' does not exist in type 'ToolGateConfig'")
  })

  it('the consumer imports every public export', () => {
    // consumer.ts, and dialects.ts for the many dialect payload types
    const text = readFileSync(consumer, 'utf8') + readFileSync(join(root, '__test__', 'types', 'dialects.ts'), 'utf8')
    const imported = new Set([...text.matchAll(/^\s+(?:type\s+)?(\w+),$/gm)].map((m) => m[1]))
    const docs = readFileSync(join(root, 'docs', 'api.md'), 'utf8')
    const documented = [...docs.matchAll(/^\| \[`(\w+)`\]/gm)].map((m) => m[1])
    expect(documented.length).toBeGreaterThan(0)
    expect(documented.filter((n) => !imported.has(n))).toEqual([])
    // and every runtime export is typed and documented
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const runtime = Object.keys(require(join(root, 'dist', 'index.js'))).filter((n) => n !== '__esModule')
    expect(runtime.filter((n) => !documented.includes(n))).toEqual([])
  })
})

describe('docs/api.md', () => {
  it('is what `npm run docs:api` generates from dist/*.d.ts (regenerate after changing the API)', () => {
    const r = spawnSync(process.execPath, [join(root, 'scripts', 'api-docs.mjs'), '--stdout'], { cwd: root, encoding: 'utf8' })
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    // CRLF-normalized: a Windows checkout may have converted line endings
    expect(readFileSync(join(root, 'docs', 'api.md'), 'utf8').replace(/\r\n/g, '\n')).toBe(r.stdout)
  })

  it('covers every export with its JSDoc and declaration', () => {
    const docs = readFileSync(join(root, 'docs', 'api.md'), 'utf8')
    for (const name of ['ToolGate', 'defineConfig', 'ToolGateError', 'ToolGateErrorCode', 'CallContext', 'Dialect', 'Flag', 'FlagCode', 'Outcome', 'Reason', 'ToolConfig', 'ToolGateConfig', 'Verdict']) {
      expect(docs).toContain(`\n## ${name}\n`)
    }
    expect(docs).toContain('check(tool: string, args: string | object | null | undefined, ctx?: CallContext): Verdict;')
    expect(docs).toContain('Decides one call.')
    expect(docs).not.toMatch(/#private|@packageDocumentation|\{@link/)
  })
})

