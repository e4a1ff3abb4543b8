// toolgate/anthropic end to end: the official `@anthropic-ai/sdk` client, guarded by
// `guardAnthropic`, talks to the loopback upstream (helpers/upstream.ts), which refuses with HTTP
// 400 any follow-up whose `tool_result` blocks do not answer every `tool_use` id exactly once at
// the start of the next user turn, and streams when asked. The gate is real (native binding) with
// a policy: `send_email` is declared but no rule allows it (`no_rule`), `save_note` writes
// (`confirm`), `launch_rockets` is not declared (`unknown_tool`).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

import Anthropic from '@anthropic-ai/sdk'
import { Stream } from '@anthropic-ai/sdk/streaming'
import { afterAll, beforeAll, beforeEach, describe, expect, expectTypeOf, it } from 'vitest'

import { guardAnthropic, runToolCalls, toolgateReport, type VerdictInfo } from '../src-ts/adapters/anthropic'
import { ToolGate, type CallContext, type ToolGateConfig, type TurnCall, type TurnReport } from '../src-ts/index'
import { expectedOutcomes, expectNoToken as expectNoTokenIn, outcomes, recordingHandlers } from './helpers/adapter-loop'
import { runExample } from './helpers/tsx-child'
import { anthropicAt } from './helpers/sdk-clients'
import { messageEvents, sseText, startUpstream, type Upstream } from './helpers/upstream'
import { ADAPTER_CONFIG, MESSAGE_TURN } from './helpers/turns'

const config: ToolGateConfig = ADAPTER_CONFIG
const gate = new ToolGate(config)
const ana: CallContext = { subject: 'ana', roles: ['analyst'] }

type Json = Record<string, unknown>

const { ran, handlers } = recordingHandlers({ asyncWeather: true })

const TOOLS: Anthropic.Messages.Tool[] = ['search', 'get_weather', 'send_email', 'save_note', 'launch_rockets'].map((name) => ({
  name,
  input_schema: { type: 'object' },
}))

const IDS = ['toolu_a', 'toolu_b', 'toolu_c', 'toolu_d', 'toolu_e']
const EXPECTED = expectedOutcomes(IDS)

let upstream: Upstream
let anthropic: Anthropic
let verdicts: [TurnCall, VerdictInfo][]
let reports: TurnReport<'anthropic'>[]
let client: Anthropic

beforeAll(async () => {
  upstream = await startUpstream({ messages: MESSAGE_TURN })
  anthropic = anthropicAt(upstream.origin)
})
afterAll(() => upstream.close())
beforeEach(() => {
  ran.length = 0
  verdicts = []
  reports = []
  client = guardAnthropic(anthropic, gate, () => ana, { onVerdict: (v, info) => void verdicts.push([v, info]), onReport: (r) => void reports.push(r) })
})

const last = (): Json => upstream.requests[upstream.requests.length - 1].body
const toolNames = (body: Json) => (body.tools as { name: string }[] | undefined)?.map((t) => t.name)
const user: Anthropic.Messages.MessageParam = { role: 'user', content: 'Find rust books and the Paris weather, mail the CEO, launch, note it.' }
const params = { model: 'claude-sonnet-5-5', max_tokens: 1024, tools: TOOLS }

const expectNoToken = (): void => expectNoTokenIn(verdicts, upstream)

describe('messages.create, not streamed', () => {
  it('keeps the client type and instance', () => {
    expectTypeOf(client).toEqualTypeOf<Anthropic>()
    expect(client).toBeInstanceOf(Anthropic)
    expect(client.messages).toBe(client.messages)
  })

  it('runs the whole loop: tools filtered, allowed calls run (repaired), refusals in the same user message, the follow-up accepted', async () => {
    const msg = await client.messages.create({ ...params, messages: [user] })
    expectTypeOf(msg).toExtend<Anthropic.Messages.Message>()
    expect(toolNames(last())).toEqual(['search', 'get_weather', 'save_note'])
    const report = toolgateReport(msg)!
    expect(outcomes(report)).toEqual(EXPECTED)
    expect(verdicts.map(([v, i]) => `${i.callId} ${v.outcome} ${i.dialect} ${i.streamed}`)).toEqual(IDS.map((id, n) => `${id} ${report.calls[n].outcome} anthropic false`))
    expect(reports).toEqual([report])
    // repairs written back; refused tool_use blocks stay in the model's turn
    expect(msg.content.filter((b) => b.type === 'tool_use').map((b) => (b as Anthropic.Messages.ToolUseBlock).id)).toEqual(IDS)
    expect((msg.content[2] as Anthropic.Messages.ToolUseBlock).input).toEqual({ city: 'Paris', days: 3 })
    expect(msg._request_id).toBe(`req_${upstream.requests.length}`)

    const results = await runToolCalls(msg, handlers, gate)
    expectTypeOf(results).toEqualTypeOf<Anthropic.Messages.MessageParam | undefined>()
    expect(ran).toEqual([{ tool: 'search', args: { query: 'rust' } }, { tool: 'get_weather', args: { city: 'Paris', days: 3 } }])
    expect(results).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_a', content: '{"hits":["rust in action"]}' },
        { type: 'tool_result', tool_use_id: 'toolu_b', content: 'Paris: sunny for 3 days' },
        ...report.calls.slice(2).map((c) => ({ type: 'tool_result', tool_use_id: c.callId, content: c.message, is_error: true })),
      ],
    })
    const done = await client.messages.create({ ...params, messages: [user, { role: 'assistant', content: msg.content }, results!] })
    expect(upstream.requests[upstream.requests.length - 1].status).toBe(200)
    expect(done.content).toEqual([{ type: 'text', text: 'All tool results received.' }])
    expect(toolgateReport(done)!.calls).toEqual([])
    expect(await runToolCalls(done, handlers, gate)).toBeUndefined()
    expectNoToken()
  })

  it("the host's own text goes after the results in the same user message", async () => {
    const msg = await client.messages.create({ ...params, messages: [user] })
    const results = (await runToolCalls(msg, handlers, gate))!
    const merged: Anthropic.Messages.MessageParam = { role: 'user', content: [...(results.content as Anthropic.Messages.ContentBlockParam[]), { type: 'text', text: 'Also: hurry.' }] }
    const done = await client.messages.create({ ...params, messages: [user, { role: 'assistant', content: msg.content }, merged] })
    expect(done.content).toEqual([{ type: 'text', text: 'All tool results received.' }])
  })

  it('a handler that throws becomes an is_error result; the loop goes on', async () => {
    const msg = await client.messages.create({ ...params, messages: [user] })
    const results = (await runToolCalls(msg, { ...handlers, get_weather: async () => Promise.reject(new Error('no forecast')) }, gate))!
    expect((results.content as Anthropic.Messages.ToolResultBlockParam[])[1]).toEqual({ type: 'tool_result', tool_use_id: 'toolu_b', content: 'Tool `get_weather` failed: no forecast', is_error: true })
    const done = await client.messages.create({ ...params, messages: [user, { role: 'assistant', content: msg.content }, results] })
    expect(done.content).toEqual([{ type: 'text', text: 'All tool results received.' }])
  })

  it('.withResponse() gives the guarded data and the request id', async () => {
    const { data, request_id } = await client.messages.create({ ...params, messages: [user] }).withResponse()
    expect(request_id).toBe(`req_${upstream.requests.length}`)
    expect(outcomes(toolgateReport(data)!)).toEqual(EXPECTED)
  })

  it('a message no guarded client answered is guarded by runToolCalls itself', async () => {
    const raw = await anthropic.messages.create({ ...params, messages: [user] })
    expect(toolgateReport(raw)).toBeUndefined()
    const told: string[] = []
    const results = (await runToolCalls(raw, handlers, gate, ana, { onVerdict: (v) => void told.push(v.outcome) }))!
    expect(told).toEqual(['passed', 'repaired', 'denied', 'rejected', 'confirm'])
    expect(ran.map((r) => r.args)).toEqual([{ query: 'rust' }, { city: 'Paris', days: 3 }])
    expect((results.content as Anthropic.Messages.ToolResultBlockParam[]).map((b) => b.tool_use_id)).toEqual(IDS)
  })

  it('messages.parse() and withOptions clients go through the guarded create', async () => {
    const parsed = await client.messages.parse({ ...params, messages: [user] })
    expect((parsed.content[2] as Anthropic.Messages.ToolUseBlock).input).toEqual({ city: 'Paris', days: 3 })
    expect(toolNames(last())).toEqual(['search', 'get_weather', 'save_note'])
    const derived = client.withOptions({ timeout: 5000 })
    expectTypeOf(derived).toEqualTypeOf<Anthropic>()
    const msg = await derived.messages.create({ ...params, messages: [user] })
    expect(outcomes(toolgateReport(msg)!)).toEqual(EXPECTED)
    expect(verdicts).toHaveLength(10)
  })

  it('checks its arguments', () => {
    expect(() => guardAnthropic(anthropic, {} as ToolGate)).toThrow(/`gate` must be a ToolGate/)
    expect(() => guardAnthropic(anthropic, gate, 'ana' as never)).toThrow(/`ctx` must be a CallContext or a function/)
    expect(() => guardAnthropic({} as Anthropic, gate)).toThrow(/no `messages.create` method/)
  })
})

describe('messages.create, streamed', () => {
  it('streams only allowed tool_use blocks (repaired); after the end the report answers every id; the follow-up is accepted', async () => {
    const stream = await client.messages.create({ ...params, messages: [user], stream: true })
    expectTypeOf(stream).toExtend<Stream<Anthropic.Messages.RawMessageStreamEvent>>()
    expect(stream).toBeInstanceOf(Stream)
    expect(toolNames(last())).toEqual(['search', 'get_weather', 'save_note'])
    await expect(runToolCalls(stream, handlers, gate)).rejects.toMatchObject({ code: 'E_PAYLOAD' })

    const events: Anthropic.Messages.RawMessageStreamEvent[] = []
    for await (const e of stream) events.push(e)
    const starts = events.filter((e): e is Anthropic.Messages.RawContentBlockStartEvent => e.type === 'content_block_start')
    expect(starts.map((e) => [e.index, e.content_block.type === 'tool_use' ? e.content_block.id : e.content_block.type])).toEqual([[0, 'text'], [1, 'toolu_a'], [2, 'toolu_b']])
    const json = events
      .filter((e): e is Anthropic.Messages.RawContentBlockDeltaEvent => e.type === 'content_block_delta' && e.index === 2 && e.delta.type === 'input_json_delta')
      .map((e) => (e.delta as Anthropic.Messages.InputJSONDelta).partial_json)
      .join('')
    expect(JSON.parse(json)).toEqual({ city: 'Paris', days: 3 })
    expect(events.at(-1)?.type).toBe('message_stop')
    expect(verdicts.map(([, i]) => `${i.callId} ${i.streamed}`)).toEqual(IDS.map((id) => `${id} true`))

    const report = toolgateReport(stream)!
    expect(reports).toEqual([report])
    expect(outcomes(report)).toEqual(EXPECTED)
    const results = (await runToolCalls(stream, handlers, gate))!
    expect((results.content as Anthropic.Messages.ToolResultBlockParam[]).map((b) => b.tool_use_id)).toEqual(IDS)
    // the assistant turn to send back is the report's: it keeps the refused calls
    const assistant: Anthropic.Messages.MessageParam = { role: 'assistant', content: report.payload.content }
    const done = await client.messages.create({ ...params, messages: [user, assistant, results], stream: true })
    let text = ''
    for await (const e of done) if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text
    expect(text).toBe('All tool results received.')
    expectNoToken()
  })

  it('messages.stream() accumulates the guarded events; onReport gives the turn to answer', async () => {
    const helper = client.messages.stream({ ...params, messages: [user] })
    const final = await helper.finalMessage()
    expect(final.content.filter((b) => b.type === 'tool_use').map((b) => (b as Anthropic.Messages.ToolUseBlock).id)).toEqual(['toolu_a', 'toolu_b'])
    expect((final.content[2] as Anthropic.Messages.ToolUseBlock).input).toEqual({ city: 'Paris', days: 3 })
    expect(reports).toHaveLength(1)
    const [report] = reports
    const results = (await runToolCalls(report, handlers, gate))!
    const assistant: Anthropic.Messages.MessageParam = { role: 'assistant', content: (report.payload as Anthropic.Messages.Message).content }
    const done = await client.messages.create({ ...params, messages: [user, assistant, results] })
    expect(done.content).toEqual([{ type: 'text', text: 'All tool results received.' }])
  })

  it('a stream cut off before message_stop fails with E_PAYLOAD and leaves no report', async () => {
    const cutOff = sseText(messageEvents(MESSAGE_TURN).slice(0, 8))
    const raw = new Anthropic({ apiKey: 'sk-ant-test', maxRetries: 0, fetch: async () => new Response(cutOff, { headers: { 'content-type': 'text/event-stream' } }) })
    const stream = await guardAnthropic(raw, gate, ana).messages.create({ ...params, messages: [user], stream: true })
    const seen: string[] = []
    await expect(async () => {
      for await (const e of stream) seen.push(e.type)
    }).rejects.toMatchObject({ name: 'ToolGateError', code: 'E_PAYLOAD' })
    expect(seen).toContain('message_start')
    expect(toolgateReport(stream)).toBeUndefined()
  })

  it('a call max_tokens cut off is refused at the end, told to onVerdict and answered', async () => {
    // recorded events (fixtures/streams): the message stops inside a tool_use block
    const fixture = JSON.parse(readFileSync(join(__dirname, 'fixtures', 'streams', 'anthropic', 'call-never-closed.json'), 'utf8')) as { events: Json[] }
    const body = sseText(fixture.events.map((data) => ({ event: String(data.type), data })))
    const raw = new Anthropic({ apiKey: 'sk-ant-test', maxRetries: 0, fetch: async () => new Response(body, { headers: { 'content-type': 'text/event-stream' } }) })
    const stream = await guardAnthropic(raw, gate, ana, { onVerdict: (v, info) => void verdicts.push([v, info]) }).messages.create({ ...params, messages: [user], stream: true })
    const types: string[] = []
    for await (const e of stream) types.push(e.type)
    expect(types).not.toContain('content_block_delta')
    expect(verdicts.map(([v, i]) => `${i.callId} ${v.outcome} ${v.reason} ${i.streamed}`)).toEqual(['toolu_open rejected bad_arguments true'])
    const results = (await runToolCalls(stream, handlers, gate))!
    expect(results.content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_open', content: verdicts[0][0].message, is_error: true }])
  })

  it('breaking out of the stream early leaves no report', async () => {
    const stream = await client.messages.create({ ...params, messages: [user], stream: true })
    for await (const e of stream) if (e.type === 'content_block_start') break
    expect(toolgateReport(stream)).toBeUndefined()
    expect(stream.controller.signal.aborted).toBe(true)
  })
})

describe('examples/anthropic.ts', () => {
  it('runs offline and prints the loop it describes', () => {
    const out = runExample('anthropic.ts')
    expect(out).toContain('search passed')
    expect(out).toContain('get_weather repaired')
    expect(out).toContain('delete_repo denied (no_rule)')
    expect(out).toContain('model: ')
  })
})
