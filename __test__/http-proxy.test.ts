// `toolgate proxy` as users run it: the built CLI (dist/cli/main.js, from `npm run build:ts`),
// with the official `openai` and `@anthropic-ai/sdk` clients' baseURL pointed at it, in front of
// the loopback upstream (helpers/upstream.ts), which scripts the model and answers 400 to any
// follow-up whose tool results do not pair every call id — so "the next request is accepted"
// proves the proxy kept the conversation valid. The gate is real (native binding), configured
// from a file with a policy: `send_email` is not in the config (learned from the request, so
// denied by default: `no_rule`), `save_note` writes (`confirm`), `launch_rockets` is declared
// nowhere (`unknown_tool`), `get_weather`'s `days: "3"` is repaired to 3. Failures (timeouts,
// aborts, compression, limits) run against a bare upstream the test answers itself.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { brotliCompressSync, gzipSync } from 'node:zlib'

import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { verifyReceipt } from '../src-ts/index'
import { startProxy, startRawUpstream, type RawUpstream, type RunningProxy } from './helpers/http-proxy'
import { startUpstream, type Upstream } from './helpers/upstream'

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
  audit: { jsonl: 'audit.jsonl' },
}

/** The tools every request declares (not `launch_rockets`, which the model calls anyway). */
const DECLARED = ['search', 'get_weather', 'send_email', 'save_note']

const call = (id: string, name: string, args: string) => ({ id, type: 'function', function: { name, arguments: args } })
const CHAT_TURN = {
  id: 'chatcmpl-1', object: 'chat.completion', created: 1741569952, model: 'gpt-4.1',
  choices: [{
    index: 0, logprobs: null, finish_reason: 'tool_calls',
    message: {
      role: 'assistant', content: null, refusal: null, annotations: [],
      tool_calls: [
        call('call_a', 'search', '{"query":"rust"}'),
        call('call_b', 'get_weather', '{"city":"Paris","days":"3"}'),
        call('call_c', 'send_email', '{"to":"ceo@example.com"}'),
        call('call_d', 'launch_rockets', '{}'),
        call('call_e', 'save_note', '{"text":"remember"}'),
      ],
    },
  }],
  usage: { prompt_tokens: 82, completion_tokens: 40, total_tokens: 122 },
}

const item = (n: string, name: string, args: string) => ({ type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name, arguments: args, status: 'completed' })
const RESPONSES_TURN = {
  id: 'resp_1', object: 'response', created_at: 1741569952, status: 'completed', model: 'gpt-4.1', error: null,
  output: [
    { type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'On it.', annotations: [] }] },
    item('a', 'search', '{"query":"rust"}'),
    item('b', 'get_weather', '{"city":"Paris","days":"3"}'),
    item('c', 'send_email', '{"to":"ceo@example.com"}'),
    item('d', 'launch_rockets', '{}'),
    item('e', 'save_note', '{"text":"remember"}'),
  ],
  usage: { input_tokens: 82, output_tokens: 40, total_tokens: 122 },
}

const use = (id: string, name: string, input: object) => ({ type: 'tool_use', id, name, input })
const MESSAGE_TURN = {
  id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-5-5',
  content: [
    { type: 'text', text: 'Let me look that up.' },
    use('toolu_a', 'search', { query: 'rust' }),
    use('toolu_b', 'get_weather', { city: 'Paris', days: '3' }),
    use('toolu_c', 'send_email', { to: 'ceo@example.com' }),
    use('toolu_d', 'launch_rockets', {}),
    use('toolu_e', 'save_note', { text: 'remember' }),
  ],
  stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 90, output_tokens: 60 },
}

const ANALYST = { 'x-toolgate-subject': 'ana', 'x-toolgate-roles': ' analyst , ' }

let dir: string
let upstream: Upstream
let proxy: RunningProxy
let publicKey: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-http-proxy-'))
  writeFileSync(join(dir, 'toolgate.config.json'), JSON.stringify(CONFIG))
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
  it('records every decision in the file named relative to the config, flushed on SIGTERM', async () => {
    const p = await startProxy(['--upstream', upstream.origin, '--port', '0', '--config', join(dir, 'toolgate.config.json')], { cwd: tmpdir() })
    const client = new OpenAI({ baseURL: `${p.url}/v1`, apiKey: 'sk-test-secret', maxRetries: 0, defaultHeaders: { 'x-toolgate-subject': 'audited-caller' } })
    await client.chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }] })
    expect(await p.close()).toBe(0)
    const records = readFileSync(join(dir, 'audit.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Json)
    const mine = records.filter((r) => r.type === 'decision' && r.sub === 'audited-caller')
    expect(mine.map((r) => `${String(r.callId)} ${String(r.outcome)}`)).toEqual(['call_a denied', 'call_b denied', 'call_c rejected', 'call_d rejected', 'call_e denied'])
  })
})
