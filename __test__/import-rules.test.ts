// The import rules of src-ts (scripts/import-rules.mjs, docs/architecture.md "Layers"): no import
// circles between modules, proxies and adapters never import each other, and only the typed API
// at the top of src-ts imports the binding. Fails on the first new circle or breach, naming it.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = join(__dirname, '..')
const script = join(root, 'scripts', 'import-rules.mjs')

function check(...args: string[]): { code: number | null; out: string } {
  const r = spawnSync(process.execPath, [script, ...args], { cwd: root, encoding: 'utf8' })
  return { code: r.status, out: r.stdout + r.stderr }
}

describe('src-ts imports', () => {
  it('have no circles and keep the layers apart', () => {
    const r = check()
    expect(r.out).toBe('src-ts imports: no circles, no layer breaches\n')
    expect(r.code).toBe(0)
  })

  it('the check finds a circle (type imports included), a proxy on an adapter, an adapter on a proxy, and the binding called from a folder', () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-imports-'))
    try {
      const files: Record<string, string> = {
        'a.ts': "import { b } from './b'\nexport const a = 1",
        'b.ts': "import type { C } from './c'\nexport const b = 2",
        'c.ts': "import { a } from './a'\nexport type C = string",
        'native.ts': 'export const native = 0',
        'gate.ts': "import { native } from './native'",
        'proxy/http/proxy.ts': "import { x } from '../../adapters/openai'",
        'adapters/openai.ts': "export { y } from '../proxy/shared'",
        'proxy/shared.ts': 'export const y = 3',
        'cli/keygen.ts': "import { native } from '../native'",
      }
      for (const [name, text] of Object.entries(files)) {
        mkdirSync(dirname(join(dir, name)), { recursive: true })
        writeFileSync(join(dir, name), text)
      }
      const r = check('--dir', dir)
      expect(r.code).toBe(1)
      expect(r.out.trim().split('\n').sort()).toEqual([
        'adapters/openai.ts imports proxy/shared.ts: an adapter stands on the gate, never on a proxy',
        'cli/keygen.ts imports native.ts: only the typed API at the top of src-ts calls the binding',
        'import circle: a.ts ↔ b.ts ↔ c.ts',
        'proxy/http/proxy.ts imports adapters/openai.ts: a proxy stands on the gate, never on an adapter',
      ])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
