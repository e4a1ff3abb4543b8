// Adversarial: a config must mean exactly what its text says, to every reader, or be refused.
// Found by review: a key written twice was refused until something re-serialized the config
// (an `audit.jsonl` path, a receipt key), and then the later `"effect": "allow"` won; duplicates
// inside map-typed fields (`inputSchema.properties`, `args`) passed `check`/`fromFile` while the
// proxies refused them; YAML `!!omap`/`!!set` became `{}` (a destructive tool's schema and
// argument globs gone), other tags became strings or Buffers, `.nan` became null; and `0755`,
// `010`, `1_000`, `yes` meant one thing to the Node reader (YAML 1.2) and another to Python's
// (YAML 1.1). Driven through `ToolGate.fromFile`, a config given as text, the built CLI
// (`toolgate check --config`, dist/ from `npm run build:ts`) and the proxies' loader. Python:
// python/tests/test_config_file.py (the same cases, and the same value from both readers).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

import { duplicateKeys, loadConfigFile } from '../../src-ts/config-file'
import { loadProxyConfig } from '../../src-ts/cli/proxy-config'
import { ToolGate } from '../../src-ts/index'
import { runCli } from '../helpers/cli'
import { thrownConfigError } from '../helpers/thrown'

const dir = mkdtempSync(join(tmpdir(), 'toolgate-meaning-'))
const write = (name: string, text: string) => {
  const p = join(dir, name)
  writeFileSync(p, text)
  return p
}
const ETC = '{"path":"/etc/passwd"}'
write('call.json', ETC)

const TOOL = '{"name":"delete_file","destructive":true,"inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}}'
/** The review's inputs (/tmp/review-config): each loaded before as something its text does not say. */
const JSON_DUPLICATES: [string, string, RegExp][] = [
  ['dup1.json', `{"tools":[${TOOL}],\n "policy":{"rules":[{"effect":"allow","tools":["*"]},{"effect":"deny","effect":"allow","tools":["delete_file"]}]}}`, /line 2: duplicate key "effect" in `policy\.rules\[1\]`/],
  ['dup2.json', `{"tools":[${TOOL}],\n "audit":{"jsonl":"a.jsonl"},\n "policy":{"rules":[{"effect":"allow","tools":["*"]},{"effect":"deny","effect":"allow","tools":["delete_file"]}]}}`, /line 3: duplicate key "effect" in `policy\.rules\[1\]`/],
  ['dup2-env.json', `{"tools":[${TOOL}],"receipts":{"privateKeyEnv":"TG_MEANING_KEY"},"policy":{"rules":[{"effect":"allow","tools":["*"]},{"effect":"deny","\\u0065ffect":"allow","tools":["delete_file"]}]}}`, /duplicate key "effect"/],
  ['dup3.json', '{"tools":[{"name":"delete_file","inputSchema":{"type":"object","properties":{"path":{"type":"string","pattern":"^tmp/"},"path":{"type":"string"}}}}]}', /duplicate key "path" in `tools\[0\]\.inputSchema\.properties`/],
  ['dup4.json', '{"tools":[{"name":"delete_file","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}},\n  "args":{"path":{"glob":"tmp/**"},"path":{"glob":"**"}}}]}', /line 2: duplicate key "path" in `tools\[0\]\.args`/],
]

const SCHEMA = 'inputSchema:\n      type: object\n      properties:\n        path: {type: string}\n'
const yamlTool = (extra: string) => `tools:\n  - name: delete_file\n    destructive: true\n    ${SCHEMA}${extra}`
/** YAML that means one thing to one reader and another to the other, or is no JSON value: refused. */
const YAML_REFUSED: [string, string, RegExp][] = [
  ['omap.yaml', 'tools:\n  - name: delete_file\n    destructive: true\n    inputSchema: !!omap\n      - type: object\n      - required: [path]\n      - properties: {path: {type: string, pattern: "^tmp/"}}\n      - additionalProperties: false\n    args: !!omap\n      - path: {glob: "tmp/**"}\n', /tag:yaml\.org,2002:omap is not allowed/],
  ['set.yaml', yamlTool('    args: !!set {path}\n'), /tag:yaml\.org,2002:set is not allowed/],
  ['foo-tag.yaml', 'tools:\n  - name: delete_file\n    description: !foo x\n', /!foo/],
  ['python-tag.yaml', 'tools:\n  - name: delete_file\n    description: !!python/object:os.system x\n', /python\/object:os\.system/],
  ['binary.yaml', 'tools:\n  - name: delete_file\n    description: !!binary aGVsbG8=\n', /binary is not allowed/],
  ['int-tag.yaml', 'tools:\n  - name: delete_file\n    inputSchema: {type: object, properties: {mode: {enum: [!!int "0755"]}}}\n', /int is not allowed/],
  ['nan.yaml', yamlTool('        n: {type: number, maximum: .nan}\n'), /"\.nan"/],
  ['inf.yaml', yamlTool('        n: {type: number, maximum: .inf}\n'), /"\.inf"/],
  ['huge.yaml', yamlTool('        n: {type: number, maximum: 1.0e+999}\n'), /not finite/],
  ['big-int.yaml', yamlTool('        n: {type: integer, maximum: 9007199254740993}\n'), /2\^53-1/],
  ['y1.yaml', `${yamlTool('    args:\n      path: {glob: "tmp/**"}\n')}loop: {maxIdentical: 010, windowSeconds: 60}\n`, /line 10: "010" is a number/],
  ['y7.yaml', 'tools:\n  - name: delete_file\n    inputSchema:\n      type: object\n      properties:\n        mode: {type: integer, enum: [0755, 0644]}\n', /line 6: "0755" is a number .* quote it/],
  ['underscore.yaml', `tools: [{name: delete_file}]\nloop: {maxIdentical: 1_000, windowSeconds: 60}\n`, /"1_000"/],
  ['octal-o.yaml', `tools: [{name: delete_file}]\nloop: {maxIdentical: 0o17, windowSeconds: 60}\n`, /"0o17"/],
  ['hex.yaml', `tools: [{name: delete_file}]\nloop: {maxIdentical: 0x1F, windowSeconds: 60}\n`, /"0x1F"/],
  ['exp.yaml', `tools: [{name: delete_file}]\nloop: {maxIdentical: 1e3, windowSeconds: 60}\n`, /"1e3"/],
  ['sexagesimal.yaml', `tools: [{name: delete_file}]\nloop: {maxIdentical: 3, windowSeconds: 1:30}\n`, /"1:30"/],
  ['yes.yaml', yamlTool('        path: {type: string, enum: [yes, no, on, off]}\n').replace('        path: {type: string}\n', ''), /"yes" is a boolean/],
  ['date.yaml', yamlTool('        d: {type: string, const: 2024-01-01}\n'), /"2024-01-01" is a date/],
  ['y3.yaml', 'tools:\n  - name: delete_file\n    inputSchema:\n      type: object\n      properties:\n        "1": {type: string, pattern: "^tmp/"}\n        1: {type: string}\n', /line 7: a key must be a string/],
  ['y4.yaml', yamlTool('    args:\n      <<: {path: {glob: "**"}}\n      path: {glob: "tmp/**"}\n'), /"<<" is a merge key/],
  ['dup-yaml.yaml', yamlTool('        path: {type: string, pattern: "^tmp/"}\n'), /line 8: duplicate key "path"/],
  ['control.yaml', 'tools:\n  - name: "delete_file"\n    description: a\u0001b\n', /U\+0001|control/],
]

/** One YAML config both readers take, with every form that stays (python/tests/test_config_file.py reads it too). */
const ACCEPTED = join(__dirname, '..', 'fixtures', 'config-same-meaning.yaml')


describe('a key written twice is refused by every reader, re-serialized or not', () => {
  for (const [name, text, why] of JSON_DUPLICATES) {
    it(`${name}: ToolGate.fromFile, the proxy loader, the CLI`, () => {
      const p = write(name, text)
      process.env.TG_MEANING_KEY = 'k'.repeat(43)
      const e = thrownConfigError(() => ToolGate.fromFile(p))
      expect(e.message).toContain(p)
      expect(e.message).toMatch(why)
      expect(thrownConfigError(() => loadConfigFile(p)).message).toMatch(why)
      expect(thrownConfigError(() => loadProxyConfig(p)).message).toMatch(why)
      const r = runCli(['check', '--config', p, '--tool-name', 'delete_file', '--input', 'call.json'], dir)
      expect([r.code, r.stderr]).toEqual([2, expect.stringMatching(why)])
      expect(r.stdout).not.toContain('PASSED')
    })
  }

  it('a config given as text, re-serialized for its audit path', () => {
    // a relative audit path is made absolute: the config is re-serialized from its parse
    const text = `{"tools":[${TOOL}],"audit":{"jsonl":"never-written.jsonl"},"policy":{"rules":[{"effect":"allow","tools":["*"]},{"effect":"deny","effect":"allow","tools":["delete_file"]}]}}`
    expect(thrownConfigError(() => new ToolGate(text)).message).toMatch(/^config: line 1: duplicate key "effect" in `policy\.rules\[1\]`/)
    // the same text written once denies
    const once = text.replace('"effect":"deny","effect":"allow"', '"effect":"deny"').replace('never-written.jsonl', join(dir, 'a.jsonl'))
    expect(new ToolGate(once).check('delete_file', ETC).outcome).toBe('denied')
  })

  it('keys compare as decoded; strings holding quotes, brackets and commas are not keys', () => {
    expect(() => duplicateKeys('{"a":1,"\\u0061":2}', 'x')).toThrow(/duplicate key "a"/)
    expect(() => duplicateKeys('{"a":"}\\",{\\"a\\":[","b":[{"a":1},{"a":2}],"c":{"a":{"a":1}}}', 'x')).not.toThrow()
    expect(() => duplicateKeys('{"a":[1,{"b":1,"c":[{"d":1}],"b":2}]}', 'x')).toThrow(/duplicate key "b" in `a\[1\]`/)
  })

  it('is linear: 40,000 keys in one object, and one written twice at the end', () => {
    const keys = Array.from({ length: 40_000 }, (_, i) => `"k${i}":{"type":"string"}`)
    const json = `{"tools":[{"name":"t","inputSchema":{"type":"object","properties":{${keys.join(',')},"k0":{}}}}]}`
    const yaml = `tools:\n  - name: t\n    inputSchema:\n      type: object\n      properties:\n${Array.from({ length: 40_000 }, (_, i) => `        k${i}: {type: string}\n`).join('')}        k0: {}\n`
    let t = performance.now()
    expect(thrownConfigError(() => loadConfigFile(write('many.json', json))).message).toMatch(/duplicate key "k0"/)
    expect(performance.now() - t).toBeLessThan(1500) // was 11-18 s (each key compared with every earlier one)
    t = performance.now()
    expect(thrownConfigError(() => loadConfigFile(write('many.yaml', yaml))).message).toMatch(/line 40006: duplicate key "k0"/)
    expect(performance.now() - t).toBeLessThan(6000) // was 19-25 s; the parse itself is ~1 s
  })
})

describe('YAML holds only what JSON holds, read alike by YAML 1.1 and 1.2', () => {
  for (const [name, text, why] of YAML_REFUSED) {
    it(`${name} is refused, naming the file and why`, () => {
      const p = write(name, text)
      const e = thrownConfigError(() => ToolGate.fromFile(p))
      expect(e.message).toContain(p)
      expect(e.message).toMatch(why)
      expect(thrownConfigError(() => loadProxyConfig(p)).message).toMatch(why)
    })
  }

  it('the CLI refuses them too (omap: /etc/passwd used to pass)', () => {
    for (const name of ['omap.yaml', 'y7.yaml', 'y1.yaml']) {
      const r = runCli(['check', '--config', join(dir, name), '--tool-name', 'delete_file', '--input', 'call.json'], dir)
      expect([r.code, r.stdout]).toEqual([2, ''])
      expect(r.stderr).toMatch(/E_CONFIG/)
    }
  })

  it('what stays means what it says (quoted, !!str, plain decimal)', () => {
    const p = write('accepted.yaml', readFileSync(ACCEPTED, 'utf8'))
    const { config } = loadConfigFile(p)
    const props = (config as { tools: { inputSchema: { properties: Record<string, Record<string, unknown>> } }[] }).tools[0].inputSchema.properties
    expect(props.mode.enum).toEqual(['0755', '0644', '010', 'yes', '1_000', '2024-01-01', 'y', 'n'])
    expect(props.n).toEqual({ type: 'number', minimum: -0, maximum: 1500, multipleOf: 0.5, default: 2 })
    expect(props.b.enum).toEqual([true, false, true])
    const gate = ToolGate.fromFile(p)
    expect(gate.check('delete_file', ETC).allowed).toBe(false)
    expect(gate.check('delete_file', '{"path":"tmp/x","mode":"0755"}').allowed).toBe(true)
  })
})
