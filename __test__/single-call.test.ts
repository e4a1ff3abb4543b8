// guardSingleCall (the MCP proxy's short answer for a one-call turn) against guard on the same
// gate: the same decision for every call of the MCP corpus (64 published tool schemas, a role
// policy, four callers), and text an attacker writes — a tool name or id holding newlines and
// JSON, a broken message — read back exactly, never confused with the answer's own separators.
import { describe, expect, it } from 'vitest'
import { loadCorpus } from '../bench/corpus/mcp/corpus'
import { guardSingleCall } from '../src-ts/gate'
import { native } from '../src-ts/native'
import { readSingleCallWire } from '../src-ts/single-call'
import { ToolGate } from '../src-ts/index'
import { thrownToolGateError } from './helpers/thrown'

const corpus = loadCorpus()
const line = (id: unknown, params: unknown) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params })

describe('guardSingleCall', () => {
  it('decides every call of the MCP corpus as guard does, for every caller', () => {
    const single = new ToolGate(corpus.config as never)
    const whole = new ToolGate(corpus.config as never)
    let kinds = new Set<string>()
    let decided = 0
    for (const k of corpus.cases) {
      let args: unknown
      try {
        args = JSON.parse(k.args)
      } catch {
        continue // arguments that are not JSON make an MCP message that is not JSON: see the last test
      }
      decided++
      const caller = single.caller(corpus.callers[k.caller] as never)
      const text = line(7, { name: k.tool, arguments: args })
      const d = guardSingleCall(single, text, { dialect: 'mcp', caller })!
      const r = whole.guard(text, { dialect: 'mcp', ...(corpus.callers[k.caller] as object) })
      kinds.add(d.kind)
      const c = r.calls[0]
      if (d.kind === 'untouched') {
        expect([c.outcome, c.allowed, r.payload], k.id).toEqual(['passed', true, JSON.parse(text)])
      } else if (d.kind === 'changed') {
        expect({ outcome: d.outcome, argumentsJson: d.argumentsJson, flags: d.flags }, k.id).toEqual({ outcome: c.outcome, argumentsJson: c.argumentsJson, flags: c.flags })
        expect((r.payload as { params: { arguments: unknown } }).params.arguments, k.id).toEqual(JSON.parse(d.argumentsJson))
      } else if (d.kind === 'refused') {
        expect({ reason: d.reason, tool: d.tool, feedback: d.feedback }, k.id).toEqual({ reason: c.reason, tool: c.tool, feedback: r.feedback[0] })
        expect(r.feedback, k.id).toHaveLength(1)
      } else {
        throw new Error(`${k.id}: a plain call answered with a whole report`)
      }
      expect(d.kind === 'refused' ? false : d.kind === 'untouched' ? c.outcome === 'passed' : true, k.id).toBe(c.allowed)
    }
    expect(decided).toBeGreaterThan(corpus.cases.length - 3)
    kinds = new Set([...kinds].sort())
    expect([...kinds]).toEqual(['changed', 'refused', 'untouched'])
  })

  it('a tool name and an id holding newlines, quotes and JSON come back exactly', () => {
    const gate = new ToolGate(corpus.config as never)
    const caller = gate.caller(corpus.callers.developer as never)
    const tool = 'get_file_contents\n{"kind":"untouched"}\n=\n~{}\npassed\n[]'
    const id = 'x\n!no_rule\n{}\nlist_issues'
    const d = guardSingleCall(gate, line(id, { name: tool, arguments: { owner: 'a', repo: 'b', path: 'c' } }), { dialect: 'mcp', caller })!
    expect(d.kind).toBe('refused')
    if (d.kind !== 'refused') return
    expect(d.tool).toBe(tool)
    expect(d.reason).toBe('unknown_tool')
    expect((d.feedback as { id: unknown }).id).toBe(id)
    const r = gate.guard(line(id, { name: tool, arguments: { owner: 'a', repo: 'b', path: 'c' } }), { dialect: 'mcp', caller })
    expect(d.feedback).toEqual(r.feedback[0])
  })

  it('arguments whose strings hold newlines and the separators are carried whole', () => {
    const gate = new ToolGate(corpus.config as never)
    const caller = gate.caller(corpus.callers.developer as never)
    const args = { owner: 'a\n~\n!', repo: 'b\n{"x":1}\n', labels: 'bug\nfeature', perPage: '20' }
    const d = guardSingleCall(gate, line(1, { name: 'list_issues', arguments: args }), { dialect: 'mcp', caller })!
    expect(d.kind).toBe('changed')
    if (d.kind !== 'changed') return
    expect(JSON.parse(d.argumentsJson)).toEqual({ owner: 'a\n~\n!', repo: 'b\n{"x":1}\n', labels: ['bug\nfeature'], perPage: 20 })
    expect(d.flags.map((f) => f.code)).toEqual(['WrappedScalarInArray', 'StringToFloat'])
  })

  it('missing arguments are normalised to {} (changed, passed), as guard writes them back', () => {
    const gate = new ToolGate({ version: 1, tools: [{ name: 'ping', inputSchema: { type: 'object' } }] })
    const d = guardSingleCall(gate, line(3, { name: 'ping' }), { dialect: 'mcp' })!
    expect(d).toEqual({ kind: 'changed', outcome: 'passed', argumentsJson: '{}', flags: [] })
  })

  it('what is not one plain call gets the whole report: a confirmation, a batch, a response', () => {
    const gate = new ToolGate({ version: 1, tools: [{ name: 'drop', inputSchema: { type: 'object' }, writes: true }], policy: { rules: [{ id: 'c', effect: 'allow', tools: ['drop'] }] } } as never)
    const c = guardSingleCall(gate, line(4, { name: 'drop', arguments: {} }), { dialect: 'mcp' })!
    expect(c.kind).toBe('report')
    if (c.kind === 'report') expect(c.report.calls[0].outcome).toBe('confirm')
    const none = guardSingleCall(gate, JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} }), { dialect: 'mcp' })!
    expect(none.kind).toBe('report')
    if (none.kind === 'report') expect(none.report.calls).toEqual([])
  })

  it('a message the codec cannot read throws as guard does (E_PAYLOAD), and a key written twice is refused', () => {
    const gate = new ToolGate(corpus.config as never)
    const bad = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"},"params":{"name":"b"}}'
    expect(thrownToolGateError(() => guardSingleCall(gate, bad, { dialect: 'mcp' })).code).toBe('E_PAYLOAD')
    expect(thrownToolGateError(() => gate.guard(bad, { dialect: 'mcp' })).code).toBe('E_PAYLOAD')
  })

  it('the binding reads a turn\'s {"caller":N} option strictly: a caller never prepared, or a number JSON does not allow, is refused', () => {
    const n = native()
    const gate = new n.BindingGate(JSON.stringify(corpus.config), null, false)
    const caller = new n.BindingCaller(JSON.stringify(corpus.callers.developer))
    const text = line(1, { name: 'get_file_contents', arguments: { owner: 'a', repo: 'b', path: 'c' } })
    for (const run of [n.guard, n.guardSingle]) {
      expect(run(gate.handle, 'mcp', text, `{"caller":${caller.handle}}`)).not.toBe('')
      const refused = (options: string) => {
        try {
          run(gate.handle, 'mcp', text, options)
        } catch (e) {
          return (e as { code?: string }).code
        }
        return 'answered'
      }
      expect(refused('{"caller":4000000000}')).toBe('E_CONFIG')
      for (const bad of [`{"caller":0${caller.handle}}`, `{"caller":+${caller.handle}}`, `{"caller":${caller.handle}.0}`, `{"caller":-${caller.handle}}`, `{"caller":${caller.handle}`]) {
        expect(refused(bad), bad).not.toBe('answered')
      }
    }
  })

  it('reads arguments holding newlines (JSON whitespace) whole: the outcome and flags are read from the end', () => {
    const flags = [{ code: 'StringToInteger', path: '/n', from: '5', to: 5 }]
    expect(readSingleCallWire(`~{\n  "n": 5\n}\nrepaired\n${JSON.stringify(flags)}`, '')).toEqual({ kind: 'changed', argumentsJson: '{\n  "n": 5\n}', outcome: 'repaired', flags })
    expect(readSingleCallWire('!no_rule\n{"id":1}\nname\nwith\nlines', '')).toEqual({ kind: 'refused', reason: 'no_rule', feedback: { id: 1 }, tool: 'name\nwith\nlines' })
  })
})
