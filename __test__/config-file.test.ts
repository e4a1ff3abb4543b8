// ToolGate.fromFile: JSON and YAML configs from real files, and the errors naming the file.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

import { ToolGate } from '../src-ts/index'
import { thrownConfigError } from './helpers/thrown'

const dir = mkdtempSync(join(tmpdir(), 'toolgate-config-'))
const write = (name: string, text: string) => {
  const p = join(dir, name)
  writeFileSync(p, text)
  return p
}

describe('ToolGate.fromFile', () => {
  it('loads YAML', () => {
    const p = write(
      'toolgate.config.yaml',
      `version: 1
tools:
  - name: get_weather
    inputSchema:
      type: object
      properties:
        days: { type: integer, default: 3 }
`,
    )
    const v = ToolGate.fromFile(p).check('get_weather', '{}')
    expect(v.arguments).toEqual({ days: 3 })
  })

  it('loads JSON', () => {
    const p = write('toolgate.config.json', JSON.stringify({ tools: [{ name: 'a' }] }))
    expect(ToolGate.fromFile(p).tools).toEqual(['a'])
  })

  it('names the file in every error', () => {
    expect(thrownConfigError(() => ToolGate.fromFile(join(dir, 'missing.json'))).message).toContain('missing.json')
    const dup = write('dup.yaml', 'tools: []\ntools: []\n')
    expect(thrownConfigError(() => ToolGate.fromFile(dup)).message).toContain('dup.yaml')
    const bad = write('bad.json', '{"tools":[{"name":"a","destructiv":true}]}')
    const e = thrownConfigError(() => ToolGate.fromFile(bad))
    expect(e.message).toContain('bad.json')
    expect(e.message).toContain('destructiv')
  })

  it('bounds YAML alias expansion', () => {
    const bomb = write('bomb.yaml', 'a: &a [x, x, x, x, x, x, x, x, x]\n' + Array.from({ length: 120 }, (_, i) => `k${i}: *a`).join('\n') + '\ntools: []\n')
    expect(thrownConfigError(() => ToolGate.fromFile(bomb)).message).toMatch(/alias/i)
  })
})

describe('the shipped config JSON Schema', () => {
  // The schema users point their editors at must agree with what the gate accepts.
  it('accepts what the gate accepts and refuses what it refuses', async () => {
    const { default: Ajv2020 } = await import('ajv/dist/2020')
    const { demoConfig } = await import('../src-ts/cli/demo')
    const schema = JSON.parse(require('node:fs').readFileSync(join(__dirname, '..', 'schema', 'toolgate.config.schema.json'), 'utf8'))
    const validate = new Ajv2020({ strict: false }).compile(schema)
    const full = {
      version: 1,
      tools: [
        { name: 'a', description: 'd', title: 't', annotations: {}, inputSchema: true, destructive: true },
        { name: 'ship', inputSchema: { type: 'object', properties: { to: { $ref: 'https://example.com/address.json' } } } },
      ],
      limits: { maxDepth: 8, maxArgumentBytes: 10, maxPayloadBytes: 100 },
      allowProtoKeys: false,
      schemas: { 'https://example.com/address.json': { type: 'object', properties: { city: { type: 'string' } } }, 'urn:example:any': true },
    }
    const policyConfig = JSON.parse(require('node:fs').readFileSync(join(__dirname, 'fixtures', 'policy', 'config.json'), 'utf8'))
    const proof = { tools: [{ name: 'a', mode: 'shadow' }], mode: 'enforce', receipts: { ttlSeconds: 60 }, audit: { includeArguments: true, redact: ['password'], onFailure: 'allow', bufferRecords: 10 } }
    const identity = { tools: [], identity: { jwt: { issuer: 'https://idp', audience: ['api'], publicKeys: [{ kty: 'OKP' }], algorithms: ['EdDSA'] } } }
    for (const ok of [demoConfig, full, { tools: [] }, policyConfig, proof, identity]) {
      expect(validate(ok)).toBe(true)
      expect(() => new ToolGate(ok as never)).not.toThrow()
    }
    const badOnes = [
      { tools: [], audti: {} },
      { tools: [], audit: { includeArgs: true } },
      { tools: [], mode: 'audit' },
      { tools: [], receipts: { privateKeyEnvironment: 'X' } },
      { tools: [{ name: 'a', inputSchem: {} }] },
      { tools: [{ name: 'a', writs: true }] },
      { tools: [{ name: 'a', surface: 'admin' }] },
      { tools: [{ name: 'a', args: { x: { pin: 'user' } } }] },
      { tools: [{ name: 'a' }], policy: { rules: [{ effect: 'permit', tools: ['a'] }] } },
      { tools: [{ name: 'a' }], policy: { rules: [{ effect: 'allow', tools: [] }] } },
      { tools: [{ name: 'a' }], policy: { rule: [] } },
      { tools: [], loop: { maxIdentical: 0, windowSeconds: 5 } },
      { tools: [], confirm: { ttlSeconds: 0 } },
      { tools: [], limits: { maxDepth: 0 } },
      { version: 2, tools: [] },
      { tools: [], schemas: { 'address.json': {} } },
      { tools: [], schemas: { 'https://example.com/a.json#/x': {} } },
      { tools: [], schemas: { 'urn:x': 5 } },
      // constraints the gate checks in code, stated in the schema too
      { tools: [], labels: ['a', 'a'] },
      { tools: [], state: { redis: { url: 'http://localhost:6379' } } },
      { tools: [], proxy: { upstreamHeaders: { authorization: { env: 'KEY', fallback: 'x' } } } },
      { tools: [], proxy: { identityHeaders: { subject: 'X-User' } } },
      { tools: [], identity: { jwt: { issuer: 'https://idp', audience: 'api', jwksUrl: 'https://idp/jwks', algorithms: ['HS256'] } } },
      { tools: [], identity: { jwt: { issuer: 'https://idp', audience: [], jwksUrl: 'https://idp/jwks' } } },
      { tools: [], identity: { jwt: { issuer: 'https://idp', audience: 'api' } } },
      { tools: [], identity: { jwt: { issuer: 'https://idp', audience: 'api', jwksUrl: 'https://idp/jwks', publicKeys: [{ kty: 'OKP' }] } } },
      { tools: [], audit: { chainKeyEnv: 'K', chainKeyFile: 'k.key' } },
    ]
    for (const bad of badOnes) {
      expect(validate(bad)).toBe(false)
      thrownConfigError(() => new ToolGate(bad as never))
    }
  })
})
