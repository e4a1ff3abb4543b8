// The config's shape has one source, the Rust config types: the shipped JSON Schema and the
// TypeScript config types are generated from them (`npm run gen:config`, scripts/gen-config.mjs).
// This regenerates both into a temporary directory and fails when the committed files differ: a
// file edited by hand, or a Rust type changed without regenerating. The names the core answers
// with (Outcome, Reason, FlagCode, Dialect, the core's error codes) are generated the same way
// from the core's enums.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = join(__dirname, '..')
const generated = ['schema/toolgate.config.schema.json', 'src-ts/config-types.generated.ts', 'src-ts/contract-types.generated.ts', 'python/toolgate/_contract.py']
// CRLF-normalized: a Windows checkout may have converted line endings
const read = (file: string) => readFileSync(file, 'utf8').replace(/\r\n/g, '\n')

describe('config: one source', () => {
  it('the committed schema and TypeScript config types are what `npm run gen:config` writes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-gen-config-'))
    try {
      // runs `cargo run --example config_schema`: built already when `cargo test` ran first
      execFileSync(process.execPath, [join(root, 'scripts', 'gen-config.mjs'), '--out-dir', dir], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] })
      for (const rel of generated) {
        expect(read(join(root, rel)), `${rel} is not generated from the Rust config types: run \`npm run gen:config\``).toBe(read(join(dir, rel)))
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 600_000)

  it('the shipped schema carries none of the TypeScript-only keywords', () => {
    const text = read(join(root, 'schema', 'toolgate.config.schema.json'))
    expect(text).not.toMatch(/"ts(Type|Required)"/)
  })
})

describe('contract: one source', () => {
  it('a name the core answers with is in the generated union (checked against a real verdict)', async () => {
    const { ToolGate } = await import('../src-ts/index')
    const gate = new ToolGate({ version: 1, tools: [{ name: 'read', inputSchema: { type: 'object', properties: { n: { type: 'integer' } } } }] })
    const text = read(join(root, 'src-ts', 'contract-types.generated.ts'))
    const v = gate.check('read', '{"n":"3"}')
    expect(text).toContain(`'${v.outcome}'`)
    expect(text).toContain(`'${v.flags[0].code}'`)
    const u = gate.check('nope', '{}')
    expect(text).toContain(`'${u.reason}'`)
  })
})
