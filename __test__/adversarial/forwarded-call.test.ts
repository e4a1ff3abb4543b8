// Adversarial: what the MCP proxy sends its server for a `tools/call` is what the gate decided.
// The router forwards an allowed call as the client's own line, or as that line with the decided
// arguments spliced in where it finds `params.arguments` in the text — text work, where a parser
// differential would let a server run something else. Seeded mutants of call lines (members
// dropped, added, renamed, retyped; keys written twice as text; `\u` escapes; spacing, a bare
// `\r`; arguments that need a repair) go through the real router, and every line it hands the
// server is read the way a server reads it (`JSON.parse`: the last of two equal keys wins). Each
// must be an allowed call of the gate's own decision for that line (`gate.guard` on the same
// text, a twin gate of the same config): the same id, tool and arguments; a refused call never
// reaches the server. Deterministic (fixed seeds); through the real native addon.
import { describe, expect, it } from 'vitest'

import { ToolGateError } from '../../src-ts/errors'
import { ToolGate, type ToolGateConfig } from '../../src-ts/index'
import { McpProxy } from '../../src-ts/proxy/mcp/proxy'
import { rng } from '../helpers/rng'

const config: ToolGateConfig = {
  tools: [
    { name: 'echo', inputSchema: { type: 'object', properties: { n: { type: 'integer' }, s: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } }, required: ['n'] } },
    { name: 'write_file', destructive: true, inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false } },
    { name: 'ping', inputSchema: { type: 'object' } },
  ],
  policy: { rules: [{ effect: 'allow', tools: ['echo', 'ping'] }, { effect: 'allow', tools: ['write_file'], when: "args.path matches '/tmp/*'" }] },
}
const MUTANTS = Number(process.env.FORWARDED_MUTANTS) || 3000

const BASES = [
  { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { n: 5, s: 'hi' } } },
  { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'echo', arguments: { n: '6', tags: 'x' }, _meta: { progressToken: 1 } } },
  { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'write_file', arguments: { path: '/tmp/a' } } },
  { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'ping' } },
]
const KEYS = ['name', 'arguments', 'id', 'params', 'method', '_meta', 'n', 's', 'path', 'tags', 'jsonrpc']
const VALUES: unknown[] = [null, '', 0, 7, '8', true, 'echo', 'write_file', 'ping', '/etc/passwd', '/tmp/b', {}, [], { n: 1 }, { path: '/etc/shadow' }, { n: '9', s: 'x' }, 'tools/call']


type Obj = Record<string, unknown>
const objects = (v: unknown, out: Obj[] = []): Obj[] => {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    out.push(v as Obj)
    for (const c of Object.values(v)) objects(c, out)
  }
  return out
}

/** A mutant call line: value mutations, then text ones (spacing, escapes, a key written twice, `\r`). */
function mutantLine(r: () => number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]
  const msg = structuredClone(pick(BASES)) as Obj
  for (let k = Math.floor(r() * 3); k > 0; k--) {
    const o = pick(objects(msg))
    const keys = Object.keys(o)
    const op = Math.floor(r() * 3)
    if (op === 0 && keys.length > 0) delete o[pick(keys)]
    else if (op === 1) o[pick(KEYS)] = structuredClone(pick(VALUES))
    else if (keys.length > 0) o[pick(keys)] = structuredClone(pick(VALUES))
  }
  let text = JSON.stringify(msg, null, r() < 0.3 ? ' ' : undefined)
  const textOps = Math.floor(r() * 3)
  for (let k = 0; k < textOps; k++) {
    switch (Math.floor(r() * 5)) {
      case 0: {
        // a key written twice, as text: the member repeated with another value
        const key = pick(['name', 'arguments', 'id', 'n', 'path', 'params'])
        const at = text.indexOf(`"${key}":`)
        if (at >= 0) text = `${text.slice(0, at)}"${key}":${JSON.stringify(pick(VALUES))},${text.slice(at)}`
        break
      }
      case 1: {
        // a letter of some string written as its \u escape
        const i = text.search(/[a-z]/)
        const j = i < 0 ? -1 : i + Math.floor(r() * 8)
        if (j >= 0 && /[a-z]/.test(text[j] ?? '')) text = `${text.slice(0, j)}\\u00${text.charCodeAt(j).toString(16)}${text.slice(j + 1)}`
        break
      }
      case 2:
        text = text.replace(/([,:{])/, `$1${pick([' ', '\t', '\r'])}`)
        break
      case 3:
        text = text.replace('"arguments"', pick(['"arguments" ', ' "arguments"', '"argument\\u0073"']))
        break
      default:
        text = text.replace(/"_meta":/, '"_meta":{"arguments":{"path":"/etc/passwd"}},"x":')
    }
  }
  return text
}

describe('the MCP proxy forwards exactly the call the gate allowed', () => {
  it(`${MUTANTS} mutant call lines: each forwarded line is the decided call, and nothing refused goes on`, () => {
    const judge = new ToolGate(config)
    const r = rng(20261204)
    let allowed = 0
    let spliced = 0
    for (let m = 0; m < MUTANTS; m++) {
      const line = mutantLine(r)
      const sent: string[] = []
      const proxy = new McpProxy({ config }, { toClient: () => {}, toClientText: () => {}, toServer: (msg) => sent.push(JSON.stringify(msg)), toServerText: (t) => sent.push(t) })
      proxy.clientLine({ kind: 'line', text: line })
      let decided: ReturnType<ToolGate['guard']> | undefined
      try {
        decided = judge.guard(line, { dialect: 'mcp' })
      } catch (e) {
        if (!(e instanceof ToolGateError)) throw e
      }
      const calls = decided?.calls.filter((c) => c.allowed) ?? []
      const where = `mutant ${m}: ${JSON.stringify(line)}\nsent: ${JSON.stringify(sent)}`
      // a message that is not a call the gate allowed is never a tools/call on the server's side
      const serverCalls = sent.map((t) => JSON.parse(t) as Obj).filter((s) => s.method === 'tools/call')
      expect(serverCalls.length, where).toBe(calls.length)
      for (const [i, s] of serverCalls.entries()) {
        const params = s.params as Obj
        expect([s.id, params.name, params.arguments], where).toEqual([JSON.parse(line).id, calls[i].tool, calls[i].arguments])
        allowed++
        if (sent[i] !== line) spliced++
      }
    }
    // the mutants reach both ways of forwarding, or this tests nothing
    expect(allowed).toBeGreaterThan(MUTANTS / 10)
    expect(spliced).toBeGreaterThan(MUTANTS / 50)
  })
})
