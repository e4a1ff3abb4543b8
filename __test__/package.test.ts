// The package as users load it: the built dist through `require` and `import`, the CLI, and the
// README's quickstart pasted as it is.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = join(__dirname, '..')
const node = (args: string[], cwd = root) => execFileSync(process.execPath, args, { cwd, encoding: 'utf8' })

describe('package entry points', () => {
  it('CommonJS require and ESM import give the same class', () => {
    const out = node([
      '--input-type=module',
      '-e',
      `import { createRequire } from 'node:module'
       import * as esm from 'toolgate'
       const cjs = createRequire(import.meta.url)('toolgate')
       const gate = new esm.ToolGate({ tools: [{ name: 't' }] })
       console.log(esm.ToolGate === cjs.ToolGate, esm.ToolGateError === cjs.ToolGateError, gate.check('t', '{}').outcome)`,
    ])
    expect(out.trim()).toBe('true true passed')
  })

  it('the CLI prints help and runs the demo', () => {
    expect(node(['dist/cli/main.js', '--help'])).toContain('toolgate demo')
    const demo = node(['dist/cli/main.js', 'demo'])
    for (const word of ['PASSED', 'REPAIRED', 'REJECTED (invalid)', 'REJECTED (unknown_tool)', 'REJECTED (bad_arguments)']) {
      expect(demo).toContain(word)
    }
  })

  it('the README quickstart works when pasted', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8')
    const code = /```js\n([\s\S]*?)```/.exec(readme)![1]
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-quickstart-'))
    const file = join(dir, 'quickstart.js')
    // resolve `toolgate` from the checkout, as an installed package would be
    writeFileSync(file, code.replace("require('toolgate')", `require(${JSON.stringify(root)})`))
    const out = node([file], dir)
    // every `// value` comment in the quickstart is what that line prints
    const expected = [...code.matchAll(/console\.log\([^\n]*\/\/ (.*)$/gm)].map((m) => m[1])
    const norm = (s: string) => s.replace(/'/g, '').replace(/\s+/g, ' ')
    expect(expected.length).toBeGreaterThanOrEqual(3)
    expect(norm(out)).toContain(norm("[ 'PrunedUnknownProperty /debug', 'StringToInteger /limit', 'EnumCaseNormalized /status' ]"))
    for (const e of expected) expect(norm(out)).toContain(norm(e))
    expect(out).toContain('- `query`: required field is missing.')
  })

  it('every other README and docs/ example that requires toolgate runs as pasted and prints what it says', () => {
    const jsBlocks = (file: string) => [...readFileSync(join(root, file), 'utf8').matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]).filter((c) => c.includes("require('toolgate')"))
    const docs = readdirSync(join(root, 'docs'), { recursive: true }).map(String).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))
    const blocks = [...jsBlocks('README.md').slice(1), ...docs.flatMap(jsBlocks)]
    expect(blocks.length).toBeGreaterThanOrEqual(4)
    const norm = (s: string) => s.replace(/'/g, '').replace(/\s+/g, ' ')
    for (const code of blocks) {
      const dir = mkdtempSync(join(tmpdir(), 'toolgate-readme-'))
      const file = join(dir, 'example.js')
      writeFileSync(file, code.replace("require('toolgate')", `require(${JSON.stringify(root)})`))
      const out = norm(node([file], dir))
      const expected = [...code.matchAll(/console\.log\([^\n]*\/\/ (.*)$/gm)].map((m) => m[1])
      expect(expected.length).toBeGreaterThanOrEqual(1)
      // "…" in a comment stands for text left out
      for (const e of expected) for (const part of e.split('…')) expect(out).toContain(norm(part).trim())
    }
  })
})
