// The config's `schemas` through the typed API: a tool schema's $ref to a listed URI resolves
// offline; an unlisted remote $ref and a reference cycle that never descends into the value (what
// a hostile MCP server could list as a tool's inputSchema, which a validator would read as `true`)
// are E_CONFIG naming what was wrong (docs/json-schema.md).
import { describe, expect, it } from 'vitest'

import { ToolGate, type ToolGateConfig, type ToolGateError } from '../src-ts'
import { thrownConfigError } from './helpers/thrown'

const ADDRESS = 'https://example.com/address.json'
const address = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }

/** The `E_CONFIG` error compiling `config` throws. */
const configError = (config: ToolGateConfig): ToolGateError => thrownConfigError(() => new ToolGate(config))

describe('config `schemas` (offline $ref targets)', () => {
  it('a $ref to a listed URI resolves without the network, for strict and repairing tools', () => {
    for (const destructive of [true, false]) {
      const gate = new ToolGate({ tools: [{ name: 'ship', destructive, inputSchema: { type: 'object', properties: { to: { $ref: ADDRESS } }, required: ['to'] } }], schemas: { [ADDRESS]: address } })
      expect(gate.check('ship', { to: { city: 'Lyon' } }).allowed).toBe(true)
      const refused = gate.check('ship', { to: { zip: 1 } })
      expect(refused.outcome).toBe('rejected')
    }
  })

  it('an unlisted remote $ref is E_CONFIG naming the URI; nothing is fetched', () => {
    const e = configError({ tools: [{ name: 't', inputSchema: { type: 'object', properties: { a: { $ref: 'https://evil.example/x.json' } } } }], schemas: { [ADDRESS]: address } })
    expect(e.message).toContain('https://evil.example/x.json')
  })

  it('a schema that refers back to itself in place (never descending into the value) is refused, not read as `true`', () => {
    const e = configError({ tools: [{ name: 'loop', inputSchema: { type: 'object', allOf: [{ $ref: '#' }] } }] })
    expect(e.message).toMatch(/cycle/)
    expect(e.message).toContain('loop')
  })

  it('bad registry keys and values are E_CONFIG naming them', () => {
    expect(configError({ tools: [], schemas: { 'address.json': {} } }).message).toContain('address.json')
    expect(configError({ tools: [], schemas: { 'urn:x': 5 as never } }).message).toContain('urn:x')
  })
})
