// Streaming through the HTTP proxy's SSE guard (src-ts/proxy/http/sse.ts), with real peers on
// loopback: the upstream is helpers/upstream.ts (or a raw node:http server that cuts, stalls or
// breaks its stream on purpose), a tiny node:http front server runs `guardSse` over the
// upstream's response body, and the official `openai` and `@anthropic-ai/sdk` clients read what
// it writes with their own SSE parsers and accumulators. The gate is real (native binding), with
// receipts: `search` passes, `get_weather` is repaired (`days: "3"` -> 3), `launch_rockets` is
// not declared (refused, unknown_tool).
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { ToolGate, verifyReceipt, type ToolGateConfig } from '../src-ts/index'
import { refusalText } from '../src-ts/proxy/http/refusal'
import { guardSse, type SseGuardResult } from '../src-ts/proxy/http/sse'
import type { SseDialect } from '../src-ts/proxy/http/sse-frames'
import { anthropicAt, openaiAt } from './helpers/sdk-clients'
import { chatChunks, messageEvents, responseEvents, sseText, startUpstream, type SseEvent, type Upstream } from './helpers/upstream'

const config: ToolGateConfig = {
  receipts: {},
  tools: [
    { name: 'search', inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } },
    {
      name: 'get_weather',
      inputSchema: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1, maximum: 14 } }, required: ['city'], additionalProperties: false },
    },
  ],
}
const gate = new ToolGate(config)
const context = { subject: 'ana' }

type Json = Record<string, unknown>
const TEXT = 'Looking it up — Grüße 🌍.'
const fn = (id: string, name: string, args: object | string) => ({ id, type: 'function', function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args) } })
const use = (id: string, name: string, input: object) => ({ type: 'tool_use', id, name, input })
const fc = (n: string, name: string, args: object) => ({ type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name, arguments: JSON.stringify(args), status: 'completed' })

function chatTurn(calls: unknown[], content: string | null = TEXT): Json {
  return {
    id: 'chatcmpl-1', object: 'chat.completion', created: 1741569953, model: 'gpt-5',
    choices: [{ index: 0, message: { role: 'assistant', content, tool_calls: calls }, logprobs: null, finish_reason: 'tool_calls' }],
    usage: { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70 },
  }
}
function messageTurn(blocks: unknown[]): Json {
  return { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-5-5', content: blocks, stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 50, output_tokens: 20 } }
}
function responseTurn(items: unknown[]): Json {
  return { id: 'resp_1', object: 'response', created_at: 1741569953, status: 'completed', model: 'gpt-5', error: null, output: items, usage: { input_tokens: 50, output_tokens: 20, total_tokens: 70 } }
}
const textItem = { type: 'message', id: 'msg_a', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: TEXT, annotations: [] }] }

const CHAT = chatTurn([fn('call_a', 'search', { query: 'rust' }), fn('call_b', 'get_weather', { city: 'Paris', days: '3' }), fn('call_c', 'launch_rockets', {})])
const CHAT_REFUSED = chatTurn([fn('call_c', 'launch_rockets', {})], null)
const MESSAGE = messageTurn([{ type: 'text', text: TEXT }, use('toolu_a', 'search', { query: 'rust' }), use('toolu_b', 'get_weather', { city: 'Paris', days: '3' }), use('toolu_c', 'launch_rockets', {})])
const MESSAGE_REFUSED = messageTurn([use('toolu_c', 'launch_rockets', {})])
const RESPONSE = responseTurn([textItem, fc('a', 'search', { query: 'rust' }), fc('b', 'get_weather', { city: 'Paris', days: '3' }), fc('c', 'launch_rockets', {})])
const RESPONSE_REFUSED = responseTurn([fc('c', 'launch_rockets', {})])

// ---- peers ---------------------------------------------------------------------------------------

const DIALECTS: Record<string, SseDialect> = { '/v1/chat/completions': 'openai', '/v1/responses': 'openai-responses', '/v1/messages': 'anthropic' }

interface Front {
  origin: string
  results: SseGuardResult[]
  close(): Promise<void>
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ origin: string; close(): Promise<void> }> {
  const server = createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

async function body(req: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = []
  for await (const c of req) parts.push(c as Buffer)
  return Buffer.concat(parts)
}

/** The proxy's streaming path in miniature: forward the request, guard an SSE answer, relay anything else. */
async function startFront(upstream: string, viaFetch = false): Promise<Front> {
  const results: SseGuardResult[] = []
  const guard = (res: ServerResponse, dialect: SseDialect, body: AsyncIterable<Uint8Array>) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    const write = (s: string) => new Promise<void>((resolve) => (res.write(s) ? resolve() : res.once('drain', resolve)))
    void guardSse({ gate, dialect, context, upstream: body, write }).then((r) => {
      results.push(r)
      res.end()
    })
  }
  const front = await listen((req, res) => {
    void body(req).then(async (payload) => {
      const path = (req.url ?? '').split('?')[0]
      if (viaFetch) {
        // a web ReadableStream body (what fetch gives), as the proxy server reads its upstream
        const up = await fetch(`${upstream}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: payload })
        guard(res, DIALECTS[path], up.body as unknown as AsyncIterable<Uint8Array>)
        return
      }
      const up = request(`${upstream}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (upRes) => {
        const dialect = DIALECTS[path]
        if (!dialect || !String(upRes.headers['content-type']).startsWith('text/event-stream')) {
          res.writeHead(upRes.statusCode ?? 502, { 'content-type': String(upRes.headers['content-type']) })
          upRes.pipe(res)
          return
        }
        guard(res, dialect, upRes)
      })
      up.end(payload)
    })
  })
  return { ...front, results }
}

/** An upstream that answers every request by running `script` on the response (status 200, SSE). */
function rawUpstream(script: (res: ServerResponse) => Promise<void> | void) {
  return listen((req, res) => {
    void body(req).then(async () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.flushHeaders()
      await script(res)
    })
  })
}

const openaiFor = (origin: string) => openaiAt(origin)
const anthropicFor = (origin: string) => anthropicAt(origin)
const user = 'Find rust books and the Paris weather, then launch.'
const chatParams = { model: 'gpt-5', messages: [{ role: 'user' as const, content: user }] }
const messageParams = { model: 'claude-sonnet-5-5', max_tokens: 1024, messages: [{ role: 'user' as const, content: user }] }

const REFUSAL_START = '[toolgate] The call to `launch_rockets` was not run (unknown_tool).'

function expectReceipts(r: SseGuardResult, ids: [string, string][]): void {
  expect(r.receipts.map((x) => x.callId)).toEqual(ids.map(([id]) => id))
  const args: Record<string, object> = { search: { query: 'rust' }, get_weather: { city: 'Paris', days: 3 } }
  for (const [i, [, tool]] of ids.entries()) {
    const claims = verifyReceipt(r.receipts[i].receipt, gate.publicKey!, { tool, arguments: args[tool] })
    expect(claims.sub).toBe('ana')
  }
}

// ---- whole turns through the SDKs ----------------------------------------------------------------

describe('guarded streams read by the official SDKs', () => {
  let upstream: Upstream
  let refusedOnly: Upstream
  let front: Front
  let frontRefused: Front
  beforeAll(async () => {
    upstream = await startUpstream({ chat: CHAT, messages: MESSAGE, responses: RESPONSE })
    refusedOnly = await startUpstream({ chat: CHAT_REFUSED, messages: MESSAGE_REFUSED, responses: RESPONSE_REFUSED })
    front = await startFront(upstream.origin)
    frontRefused = await startFront(refusedOnly.origin)
  })
  afterAll(async () => {
    await Promise.all([front.close(), frontRefused.close()])
    await Promise.all([upstream.close(), refusedOnly.close()])
  })

  it('chat.completions.stream: text, the repaired call, no refused call, the refusal as content, finish_reason tool_calls', async () => {
    const completion = await openaiFor(front.origin).chat.completions.stream(chatParams).finalChatCompletion()
    const msg = completion.choices[0].message
    const calls = (msg.tool_calls ?? []).map((c) => (c.type === 'function' ? [c.id, c.function.name, JSON.parse(c.function.arguments)] : c))
    expect(calls).toEqual([
      ['call_a', 'search', { query: 'rust' }],
      ['call_b', 'get_weather', { city: 'Paris', days: 3 }],
    ])
    expect(msg.content).toBe(`${TEXT}\n\n${REFUSAL_START} ${(front.results.at(-1)!.refused[0]).message}`)
    expect(completion.choices[0].finish_reason).toBe('tool_calls')
    const r = front.results.at(-1)!
    expect(r.error).toBeUndefined()
    expect(r.refused.map((x) => [x.callId, x.tool, x.reason])).toEqual([['call_c', 'launch_rockets', 'unknown_tool']])
    expect(msg.content).toContain(refusalText(r.refused))
    expectReceipts(r, [['call_a', 'search'], ['call_b', 'get_weather']])
  })

  it('chat.completions.create({ stream: true }): the chunks end with [DONE] and a valid finish; an all-refused turn ends as text with stop', async () => {
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = []
    for await (const c of await openaiFor(frontRefused.origin).chat.completions.create({ ...chatParams, stream: true })) chunks.push(c)
    const content = chunks.flatMap((c) => c.choices.map((x) => x.delta.content ?? '')).join('')
    expect(content).toBe(refusalText(frontRefused.results.at(-1)!.refused))
    expect(content.startsWith(REFUSAL_START)).toBe(true)
    expect(chunks.some((c) => c.choices.some((x) => x.delta.tool_calls))).toBe(false)
    expect(chunks.flatMap((c) => c.choices.map((x) => x.finish_reason)).filter(Boolean)).toEqual(['stop'])
    expect(chunks.at(-1)!.usage?.total_tokens).toBe(70)
  })

  it('messages.stream().finalMessage(): text, the repaired tool_use, the refusal as a text block, stop_reason tool_use', async () => {
    const message = await anthropicFor(front.origin).messages.stream(messageParams).finalMessage()
    const r = front.results.at(-1)!
    expect(message.content).toEqual([
      { type: 'text', text: TEXT},
      { type: 'tool_use', id: 'toolu_a', name: 'search', input: { query: 'rust' } },
      { type: 'tool_use', id: 'toolu_b', name: 'get_weather', input: { city: 'Paris', days: 3 } },
      { type: 'text', text: refusalText(r.refused)},
    ])
    expect(message.stop_reason).toBe('tool_use')
    expect(r.refused.map((x) => x.callId)).toEqual(['toolu_c'])
    expectReceipts(r, [['toolu_a', 'search'], ['toolu_b', 'get_weather']])
  })

  it('messages.stream(): an all-refused turn ends as text with end_turn', async () => {
    const message = await anthropicFor(frontRefused.origin).messages.stream(messageParams).finalMessage()
    expect(message.content).toEqual([{ type: 'text', text: refusalText(frontRefused.results.at(-1)!.refused)}])
    expect(message.stop_reason).toBe('end_turn')
  })

  it('responses.stream().finalResponse(): text, the repaired call, the refusal as a message item listed in output', async () => {
    const response = await openaiFor(front.origin).responses.stream({ model: 'gpt-5', input: user }).finalResponse()
    const r = front.results.at(-1)!
    const calls = response.output.flatMap((o) => (o.type === 'function_call' ? [[o.call_id, o.name, JSON.parse(o.arguments)]] : []))
    expect(calls).toEqual([
      ['call_a', 'search', { query: 'rust' }],
      ['call_b', 'get_weather', { city: 'Paris', days: 3 }],
    ])
    expect(response.output.map((o) => o.type)).toEqual(['message', 'function_call', 'function_call', 'message'])
    expect(response.output_text).toBe(TEXT + refusalText(r.refused))
    expect(response.status).toBe('completed')
    expect(r.refused.map((x) => x.callId)).toEqual(['call_c'])
    expectReceipts(r, [['call_a', 'search'], ['call_b', 'get_weather']])
  })

  it('responses.create({ stream: true }): contiguous sequence numbers, the injected item before response.completed; all refused ends as text', async () => {
    const events: OpenAI.Responses.ResponseStreamEvent[] = []
    for await (const e of await openaiFor(frontRefused.origin).responses.create({ model: 'gpt-5', input: user, stream: true })) events.push(e)
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i))
    expect(events.map((e) => e.type)).toEqual([
      'response.created', 'response.in_progress',
      'response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'response.output_text.done', 'response.content_part.done', 'response.output_item.done',
      'response.completed',
    ])
    const done = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent
    const text = refusalText(frontRefused.results.at(-1)!.refused)
    expect(done.response.output).toEqual([{ id: 'msg_toolgate_call_c', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] }])
    const final = await openaiFor(frontRefused.origin).responses.stream({ model: 'gpt-5', input: user }).finalResponse()
    expect(final.output_text).toBe(text)
  })
})

// ---- live text, cut and broken streams -----------------------------------------------------------

/** Resolves when `signal()` is called: the upstream waits on it. */
function gateOpen(): { wait: Promise<void>; signal(): void } {
  let signal!: () => void
  const wait = new Promise<void>((resolve) => (signal = resolve))
  return { wait, signal }
}

describe('live and failing streams', () => {
  it('chat: the first text reaches the client before the upstream sends the rest (it waits for the client to see it)', { timeout: 20_000 }, async () => {
    const events = chatChunks(CHAT)
    const seen = gateOpen()
    const up = await rawUpstream(async (res) => {
      res.write(sseText(events.slice(0, 2))) // role, first half of the text
      await seen.wait
      res.end(sseText(events.slice(2)))
    })
    const front = await startFront(up.origin, true)
    try {
      let text = ''
      let calls = 0
      for await (const c of await openaiFor(front.origin).chat.completions.create({ ...chatParams, stream: true })) {
        const d = c.choices[0]?.delta
        if (d?.content) {
          text += d.content
          seen.signal()
        }
        calls += d?.tool_calls?.length ?? 0
      }
      expect(text.startsWith(TEXT)).toBe(true)
      expect(calls).toBe(2)
    } finally {
      await front.close()
      await up.close()
    }
  })

  it('anthropic: a text delta is live while the model is still writing its tool call', { timeout: 20_000 }, async () => {
    const events = messageEvents(MESSAGE)
    const seen = gateOpen()
    const cut = events.findIndex((e) => (e.data as Json).type === 'content_block_start' && ((e.data as Json).content_block as Json).type === 'tool_use') + 1
    const up = await rawUpstream(async (res) => {
      res.write(sseText(events.slice(0, cut)))
      await seen.wait
      res.end(sseText(events.slice(cut)))
    })
    const front = await startFront(up.origin)
    try {
      const stream = anthropicFor(front.origin).messages.stream(messageParams)
      stream.on('text', () => seen.signal())
      const message = await stream.finalMessage()
      expect(message.content.map((b) => b.type)).toEqual(['text', 'tool_use', 'tool_use', 'text'])
    } finally {
      await front.close()
      await up.close()
    }
  })

  const cutCases: { name: string; dialect: SseDialect; events: SseEvent[]; abrupt: boolean }[] = [
    { name: 'chat, connection reset mid-call', dialect: 'openai', events: chatChunks(CHAT), abrupt: true },
    { name: 'anthropic, body ended mid-call', dialect: 'anthropic', events: messageEvents(MESSAGE), abrupt: false },
    { name: 'responses, body ended mid-call', dialect: 'openai-responses', events: responseEvents(RESPONSE), abrupt: false },
  ]
  for (const c of cutCases) for (const viaFetch of [false, true]) {
    it(`a truncated upstream (${c.name}${viaFetch ? ', read through fetch' : ''}) ends in the SDK's error, with no partial call`, async () => {
      // cut right after the first half of get_weather's arguments
      const at = c.events.findIndex((e) => JSON.stringify(e.data).includes('\\"city\\":\\"Paris\\"') || JSON.stringify(e.data).includes('{\\"city\\":\\"Pa')) + 1
      expect(at).toBeGreaterThan(0)
      const up = await rawUpstream((res) => {
        res.write(sseText(c.events.slice(0, at)))
        if (c.abrupt) setImmediate(() => res.socket?.destroy())
        else res.end()
      })
      const front = await startFront(up.origin, viaFetch)
      try {
        const seenIds: string[] = []
        let error: unknown
        try {
          if (c.dialect === 'openai') {
            for await (const ch of await openaiFor(front.origin).chat.completions.create({ ...chatParams, stream: true })) {
              for (const t of ch.choices[0]?.delta.tool_calls ?? []) if (t.id) seenIds.push(t.id)
            }
          } else if (c.dialect === 'anthropic') {
            for await (const ev of await anthropicFor(front.origin).messages.create({ ...messageParams, stream: true })) {
              if (ev.type === 'content_block_start' && ev.content_block.type === 'tool_use') seenIds.push(ev.content_block.id)
            }
          } else {
            for await (const ev of await openaiFor(front.origin).responses.create({ model: 'gpt-5', input: user, stream: true })) {
              if (ev.type === 'response.output_item.added' && ev.item.type === 'function_call') seenIds.push(ev.item.call_id)
            }
          }
        } catch (err) {
          error = err
        }
        const r = front.results.at(-1)!
        expect(r.error).toMatch(c.abrupt ? /broke off/ : /cut off|without/)
        expect(error).toBeInstanceOf(c.dialect === 'anthropic' ? Anthropic.APIError : OpenAI.APIError)
        expect(String((error as Error).message)).toContain('toolgate:')
        if (c.dialect !== 'anthropic') expect((error as { code?: string }).code).toBe('toolgate_stream_error')
        else expect((error as { error?: { error?: { type?: string } } }).error?.error?.type).toBe('api_error')
        // the completed call went out whole; the one cut mid-arguments never did
        expect(seenIds).toEqual([c.dialect === 'anthropic' ? 'toolu_a' : 'call_a'])
      } finally {
        await front.close()
        await up.close()
      }
    })
  }

  it("chat: the upstream's own mid-stream error reaches the SDK as that error", async () => {
    const events = chatChunks(CHAT)
    const up = await rawUpstream((res) => {
      res.end(sseText([...events.slice(0, 3), { data: { error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } } }]))
    })
    const front = await startFront(up.origin)
    try {
      const stream = openaiFor(front.origin).chat.completions.stream(chatParams)
      await expect(stream.finalChatCompletion()).rejects.toThrow('The server had an error while processing your request.')
      expect(front.results.at(-1)!.error).toBe('upstream error: The server had an error while processing your request.')
    } finally {
      await front.close()
      await up.close()
    }
  })

  it('a broken event stops the stream with the error event (anthropic)', async () => {
    const events = messageEvents(MESSAGE)
    const up = await rawUpstream((res) => {
      res.end(sseText(events.slice(0, 3)) + 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,\n\n' + sseText(events.slice(3)))
    })
    const front = await startFront(up.origin)
    try {
      await expect(anthropicFor(front.origin).messages.stream(messageParams).finalMessage()).rejects.toThrow(/toolgate: anthropic stream event #4: not valid JSON/)
    } finally {
      await front.close()
      await up.close()
    }
  })
})

// ---- the reader, byte by byte --------------------------------------------------------------------

/** Runs guardSse over `chunks` (no network): the text written and the result. */
async function guardText(dialect: SseDialect, chunks: Uint8Array[], g: ToolGate = plainGate, maxEventBytes?: number): Promise<{ out: string; result: SseGuardResult }> {
  let out = ''
  async function* upstream() {
    for (const c of chunks) yield c
  }
  const result = await guardSse({ gate: g, dialect, context, upstream: upstream(), write: (s) => void (out += s), maxEventBytes })
  return { out, result }
}

const plainGate = new ToolGate({ tools: config.tools })
const enc = (s: string) => new TextEncoder().encode(s)

const SMALL: [SseDialect, string][] = [
  ['openai', sseText(chatChunks(chatTurn([fn('call_b', 'get_weather', { city: 'Köln', days: '3' }), fn('call_c', 'launch_rockets', {})], 'Hé 🌍')))],
  ['anthropic', sseText(messageEvents(messageTurn([{ type: 'text', text: 'Hé 🌍' }, use('toolu_b', 'get_weather', { city: 'Köln', days: '3' }), use('toolu_c', 'launch_rockets', {})])))],
  ['openai-responses', sseText(responseEvents(responseTurn([{ ...textItem, content: [{ type: 'output_text', text: 'Hé 🌍', annotations: [] }] }, fc('b', 'get_weather', { city: 'Köln', days: '3' }), fc('c', 'launch_rockets', {})])))],
]

describe('the SSE reader under any chunking', () => {
  for (const [dialect, text] of SMALL) {
    it(`${dialect}: split at every byte offset, or one byte at a time, the output is the same`, async () => {
      const bytes = enc(text)
      const whole = await guardText(dialect, [bytes])
      expect(whole.result.error).toBeUndefined()
      expect(whole.result.refused.map((r) => r.tool)).toEqual(['launch_rockets'])
      expect(whole.out).toContain('Köln')
      expect(whole.out).toContain('Hé ')
      expect(whole.out).toContain('🌍')
      expect(whole.out).toContain(JSON.stringify(refusalText(whole.result.refused)).slice(1, -1))
      for (let k = 1; k < bytes.length; k++) {
        const split = await guardText(dialect, [bytes.slice(0, k), bytes.slice(k)])
        if (split.out !== whole.out) expect({ k, out: split.out }).toEqual({ k, out: whole.out })
      }
      const single = await guardText(dialect, Array.from(bytes, (b) => Uint8Array.of(b)))
      expect(single.out).toBe(whole.out)
    })

    it(`${dialect}: CRLF or CR line ends, comments, id/retry fields and multi-line data change nothing`, async () => {
      const whole = await guardText(dialect, [enc(text)])
      const events = text.split('\n\n').filter(Boolean)
      const variants = [
        text.replace(/\n/g, '\r\n'),
        text.replace(/\n/g, '\r'),
        `\uFEFF: hello\n\n${events.map((e) => `: keep-alive\nid: 7\nretry: 1000\n${e}\n\n`).join('')}`,
        // each JSON event pretty-printed over several data: lines (joined by \n, still the same JSON)
        events.map((e) => e.replace(/^data: (\{.*\})$/m, (_, json: string) => JSON.stringify(JSON.parse(json), null, 1).split('\n').map((l) => `data:${l}`).join('\n')) + '\n\n').join(''),
      ]
      for (const [i, v] of variants.entries()) {
        const b = enc(v)
        const r = await guardText(dialect, [b.slice(0, 101), b.slice(101)])
        expect(r.out, `variant ${i}`).toBe(whole.out)
      }
    })
  }

  it('anthropic: CRLF lines and multi-line data split at every byte offset (a boundary between \\r and \\n included) give the same output', async () => {
    const text = SMALL[1][1]
    const whole = await guardText('anthropic', [enc(text)])
    const crlf = text
      .split('\n\n')
      .filter(Boolean)
      .map((e) => e.replace(/^data: (\{.*\})$/m, (_, json: string) => JSON.stringify(JSON.parse(json), null, 1).split('\n').map((l) => `data: ${l}`).join('\n')) + '\n\n')
      .join('')
      .replace(/\n/g, '\r\n')
    const bytes = enc(crlf)
    for (let k = 1; k < bytes.length; k++) {
      const split = await guardText('anthropic', [bytes.slice(0, k), bytes.slice(k)])
      if (split.out !== whole.out) expect({ k, out: split.out }).toEqual({ k, out: whole.out })
    }
  })

  it('chat: a finishing chunk that also carries text keeps that text before the refusal, and the finish last', async () => {
    const events = chatChunks(chatTurn([fn('call_c', 'launch_rockets', {})], 'Done.'))
    // fold the last text piece into the finishing chunk, as some servers send it
    const finish = events.findIndex((e) => ((e.data as Json).choices as Json[] | undefined)?.[0]?.finish_reason === 'tool_calls')
    const piece = finish - 4 // role, text, text, call head, its two argument pieces, finish
    expect((events[piece].data as { choices: { delta: Json }[] }).choices[0].delta).toEqual({ content: 'e.' })
    ;(events[finish].data as { choices: { delta: Json }[] }).choices[0].delta = (events[piece].data as { choices: { delta: Json }[] }).choices[0].delta
    events.splice(piece, 1)
    const { out, result } = await guardText('openai', [enc(sseText(events))])
    const chunks = out.split('\n\n').filter((f) => f.startsWith('data: {')).map((f) => JSON.parse(f.slice(6)) as { choices: { delta: { content?: string }; finish_reason: string | null }[] })
    const content = chunks.flatMap((c) => c.choices.map((x) => x.delta.content ?? '')).join('')
    expect(content).toBe(`Done.\n\n${refusalText(result.refused)}`)
    expect(chunks.flatMap((c) => c.choices.map((x) => x.finish_reason))).toEqual([null, null, null, null, 'stop'])
    expect(out.endsWith('data: [DONE]\n\n')).toBe(true)
  })

  it('anthropic: ping passes through; a tool_use block never stopped is refused at message_stop, announced, and the turn ends as text', async () => {
    const events = messageEvents(messageTurn([{ type: 'text', text: 'Hi' }, use('toolu_b', 'get_weather', { city: 'Oslo' })]))
    const open = events.filter((e) => !((e.data as Json).type === 'content_block_stop' && (e.data as Json).index === 1))
    const { out, result } = await guardText('anthropic', [enc(sseText(open))])
    expect(result.error).toBeUndefined()
    expect(result.refused.map((r) => r.callId)).toEqual(['toolu_b'])
    expect(out).toContain('event: ping\ndata: {"type":"ping"}\n\n')
    const blocks = out.split('\n\n').filter((f) => f.startsWith('event: content_block_start')).map((f) => JSON.parse(f.split('data: ')[1]) as Json)
    expect(blocks.map((b) => [b.index, (b.content_block as Json).type])).toEqual([[0, 'text'], [1, 'text']])
    expect(out).toMatch(/"stop_reason":"end_turn"[\s\S]*event: message_stop/)
    expect(out.indexOf('text_delta","text":"[toolgate]')).toBeLessThan(out.indexOf('event: message_delta'))
  })

  it('an event over maxEventBytes stops the stream cleanly with the error event', async () => {
    const events = messageEvents(messageTurn([{ type: 'text', text: 'x'.repeat(500) }]))
    const { out, result } = await guardText('anthropic', [enc(sseText(events))], plainGate, 300)
    expect(result.error).toBe('anthropic upstream stream: one server-sent event is over 300 bytes; the stream was stopped there')
    expect(out).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"toolgate: anthropic upstream stream: one server-sent event is over 300 bytes[^"]*"\}\}\n\n$/)
    expect(out).not.toContain('xxxx')
  })

  it('a client that cannot be written to stops the stream and closes the upstream', async () => {
    let closed = false
    async function* upstream() {
      try {
        for (const e of chatChunks(CHAT)) yield enc(sseText([e]))
      } finally {
        closed = true
      }
    }
    const result = await guardSse({ gate: plainGate, dialect: 'openai', context, upstream: upstream(), write: () => Promise.reject(new Error('socket closed')) })
    expect(result.error).toBe('client write failed: socket closed')
    expect(closed).toBe(true)
  })

  it('a gate that cannot stream answers the error event instead of throwing', async () => {
    const asyncGate = new ToolGate({ tools: config.tools }, { engines: [() => 'delegate'] })
    const { out, result } = await guardText('openai-responses', [enc(SMALL[2][1])], asyncGate)
    expect(result.error).toContain('plugged engines')
    expect(out).toMatch(/^event: error\ndata: \{"type":"error","code":"toolgate_stream_error","message":"toolgate: stream: this gate has plugged engines/)
  })
})
