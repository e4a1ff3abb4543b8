// `toolgate proxy` against a hostile upstream. The built CLI (dist/cli/main.js, `npm run
// build:ts` first) sits between the official `openai` / `@anthropic-ai/sdk` clients and a raw
// loopback upstream that answers what each test scripts: empty and duplicate call ids, parts the
// gate never decided, calls renamed after they were decided, redirects, errors carrying tool
// calls, guarded paths spelled another way, cut streams. Each test names the attack; each passes
// only when what reaches the client is exactly what the gate decided (or nothing, with an error).
// The gate is real (native binding); the request declares `get_weather` and `search`, so
// `delete_all` — which the upstream "model" keeps calling — is refused `unknown_tool`.
import Anthropic from '@anthropic-ai/sdk'
import type OpenAI from 'openai'
import { AzureOpenAI } from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { request as httpRequest, type ServerResponse } from 'node:http'

import { startProxy, startRawUpstream, type RawRequest, type RawUpstream, type RunningProxy } from '../helpers/http-proxy'
import { anthropicAt, openaiAt } from '../helpers/sdk-clients'
import { sseText, type SseEvent } from '../helpers/upstream'

type Json = Record<string, unknown>

let raw: RawUpstream
let p: RunningProxy
let answer: (q: RawRequest, res: ServerResponse) => void = (_q, res) => json(res, 500, { error: { message: 'no answer scripted', type: 'server_error', param: null, code: null } })

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(text)
}

function sse(res: ServerResponse, events: SseEvent[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' })
  res.end(sseText(events))
}

beforeAll(async () => {
  raw = await startRawUpstream((q, res) => answer(q, res))
  p = await startProxy(['--upstream', raw.origin, '--port', '0'])
})
afterAll(async () => {
  await p?.close()
  await raw?.close()
})

const SCHEMA = { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city'] }
const CHAT_TOOLS = [{ type: 'function' as const, function: { name: 'get_weather', parameters: SCHEMA } }, { type: 'function' as const, function: { name: 'search', parameters: { type: 'object' } } }]
const ANTHROPIC_TOOLS = [{ name: 'get_weather', input_schema: SCHEMA as Anthropic.Tool.InputSchema }, { name: 'search', input_schema: { type: 'object' as const } }]
const RESPONSES_TOOLS = [{ type: 'function' as const, name: 'get_weather', parameters: SCHEMA, strict: false }, { type: 'function' as const, name: 'search', parameters: { type: 'object' }, strict: false }]

const openai = () => openaiAt(p.url)
const anthropic = () => anthropicAt(p.url)
const chat = () => openai().chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'go' }], tools: CHAT_TOOLS })
const messages = () => anthropic().messages.create({ model: 'm', max_tokens: 64, messages: [{ role: 'user', content: 'go' }], tools: ANTHROPIC_TOOLS })
const responses = () => openai().responses.create({ model: 'm', input: 'go', tools: RESPONSES_TOOLS })

const completion = (message: Json, finish = 'tool_calls') => ({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: null, ...message }, logprobs: null, finish_reason: finish }] })
const fn = (id: unknown, name: string, args = '{"city":"Paris"}') => ({ id, type: 'function', function: { name, arguments: args } })
const message = (content: unknown[]) => ({ id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content, stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } })
const use = (id: unknown, name: string, input: Json = { city: 'Paris' }) => ({ type: 'tool_use', id, name, input })
const response = (output: unknown[]) => ({ id: 'resp_1', object: 'response', created_at: 1, status: 'completed', model: 'm', error: null, output, usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } })
const fc = (callId: unknown, name: string, extra: Json = {}) => ({ type: 'function_call', id: `fc_${String(callId)}`, call_id: callId, name, arguments: '{"city":"Paris"}', status: 'completed', ...extra })

/** The error a client call ended with (or fails the test when it resolved). */
async function failure(run: () => Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const got = await run().then((v) => ({ resolved: v }), (e: unknown) => ({ error: e }))
  if ('resolved' in got) throw new Error(`expected a proxy error, the client got: ${JSON.stringify(got.resolved).slice(0, 400)}`)
  return got.error as InstanceType<typeof OpenAI.APIError>
}

describe('whole answers: calls identified by position, re-encoded from the decision', () => {
  it('messages: a second tool_use with an empty id refuses the turn (it was forwarded in place of the allowed one)', async () => {
    answer = (_q, res) => json(res, 200, message([use('toolu_1', 'get_weather'), use('', 'delete_all', {})]))
    const err = await failure(messages)
    expect(err).toBeInstanceOf(Anthropic.APIError)
    expect(err.status).toBe(502)
    expect(err.message).toContain('without a non-empty string `id`')
  })

  it('responses: a second function_call with an empty call_id refuses the turn', async () => {
    answer = (_q, res) => json(res, 200, response([fc('call_1', 'get_weather'), fc('', 'delete_all')]))
    const err = await failure(responses)
    expect(err.status).toBe(502)
    expect(err.message).toContain('without a non-empty string `call_id`')
  })

  it('chat: two calls sharing an id (one allowed, one refused) refuse the turn', async () => {
    answer = (_q, res) => json(res, 200, completion({ tool_calls: [fn('call_1', 'get_weather'), fn('call_1', 'delete_all')] }))
    const err = await failure(chat)
    expect(err.status).toBe(502)
    expect(err.message).toMatch(/two tool calls share the id `call_1`|the call id "call_1" appears twice/)
  })

  it('chat: a tool call without an id refuses the turn', async () => {
    answer = (_q, res) => json(res, 200, completion({ tool_calls: [{ type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] }))
    expect((await failure(chat)).status).toBe(502)
  })

  it('an allowed call goes out re-encoded: members the gate did not decide never reach the client', async () => {
    answer = (_q, res) => json(res, 200, message([{ ...use('toolu_1', 'get_weather'), cache_control: { type: 'ephemeral' }, display_name: 'delete_all', caller: { type: 'direct' } }]))
    const m = await messages()
    expect(m.content).toEqual([{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }])
    answer = (_q, res) => json(res, 200, completion({ tool_calls: [{ ...fn('call_1', 'get_weather'), index: 0, function: { name: 'get_weather', arguments: '{"city":"Paris"}', strict: true } }] }))
    const c = await chat()
    expect(c.choices[0].message.tool_calls).toEqual([{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }])
    answer = (_q, res) => json(res, 200, response([fc('call_1', 'get_weather', { action: { type: 'exec', command: ['rm', '-rf', '/'] }, input: 'rm -rf /' })]))
    const r = await responses()
    expect(r.output).toEqual([{ type: 'function_call', id: 'fc_call_1', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' }])
  })

  it('a duplicate `name` key in the answer text never reaches the client as another tool', async () => {
    // the gate's parser and the client's JSON.parse may take different copies of a duplicate key
    const text = '{"id":"msg_1","type":"message","role":"assistant","model":"m","stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1},'
      + '"content":[{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"},"name":"delete_all"}]}'
    answer = (_q, res) => json(res, 200, text)
    const got = await messages().then((m) => JSON.stringify(m), (e: Error) => `error: ${e.message}`)
    expect(got).not.toContain('delete_all')
  })

  it('a call "answered" by a later *_output item of the same answer is still a call: decided, and refused here', async () => {
    // only a later message answers a call; inside the model's own answer a result hides nothing
    answer = (_q, res) => json(res, 200, response([fc('call_x', 'delete_all'), { type: 'function_call_output', call_id: 'call_x', output: 'done' }]))
    const got = (await responses()) as unknown as { output: { type: string; name?: string; content?: { text: string }[] }[] }
    expect(got.output.filter((o) => o.type === 'function_call')).toEqual([])
    expect(JSON.stringify(got.output)).toMatch(/The call to `delete_all` was not run \(unknown_tool\)/)
  })
})

describe('requests: the body goes upstream as written only when nothing about it is ambiguous', () => {
  const post = (body: string) => new Promise<number>((resolve, reject) => {
    const u = new URL(p.url)
    const q = httpRequest({ host: u.hostname, port: u.port, path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    q.on('error', reject)
    q.end(body)
  })
  const tools = (name: string) => JSON.stringify([{ type: 'function', function: { name, parameters: { type: 'object' } } }])

  it('a request whose tools all stay reaches the upstream as the very bytes the client sent', async () => {
    answer = (_q, res) => json(res, 200, completion({ content: 'ok' }, 'stop'))
    const body = `{"model":"m", "messages":[{"role":"user","content":"go"}],"tools":${tools('search')}}`
    const before = raw.requests.length
    expect(await post(body)).toBe(200)
    expect(raw.requests.slice(before).map((q) => q.body)).toEqual([body])
  })

  it('two `tools` members (or a \\u escape) are never passed as written: the upstream reads only the list the gate filtered', async () => {
    answer = (_q, res) => json(res, 200, completion({ content: 'ok' }, 'stop'))
    const before = raw.requests.length
    // the proxy reads the last `tools`; an upstream reading the first would see a list never filtered
    expect(await post(`{"model":"m","tools":${tools('delete_all')},"messages":[{"role":"user","content":"go"}],"tools":${tools('search')}}`)).toBe(200)
    expect(await post(`{"model":"m","\\u0074ools":${tools('delete_all')},"messages":[{"role":"user","content":"go"}],"tools":${tools('search')}}`)).toBe(200)
    const sent = raw.requests.slice(before).map((q) => q.body)
    expect(sent).toHaveLength(2)
    for (const b of sent) {
      expect(b).not.toContain('delete_all')
      expect(JSON.parse(b).tools).toEqual(JSON.parse(tools('search')))
    }
  })
})

describe('chat completions: ambiguous call shapes refuse the turn', () => {
  it('a legacy function_call beside an empty tool_calls', async () => {
    answer = (_q, res) => json(res, 200, completion({ tool_calls: [], function_call: { name: 'delete_all', arguments: '{}' } }, 'function_call'))
    const err = await failure(chat)
    expect(err.status).toBe(502)
    expect(err.message).toMatch(/both `tool_calls` and (a|the) legacy `function_call`/)
  })

  it('a custom call that also carries a function member', async () => {
    answer = (_q, res) => json(res, 200, completion({ tool_calls: [{ id: 'call_1', type: 'custom', custom: { name: 'get_weather', input: '{"city":"Paris"}' }, function: { name: 'delete_all', arguments: '{}' } }] }))
    const err = await failure(chat)
    expect(err.status).toBe(502)
    expect(err.message).toMatch(/both `function` and `custom`|a `custom` call also carries `function`/)
  })

  it('a function call that also carries a custom member, and an unknown call type', async () => {
    answer = (_q, res) => json(res, 200, completion({ tool_calls: [{ ...fn('call_1', 'get_weather'), custom: { name: 'delete_all', input: 'x' } }] }))
    expect((await failure(chat)).status).toBe(502)
    answer = (_q, res) => json(res, 200, completion({ tool_calls: [{ id: 'call_1', type: 'shell', shell: { name: 'get_weather', arguments: '{}' } }] }))
    expect((await failure(chat)).status).toBe(502)
  })
})

describe('non-2xx answers on a guarded path', () => {
  it('a 307 pointing back at the upstream is a 502: the client never follows it to an unguarded answer', async () => {
    answer = (q, res) => {
      if (q.url.startsWith('/evil')) return json(res, 200, completion({ tool_calls: [fn('call_1', 'delete_all', '{}')] }))
      res.writeHead(307, { location: `${raw.origin}/evil/v1/chat/completions` })
      res.end()
    }
    const before = raw.requests.length
    const err = await failure(chat)
    expect(err.status).toBe(502)
    expect(err.message).toContain('answered 307 (a redirect')
    expect(err.headers?.get('location')).toBeNull()
    expect(raw.requests.slice(before).map((r) => r.url)).toEqual(['/v1/chat/completions'])
  })

  it('an error body carrying tool calls passes as the bare error shape', async () => {
    answer = (_q, res) => json(res, 400, { error: { message: 'bad', type: 'invalid_request_error', param: null, code: 'x' }, choices: completion({ tool_calls: [fn('call_1', 'delete_all', '{}')] }).choices }, { 'x-request-id': 'req_1' })
    const r = await fetch(`${p.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [] }) })
    expect(r.status).toBe(400)
    expect(r.headers.get('x-request-id')).toBe('req_1')
    expect(await r.json()).toEqual({ error: { message: 'bad', type: 'invalid_request_error', param: null, code: 'x' } })
    answer = (_q, res) => json(res, 529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' }, content: [use('toolu_1', 'delete_all', {})] })
    const err = await failure(messages)
    expect(err.status).toBe(529)
    expect(err.error).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })
  })

  it('an error that is not the API error shape is a 502', async () => {
    answer = (_q, res) => {
      res.writeHead(500, { 'content-type': 'text/html' })
      res.end('<html>oops</html>')
    }
    expect((await failure(chat)).status).toBe(502)
    answer = (_q, res) => json(res, 418, completion({ tool_calls: [fn('call_1', 'delete_all', '{}')] }))
    const err = await failure(chat)
    expect(err.status).toBe(502)
    expect(err.message).toContain('not the OpenAI error shape')
  })
})

describe('guarded paths are normalised; everything else follows the pass-through list', () => {
  const turn = completion({ tool_calls: [fn('call_1', 'get_weather'), fn('call_2', 'delete_all', '{}')] })
  const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'go' }], tools: CHAT_TOOLS })

  it('duplicate slashes, a trailing slash, percent-escapes and case are still the guarded endpoint', async () => {
    answer = (_q, res) => json(res, 200, turn)
    for (const path of ['//v1/chat/completions', '/v1/chat/completions/', '/v1//chat/completions', '/v1/chat/%63ompletions', '/v1/CHAT/Completions', '/api/v1/chat/completions']) {
      const before = raw.requests.length
      const r = await fetch(`${p.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
      const text = await r.text()
      expect(r.status, path).toBe(200)
      expect(r.headers.get('x-toolgate-refused'), path).toBe('delete_all;id=call_2;reason=unknown_tool')
      expect(JSON.parse(text).choices[0].message.tool_calls.map((c: Json) => c.id), path).toEqual(['call_1'])
      // the upstream is asked for the path the proxy decided on
      expect(raw.requests[before].url.replace(/\/+/g, '/').toLowerCase(), path).toMatch(/chat\/completions$/)
      expect(raw.requests[before].url, path).not.toContain('%63')
    }
  })

  it('Azure deployments (the AzureOpenAI client) are guarded', async () => {
    answer = (_q, res) => json(res, 200, turn)
    const before = raw.requests.length
    const az = new AzureOpenAI({ endpoint: p.url, apiKey: 'k', apiVersion: '2024-10-21', deployment: 'gpt-4o', maxRetries: 0 })
    const { data, response } = await az.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'go' }], tools: CHAT_TOOLS }).withResponse()
    expect(raw.requests[before].url).toBe('/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21')
    expect(data.choices[0].message.tool_calls?.map((c) => c.id)).toEqual(['call_1'])
    expect(response.headers.get('x-toolgate-refused')).toBe('delete_all;id=call_2;reason=unknown_tool')
  })

  it('requests off the list are refused (403) and never reach the upstream; dot segments and encoded slashes are 400', async () => {
    answer = (_q, res) => json(res, 200, turn)
    const before = raw.requests.length
    // sent as written (fetch would resolve dot segments itself)
    const send = (method: string, path: string) => new Promise<{ status: number; body: string }>((resolve, reject) => {
      const u = new URL(p.url)
      const q = httpRequest({ host: u.hostname, port: u.port, path, method, headers: { 'content-type': 'application/json' } }, (res) => {
        let t = ''
        res.setEncoding('utf8')
        res.on('data', (d: string) => (t += d))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: t }))
      })
      q.on('error', reject)
      q.end(method === 'GET' ? undefined : body)
    })
    for (const [method, path, status] of [
      ['POST', '/v1/completions', 403], ['GET', '/v1/responses/resp_1', 403], ['GET', '/v1/chat/completions/chatcmpl-1', 403],
      ['POST', '/v1/batches', 403], ['PUT', '/v1/chat/completions', 403], ['POST', '/v1/embeddings/../chat/completions', 400],
      ['POST', '/v1/chat%2Fcompletions', 400], ['POST', '/v1/%2e%2e/v1/chat/completions', 400],
    ] as const) {
      const r = await send(method, path)
      expect(r.status, `${method} ${path}`).toBe(status)
      expect((JSON.parse(r.body) as { error: { message: string } }).error.message, path).toMatch(/^toolgate proxy: /)
    }
    expect(raw.requests.length).toBe(before)
    // on the default list: passed as they are
    answer = (_q, res) => json(res, 200, { object: 'list', data: [] })
    expect((await fetch(`${p.url}/v1/embeddings`, { method: 'POST', body: '{}' })).status).toBe(200)
    expect((await openai().models.list()).data).toEqual([])
  })

  it('--pass-through adds an entry; a malformed one is a usage error', async () => {
    const q = await startProxy(['--upstream', raw.origin, '--port', '0', '--pass-through', 'GET /v1/responses/*'])
    try {
      answer = (_q, res) => json(res, 200, { id: 'resp_1' })
      expect((await fetch(`${q.url}/v1/responses/resp_1`)).status).toBe(200)
      expect((await fetch(`${q.url}/v1/responses/resp_1/input_items`)).status).toBe(403)
    } finally {
      await q.close()
    }
    const err = await startProxy(['--upstream', raw.origin, '--port', '0', '--pass-through', 'everything']).then(() => 'started', (e: Error) => e.message)
    expect(err).toContain('--pass-through: pass-through entry `everything`: expected `METHOD /path`')
  })
})

// ---- streams ------------------------------------------------------------------------------------

/** A Responses stream whose function_call is announced as `get_weather`; `mutate` edits the events after. */
function responsesStream(mutate: (events: Json[]) => void): SseEvent[] {
  const item = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '', status: 'in_progress' }
  const done = { ...item, arguments: '{"city":"Paris"}', status: 'completed' }
  const events: Json[] = [
    { type: 'response.created', response: { ...response([]), status: 'in_progress' } },
    { type: 'response.output_item.added', output_index: 0, item },
    { type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 0, delta: '{"city":' },
    { type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 0, delta: '"Paris"}' },
    { type: 'response.function_call_arguments.done', item_id: 'fc_1', output_index: 0, arguments: '{"city":"Paris"}' },
    { type: 'response.output_item.done', output_index: 0, item: done },
    { type: 'response.completed', response: response([done]) },
  ]
  mutate(events)
  return events.map((e, i) => ({ event: String(e.type), data: { ...e, sequence_number: i } }))
}

/** Reads a Responses stream through the SDK: the events it yielded and the error it ended with. */
async function readResponses(): Promise<{ events: unknown[]; error: unknown }> {
  const events: unknown[] = []
  try {
    const s = await openai().responses.create({ model: 'm', input: 'go', tools: RESPONSES_TOOLS, stream: true })
    for await (const ev of s) events.push(ev)
    return { events, error: undefined }
  } catch (error) {
    return { events, error }
  }
}

describe('streams: every later event about a decided call matches the decision', () => {
  const renamed = (item: Json) => ({ ...item, name: 'delete_all' })
  const cases: [string, (ev: Json[]) => void][] = [
    ['output_item.done renames the call', (ev) => (ev[5].item = renamed(ev[5].item as Json))],
    ['output_item.done moves it into a namespace', (ev) => (ev[5].item = { ...(ev[5].item as Json), namespace: 'admin' })],
    ['output_item.done turns it into a custom tool call', (ev) => (ev[5].item = { ...(ev[5].item as Json), type: 'custom_tool_call', input: 'rm -rf /' })],
    ['output_item.done changes the arguments', (ev) => (ev[5].item = { ...(ev[5].item as Json), arguments: '{"city":"Paris","all":true}' })],
    ['response.completed lists it renamed', (ev) => (((ev[6].response as Json).output as Json[])[0] = renamed(((ev[6].response as Json).output as Json[])[0]))],
    ['output_item.done (renamed) comes before the arguments are done', (ev) => {
      const done = { ...ev[5], item: renamed(ev[5].item as Json) }
      ev.splice(5, 1)
      ev.splice(4, 0, done)
    }],
  ]
  for (const [name, mutate] of cases) {
    it(`responses: ${name} → the stream stops with an error event, the change never forwarded`, async () => {
      const events = responsesStream(mutate)
      answer = (_q, res) => sse(res, events)
      const r = await fetch(`${p.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'go', tools: RESPONSES_TOOLS, stream: true }) })
      const all = await r.text()
      expect(all).toMatch(/event: error\ndata: .*toolgate_stream_error/)
      // what the client can act on: every event but the closing error (which names the mismatch)
      const text = all.split('\n\n').filter((e) => !e.startsWith('event: error')).join('\n\n')
      expect(text).not.toContain('delete_all')
      expect(text).not.toContain('admin')
      expect(text).not.toContain('rm -rf')
      expect(text).not.toContain('"all":true')
      expect(text).not.toContain('event: response.completed')
      const sdk = await readResponses()
      expect(sdk.error).toBeDefined()
      expect(JSON.stringify(sdk.events)).not.toContain('delete_all')
    })
  }

  it('responses: the unchanged stream still passes whole (the check does not refuse what was decided)', async () => {
    answer = (_q, res) => sse(res, responsesStream(() => undefined))
    const sdk = await readResponses()
    expect(sdk.error).toBeUndefined()
    const completed = sdk.events.find((e) => (e as Json).type === 'response.completed') as { response: { output: Json[] } }
    expect(completed.response.output).toMatchObject([{ type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }])
  })

  it('responses: a repaired call streams whole with the repaired arguments in every later event (no false alarm)', async () => {
    const args = '{"city":"Paris","days":"3"}'
    answer = (_q, res) => sse(res, responsesStream((ev) => {
      ev[2].delta = args
      ev[3].delta = ''
      ev[4].arguments = args
      ev[5].item = { ...(ev[5].item as Json), arguments: args }
      ev[6].response = response([ev[5].item])
    }))
    const sdk = await readResponses()
    expect(sdk.error).toBeUndefined()
    const done = sdk.events.find((e) => (e as Json).type === 'response.output_item.done') as { item: { arguments: string } }
    expect(JSON.parse(done.item.arguments)).toEqual({ city: 'Paris', days: 3 })
    const completed = sdk.events.find((e) => (e as Json).type === 'response.completed') as { response: { output: { arguments: string }[] } }
    expect(JSON.parse(completed.response.output[0].arguments)).toEqual({ city: 'Paris', days: 3 })
  })

  it('anthropic: two tool_use blocks sharing an id stop the stream', async () => {
    const start = (index: number, name: string) => ({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: 'toolu_1', name, input: {} } })
    const events: Json[] = [
      { type: 'message_start', message: { ...message([]), stop_reason: null } },
      start(0, 'get_weather'), { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"city":"Paris"}' } }, { type: 'content_block_stop', index: 0 },
      start(1, 'search'), { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{}' } }, { type: 'content_block_stop', index: 1 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 1 } }, { type: 'message_stop' },
    ]
    answer = (_q, res) => sse(res, events.map((e) => ({ event: String(e.type), data: e })))
    const err = await anthropic().messages.stream({ model: 'm', max_tokens: 64, messages: [{ role: 'user', content: 'go' }], tools: ANTHROPIC_TOOLS }).finalMessage().then(() => undefined, (e: unknown) => e)
    expect(String(err)).toMatch(/two tool calls share the id `toolu_1`|the call id \\"toolu_1\\" appears twice/)
  })
})

describe('streams: Chat Completions and Messages events that restate a call', () => {
  const chunk = (choice: Json) => ({ data: { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, logprobs: null, finish_reason: null, ...choice }] } })
  const body = (stream: boolean) => JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'go' }], tools: CHAT_TOOLS, stream })

  it('chat: a chunk whose choice carries a message snapshot with tool calls stops the stream', async () => {
    answer = (_q, res) => sse(res, [
      chunk({ delta: { role: 'assistant', content: 'ok' } }),
      chunk({ delta: { content: '.' }, message: { role: 'assistant', tool_calls: [fn('call_9', 'delete_all', '{}')] } }),
      chunk({ delta: {}, finish_reason: 'stop' }),
      { data: '[DONE]' },
    ])
    const text = await (await fetch(`${p.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(true) })).text()
    expect(text).toContain('toolgate_stream_error')
    expect(text.split('\n\n').filter((e) => !e.includes('"error"')).join('')).not.toContain('delete_all')
  })

  it('anthropic: a message_delta carrying a tool_use block stops the stream', async () => {
    const events: Json[] = [
      { type: 'message_start', message: { ...message([]), stop_reason: null } },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'ok' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null, content: [use('toolu_9', 'delete_all', {})] }, usage: { output_tokens: 1 } },
      { type: 'message_stop' },
    ]
    answer = (_q, res) => sse(res, events.map((e) => ({ event: String(e.type), data: e })))
    const text = await (await fetch(`${p.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'go' }], tools: ANTHROPIC_TOOLS, stream: true }) })).text()
    expect(text).toMatch(/event: error\ndata: /)
    expect(text.split('\n\n').filter((e) => !e.startsWith('event: error')).join('')).not.toContain('delete_all')
  })
})

describe('the upstream cut mid-stream', () => {
  const chatEvents: SseEvent[] = [
    { data: { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'ok ' }, logprobs: null, finish_reason: null }] } },
    { data: { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":' } }] }, logprobs: null, finish_reason: null }] } },
  ]
  const anthropicEvents: SseEvent[] = [
    { event: 'message_start', data: { type: 'message_start', message: { ...message([]), stop_reason: null } } },
    { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} } } },
    { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"city":' } } },
  ]
  const responsesEvents = responsesStream((ev) => ev.splice(3))
  const cut = (events: SseEvent[]) => (_q: RawRequest, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    res.write(sseText(events))
    setTimeout(() => res.socket?.destroy(), 20)
  }

  it('chat: the SDK gets an error, and no tool call', async () => {
    answer = cut(chatEvents)
    const seen: unknown[] = []
    const err = await (async () => {
      const s = await openai().chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'go' }], tools: CHAT_TOOLS, stream: true })
      for await (const c of s) seen.push(c)
    })().then(() => undefined, (e: unknown) => e)
    expect(err).toBeDefined()
    expect(JSON.stringify(seen)).not.toContain('get_weather')
  })

  it('anthropic: the SDK gets an error event, and no tool_use block', async () => {
    answer = cut(anthropicEvents)
    const seen: unknown[] = []
    const err = await (async () => {
      const s = await anthropic().messages.create({ model: 'm', max_tokens: 64, messages: [{ role: 'user', content: 'go' }], tools: ANTHROPIC_TOOLS, stream: true })
      for await (const e of s) seen.push(e)
    })().then(() => undefined, (e: unknown) => e)
    expect(String(err)).toContain('toolgate')
    expect(JSON.stringify(seen)).not.toContain('tool_use')
  })

  it('responses: the SDK gets an error, and no function_call item', async () => {
    answer = cut(responsesEvents)
    const sdk = await readResponses()
    expect(sdk.error).toBeDefined()
    expect(JSON.stringify(sdk.events)).not.toContain('get_weather')
  })
})

describe('credentials in upstream URLs are never printed', () => {
  it('user:password@ on start, and api_key= / token= in usage errors', async () => {
    const q = await startProxy(['--upstream', `http://alice:s3cr3t-pw@${raw.origin.slice('http://'.length)}`, '--port', '0'])
    try {
      answer = (req, res) => json(res, 200, { auth: req.headers.authorization ?? null, object: 'list', data: [] })
      const r = (await (await fetch(`${q.url}/v1/models`)).json()) as { auth: string }
      expect(r.auth).toBe(`Basic ${Buffer.from('alice:s3cr3t-pw').toString('base64')}`) // still used
      await fetch(`${q.url}/v1/completions`, { method: 'POST', body: '{}' })
    } finally {
      await q.close()
    }
    expect(q.stderr()).toContain('listening on')
    expect(q.stderr()).not.toContain('s3cr3t-pw')
    for (const bad of ['http://127.0.0.1:1/v1?api_key=sk-live-123', 'ftp://bob:hunter2-pw@host/x?token=tok-999', 'not a url key=sk-live-123']) {
      const err = await startProxy(['--upstream', bad, '--port', '0']).then(() => 'started', (e: Error) => e.message)
      expect(err).toContain('exited (2)')
      for (const secret of ['sk-live-123', 'hunter2-pw', 'tok-999']) expect(err).not.toContain(secret)
    }
  })
})
