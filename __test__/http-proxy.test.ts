// `toolgate proxy` as users run it: the built CLI (dist/cli/main.js, from `npm run build:ts`),
// with the official `openai` and `@anthropic-ai/sdk` clients' baseURL pointed at it, in front of
// the loopback upstream (helpers/upstream.ts), which scripts the model and answers 400 to any
// follow-up whose tool results do not pair every call id — so "the next request is accepted"
// proves the proxy kept the conversation valid. The gate is real (native binding), configured
// from a file with a policy: `send_email` is not in the config (learned from the request, so
// denied by default: `no_rule`), `save_note` writes (`confirm`), `launch_rockets` is declared
// nowhere (`unknown_tool`), `get_weather`'s `days: "3"` is repaired to 3. Failures (timeouts,
// aborts, compression, limits) run against a bare upstream the test answers itself.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { brotliCompressSync, deflateRawSync, deflateSync, gunzipSync, gzipSync } from 'node:zlib'

import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { ToolGate, ToolGateError, verifyReceipt } from '../src-ts/index'
import { deferredLog } from '../src-ts/cli/log'
import { GateCache } from '../src-ts/proxy/http/gates'
import { decidedAnswer } from '../src-ts/proxy/http/rewrite'
import { redactUrl } from '../src-ts/proxy/redact-url'
import { startProxy, startRawUpstream, type RawUpstream, type RunningProxy } from './helpers/http-proxy'
import { chatChunks, sseText, startUpstream, type Upstream } from './helpers/upstream'
import { call, CHAT_TURN, fnItem, MESSAGE_TURN, responsesAnswer, textItem } from './helpers/turns'

type Json = Record<string, unknown>

const CONFIG = {
  tools: [
    { name: 'search', inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } },
    {
      name: 'get_weather',
      inputSchema: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1, maximum: 14 } }, required: ['city'], additionalProperties: false },
    },
    { name: 'save_note', writes: true, inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
  ],
  policy: { rules: [{ id: 'analysts', effect: 'allow', roles: ['analyst'], tools: ['search', 'get_weather', 'save_note'] }] },
  receipts: {},
}

/** The tools every request declares (not `launch_rockets`, which the model calls anyway). */
const DECLARED = ['search', 'get_weather', 'send_email', 'save_note']

const RESPONSES_TURN = responsesAnswer([
  textItem('On it.'),
  fnItem('a', 'search', '{"query":"rust"}'),
  fnItem('b', 'get_weather', '{"city":"Paris","days":"3"}'),
  fnItem('c', 'send_email', '{"to":"ceo@example.com"}'),
  fnItem('d', 'launch_rockets', '{}'),
  fnItem('e', 'save_note', '{"text":"remember"}'),
])

const ANALYST = { 'x-toolgate-subject': 'ana', 'x-toolgate-roles': ' analyst , ' }

let dir: string
let upstream: Upstream
let proxy: RunningProxy
let publicKey: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-http-proxy-'))
  writeFileSync(join(dir, 'toolgate.config.json'), JSON.stringify(CONFIG))
  writeFileSync(join(dir, 'roles.yaml'), [
    'tools: [{ name: search }, { name: wipe }]',
    'policy:',
    '  rules: [{ effect: allow, roles: [admin], tools: [wipe] }, { effect: allow, tools: [search] }]',
    '',
  ].join('\n'))
  upstream = await startUpstream({ chat: CHAT_TURN, responses: RESPONSES_TURN, messages: MESSAGE_TURN })
  // run from another folder: the audit file is relative to the config file
  proxy = await startProxy(['--upstream', upstream.origin, '--port', '0', '--config', join(dir, 'toolgate.config.json')], { cwd: tmpdir() })
  publicKey = /public key (\S+)/.exec(proxy.stderr())![1]
})
afterAll(async () => {
  await proxy?.close()
  await upstream?.close()
  rmSync(dir, { recursive: true, force: true })
})

const openai = (headers: Record<string, string> = ANALYST) => new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-test-secret', maxRetries: 0, defaultHeaders: headers })
const anthropic = (headers: Record<string, string> = ANALYST) => new Anthropic({ baseURL: proxy.url, apiKey: 'sk-ant-secret', maxRetries: 0, defaultHeaders: headers })
const lastBody = (): Json => upstream.requests[upstream.requests.length - 1].body
const chatToolNames = (body: Json) => (body.tools as { function: { name: string } }[] | undefined)?.map((t) => t.function.name)
const namesOf = (body: Json) => (body.tools as { name: string }[] | undefined)?.map((t) => t.name)
const refusedHeaderIds = (h: string | null) => (h ?? '').split(', ').filter(Boolean).map((p) => /;id=([^;]+)/.exec(p)![1])

describe('chat completions, not streamed', () => {
  const chatTools = DECLARED.map((name) => ({ type: 'function' as const, function: { name, parameters: { type: 'object' } } }))
  const user = { role: 'user' as const, content: 'Find rust books and the Paris weather, mail the CEO, launch, note it.' }

  it('filters tools, keeps passed and repaired calls, removes refused ones, and the next request is accepted', async () => {
    const client = openai()
    const { data, response } = await client.chat.completions.create({ model: 'gpt-4.1', messages: [user], tools: chatTools, tool_choice: 'auto' }).withResponse()
    // the upstream got only what this caller may call (send_email: learned, no rule allows it)
    expect(chatToolNames(lastBody())).toEqual(['search', 'get_weather', 'save_note'])
    const msg = data.choices[0].message
    expect(msg.tool_calls?.map((c) => c.id)).toEqual(['call_a', 'call_b'])
    const b = msg.tool_calls![1] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall
    expect(JSON.parse(b.function.arguments)).toEqual({ city: 'Paris', days: 3 })
    expect(data.choices[0].finish_reason).toBe('tool_calls')
    expect(msg.content).toContain('[toolgate] The call to `send_email` was not run (no_rule)')
    expect(msg.content).toContain('`launch_rockets` was not run (unknown_tool)')
    expect(msg.content).toContain('`save_note` was not run (confirm_required)')
    expect(refusedHeaderIds(response.headers.get('x-toolgate-refused'))).toEqual(['call_c', 'call_d', 'call_e'])
    // receipts for the allowed calls, signed by the key the proxy printed
    const receipts = Object.fromEntries((response.headers.get('x-toolgate-receipts') ?? '').split(', ').map((p) => p.split('=')))
    expect(Object.keys(receipts)).toEqual(['call_a', 'call_b'])
    expect(verifyReceipt(receipts.call_b, publicKey, { tool: 'get_weather', arguments: { city: 'Paris', days: 3 }, sub: 'ana' }).tool).toBe('get_weather')

    const results = msg.tool_calls!.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: 'done' }))
    const next = await client.chat.completions.create({ model: 'gpt-4.1', messages: [user, msg, ...results], tools: chatTools })
    expect(upstream.requests[upstream.requests.length - 1].status).toBe(200)
    expect(next.choices[0].message.content).toBe('All tool results received.')
  })

  it('a caller with no role: every call refused, the turn is plain text, tools and tool_choice dropped', async () => {
    const client = openai({})
    const { data, response } = await client.chat.completions.create({ model: 'gpt-4.1', messages: [user], tools: chatTools, tool_choice: 'auto', parallel_tool_calls: true }).withResponse()
    const sent = lastBody()
    expect(sent.tools).toBeUndefined()
    expect(sent.tool_choice).toBeUndefined()
    expect(sent.parallel_tool_calls).toBeUndefined()
    const msg = data.choices[0].message
    expect(msg.tool_calls).toBeUndefined()
    expect(data.choices[0].finish_reason).toBe('stop')
    expect(msg.content).toMatch(/^\[toolgate\] The call to `search` was not run \(no_rule\)/)
    expect(refusedHeaderIds(response.headers.get('x-toolgate-refused'))).toEqual(['call_a', 'call_b', 'call_c', 'call_d', 'call_e'])
    expect(response.headers.get('x-toolgate-receipts')).toBeNull()
    const next = await client.chat.completions.create({ model: 'gpt-4.1', messages: [user, msg, { role: 'user', content: 'ok' }] })
    expect(upstream.requests[upstream.requests.length - 1].status).toBe(200)
    expect(next.choices[0].message.tool_calls).toBeUndefined()
  })

  it('logs one line per turn with outcomes, never arguments or keys', () => {
    const log = proxy.stderr()
    expect(log).toMatch(/toolgate proxy: openai for ana: 5 calls: search#call_a passed, get_weather#call_b repaired, send_email#call_c denied \(no_rule\)/)
    expect(log).not.toContain('sk-test-secret')
    expect(log).not.toContain('sk-ant-secret')
    expect(log).not.toContain('Paris')
  })
})

describe('responses, not streamed', () => {
  const tools = DECLARED.map((name) => ({ type: 'function' as const, name, parameters: { type: 'object' }, strict: false }))

  it('removes refused items, adds the refusal as an output_text message, and the next request is accepted', async () => {
    const client = openai()
    const { data, response } = await client.responses.create({ model: 'gpt-4.1', input: 'go', tools }).withResponse()
    expect(namesOf(lastBody())).toEqual(['search', 'get_weather', 'save_note'])
    const calls = data.output.filter((o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === 'function_call')
    expect(calls.map((c) => c.call_id)).toEqual(['call_a', 'call_b'])
    expect(JSON.parse(calls[1].arguments)).toEqual({ city: 'Paris', days: 3 })
    expect(data.output_text).toContain('`send_email` was not run (no_rule)')
    expect(data.output_text).toContain('On it.')
    expect(refusedHeaderIds(response.headers.get('x-toolgate-refused'))).toEqual(['call_c', 'call_d', 'call_e'])
    const input: OpenAI.Responses.ResponseInputItem[] = [
      { role: 'user', content: 'go' },
      ...(data.output as OpenAI.Responses.ResponseInputItem[]),
      ...calls.map((c) => ({ type: 'function_call_output' as const, call_id: c.call_id, output: 'done' })),
    ]
    const next = await client.responses.create({ model: 'gpt-4.1', input, tools })
    expect(upstream.requests[upstream.requests.length - 1].status).toBe(200)
    expect(next.output_text).toBe('All tool results received.')
  })
})

describe('anthropic messages, not streamed', () => {
  const tools = DECLARED.map((name) => ({ name, input_schema: { type: 'object' as const } }))
  const user = { role: 'user' as const, content: 'go' }

  it('removes refused tool_use blocks, adds a text block, and the next request is accepted', async () => {
    const client = anthropic()
    const { data, response } = await client.messages.create({ model: 'claude-sonnet-5-5', max_tokens: 1024, messages: [user], tools }).withResponse()
    expect(namesOf(lastBody())).toEqual(['search', 'get_weather', 'save_note'])
    const uses = data.content.filter((b): b is Anthropic.Messages.ToolUseBlock => b.type === 'tool_use')
    expect(uses.map((u) => u.id)).toEqual(['toolu_a', 'toolu_b'])
    expect(uses[1].input).toEqual({ city: 'Paris', days: 3 })
    expect(data.stop_reason).toBe('tool_use')
    const texts = data.content.filter((b): b is Anthropic.Messages.TextBlock => b.type === 'text').map((b) => b.text)
    expect(texts[0]).toBe('Let me look that up.')
    expect(texts[1]).toContain('`save_note` was not run (confirm_required)')
    expect(refusedHeaderIds(response.headers.get('x-toolgate-refused'))).toEqual(['toolu_c', 'toolu_d', 'toolu_e'])
    const next = await client.messages.create({
      model: 'claude-sonnet-5-5', max_tokens: 1024, tools,
      messages: [user, { role: 'assistant', content: data.content }, { role: 'user', content: uses.map((u) => ({ type: 'tool_result' as const, tool_use_id: u.id, content: 'done' })) }],
    })
    expect(upstream.requests[upstream.requests.length - 1].status).toBe(200)
    expect(next.content).toEqual([{ type: 'text', text: 'All tool results received.' }])
  })

  it('a turn with every call refused ends as plain text (end_turn), and the next request is accepted', async () => {
    const client = anthropic({ 'x-toolgate-subject': 'bob' })
    const data = await client.messages.create({ model: 'claude-sonnet-5-5', max_tokens: 1024, messages: [user], tools })
    expect(lastBody().tools).toEqual([])
    expect(data.content.every((b) => b.type === 'text')).toBe(true)
    expect(data.stop_reason).toBe('end_turn')
    await client.messages.create({ model: 'claude-sonnet-5-5', max_tokens: 1024, messages: [user, { role: 'assistant', content: data.content }, { role: 'user', content: 'and now?' }] })
    expect(upstream.requests[upstream.requests.length - 1].status).toBe(200)
  })
})

describe('audit', () => {
  it('one hash chain in the file named relative to the config, across gates, flushed on SIGTERM', async () => {
    writeFileSync(join(dir, 'audited.json'), JSON.stringify({ ...CONFIG, audit: { jsonl: 'audited.jsonl' } }))
    const p = await startProxy(['--upstream', upstream.origin, '--port', '0', '--config', join(dir, 'audited.json')], { cwd: tmpdir() })
    const client = new OpenAI({ baseURL: `${p.url}/v1`, apiKey: 'sk-test-secret', maxRetries: 0, defaultHeaders: { 'x-toolgate-subject': 'audited-caller' } })
    const tools = DECLARED.map((name) => ({ type: 'function' as const, function: { name, parameters: { type: 'object' } } }))
    // three gates: the config's own (no tools declared), and two learned tool lists
    await client.chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }] })
    await client.chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }], tools })
    await client.chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }], tools: [...tools, { type: 'function', function: { name: 'translate' } }] })
    // the same learned tools in another order, with config tools left out: the second gate again
    await client.chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }], tools: [tools[2], tools[0]] })
    expect(await p.close()).toBe(0)
    const records = readFileSync(join(dir, 'audited.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Json)
    const mine = records.filter((r) => r.type === 'decision' && r.sub === 'audited-caller')
    // gates hand their records over as they drain them: in order within a gate, not across gates
    expect(mine.map((r) => `${String(r.callId)} ${String(r.outcome)}`).sort()).toEqual([
      ...Array(4).fill('call_a denied'), ...Array(4).fill('call_b denied'), 'call_c rejected', ...Array(3).fill('call_c denied'),
      ...Array(4).fill('call_d rejected'), ...Array(4).fill('call_e denied'),
    ].sort())
    // records per gate (its config hash): the config's own 5, the first learned list 10 (asked twice), the other 5
    const perGate = new Map<unknown, number>()
    for (const r of mine) perGate.set(r.configHash, (perGate.get(r.configHash) ?? 0) + 1)
    expect([...perGate.values()].sort()).toEqual([10, 5, 5])
    const verify = spawnSync(process.execPath, [join(__dirname, '..', 'dist', 'cli', 'main.js'), 'audit', 'verify', join(dir, 'audited.jsonl')], { encoding: 'utf8' })
    expect(verify.stdout).toContain('OK the hash chain holds')
    expect(verify.status).toBe(0)
  })
})

describe('streamed through the proxy', () => {
  it('openai stream: text and allowed calls arrive (repaired), refused ones never, and the next request is accepted', async () => {
    const client = openai()
    const user = { role: 'user' as const, content: 'go' }
    const tools = DECLARED.map((name) => ({ type: 'function' as const, function: { name, parameters: { type: 'object' } } }))
    const stream = await client.chat.completions.create({ model: 'gpt-4.1', messages: [user], tools, stream: true })
    const calls = new Map<number, { id: string; name: string; args: string }>()
    let text = ''
    let finish: string | null = null
    for await (const chunk of stream) {
      const choice = chunk.choices[0]
      if (choice === undefined) continue
      text += choice.delta.content ?? ''
      for (const tc of choice.delta.tool_calls ?? []) {
        const c = calls.get(tc.index) ?? { id: '', name: '', args: '' }
        c.id ||= tc.id ?? ''
        c.name ||= tc.function?.name ?? ''
        c.args += tc.function?.arguments ?? ''
        calls.set(tc.index, c)
      }
      finish = choice.finish_reason ?? finish
    }
    expect(chatToolNames(lastBody())).toEqual(['search', 'get_weather', 'save_note'])
    expect([...calls.values()].map((c) => c.id)).toEqual(['call_a', 'call_b'])
    expect(JSON.parse([...calls.values()][1].args)).toEqual({ city: 'Paris', days: 3 })
    expect(text).toContain('`launch_rockets` was not run (unknown_tool)')
    expect(finish).toBe('tool_calls')
    const assistant = { role: 'assistant' as const, content: text, tool_calls: [...calls.values()].map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.args } })) }
    const next = await client.chat.completions.create({ model: 'gpt-4.1', messages: [user, assistant, ...assistant.tool_calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: 'done' }))], stream: true })
    let final = ''
    for await (const chunk of next) final += chunk.choices[0]?.delta.content ?? ''
    expect(final).toBe('All tool results received.')
    expect(upstream.requests[upstream.requests.length - 1].status).toBe(200)
  })

  it('anthropic messages.stream(): the final message holds the allowed calls (repaired) and the refusal text; the next request is accepted', async () => {
    const client = anthropic()
    const tools = DECLARED.map((name) => ({ name, input_schema: { type: 'object' as const } }))
    const user = { role: 'user' as const, content: 'go' }
    const stream = client.messages.stream({ model: 'claude-sonnet-5-5', max_tokens: 1024, messages: [user], tools })
    let live = ''
    stream.on('text', (t) => (live += t))
    const message = await stream.finalMessage()
    const { response } = await stream.withResponse()
    expect(live).toContain('Let me look that up.')
    const uses = message.content.filter((b): b is Anthropic.Messages.ToolUseBlock => b.type === 'tool_use')
    expect(uses.map((u) => u.id)).toEqual(['toolu_a', 'toolu_b'])
    expect(uses[1].input).toEqual({ city: 'Paris', days: 3 })
    expect(message.content.some((b) => b.type === 'text' && b.text.includes('`send_email` was not run (no_rule)'))).toBe(true)
    expect(response.headers.get('trailer')).toContain('x-toolgate-refused')
    const next = await client.messages.create({
      model: 'claude-sonnet-5-5', max_tokens: 1024, tools, stream: true,
      messages: [user, { role: 'assistant', content: message.content }, { role: 'user', content: uses.map((u) => ({ type: 'tool_result' as const, tool_use_id: u.id, content: 'done' })) }],
    })
    let final = ''
    for await (const ev of next) if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') final += ev.delta.text
    expect(final).toBe('All tool results received.')
    expect(upstream.requests[upstream.requests.length - 1].status).toBe(200)
  })

  it('the x-toolgate-refused trailer names the removed calls', async () => {
    const res = await fetch(`${proxy.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'k', ...ANALYST },
      body: JSON.stringify({ model: 'm', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'go' }], tools: DECLARED.map((name) => ({ name, input_schema: { type: 'object' } })) }),
    })
    expect(res.status).toBe(200)
    // undici's fetch does not expose trailers; read the raw response instead
    const raw = await rawPost(`${proxy.url}/v1/messages`, { 'content-type': 'application/json', 'x-api-key': 'k', ...ANALYST }, JSON.stringify({ model: 'm', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'go' }], tools: DECLARED.map((name) => ({ name, input_schema: { type: 'object' } })) }))
    await res.body?.cancel()
    expect(refusedHeaderIds(raw.trailers['x-toolgate-refused'] ?? null)).toEqual(['toolu_c', 'toolu_d', 'toolu_e'])
    expect(raw.body).not.toContain('toolu_c')
  })
})

/** A POST through node:http (which, unlike fetch, exposes trailers). */
function rawPost(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; headers: Record<string, unknown>; trailers: Record<string, string | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => (text += d))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, trailers: res.trailers, body: text }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}

describe('learning tools without a config', () => {
  let bare: RunningProxy
  beforeAll(async () => {
    bare = await startProxy(['--upstream', upstream.origin, '--port', '0'])
  })
  afterAll(() => bare?.close())

  it("checks calls against the request's own schemas; undeclared tools are refused", async () => {
    const client = new OpenAI({ baseURL: `${bare.url}/v1`, apiKey: 'k', maxRetries: 0 })
    const tools = [
      { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city'] } } },
      { type: 'function' as const, function: { name: 'search', parameters: { type: 'object', properties: { query: { type: 'string' } } } } },
      { type: 'function' as const, function: { name: 'send_email', parameters: { type: 'object' } } },
      { type: 'function' as const, function: { name: 'save_note', parameters: { type: 'object' } } },
    ]
    const data = await client.chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'go' }], tools })
    expect(chatToolNames(lastBody())).toEqual(['get_weather', 'search', 'send_email', 'save_note'])
    const calls = data.choices[0].message.tool_calls as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall[]
    expect(calls.map((c) => c.id)).toEqual(['call_a', 'call_b', 'call_c', 'call_e'])
    expect(JSON.parse(calls[1].function.arguments)).toEqual({ city: 'Paris', days: 3 })
    expect(data.choices[0].message.content).toContain('`launch_rockets` was not run (unknown_tool)')
  })

  it('keeps provider-hosted tools the request declares (Responses web_search, Anthropic server tools)', async () => {
    const client = new OpenAI({ baseURL: `${bare.url}/v1`, apiKey: 'k', maxRetries: 0 })
    await client.responses.create({ model: 'gpt-4.1', input: 'go', tools: [{ type: 'web_search' }, { type: 'function', name: 'search', parameters: { type: 'object' }, strict: false }] })
    expect((lastBody().tools as { type: string }[]).map((t) => t.type)).toEqual(['web_search', 'function'])
    const claude = new Anthropic({ baseURL: bare.url, apiKey: 'k', maxRetries: 0 })
    await claude.messages.create({ model: 'claude-sonnet-5-5', max_tokens: 10, messages: [{ role: 'user', content: 'go' }], tools: [{ type: 'web_search_20250305', name: 'web_search' }, { name: 'search', input_schema: { type: 'object' } }] })
    expect(namesOf(lastBody())).toEqual(['web_search', 'search'])
  })

  it('with a policy, hosted tools follow deny by default', async () => {
    writeFileSync(join(dir, 'hosted.yaml'), 'tools: [{ name: search }]\npolicy:\n  rules: [{ effect: allow, tools: [search] }]\n')
    const p = await startProxy(['--upstream', upstream.origin, '--port', '0', '--config', join(dir, 'hosted.yaml')])
    try {
      const client = new OpenAI({ baseURL: `${p.url}/v1`, apiKey: 'k', maxRetries: 0 })
      await client.responses.create({ model: 'gpt-4.1', input: 'go', tools: [{ type: 'web_search' }, { type: 'function', name: 'search', parameters: { type: 'object' }, strict: false }] })
      expect((lastBody().tools as { type: string }[]).map((t) => t.type)).toEqual(['function'])
    } finally {
      await p.close()
    }
  })
})

const COMPLETION = (calls: unknown[]) => ({
  id: 'chatcmpl-raw', object: 'chat.completion', created: 1741569952, model: 'gpt-4.1',
  choices: [{ index: 0, logprobs: null, finish_reason: calls.length > 0 ? 'tool_calls' : 'stop', message: { role: 'assistant', content: calls.length > 0 ? null : 'hello', refusal: null, tool_calls: calls.length > 0 ? calls : undefined } }],
})
const json = (res: import('node:http').ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(typeof body === 'string' ? body : JSON.stringify(body))
}

describe('headers, failures and limits (bare upstream)', () => {
  let raw: RawUpstream
  let p: RunningProxy
  let answer: (req: import('./helpers/http-proxy').RawRequest, res: import('node:http').ServerResponse) => void = (_q, res) => json(res, 200, COMPLETION([]))
  beforeAll(async () => {
    raw = await startRawUpstream((q, res) => answer(q, res))
    p = await startProxy(['--upstream', `${raw.origin}/base/v1`, '--port', '0', '--config', join(dir, 'roles.yaml'), '--timeout-ms', '1500', '--max-body-bytes', '4096'])
  })
  afterAll(async () => {
    await p?.close()
    await raw?.close()
  })
  const client = (headers: Record<string, string> = {}) => new OpenAI({ baseURL: `${p.url}/v1`, apiKey: 'sk-live-secret', maxRetries: 0, defaultHeaders: headers })
  const wipe = call('call_w', 'wipe', '{}')
  const tools = [{ type: 'function' as const, function: { name: 'search' } }, { type: 'function' as const, function: { name: 'wipe' } }]

  it('forwards under the base path; Authorization passes, identity headers are stripped and honoured', async () => {
    answer = (_q, res) => json(res, 200, COMPLETION([wipe]))
    const admin = await client({ 'x-toolgate-subject': 'root', 'x-toolgate-roles': 'ops, admin' }).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }], tools })
    const q = raw.requests[raw.requests.length - 1]
    expect(q.url).toBe('/base/v1/chat/completions')
    expect(q.headers.authorization).toBe('Bearer sk-live-secret')
    expect(Object.keys(q.headers).filter((k) => k.startsWith('x-toolgate'))).toEqual([])
    expect((JSON.parse(q.body) as Json).tools).toHaveLength(2)
    expect(admin.choices[0].message.tool_calls?.map((c) => c.id)).toEqual(['call_w'])
    const visitor = await client({ 'x-toolgate-subject': 'eve' }).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }], tools })
    expect((JSON.parse(raw.requests[raw.requests.length - 1].body) as { tools: { function: { name: string } }[] }).tools.map((t) => t.function.name)).toEqual(['search'])
    expect(visitor.choices[0].message.tool_calls).toBeUndefined()
    expect(visitor.choices[0].finish_reason).toBe('stop')
    expect(p.stderr()).not.toContain('sk-live-secret')
  })

  it('bounds identity headers: 400 naming the header', async () => {
    const err = await client({ 'x-toolgate-subject': 'x'.repeat(300) }).chat.completions.create({ model: 'm', messages: [] }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(OpenAI.BadRequestError)
    expect((err as Error).message).toContain('header x-toolgate-subject: longer than 256 characters')
  })

  it('passes upstream error statuses and bodies on', async () => {
    answer = (_q, res) => json(res, 429, { error: { message: 'Rate limit reached', type: 'requests', param: null, code: 'rate_limit_exceeded' } }, { 'retry-after': '7' })
    const err = await client().chat.completions.create({ model: 'm', messages: [] }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(OpenAI.RateLimitError)
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(429)
    expect((err as Error).message).toContain('Rate limit reached')
    expect((err as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after')).toBe('7')
  })

  it('answers 504 in the dialect error shape when the upstream is too slow', async () => {
    answer = () => undefined // never answers
    const err = await client().chat.completions.create({ model: 'm', messages: [] }).catch((e: unknown) => e)
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(504)
    expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('toolgate_upstream_timeout')
    expect((err as Error).message).toContain('did not answer within 1500 ms')
    await raw.requests[raw.requests.length - 1].aborted
    const ant = await new Anthropic({ baseURL: p.url, apiKey: 'k', maxRetries: 0 }).messages.create({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e)
    expect((ant as InstanceType<typeof Anthropic.APIError>).status).toBe(504)
    expect(((ant as InstanceType<typeof Anthropic.APIError>).error as { error: { type: string } }).error.type).toBe('timeout_error')
  })

  it('aborts the upstream request when the client goes away', async () => {
    answer = () => undefined
    const before = raw.requests.length
    const ac = new AbortController()
    const pending = client().chat.completions.create({ model: 'm', messages: [] }, { signal: ac.signal }).catch((e: unknown) => e)
    while (raw.requests.length === before) await new Promise((r) => setTimeout(r, 10))
    ac.abort()
    expect(await pending).toBeInstanceOf(OpenAI.APIUserAbortError)
    await raw.requests[before].aborted // resolves only when the upstream sees its request dropped
  })

  it('decodes gzip and br upstream bodies and guards them', async () => {
    for (const [encoding, zip] of [['gzip', gzipSync], ['br', brotliCompressSync]] as const) {
      answer = (_q, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': encoding })
        res.end(zip(Buffer.from(JSON.stringify(COMPLETION([call('call_s', 'search', '{}'), call('call_x', 'format_disk', '{}')])))))
      }
      const { data, response } = await client().chat.completions.create({ model: 'm', messages: [] }).withResponse()
      expect(data.choices[0].message.tool_calls?.map((c) => c.id)).toEqual(['call_s'])
      expect(response.headers.get('content-encoding')).toBeNull()
      expect(response.headers.get('x-toolgate-refused')).toBe('format_disk;id=call_x;reason=unknown_tool')
    }
  })

  it('decodes deflate, zlib-wrapped or raw, and a chain of codings', async () => {
    const turn = Buffer.from(JSON.stringify(COMPLETION([call('call_s', 'search', '{}'), call('call_x', 'format_disk', '{}')])))
    for (const [encoding, body] of [['deflate', deflateSync(turn)], ['deflate', deflateRawSync(turn)], ['gzip, br', brotliCompressSync(gzipSync(turn))]] as const) {
      answer = (_q, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': encoding })
        res.end(body)
      }
      const { data, response } = await client().chat.completions.create({ model: 'm', messages: [] }).withResponse()
      expect(data.choices[0].message.tool_calls?.map((c) => c.id)).toEqual(['call_s'])
      expect(response.headers.get('x-toolgate-refused')).toBe('format_disk;id=call_x;reason=unknown_tool')
    }
  })

  it('asks the upstream for the codings it decodes, and refuses one it cannot decode (zstd) instead of forwarding it unguarded', async () => {
    answer = (_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'zstd' })
      res.end(Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0]))
    }
    const err = await client().chat.completions.create({ model: 'm', messages: [] }).catch((e: unknown) => e)
    expect(raw.requests[raw.requests.length - 1].headers['accept-encoding']).toBe('gzip, deflate, br')
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(502)
    expect((err as Error).message).toContain('content-encoding `zstd`, which the proxy cannot decode')
    // an error answer passes only in the API's error shape: one the proxy cannot read is a 502
    answer = (_q, res) => {
      res.writeHead(503, { 'content-type': 'application/json', 'content-encoding': 'zstd' })
      res.end('opaque')
    }
    const r = await rawPost(`${p.url}/v1/chat/completions`, { 'content-type': 'application/json' }, '{"model":"m","messages":[]}')
    expect(r.status).toBe(502)
    expect(r.headers['content-encoding']).toBeUndefined()
    expect(r.body).toContain('the upstream answered 503 with content-encoding `zstd`')
  })

  it('guards a gzip-coded stream, decoded as it arrives', async () => {
    const events = sseText(chatChunks(COMPLETION([call('call_s', 'search', '{"query":"x"}'), call('call_x', 'format_disk', '{}')])))
    answer = (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' })
      res.end(gzipSync(events))
    }
    const stream = await client().chat.completions.create({ model: 'm', messages: [], stream: true })
    const ids: string[] = []
    let text = ''
    for await (const chunk of stream) {
      for (const tc of chunk.choices[0]?.delta.tool_calls ?? []) if (tc.id) ids.push(tc.id)
      text += chunk.choices[0]?.delta.content ?? ''
    }
    expect(ids).toEqual(['call_s'])
    expect(text).toContain('`format_disk` was not run (unknown_tool)')
  })

  it('answers 413 for a chunked body that outgrows --max-body-bytes, without forwarding', async () => {
    const before = raw.requests.length
    const r = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const q = httpRequest(`${p.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (d: string) => (text += d))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
      })
      q.on('error', reject)
      q.write(`{"model":"m","messages":[{"role":"user","content":"${'x'.repeat(3000)}`)
      setTimeout(() => q.end(`${'y'.repeat(3000)}"}]}`), 20)
    })
    expect(r.status).toBe(413)
    expect(r.body).toContain('larger than 4096 bytes')
    expect(raw.requests.length).toBe(before)
  })

  it('answers 502 for an answer it cannot guard, never forwarding it', async () => {
    answer = (_q, res) => json(res, 200, { object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', tool_calls: 'rm -rf' } }] })
    const err = await client().chat.completions.create({ model: 'm', messages: [] }).catch((e: unknown) => e)
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(502)
    expect((err as Error).message).toContain("the upstream's answer cannot be guarded")
    answer = (_q, res) => json(res, 200, 'not json at all')
    expect(((await client().chat.completions.create({ model: 'm', messages: [] }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>).status).toBe(502)
  })

  it('answers 413 past --max-body-bytes without forwarding', async () => {
    const before = raw.requests.length
    const err = await client().chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(5000) }] }).catch((e: unknown) => e)
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(413)
    expect((err as Error).message).toContain('larger than 4096 bytes')
    expect(raw.requests.length).toBe(before)
  })

  it('answers 400 in the dialect shape for a body that is not JSON', async () => {
    const o = await fetch(`${p.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":' })
    expect(o.status).toBe(400)
    expect(((await o.json()) as { error: { code: string; message: string } }).error.message).toMatch(/^toolgate proxy: the request body of POST \/v1\/chat\/completions is not JSON/)
    const a = await fetch(`${p.url}/v1/messages`, { method: 'POST', body: 'hello' })
    expect(a.status).toBe(400)
    expect(((await a.json()) as { type: string; error: { type: string } })).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
  })

  it('passes other paths through unchanged, both ways', async () => {
    answer = (q, res) => json(res, 200, { object: 'list', data: [{ id: 'gpt-4.1', object: 'model', created: 1, owned_by: 'openai' }], seen: { method: q.method, url: q.url, body: q.body } })
    const models = await client().models.list()
    expect(models.data.map((m) => m.id)).toEqual(['gpt-4.1'])
    expect(raw.requests[raw.requests.length - 1].url).toBe('/base/v1/models')
    const r = await fetch(`${p.url}/base/v1/embeddings?x=1`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-toolgate-roles': 'admin' }, body: '{"input":"hi"}' })
    const seen = ((await r.json()) as { seen: { url: string; body: string } }).seen
    expect(seen).toEqual({ method: 'POST', url: '/base/v1/embeddings?x=1', body: '{"input":"hi"}' })
    expect(raw.requests[raw.requests.length - 1].headers['x-toolgate-roles']).toBeUndefined()
  })

  it('passes other paths through untouched: the answer keeps its coding, the body its length, the client its Accept-Encoding', async () => {
    const listing = JSON.stringify({ object: 'list', data: [{ id: 'file-1' }] })
    answer = (_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
      res.end(gzipSync(listing))
    }
    const got = await new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
      const q = httpRequest(`${p.url}/v1/files`, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (d: Buffer) => chunks.push(d))
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }))
      })
      q.on('error', reject)
      q.end()
    })
    expect(got.headers['content-encoding']).toBe('gzip')
    expect(gunzipSync(got.body).toString()).toBe(listing)
    expect(raw.requests[raw.requests.length - 1].headers['accept-encoding']).toBe('gzip')
    answer = (q, res) => json(res, 200, { length: q.headers['content-length'], body: q.body })
    const r = await fetch(`${p.url}/v1/files`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"purpose":"batch"}' })
    expect(await r.json()).toEqual({ length: '19', body: '{"purpose":"batch"}' })
  })

  it('answers 502 when the upstream cannot be reached', async () => {
    const gone = await startRawUpstream(() => undefined)
    const origin = gone.origin
    await gone.close()
    const q = await startProxy(['--upstream', origin, '--port', '0'])
    try {
      const err = await new OpenAI({ baseURL: `${q.url}/v1`, apiKey: 'k', maxRetries: 0 }).chat.completions.create({ model: 'm', messages: [] }).catch((e: unknown) => e)
      expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(502)
      expect((err as Error).message).toContain('ECONNREFUSED')
    } finally {
      await q.close()
    }
  })
})

/**
 * A bare HTTP/1.1 upstream on a TCP server, to see connections: it answers each request with a
 * text completion over a kept-alive connection; `dropSecond` closes a connection when a second
 * request arrives on it, unanswered (as a server closing an idle connection just as it is reused).
 */
async function startSocketUpstream(dropSecond: boolean): Promise<{ origin: string; connections: () => number; close(): Promise<void> }> {
  const sockets = new Set<Socket>()
  let connections = 0
  const server = createNetServer((socket) => {
    connections++
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    let buffered = ''
    let served = 0
    socket.on('data', (d: Buffer) => {
      buffered += d.toString('latin1')
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n')
        if (end < 0) return
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0)
        if (buffered.length < end + 4 + length) return
        buffered = buffered.slice(end + 4 + length)
        if (dropSecond && served === 1) {
          socket.destroy()
          return
        }
        served++
        const body = JSON.stringify(COMPLETION([]))
        socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: keep-alive\r\n\r\n${body}`)
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    close: () => {
      for (const s of sockets) s.destroy()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

describe('upstream connections', () => {
  it('keeps one connection alive across requests', async () => {
    const up = await startSocketUpstream(false)
    const q = await startProxy(['--upstream', up.origin, '--port', '0'])
    try {
      const c = new OpenAI({ baseURL: `${q.url}/v1`, apiKey: 'k', maxRetries: 0 })
      for (let i = 0; i < 3; i++) expect((await c.chat.completions.create({ model: 'm', messages: [] })).choices[0].message.content).toBe('hello')
      expect(up.connections()).toBe(1)
    } finally {
      await q.close()
      await up.close()
    }
  })

  it('sends a request again on a new connection when the kept-alive one was closed as it was reused', async () => {
    const up = await startSocketUpstream(true)
    const q = await startProxy(['--upstream', up.origin, '--port', '0'])
    try {
      const c = new OpenAI({ baseURL: `${q.url}/v1`, apiKey: 'k', maxRetries: 0 })
      expect((await c.chat.completions.create({ model: 'm', messages: [] })).choices[0].message.content).toBe('hello')
      expect((await c.chat.completions.create({ model: 'm', messages: [] })).choices[0].message.content).toBe('hello')
      expect(up.connections()).toBe(2)
    } finally {
      await q.close()
      await up.close()
    }
  })
})

describe('command line', () => {
  it('a fixed caller ignores identity headers', async () => {
    const raw = await startRawUpstream((_q, res) => json(res, 200, COMPLETION([call('call_w', 'wipe', '{}')])))
    const q = await startProxy(['--upstream', raw.origin, '--port', '0', '--config', join(dir, 'roles.yaml'), '--subject', 'svc', '--role', 'reader'])
    try {
      const c = new OpenAI({ baseURL: `${q.url}/v1`, apiKey: 'k', maxRetries: 0, defaultHeaders: { 'x-toolgate-roles': 'admin' } })
      const data = await c.chat.completions.create({ model: 'm', messages: [] })
      expect(data.choices[0].message.tool_calls).toBeUndefined()
      expect(raw.requests[0].headers['x-toolgate-roles']).toBeUndefined()
      expect(q.stderr()).toContain('identity headers ignored')
    } finally {
      await q.close()
      await raw.close()
    }
  })

  it('names the flag and what was expected', async () => {
    for (const [args, msg] of [
      [['--port', '0'], '--upstream needs a value'],
      [['--upstream', 'ftp://x', '--port', '0'], '--upstream: expected an http:// or https:// URL'],
      [['--upstream', 'http://x', '--port', 'abc'], '--port needs a port number'],
      [['--upstream', 'http://x', '--port', '0', '--max-body-bytes', '10'], '--max-body-bytes needs a whole number of bytes, at least 1024'],
      [['--upstream', 'http://x', '--port', '0', '--bogus'], 'unknown flag `--bogus`'],
    ] as const) {
      const err = await startProxy([...args]).then(() => 'started', (e: Error) => e.message)
      expect(err).toContain(msg)
      expect(err).toContain('exited (2)')
    }
  })
})

describe('answer rewriting and tool learning (in process, real gate)', () => {
  it('chat: several choices and a legacy function_call', () => {
    const gate = new ToolGate({ tools: [{ name: 'search' }] })
    const turn = {
      object: 'chat.completion',
      choices: [
        { index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [call('c1', 'search', '{}'), call('c2', 'nuke', '{}')] } },
        { index: 1, finish_reason: 'function_call', message: { role: 'assistant', content: 'thinking', function_call: { name: 'nuke', arguments: '{}' } } },
      ],
    }
    const report = gate.guard(JSON.stringify(turn), { dialect: 'openai' })
    const out = JSON.parse(decidedAnswer('openai', JSON.stringify(turn), report.calls).text) as typeof turn
    expect(out.choices[0].message.tool_calls?.map((c) => c.id)).toEqual(['c1'])
    expect(out.choices[0].finish_reason).toBe('tool_calls')
    expect(out.choices[0].message.content).toContain('`nuke` was not run (unknown_tool)')
    expect(out.choices[1].message).not.toHaveProperty('function_call')
    expect(out.choices[1].finish_reason).toBe('stop')
    expect(out.choices[1].message.content).toMatch(/^thinking\n\n\[toolgate\] The call to `nuke`/)
  })

  it('the rewrite refuses an ambiguous Chat call shape even where the gate decided a call for it', () => {
    // as if the core had read one of the two: the proxy still never emits the other
    const allowed = (callId: string, tool: string) => ({ callId, tool, outcome: 'passed' as const, allowed: true, flags: [], arguments: {}, argumentsJson: '{}' })
    const both = { choices: [{ index: 0, finish_reason: 'function_call', message: { role: 'assistant', content: null, tool_calls: [], function_call: { name: 'search', arguments: '{}' } } }] }
    expect(() => decidedAnswer('openai', JSON.stringify(both), [allowed('0', 'search')])).toThrow(/both `tool_calls` and a legacy `function_call`/)
    const twoNames = { choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'custom', custom: { name: 'search', input: '{}' }, function: { name: 'nuke', arguments: '{}' } }] } }] }
    expect(() => decidedAnswer('openai', JSON.stringify(twoNames), [allowed('c1', 'search')])).toThrow(/both `function` and `custom`/)
    const renamed = { content: [{ type: 'tool_use', id: 't1', name: 'nuke', input: {} }] }
    expect(() => decidedAnswer('anthropic', JSON.stringify(renamed), [allowed('t1', 'search')])).toThrow(/is not the call the gate decided there/)
  })

  it('a refused call the payload does not hold is E_PAYLOAD, never a silent pass', () => {
    const refused = [{ callId: 'ghost', tool: 't', outcome: 'rejected' as const, allowed: false, flags: [], message: 'no' }]
    expect(() => decidedAnswer('anthropic', JSON.stringify({ content: [{ type: 'text', text: 'hi' }] }), refused)).toThrow(/carries 0 tool calls, the gate decided 1/)
    expect(() => decidedAnswer('openai-responses', JSON.stringify({ output: [] }), refused)).toThrow(ToolGateError)
  })

  it('learns request schemas; conflicting definitions and uncompilable schemas are handled', () => {
    const cache = new GateCache({ config: { tools: [{ name: 'search', inputSchema: { type: 'object' } }] } })
    expect(cache.gateFor('anthropic', [{ name: 'search', input_schema: { type: 'object' } }])).toBe(cache.base)
    const g = cache.gateFor('anthropic', [{ name: 'lookup', input_schema: { type: 'object', properties: { n: { type: 'integer' } } } }])
    expect(g.check('lookup', '{"n":"4"}').arguments).toEqual({ n: 4 })
    expect(cache.gateFor('anthropic', [{ input_schema: {}, name: 'lookup' }, { name: 'search' }])).not.toBe(g)
    expect(cache.gateFor('anthropic', [{ name: 'lookup', input_schema: { properties: { n: { type: 'integer' } }, type: 'object' } }])).toBe(g)
    expect(() => cache.gateFor('openai', [{ type: 'function', function: { name: 'x', parameters: { type: 'object' } } }, { type: 'function', function: { name: 'x' } }])).toThrow(/two different definitions of `x`/)
    const lines: string[] = []
    const bad = new GateCache({ config: { tools: [] }, log: (l) => lines.push(l) }).gateFor('anthropic', [{ name: 'ok', input_schema: { type: 'object' } }, { name: 'broken', input_schema: { type: 'nonsense' } }])
    expect(bad.tools).toEqual(['ok'])
    expect(lines.join()).toContain("the request's schema for `broken` cannot be compiled")
  })

  it('finds the gate by the exact tools text as by the tools themselves; text it saw is not trusted past an eviction', () => {
    const cache = new GateCache({ config: { tools: [{ name: 'search', inputSchema: { type: 'object' } }] }, max: 1 })
    const a = [{ name: 'lookup', input_schema: { type: 'object', properties: { n: { type: 'integer' } } } }]
    const b = [{ name: 'other', input_schema: { type: 'object' } }]
    const ga = cache.gateFor('anthropic', a, JSON.stringify(a))
    expect(cache.gateFor('anthropic', a, JSON.stringify(a))).toBe(ga)
    expect(cache.gateFor('anthropic', a)).toBe(ga)
    expect(ga.check('lookup', '{"n":"4"}').arguments).toEqual({ n: 4 })
    expect(cache.gateFor('anthropic', [{ name: 'search' }], '[{"name":"search"}]')).toBe(cache.base)
    // the same text in another dialect is another list
    expect(cache.gateFor('openai', a, JSON.stringify(a))).toBe(cache.base)
    // `a`'s gate evicted by `b` (max 1): its text leads to a new gate, not the evicted one
    const gb = cache.gateFor('anthropic', b, JSON.stringify(b))
    expect(gb).not.toBe(ga)
    const again = cache.gateFor('anthropic', a, JSON.stringify(a))
    expect(again).not.toBe(ga)
    expect(again.check('lookup', '{"n":"4"}').arguments).toEqual({ n: 4 })
    const twice = [{ type: 'function', function: { name: 'x', parameters: { type: 'object' } } }, { type: 'function', function: { name: 'x' } }]
    expect(() => cache.gateFor('openai', twice, JSON.stringify(twice))).toThrow(/two different definitions of `x`/)
    expect(() => cache.gateFor('openai', twice, JSON.stringify(twice))).toThrow(/two different definitions of `x`/)
  })

  it('a request tool nested past the canonical bound is E_PAYLOAD, never a stack overflow', () => {
    const cache = new GateCache({ config: { tools: [] } })
    let deep: unknown = { type: 'object' }
    for (let i = 0; i < 600; i++) deep = { type: 'object', properties: { a: deep } }
    const tools = [{ name: 'deep', input_schema: deep }]
    expect(() => cache.gateFor('anthropic', tools)).toThrow(expect.objectContaining({ code: 'E_PAYLOAD', message: expect.stringMatching(/nested deeper than 512 levels/) }))
  })
})

describe('the proxies\' stderr log (src-ts/cli/log.ts)', () => {
  it('writes nothing while the caller runs, then every line in order in one write; a flood is cut at the bound and counted', async () => {
    const writes: string[] = []
    const log = deferredLog('p: ', { write: (t) => writes.push(t), maxQueuedBytes: 40 })
    log('one')
    log('two')
    expect(writes).toEqual([])
    await new Promise((r) => setImmediate(r))
    expect(writes).toEqual(['p: one\np: two\n'])
    for (let i = 0; i < 10; i++) log(`line ${i}`)
    log.flush()
    expect(writes[1]).toBe('p: line 0\np: line 1\np: line 2\np: line 3\np: 6 log lines dropped (more than 40 bytes of log in one turn)\n')
    expect(log.dropped).toBe(6)
    await new Promise((r) => setImmediate(r))
    expect(writes).toHaveLength(2)
  })

  it('never writes URL credentials: user:password@ and secret query values are scrubbed', () => {
    const writes: string[] = []
    const log = deferredLog('p: ', { write: (t) => writes.push(t) })
    log('upstream https://alice:s3cr3t@api.example.com/v1 failed')
    log('GET http://h/x?api_key=sk-123&limit=5&TOKEN=t-9 and key=k-1, page=2')
    log.flush()
    expect(writes[0]).toBe('p: upstream https://***@api.example.com/v1 failed\np: GET http://h/x?api_key=***&limit=5&TOKEN=*** and key=*** page=2\n') // a value runs to the next space
    expect(redactUrl('https://u:pw@h/p?access_token=a&q=1')).toBe('https://***@h/p?access_token=***&q=1')
  })
})
