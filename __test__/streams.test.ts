// Every stream fixture under __test__/fixtures/streams/ (shared with the Rust tests) through
// `gate.stream` and the native binding — events pushed as SSE/JSON text and as parsed objects —
// and the forwarded streams fed to the official SDKs' own accumulators (openai's
// ChatCompletionStream and ResponseStream, Anthropic's MessageStream, the AI SDK's streamText),
// which must assemble exactly the allowed calls of `end().payload`, with their final arguments.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream'
import { jsonSchema, streamText, tool } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream'
import { ResponseStream } from 'openai/lib/responses/ResponseStream'
import { describe, expect, it } from 'vitest'

import { mask, readFixtures } from './helpers/fixtures'
import { ToolGate, ToolGateError, type TurnReport } from '../src-ts/index'
import type { ToolCallStream } from '../src-ts/stream'

const fixtures = join(__dirname, 'fixtures')
const root = join(fixtures, 'streams')
const tools = JSON.parse(readFileSync(join(fixtures, 'dialects', 'tools.json'), 'utf8')) as Record<string, unknown>

interface Fixture {
  description: string
  source: string
  dialect: 'openai' | 'openai-responses' | 'anthropic' | 'ai-sdk' | 'gemini' | 'ai-sdk-ui' | 'pydantic-ai'
  config?: Record<string, unknown>
  events: (string | Record<string, unknown>)[]
  completes?: string[][]
  expect?: {
    calls: { callId: string; tool: string; outcome: string; reason?: string; arguments?: unknown }[]
    forwarded?: unknown[]
    payload?: unknown
    feedback?: unknown[]
    providerExecuted?: unknown[]
    turnRefusals?: unknown[]
  }
  error?: { at: number | 'end'; code: string; contains: string }
}

function all(): [string, Fixture][] {
  return readFixtures<Fixture>(root)
}

const gates = new Map<string, ToolGate>()
function gateFor(fx: Fixture): ToolGate {
  const key = JSON.stringify(fx.config ?? {})
  let g = gates.get(key)
  if (!g) {
    g = new ToolGate({ ...tools, ...(fx.config ?? {}) } as never)
    gates.set(key, g)
  }
  return g
}


function expectError(fn: () => unknown, want: { code: string; contains: string }): void {
  let thrown: unknown
  try {
    fn()
  } catch (err) {
    thrown = err
  }
  expect(thrown, 'expected an error').toBeInstanceOf(ToolGateError)
  expect((thrown as ToolGateError).code).toBe(want.code)
  expect((thrown as ToolGateError).message).toContain(want.contains)
}

interface Run {
  pushed: ReturnType<ToolCallStream['push']>
  forwarded: unknown[]
  report: TurnReport
}

/** Pushes the fixture's events (`asObjects`: objects as parsed values, else as JSON text). */
function run(fx: Fixture, asObjects: boolean): Run | undefined {
  const gate = gateFor(fx)
  const stream = gate.stream({ dialect: fx.dialect })
  const pushed: Run['pushed'] = []
  const forwarded: unknown[] = []
  for (const [i, ev] of fx.events.entries()) {
    const input = typeof ev === 'string' || asObjects ? ev : JSON.stringify(ev)
    if (fx.error?.at === i + 1) {
      expectError(() => stream.push(input), fx.error)
      // every earlier event's output was taken after it: anything left the failed event queued
      expect(stream.forward(), 'nothing of a failed event is forwarded').toEqual([])
      expectError(() => stream.push(input), { code: 'E_PAYLOAD', contains: 'an earlier event failed' })
      expectError(() => stream.end(), { code: 'E_PAYLOAD', contains: '' })
      return undefined
    }
    const done = stream.push(input)
    if (fx.completes) expect(done.map((c) => c.callId), `event ${i + 1}`).toEqual(fx.completes[i])
    pushed.push(...done)
    forwarded.push(...stream.forward())
  }
  if (fx.error?.at === 'end') {
    expectError(() => stream.end(), fx.error)
    return undefined
  }
  const report = stream.end()
  expectError(() => stream.end(), { code: 'E_PAYLOAD', contains: 'already ended' })
  return { pushed, forwarded, report }
}

function verify(fx: Fixture, r: Run): void {
  const want = fx.expect!
  expect(r.report.dialect).toBe(fx.dialect)
  expect(r.report.calls.map((c) => c.callId)).toEqual(want.calls.map((c) => c.callId))
  want.calls.forEach((w, i) => {
    const got = r.report.calls[i]
    expect(got.tool).toBe(w.tool)
    expect(got.outcome, got.message).toBe(w.outcome)
    expect(got.allowed).toBe(w.outcome === 'passed' || w.outcome === 'repaired')
    if (w.reason) expect(got.reason).toBe(w.reason)
    if (w.arguments !== undefined) expect(got.arguments).toEqual(w.arguments)
  })
  expect(r.report.allowed.map((a) => a.callId)).toEqual(r.report.calls.filter((c) => c.allowed).map((c) => c.callId))
  const messages = new Set([...r.report.calls.flatMap((c) => (c.message ? [c.message] : [])), ...r.report.turnRefusals.map((t) => t.message)])
  expect(mask(r.report.turnRefusals, messages)).toEqual(want.turnRefusals ?? [])
  if (want.forwarded) expect(mask(r.forwarded, messages)).toEqual(want.forwarded)
  if (want.payload !== undefined) expect(r.report.payload).toEqual(want.payload)
  if (want.feedback) expect(mask(r.report.feedback, messages)).toEqual(want.feedback)
  if (want.providerExecuted) expect(r.report.providerExecuted).toEqual(want.providerExecuted)
  // decided once: every call was returned by exactly one push, with the verdict end() reports
  for (const c of r.report.calls) {
    const mine = r.pushed.filter((p) => p.callId === c.callId)
    if (mine.length === 0) expect(c.message, `call ${c.callId} never pushed`).toContain('cut off')
    else expect(mine).toEqual([c])
  }
}

describe('stream fixtures through the binding', () => {
  const fx = all()
  it('has at least four fixtures for each streaming dialect', () => {
    for (const d of ['openai', 'openai-responses', 'anthropic', 'ai-sdk', 'gemini', 'ai-sdk-ui', 'pydantic-ai']) {
      expect(fx.filter(([n]) => n.startsWith(`${d}/`)).length, d).toBeGreaterThanOrEqual(4)
    }
  })
  for (const [name, f] of fx) {
    it(`${name}: ${f.description.slice(0, 70)}`, () => {
      for (const asObjects of [false, true]) {
        const r = run(f, asObjects)
        if (!r) continue
        verify(f, r)
        // the forwarded events are themselves a valid stream holding exactly the allowed calls
        const again = gateFor(f).stream({ dialect: f.dialect })
        for (const ev of r.forwarded) again.push(ev as object)
        const second = again.end()
        expect(second.calls.every((c) => c.outcome === 'passed')).toBe(true)
        expect(second.calls.map((c) => [c.tool, c.arguments])).toEqual(r.report.calls.filter((c) => c.allowed).map((c) => [c.tool, c.arguments]))
      }
    })
  }
})

describe('the stream API', () => {
  const gate = new ToolGate(tools as never)
  it('refuses dialects without a stream form, naming the five', () => {
    expectError(() => gate.stream({ dialect: 'mcp' }), { code: 'E_DIALECT', contains: 'openai, openai-responses, anthropic, ai-sdk, gemini' })
    expectError(() => gate.stream({} as never), { code: 'E_DIALECT', contains: 'dialect' })
  })
  it('refuses an event holding a lone surrogate (text or object), and fails the stream', () => {
    const s = gate.stream({ dialect: 'ai-sdk' })
    expectError(() => s.push('{"type":"text-delta","id":"0","delta":"a\ud800"}'), { code: 'E_PAYLOAD', contains: 'lone UTF-16 surrogate' })
    expectError(() => s.push({ type: 'finish', finishReason: 'stop' }), { code: 'E_PAYLOAD', contains: 'an earlier event failed' })
    const t = gate.stream({ dialect: 'ai-sdk' })
    expectError(() => t.push({ type: 'text-delta', id: '0', delta: 'a\ud800' }), { code: 'E_PAYLOAD', contains: 'ai-sdk stream event #1: not valid JSON' })
  })
  it('refuses a stream buffered past limits.maxPayloadBytes', () => {
    const small = new ToolGate({ ...tools, limits: { maxPayloadBytes: 1000 } } as never)
    const s = small.stream({ dialect: 'anthropic' })
    s.push({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'm', stop_reason: null, usage: {} } })
    s.push({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } })
    expectError(() => {
      for (let i = 0; i < 50; i++) s.push({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'x'.repeat(40) } })
    }, { code: 'E_PAYLOAD', contains: 'over limits.maxPayloadBytes (1000 bytes)' })
  })
  it('lets a host act on a call before the stream ends', () => {
    const s = gate.stream({ dialect: 'anthropic' })
    s.push('event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}')
    s.push({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} } })
    expect(s.push({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"city":"Oslo","days":"2"}' } })).toEqual([])
    const [call] = s.push({ type: 'content_block_stop', index: 0 })
    expect(call).toMatchObject({ callId: 'toolu_1', outcome: 'repaired', allowed: true, arguments: { city: 'Oslo', days: 2 } })
    expect(JSON.parse(call.argumentsJson!)).toEqual({ city: 'Oslo', days: 2 })
    expectError(() => s.end(), { code: 'E_PAYLOAD', contains: 'without `message_stop`' })
  })
})

// ---- the official SDKs' accumulators read the forwarded streams -------------------------------

function fixture(name: string): Fixture {
  return JSON.parse(readFileSync(join(root, name), 'utf8')) as Fixture
}

/** A ReadableStream of JSON lines, as the SDKs' `fromReadableStream` reads them. */
function jsonl(events: unknown[]): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(events.map((e) => JSON.stringify(e)).join('\n') + '\n')
  return new ReadableStream({
    start(c) {
      // split mid-line (and mid-character) to exercise the SDKs' own line decoders too
      for (let i = 0; i < bytes.length; i += 37) c.enqueue(bytes.slice(i, i + 37))
      c.close()
    },
  })
}

/** The fixture's stream, through the gate: forwarded events and the report. */
function through(name: string): { fx: Fixture; forwarded: unknown[]; report: TurnReport } {
  const fx = fixture(name)
  const r = run(fx, true)!
  return { fx, forwarded: r.forwarded, report: r.report }
}

describe('forwarded streams are valid for the official SDK accumulators', () => {
  for (const name of ['openai/parallel-repaired-and-refused.json', 'openai/split-mid-escape.json', 'openai/text-then-call-sse.json', 'openai/all-refused-finish-rewritten.json']) {
    it(`openai ChatCompletionStream: ${name}`, async () => {
      const { forwarded, report } = through(name)
      const completion = await ChatCompletionStream.fromReadableStream(jsonl(forwarded)).finalChatCompletion()
      const payload = report.payload as { choices: { message: { content: string | null; tool_calls?: { id: string; function: { name: string; arguments: string } }[] } }[] }
      const allowed = new Set(report.allowed.map((a) => a.callId))
      const want = (payload.choices[0].message.tool_calls ?? []).filter((c) => allowed.has(c.id)).map((c) => [c.id, c.function.name, JSON.parse(c.function.arguments)])
      const got = (completion.choices[0].message.tool_calls ?? []).map((c) => (c.type === 'function' ? [c.id, c.function.name, JSON.parse(c.function.arguments)] : c))
      expect(got).toEqual(want)
      expect(completion.choices[0].message.content ?? null).toEqual(payload.choices[0].message.content)
      expect(completion.choices[0].finish_reason).toBe(want.length ? 'tool_calls' : 'stop')
    })
  }

  for (const name of ['anthropic/parallel-repaired-and-refused.json', 'anthropic/all-refused-stop-rewritten-sse.json', 'anthropic/split-mid-escape.json', 'anthropic/server-tool-passes.json', 'anthropic/prepopulated-message-start.json']) {
    it(`Anthropic MessageStream: ${name}`, async () => {
      const { forwarded, report } = through(name)
      const message = await MessageStream.fromReadableStream(jsonl(forwarded)).finalMessage()
      const payload = report.payload as { content: { type: string; id?: string; name?: string; input?: unknown; text?: string }[] }
      const allowed = new Set(report.allowed.map((a) => a.callId))
      const kept = payload.content.filter((b) => b.type !== 'tool_use' || allowed.has(b.id!))
      const shape = (b: { type: string; id?: string; name?: string; input?: unknown; text?: string }) =>
        b.type === 'tool_use' ? [b.type, b.id, b.name, b.input] : b.type === 'text' ? [b.type, b.text] : [b.type]
      expect(message.content.map((b) => shape(b as never))).toEqual(kept.map(shape))
      expect(message.stop_reason).toBe(report.allowed.length || report.calls.length === 0 ? (payload as { stop_reason?: string }).stop_reason : 'end_turn')
    })
  }

  for (const name of ['openai-responses/parallel-repaired-and-refused.json', 'openai-responses/split-mid-escape.json', 'openai-responses/web-search-passes-call-refused.json']) {
    it(`openai ResponseStream: ${name}`, async () => {
      const { forwarded, report } = through(name)
      const response = await ResponseStream.fromReadableStream(jsonl(forwarded)).finalResponse()
      const payload = report.payload as { output: { type: string; call_id?: string; name?: string; arguments?: string }[] }
      const allowed = new Set(report.allowed.map((a) => a.callId))
      const want = payload.output.filter((o) => o.type === 'function_call' && allowed.has(o.call_id!)).map((o) => [o.call_id, o.name, report.allowed.find((a) => a.callId === o.call_id)!.arguments])
      const got = response.output.flatMap((o) => (o.type === 'function_call' ? [[o.call_id, o.name, JSON.parse(o.arguments)]] : []))
      expect(got).toEqual(want)
      expect(response.output.filter((o) => o.type !== 'function_call').map((o) => o.type)).toEqual(payload.output.filter((o) => o.type !== 'function_call').map((o) => o.type))
    })
  }

  for (const name of ['ai-sdk/provider-parallel-repaired-and-refused.json', 'ai-sdk/split-mid-escape.json', 'ai-sdk/provider-executed-passes.json']) {
    it(`AI SDK streamText over a model streaming the forwarded parts: ${name}`, async () => {
      const { forwarded, report } = through(name)
      const model = new MockLanguageModelV3({
        doStream: async () => ({ stream: new ReadableStream({ start: (c) => { for (const p of forwarded) c.enqueue(p as never); c.close() } }) }),
      })
      const schema = jsonSchema({ type: 'object' })
      const result = streamText({ model, prompt: 'go', tools: { get_weather: tool({ inputSchema: schema }), search: tool({ inputSchema: schema }), ping: tool({ inputSchema: schema }), send_email: tool({ inputSchema: schema }) } })
      const calls = (await result.toolCalls).filter((c) => !c.providerExecuted).map((c) => [c.toolCallId, c.toolName, c.input])
      expect(calls).toEqual(report.allowed.map((a) => [a.callId, a.tool, a.arguments]))
      const text = (report.payload as { type: string; text?: string }[]).filter((p) => p.type === 'text').map((p) => p.text).join('')
      expect(await result.text).toBe(text)
    })
  }
})
