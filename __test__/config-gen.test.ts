// The config's shape has one source, the Rust config types: the shipped JSON Schema and the
// TypeScript config types are generated from them (`npm run gen:config`, scripts/gen-config.mjs).
// This regenerates both into a temporary directory and fails when the committed files differ: a
// file edited by hand, or a Rust type changed without regenerating.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = join(__dirname, '..')
const generated = ['schema/toolgate.config.schema.json', 'src-ts/config-types.generated.ts']
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
