// Adversarial: the HTTP proxy never offers the model a tool its caller may not see. A client's
// request body is attacker-shaped (a prompt-injected agent, a tenant probing the gateway): the
// proxy sends it upstream as the client's own text when it may, spliced or re-encoded when it
// must, and a parser differential there would put a hidden tool in front of the model. Seeded
// mutants of Chat Completions, Responses and Messages requests — tool lists reordered, entries
// duplicated or renamed, a second `tools` key written as text, escaped keys, `functions` and
// `tool_choice` naming hidden tools, spacing — go through the real proxy (in process, a fixed
// `viewer` caller, a policy showing it `read_file` only) to a loopback upstream that records
// what it gets. Every body it gets, read as a server reads it (`JSON.parse`: the last of two
// equal keys wins), must declare no tool but `read_file`, and choose none of the request's other
// tools (a choice of a name the request never declared is the API's to refuse, as without the
// gate). Deterministic.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import type { ToolGateConfig } from '../../src-ts/index'
import { startHttpProxy, type HttpProxy } from '../../src-ts/proxy/http/proxy'
import { startRawUpstream, type RawUpstream } from '../helpers/http-proxy'
import { rng } from '../helpers/rng'

const schema = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }
const config: ToolGateConfig = {
  // declared by name only (the request's schema is learned), so the rules can name them
  tools: [{ name: 'read_file' }, { name: 'write_file' }, { name: 'delete_file' }] as ToolGateConfig['tools'],
  policy: {
    rules: [
      { effect: 'allow', roles: ['viewer'], tools: ['read_file'] },
      { effect: 'allow', roles: ['admin'], tools: ['*'] },
    ],
  },
}
const VISIBLE = new Set(['read_file'])
const NAMES = ['read_file', 'write_file', 'delete_file']
const MUTANTS = Number(process.env.FORWARDED_MUTANTS) || 150

type Obj = Record<string, unknown>
const chatTool = (name: string) => ({ type: 'function', function: { name, description: `${name} a file`, parameters: schema } })
const BASES: { path: string; body: Obj }[] = [
  { path: '/v1/chat/completions', body: { model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: NAMES.map(chatTool), tool_choice: 'auto' } },
  { path: '/v1/responses', body: { model: 'm', input: 'hi', tools: NAMES.map((name) => ({ type: 'function', name, parameters: schema })) } },
  { path: '/v1/messages', body: { model: 'm', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }], tools: NAMES.map((name) => ({ name, input_schema: schema })) } },
]

/**
 * The tool names a body declares or chooses, read as a server of its API reads it: Chat
 * Completions names a tool in `function.name` (or `custom.name`), also in its legacy `functions`
 * and `function_call`; Responses and Messages in `name`. A shape the API does not read is no
 * name (the proxy leaves such a `tool_choice` for the API to refuse, docs/proxy.md).
 */
function named(body: Obj, path: string): { declared: string[]; chosen: string[] } {
  const chat = path === '/v1/chat/completions'
  const out: string[] = []
  const nameOf = (t: unknown): void => {
    if (t === null || typeof t !== 'object') return
    const o = t as Obj
    const v = chat ? ((o.function ?? o.custom) as Obj | undefined)?.name : o.name
    if (typeof v === 'string') out.push(v)
  }
  if (Array.isArray(body.tools)) for (const t of body.tools as unknown[]) nameOf(t)
  if (chat && Array.isArray(body.functions)) for (const f of body.functions as Obj[]) if (typeof f?.name === 'string') out.push(f.name)
  const declared = out.splice(0)
  // a choice names a tool only in its API's own shape: Messages `{type: "tool", name}`, the
  // others `{type: "function" | "custom", …}`
  const choice = body.tool_choice as Obj | undefined
  const kinds = path === '/v1/messages' ? ['tool'] : ['function', 'custom']
  if (choice !== null && typeof choice === 'object' && kinds.includes(choice.type as string)) nameOf(choice)
  if (chat && typeof (body.function_call as Obj | undefined)?.name === 'string') out.push((body.function_call as Obj).name as string)
  return { declared, chosen: out }
}

/** A mutant request body: value mutations, then text ones. */
function mutant(r: () => number): { path: string; text: string } {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]
  const base = pick(BASES)
  const body = structuredClone(base.body)
  const tools = body.tools as Obj[]
  for (let k = Math.floor(r() * 3); k > 0; k--) {
    switch (Math.floor(r() * 7)) {
      case 0:
        tools.reverse()
        break
      case 1:
        tools.push(structuredClone(pick(tools)))
        break
      case 2: {
        // rename an entry to another tool (possibly making two definitions of one name)
        const t = pick(tools)
        const f = (t.function as Obj | undefined) ?? t
        f.name = pick(NAMES)
        break
      }
      case 3:
        body.functions = [{ name: pick(NAMES), parameters: schema }]
        if (r() < 0.5) body.function_call = { name: pick(NAMES) }
        break
      case 4:
        body.tool_choice = pick([{ type: 'function', function: { name: pick(NAMES) } }, { type: 'function', name: pick(NAMES) }, { type: 'tool', name: pick(NAMES) }, 'required'])
        break
      case 5:
        tools.splice(Math.floor(r() * tools.length), 1)
        break
      default:
        body.messages = [{ role: 'user', content: [{ type: 'text', text: 'x' }], tools: [chatTool('delete_file')] }]
    }
  }
  let text = JSON.stringify(body, null, r() < 0.2 ? 1 : undefined)
  for (let k = Math.floor(r() * 2); k > 0; k--) {
    switch (Math.floor(r() * 4)) {
      case 0: {
        // a second `tools` key, as text, before or after the first, holding a hidden tool
        const hidden = JSON.stringify([base.path === '/v1/messages' ? { name: 'delete_file', input_schema: schema } : chatTool('delete_file')])
        text = r() < 0.5 ? text.replace('{', `{"tools":${hidden},`) : `${text.slice(0, -1)},"tools":${hidden}}`
        break
      }
      case 1:
        text = text.replace('"tools"', pick(['"tool\\u0073"', '"tools" ', '"\\u0074ools"']))
        break
      case 2:
        text = text.replace('"name":"read_file"', pick(['"name":"read_fil\\u0065"', '"name":"delete_file","name":"read_file"', '"name":"read_file","name":"delete_file"']))
        break
      default:
        text = text.replace(/,/, pick([' ,', ',\n', ',\t']))
    }
  }
  return { path: base.path, text }
}

describe('the body the HTTP proxy sends upstream offers only the tools the caller may see', () => {
  let upstream: RawUpstream
  let proxy: HttpProxy
  const answers: Record<string, string> = {
    '/v1/chat/completions': JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] }),
    '/v1/responses': JSON.stringify({ id: 'r', object: 'response', status: 'completed', output: [{ type: 'message', id: 'm1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'ok', annotations: [] }] }] }),
    '/v1/messages': JSON.stringify({ id: 'msg', type: 'message', role: 'assistant', model: 'm', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn' }),
  }
  beforeAll(async () => {
    upstream = await startRawUpstream((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(answers[req.url.split('?')[0]] ?? answers['/v1/chat/completions'])
    })
    proxy = await startHttpProxy({ upstream: upstream.origin, port: 0, config, fixed: { roles: ['viewer'] }, log: () => {} })
  })
  afterAll(async () => {
    await proxy?.close()
    await upstream?.close()
  })

  it(`${MUTANTS} mutant requests: whatever goes upstream names no hidden tool`, async () => {
    const r = rng(4242)
    let sent = 0
    let withTools = 0
    for (let m = 0; m < MUTANTS; m++) {
      const { path, text } = mutant(r)
      const before = upstream.requests.length
      const res = await fetch(`${proxy.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: text })
      await res.text()
      if (upstream.requests.length === before) continue // refused at the door: nothing went upstream
      const body = upstream.requests[upstream.requests.length - 1].body
      const out = named(JSON.parse(body) as Obj, path)
      // a choice of a tool the request never declared is left for the API to refuse (as it would
      // without the gate): only a declared tool the caller may not see must never be chosen
      const asked = named(JSON.parse(text) as Obj, path).declared
      const where = `mutant ${m} (${path}): ${text}\nsent: ${body}`
      expect(out.declared.filter((n) => !VISIBLE.has(n)), where).toEqual([])
      expect(out.chosen.filter((n) => !VISIBLE.has(n) && asked.includes(n)), where).toEqual([])
      sent++
      if (out.declared.length > 0) withTools++
    }
    // the mutants reach the upstream, with tools in them, or this tests nothing
    expect(sent).toBeGreaterThan(MUTANTS / 5)
    expect(withTools).toBeGreaterThan(MUTANTS / 10)
  })
})
