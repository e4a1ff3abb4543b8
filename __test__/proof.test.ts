// Issue 5 through the real binding: signed receipts (verified by toolgate and by an independent
// JOSE library), the audit trail (records for every decision, hash-chained, none lost under a
// burst), the failure modes, and shadow mode.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { compactVerify, importJWK } from 'jose'
import { describe, expect, it } from 'vitest'

import { lineHash } from '../src-ts/audit/trail'
import { ToolGate, ToolGateError, verifyReceipt, type ToolGateConfig } from '../src-ts/index'
import { thrownToolGateError } from './helpers/thrown'

const tools: ToolGateConfig['tools'] = [
  { name: 'search', inputSchema: { type: 'object', properties: { q: { type: 'string' }, limit: { type: 'integer' } }, required: ['q'] } },
  { name: 'login', inputSchema: { type: 'object', properties: { user: { type: 'string' }, password: { type: 'string' } } } },
  { name: 'admin', inputSchema: { type: 'object' } },
]
const policy: ToolGateConfig['policy'] = { rules: [{ effect: 'allow', tools: ['search', 'login'] }] }

describe('receipts', () => {
  const gate = new ToolGate({ tools, policy, receipts: { ttlSeconds: 120 } })
  const ctx = { subject: 'ana', callId: 'call-7' }

  it('an allowed call carries a receipt naming it; a refused one none', () => {
    const v = gate.check('search', { q: 'x', limit: '5' }, ctx)
    expect(v.outcome).toBe('repaired')
    const claims = verifyReceipt(v.receipt!, gate.publicKey!, { tool: 'search', arguments: { limit: 5, q: 'x' }, sub: 'ana' })
    expect(claims).toMatchObject({ v: 1, sub: 'ana', tool: 'search', action: 'search', callId: 'call-7' })
    expect(claims.exp - claims.iat).toBe(120)
    expect(claims.jti).toMatch(/^[A-Za-z0-9_-]{20,}$/)
    expect(gate.check('admin', {}, ctx).receipt).toBeUndefined()
    expect(gate.check('nope', {}, ctx).receipt).toBeUndefined()
  })

  it('is a standard compact JWS (EdDSA) that jose verifies with the public key', async () => {
    const v = gate.check('search', { q: 'x' }, ctx)
    const key = await importJWK({ kty: 'OKP', crv: 'Ed25519', x: gate.publicKey! }, 'EdDSA')
    const { payload, protectedHeader } = await compactVerify(v.receipt!, key)
    expect(protectedHeader.alg).toBe('EdDSA')
    expect(typeof protectedHeader.kid).toBe('string')
    expect(JSON.parse(new TextDecoder().decode(payload))).toMatchObject({ tool: 'search', sub: 'ana' })
  })

  it('every refusal has its own reason', () => {
    const v = gate.check('search', { q: 'x' }, ctx)
    const r = v.receipt!
    const [h, p, s] = r.split('.')
    const flip = (t: string) => (t[5] === 'A' ? t.slice(0, 5) + 'B' + t.slice(6) : t.slice(0, 5) + 'A' + t.slice(6))
    const other = new ToolGate({ tools, receipts: {} }).publicKey!
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${p}.`
    const cases: [string, () => unknown][] = [
      ['bad_signature', () => verifyReceipt(`${h}.${flip(p)}.${s}`, gate.publicKey!)],
      ['bad_signature', () => verifyReceipt(`${h}.${p}.${flip(s)}`, gate.publicKey!)],
      ['malformed', () => verifyReceipt(r.slice(0, r.length / 2), gate.publicKey!)],
      ['unsupported_alg', () => verifyReceipt(none, gate.publicKey!)],
      ['wrong_key', () => verifyReceipt(r, other)],
      ['wrong_tool', () => verifyReceipt(r, gate.publicKey!, { tool: 'admin' })],
      ['wrong_arguments', () => verifyReceipt(r, gate.publicKey!, { arguments: { q: 'y' } })],
      ['wrong_subject', () => verifyReceipt(r, gate.publicKey!, { sub: 'eve' })],
      ['expired', () => verifyReceipt(r, gate.publicKey!, undefined, Date.now() + 10 * 60_000)],
      ['bad_public_key', () => verifyReceipt(r, 'short')],
    ]
    for (const [reason, f] of cases) {
      const e = thrownToolGateError(f)
      expect([e.code, e.reason], e.message).toEqual(['E_RECEIPT', reason])
    }
    // key order of the expected arguments does not matter
    const two = gate.check('search', { q: 'x', limit: 1 }, ctx).receipt!
    expect(verifyReceipt(two, gate.publicKey!, { arguments: { limit: 1, q: 'x' } }).tool).toBe('search')
  })

  it('guard gives each allowed call of a turn its own receipt', () => {
    const turn = { choices: [{ message: { role: 'assistant', tool_calls: [
      { id: 'c1', type: 'function', function: { name: 'search', arguments: '{"q":"a"}' } },
      { id: 'c2', type: 'function', function: { name: 'admin', arguments: '{}' } },
    ] } }] }
    const r = gate.guard(turn, { dialect: 'openai', subject: 'ana' })
    expect(verifyReceipt(r.calls[0].receipt!, gate.publicKey!).callId).toBe('c1')
    expect(r.calls[1].receipt).toBeUndefined()
  })

  it('reads the key from an environment variable or a file next to the config', () => {
    const seed = Buffer.alloc(32, 7).toString('base64url')
    process.env.TOOLGATE_TEST_KEY = seed
    const fromEnv = new ToolGate({ tools, receipts: { privateKeyEnv: 'TOOLGATE_TEST_KEY' } })
    const inline = new ToolGate({ tools, receipts: { privateKey: seed } })
    expect(fromEnv.publicKey).toBe(inline.publicKey)
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-key-'))
    writeFileSync(join(dir, 'receipt.key'), seed + '\n')
    writeFileSync(join(dir, 'toolgate.json'), JSON.stringify({ tools, receipts: { privateKeyFile: 'receipt.key' } }))
    expect(ToolGate.fromFile(join(dir, 'toolgate.json')).publicKey).toBe(inline.publicKey)
    expect(thrownToolGateError(() => new ToolGate({ tools, receipts: { privateKeyEnv: 'TOOLGATE_UNSET_KEY' } })).message).toContain('TOOLGATE_UNSET_KEY')
    const bad = thrownToolGateError(() => new ToolGate({ tools, receipts: { privateKey: 'not-a-key' } }))
    expect(bad.code).toBe('E_CONFIG')
    expect(new ToolGate({ tools }).publicKey).toBeUndefined()
  })
})

describe('the audit trail', () => {
  function chainOk(lines: string[]): boolean {
    return lines.every((l, i) => i === 0 || JSON.parse(l).prev === lineHash(lines[i - 1]))
  }

  it('records every decision once, chained, with argument hashes but no arguments by default', async () => {
    const lines: string[] = []
    const gate = new ToolGate({ tools, policy, audit: {} }, { onAudit: (l) => lines.push(l) })
    gate.check('search', { q: 'x', limit: '2' }, { subject: 'ana', roles: ['r'], session: 's' })
    gate.check('admin', {}, { subject: 'ana' })
    gate.check('nope', '{')
    expect(() => gate.guard('{"choices":', { dialect: 'openai' })).toThrow(ToolGateError)
    await gate.flush()
    const recs = lines.map((l) => JSON.parse(l))
    expect(recs.map((r) => [r.type, r.tool, r.outcome, r.reason])).toEqual([
      ['open', undefined, undefined, undefined],
      ['decision', 'search', 'repaired', undefined],
      ['decision', 'admin', 'denied', 'no_rule'],
      ['decision', 'nope', 'rejected', 'unknown_tool'],
      ['turn_error', undefined, undefined, undefined],
    ])
    expect(chainOk(lines)).toBe(true)
    const search = recs[1]
    expect(search).toMatchObject({ v: 1, sub: 'ana', session: 's', roles: ['r'], action: 'search', flags: [{ code: 'StringToInteger', path: '/limit' }] })
    expect(search.argsHash).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(search.args).toBeUndefined()
    expect(search.flags[0].from).toBeUndefined() // values only with includeArguments
    expect(search.latencyUs).toBeGreaterThanOrEqual(0)
    expect(recs[4]).toMatchObject({ code: 'E_PAYLOAD', dialect: 'openai' })
    expect(new Set(recs.map((r) => r.configHash)).size).toBe(1)
  })

  it('with includeArguments, keeps them, redacting named keys at any depth', async () => {
    const lines: string[] = []
    const gate = new ToolGate({ tools, policy, audit: { includeArguments: true, redact: ['password'] } }, { onAudit: (l) => lines.push(l) })
    gate.check('login', { user: 'ana', password: 'hunter2' })
    gate.check('admin', '{"x":{"password":"p"}}')
    await gate.flush()
    const [, login, admin] = lines.map((l) => JSON.parse(l))
    expect(login.args).toEqual({ user: 'ana', password: '[redacted]' })
    expect(admin.args).toEqual({ x: { password: '[redacted]' } })
    expect(lines.join('\n')).not.toContain('hunter2')
  })

  it('a burst of 100,000 checks loses no record and tears no line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-audit-'))
    const file = join(dir, 'audit.jsonl')
    const gate = new ToolGate({ tools, audit: { jsonl: file } })
    for (let i = 0; i < 100_000; i++) gate.check('search', `{"q":"${i % 7}"}`)
    await gate.flush()
    const lines = readFileSync(file, 'utf8').split('\n')
    expect(lines.pop()).toBe('')
    expect(lines).toHaveLength(100_001)
    expect(lines.filter((l) => l.includes('"type":"decision"'))).toHaveLength(100_000)
    expect(chainOk(lines)).toBe(true)
    expect(gate.auditDropped).toBe(0)
  }, 120_000)

  it('a failing sink refuses calls (audit_unavailable) until it recovers', async () => {
    let broken = false
    const gate = new ToolGate({ tools, audit: {} }, { onAudit: () => { if (broken) throw new Error('disk full') } })
    const warn = process.emitWarning
    process.emitWarning = () => {}
    try {
      broken = true
      gate.check('search', { q: 'x' })
      await gate.flush() // the write fails: the core is told
      expect(gate.check('search', { q: 'x' })).toMatchObject({ outcome: 'denied', reason: 'audit_unavailable' })
      expect(gate.check('nope', {}).reason).toBe('unknown_tool') // refusals still refuse
      broken = false
      await gate.flush() // nothing buffered: the sink is probed and recovers
      expect(gate.check('search', { q: 'x' }).outcome).toBe('passed')
    } finally {
      process.emitWarning = warn
    }
  })

  it('a full buffer refuses by default; onFailure "allow" lets calls run and counts every lost record', () => {
    const deny = new ToolGate({ tools, audit: { bufferRecords: 2 } })
    expect([0, 1, 2].map(() => deny.check('search', { q: 'x' }).outcome)).toEqual(['passed', 'passed', 'denied'])
    const allow = new ToolGate({ tools, audit: { bufferRecords: 2, onFailure: 'allow' } })
    expect([0, 1, 2, 3].map(() => allow.check('search', { q: 'x' }).outcome)).toEqual(['passed', 'passed', 'passed', 'passed'])
    expect(allow.auditDropped).toBe(2)
  })

  it('onAudit without an audit block is a config error', () => {
    expect(thrownToolGateError(() => new ToolGate({ tools }, { onAudit: () => {} })).code).toBe('E_CONFIG')
  })
})

describe('shadow mode', () => {
  it('lets policy refusals through, saying what enforcement would do; bad input is still refused', async () => {
    const lines: string[] = []
    const gate = new ToolGate({ tools, policy, mode: 'shadow', audit: {} }, { onAudit: (l) => lines.push(l) })
    const v = gate.check('admin', {}, { subject: 'x' })
    expect([v.outcome, v.allowed, v.shadow, v.wouldBe, v.reason]).toEqual(['passed', true, true, 'no_rule', undefined])
    expect(gate.check('search', { q: 'x' }).shadow).toBeUndefined()
    expect(gate.check('nope', {}).reason).toBe('unknown_tool')
    expect(gate.check('search', '{"q":1,"q":2}').reason).toBe('bad_arguments')
    await gate.flush()
    expect(JSON.parse(lines[1])).toMatchObject({ tool: 'admin', outcome: 'passed', shadow: true, wouldBe: 'no_rule' })
  })

  it('per tool: one tool in shadow, the rest enforced', () => {
    const gate = new ToolGate({ tools: [...tools.slice(0, 2), { ...tools[2], mode: 'shadow' }, { name: 'other' }], policy })
    expect(gate.check('admin', {}).wouldBe).toBe('no_rule')
    expect(gate.check('other', {}).reason).toBe('no_rule')
  })
})
