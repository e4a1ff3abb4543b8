// toolgate/openai end to end: the official `openai` client, guarded by `guardOpenAI`, talks to the
// loopback upstream (helpers/upstream.ts), which refuses with HTTP 400 any follow-up whose tool
// results do not answer every call id exactly once, and streams when asked. The gate is real
// (native binding) with a policy: `send_email` is declared but no rule allows it (`no_rule`),
// `save_note` writes (`confirm`), `launch_rockets` is not declared (`unknown_tool`).
import OpenAI from 'openai'
import { Stream } from 'openai/streaming'
import { afterAll, beforeAll, beforeEach, describe, expect, expectTypeOf, it } from 'vitest'

import { guardOpenAI, runToolCalls, toolgateReport, type ToolHandlers, type VerdictInfo } from '../src-ts/adapters/openai'
import { ToolGate, ToolGateError, type CallContext, type ToolGateConfig, type TurnCall, type TurnReport } from '../src-ts/index'
import { expectedOutcomes as EXPECTED, expectNoToken as expectNoTokenIn, outcomes, recordingHandlers } from './helpers/adapter-loop'
import { runExample } from './helpers/tsx-child'
import { openaiAt } from './helpers/sdk-clients'
import { startUpstream, type Upstream } from './helpers/upstream'
import { ADAPTER_CONFIG, CHAT_TURN, RESPONSES_TURN } from './helpers/turns'

const config: ToolGateConfig = ADAPTER_CONFIG
const gate = new ToolGate(config)
const ana: CallContext = { subject: 'ana', roles: ['analyst'] }

type Json = Record<string, unknown>

/** The host's tools; each records what it ran with. */
const { ran, handlers } = recordingHandlers()

const fn = (name: string): OpenAI.Chat.Completions.ChatCompletionFunctionTool => ({ type: 'function', function: { name, parameters: { type: 'object' } } })
const CHAT_TOOLS = ['search', 'get_weather', 'send_email', 'save_note', 'launch_rockets'].map(fn)
const RESPONSES_TOOLS: OpenAI.Responses.FunctionTool[] = ['search', 'get_weather', 'send_email', 'save_note', 'launch_rockets'].map((name) => ({
  type: 'function',
  name,
  parameters: { type: 'object' },
  strict: false,
}))

let upstream: Upstream
let openai: OpenAI
let verdicts: [TurnCall, VerdictInfo][]
let reports: TurnReport[]
let client: OpenAI

beforeAll(async () => {
  upstream = await startUpstream({ chat: CHAT_TURN, responses: RESPONSES_TURN })
  openai = openaiAt(upstream.origin)
})
afterAll(() => upstream.close())
beforeEach(() => {
  ran.length = 0
  verdicts = []
  reports = []
  client = guardOpenAI(openai, gate, () => ana, { onVerdict: (v, info) => void verdicts.push([v, info]), onReport: (r) => void reports.push(r) })
})

const last = (): Json => upstream.requests[upstream.requests.length - 1].body
const toolNames = (body: Json) => (body.tools as { function?: { name: string }; name?: string }[] | undefined)?.map((t) => t.function?.name ?? t.name)
const user: OpenAI.Chat.Completions.ChatCompletionMessageParam = { role: 'user', content: 'Find rust books and the Paris weather, mail the CEO, launch, note it.' }

/** Every model-facing text a request carried; the confirmation token must never be in it. */
const expectNoToken = (): void => expectNoTokenIn(verdicts, upstream)

describe('chat.completions.create, not streamed', () => {
  it('keeps the client type and instance', () => {
    expectTypeOf(client).toEqualTypeOf<OpenAI>()
    expect(client).toBeInstanceOf(OpenAI)
    expect(client.chat.completions).toBe(client.chat.completions)
    expect(client.baseURL).toBe(openai.baseURL)
  })

  it('runs the whole loop: tools filtered, allowed calls run (repaired), refusals answered, the follow-up accepted', async () => {
    const res = await client.chat.completions.create({ model: 'gpt-4.1', messages: [user], tools: CHAT_TOOLS })
    expectTypeOf(res).toEqualTypeOf<OpenAI.Chat.Completions.ChatCompletion & { _request_id?: string | null }>()
    // the model was only offered what this caller may call
    expect(toolNames(last())).toEqual(['search', 'get_weather', 'save_note'])
    const report = toolgateReport(res)!
    expect(outcomes(report)).toEqual(EXPECTED(['call_a', 'call_b', 'call_c', 'call_d', 'call_e']))
    expect(verdicts.map(([v, i]) => `${i.callId} ${v.outcome} ${i.dialect} ${i.streamed}`)).toEqual([
      'call_a passed openai false', 'call_b repaired openai false', 'call_c denied openai false', 'call_d rejected openai false', 'call_e confirm openai false',
    ])
    expect(reports).toEqual([report])
    // repairs written back into the response; refused calls stay in the model's turn
    const calls = res.choices[0].message.tool_calls as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall[]
    expect(calls.map((c) => c.id)).toEqual(['call_a', 'call_b', 'call_c', 'call_d', 'call_e'])
    expect(JSON.parse(calls[1].function.arguments)).toEqual({ city: 'Paris', days: 3 })
    expect(res._request_id).toBe(`req_${upstream.requests.length}`)

    const next = await runToolCalls(res, handlers, gate)
    expectTypeOf(next).toEqualTypeOf<OpenAI.Chat.Completions.ChatCompletionMessageParam[]>()
    expect(ran).toEqual([{ tool: 'search', args: { query: 'rust' } }, { tool: 'get_weather', args: { city: 'Paris', days: 3 } }])
    expect(next[0]).toBe(res.choices[0].message)
    expect(next.slice(1)).toEqual([
      { role: 'tool', tool_call_id: 'call_a', content: '{"hits":["rust in action"]}' },
      { role: 'tool', tool_call_id: 'call_b', content: 'Paris: sunny for 3 days' },
      ...report.calls.slice(2).map((c) => ({ role: 'tool', tool_call_id: c.callId, content: c.message })),
    ])
    const done = await client.chat.completions.create({ model: 'gpt-4.1', messages: [user, ...next], tools: CHAT_TOOLS })
    expect(upstream.requests[upstream.requests.length - 1].status).toBe(200)
    expect(done.choices[0].message.content).toBe('All tool results received.')
    expect(toolgateReport(done)!.calls).toEqual([])
    expectNoToken()
  })

  it('.withResponse() gives the guarded data and the request id', async () => {
    const { data, request_id, response } = await client.chat.completions.create({ model: 'gpt-4.1', messages: [user], tools: CHAT_TOOLS }).withResponse()
    expect(response.status).toBe(200)
    expect(request_id).toBe(`req_${upstream.requests.length}`)
    expect(toolgateReport(data)!.calls).toHaveLength(5)
    expect(JSON.parse((data.choices[0].message.tool_calls![1] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall).function.arguments)).toEqual({ city: 'Paris', days: 3 })
  })

  it('a handler that throws becomes an error result; the loop goes on', async () => {
    const res = await client.chat.completions.create({ model: 'gpt-4.1', messages: [user], tools: CHAT_TOOLS })
    const failing: ToolHandlers = { ...handlers, search: () => { throw new Error('index offline') } }
    const next = await runToolCalls(res, failing, gate)
    expect(next[1]).toEqual({ role: 'tool', tool_call_id: 'call_a', content: 'Tool `search` failed: index offline' })
    expect(ran).toEqual([{ tool: 'get_weather', args: { city: 'Paris', days: 3 } }])
    const custom = await runToolCalls(res, failing, gate, undefined, { onError: (_err, info) => `${info.tool} is unavailable` })
    expect(custom[1]).toMatchObject({ content: 'search is unavailable' })
    const done = await client.chat.completions.create({ model: 'gpt-4.1', messages: [user, ...next] })
    expect(done.choices[0].message.content).toBe('All tool results received.')
  })

  it('a missing handler for an allowed tool is E_CONFIG before any handler runs', async () => {
    const res = await client.chat.completions.create({ model: 'gpt-4.1', messages: [user], tools: CHAT_TOOLS })
    const { search: _search, ...rest } = handlers
    await expect(runToolCalls(res, rest, gate)).rejects.toMatchObject({ name: 'ToolGateError', code: 'E_CONFIG', message: expect.stringContaining('no handler for the allowed tool `search`') })
    expect(ran).toEqual([])
  })

  it('a caller no rule allows anything is offered no tools; the request is sent without them', async () => {
    const guest = guardOpenAI(openai, gate, { subject: 'guest' })
    await guest.chat.completions.create({ model: 'gpt-4.1', messages: [user], tools: CHAT_TOOLS, tool_choice: 'auto', parallel_tool_calls: true })
    const body = last()
    expect(body).not.toHaveProperty('tools')
    expect(body).not.toHaveProperty('tool_choice')
    expect(body).not.toHaveProperty('parallel_tool_calls')
  })

  it('asks the context function once per request', async () => {
    let asked = 0
    const who = guardOpenAI(openai, gate, () => (asked++, asked === 1 ? ana : { subject: 'guest' }))
    const first = await who.chat.completions.create({ model: 'gpt-4.1', messages: [user], tools: CHAT_TOOLS })
    expect(toolNames(last())).toEqual(['search', 'get_weather', 'save_note'])
    expect(toolgateReport(first)!.calls[0].outcome).toBe('passed')
    const second = await who.chat.completions.create({ model: 'gpt-4.1', messages: [user], tools: CHAT_TOOLS })
    expect(last()).not.toHaveProperty('tools')
    expect(toolgateReport(second)!.calls.map((c) => c.reason)).toEqual(['no_rule', 'no_rule', 'no_rule', 'unknown_tool', 'no_rule'])
    expect(asked).toBe(2)
  })

  it('a response no guarded client answered is guarded by runToolCalls itself', async () => {
    const raw = await openai.chat.completions.create({ model: 'gpt-4.1', messages: [user] })
    expect(toolgateReport(raw)).toBeUndefined()
    const told: string[] = []
    const next = await runToolCalls(raw, handlers, gate, ana, { onVerdict: (v, i) => void told.push(`${i.callId} ${v.outcome}`) })
    expect(told).toEqual(['call_a passed', 'call_b repaired', 'call_c denied', 'call_d rejected', 'call_e confirm'])
    expect(ran.map((r) => r.tool)).toEqual(['search', 'get_weather'])
    const assistant = next[0] as OpenAI.Chat.Completions.ChatCompletionAssistantMessageParam
    expect(JSON.parse((assistant.tool_calls![1] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall).function.arguments)).toEqual({ city: 'Paris', days: 3 })
    const done = await openai.chat.completions.create({ model: 'gpt-4.1', messages: [user, ...next] })
    expect(done.choices[0].message.content).toBe('All tool results received.')
  })

  it('runTools with stream: true, which could not answer refused calls, is refused on a guarded client; withOptions stays guarded', async () => {
    // runTools without stream runs allowed calls only: __test__/adapter-openai-run-tools.test.ts
    expect(() => client.chat.completions.runTools({ model: 'gpt-4.1', messages: [user], tools: [], stream: true })).toThrow(ToolGateError)
    const derived = client.withOptions({ timeout: 5000 })
    expectTypeOf(derived).toEqualTypeOf<OpenAI>()
    const res = await derived.chat.completions.create({ model: 'gpt-4.1', messages: [user], tools: CHAT_TOOLS })
    expect(toolgateReport(res)!.calls).toHaveLength(5)
    expect(toolNames(last())).toEqual(['search', 'get_weather', 'save_note'])
  })

  it('chat.completions.parse goes through the guarded create', async () => {
    const strict = CHAT_TOOLS.map((t) => ({ ...t, function: { ...t.function, parameters: { type: 'object', properties: {}, additionalProperties: false }, strict: true } }))
    const parsed = await client.chat.completions.parse({ model: 'gpt-4.1', messages: [user], tools: strict })
    expect(toolNames(last())).toEqual(['search', 'get_weather', 'save_note'])
    expect(verdicts).toHaveLength(5)
    expect(JSON.parse((parsed.choices[0].message.tool_calls![1] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall).function.arguments)).toEqual({ city: 'Paris', days: 3 })
  })

  it('checks its arguments', () => {
    expect(() => guardOpenAI(openai, {} as ToolGate)).toThrow(/`gate` must be a ToolGate/)
    expect(() => guardOpenAI(openai, gate, ana, { onVerdit: () => {} } as never)).toThrow(/unknown option `onVerdit`/)
    expect(() => guardOpenAI({} as OpenAI, gate)).toThrow(/no `chat.completions.create` method/)
    expect(() => guardOpenAI(openai, gate, () => null as never).chat.completions.create({ model: 'm', messages: [user] })).toThrow(/must return a CallContext object, got null/)
  })
})

describe('chat.completions.create, streamed', () => {
  it('streams only allowed calls (repaired); after the end the report answers every id; the follow-up is accepted', async () => {
    const stream = await client.chat.completions.create({ model: 'gpt-4.1', messages: [user], tools: CHAT_TOOLS, stream: true })
    expectTypeOf(stream).toEqualTypeOf<Stream<OpenAI.Chat.Completions.ChatCompletionChunk> & { _request_id?: string | null }>()
    expect(stream).toBeInstanceOf(Stream)
    expect(toolNames(last())).toEqual(['search', 'get_weather', 'save_note'])
    expect(toolgateReport(stream)).toBeUndefined()
    await expect(runToolCalls(stream, handlers, gate)).rejects.toMatchObject({ code: 'E_PAYLOAD', message: expect.stringContaining('has not ended') })

    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = []
    for await (const chunk of stream) chunks.push(chunk)
    const deltas = chunks.flatMap((c) => c.choices.flatMap((ch) => ch.delta.tool_calls ?? []))
    expect(deltas.map((d) => [d.index, d.id, d.function?.name])).toEqual([[0, 'call_a', 'search'], [1, 'call_b', 'get_weather']])
    expect(JSON.parse(deltas[1].function!.arguments!)).toEqual({ city: 'Paris', days: 3 })
    expect(chunks.flatMap((c) => c.choices.map((ch) => ch.finish_reason)).filter(Boolean)).toEqual(['tool_calls'])
    expect(verdicts.map(([v, i]) => `${i.callId} ${v.outcome} ${i.streamed}`)).toEqual([
      'call_a passed true', 'call_b repaired true', 'call_c denied true', 'call_d rejected true', 'call_e confirm true',
    ])

    const report = toolgateReport(stream)!
    expect(reports).toEqual([report])
    expect(outcomes(report)).toEqual(EXPECTED(['call_a', 'call_b', 'call_c', 'call_d', 'call_e']))
    const next = await runToolCalls(stream, handlers, gate)
    expect(ran.map((r) => r.args)).toEqual([{ query: 'rust' }, { city: 'Paris', days: 3 }])
    expect((next[0] as { tool_calls: unknown[] }).tool_calls).toHaveLength(5)
    expect(next.slice(1).map((m) => (m as { tool_call_id: string }).tool_call_id)).toEqual(['call_a', 'call_b', 'call_c', 'call_d', 'call_e'])

    const done = await client.chat.completions.create({ model: 'gpt-4.1', messages: [user, ...next], stream: true })
    let text = ''
    for await (const chunk of done) text += chunk.choices[0]?.delta.content ?? ''
    expect(text).toBe('All tool results received.')
    expect(toolgateReport(done)!.calls).toEqual([])
    expectNoToken()
  })

  it('the SDK stream helper accumulates the guarded events; onReport gives the turn', async () => {
    const helper = client.chat.completions.stream({ model: 'gpt-4.1', messages: [user], tools: CHAT_TOOLS })
    const final = await helper.finalChatCompletion()
    expect(final.choices[0].message.tool_calls!.map((c) => c.id)).toEqual(['call_a', 'call_b'])
    expect(toolNames(last())).toEqual(['search', 'get_weather', 'save_note'])
    expect(reports).toHaveLength(1)
    const next = await runToolCalls(reports[0] as TurnReport<'openai'>, handlers, gate)
    const done = await client.chat.completions.create({ model: 'gpt-4.1', messages: [user, ...next] })
    expect(done.choices[0].message.content).toBe('All tool results received.')
  })

  it('tee() branches both see the guarded events', async () => {
    const stream = await client.chat.completions.create({ model: 'gpt-4.1', messages: [user], tools: CHAT_TOOLS, stream: true })
    const [left, right] = stream.tee()
    const ids = async (s: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>) => {
      const out: (string | undefined)[] = []
      for await (const c of s) for (const ch of c.choices) for (const t of ch.delta.tool_calls ?? []) if (t.id) out.push(t.id)
      return out
    }
    expect(await Promise.all([ids(left), ids(right)])).toEqual([['call_a', 'call_b'], ['call_a', 'call_b']])
  })

  it('a gate with plugged engines cannot stream: E_ASYNC before the request is sent', async () => {
    const withEngine = new ToolGate(config, { engines: [() => 'delegate'] })
    const n = upstream.requests.length
    const c = guardOpenAI(openai, withEngine, ana)
    expect(() => c.chat.completions.create({ model: 'gpt-4.1', messages: [user], stream: true })).toThrow(expect.objectContaining({ code: 'E_ASYNC' }))
    expect(upstream.requests.length).toBe(n)
    // not streamed, its engines are awaited
    const res = await c.chat.completions.create({ model: 'gpt-4.1', messages: [user], tools: CHAT_TOOLS })
    expect(outcomes(toolgateReport(res)!)).toEqual(EXPECTED(['call_a', 'call_b', 'call_c', 'call_d', 'call_e']))
  })
})

describe('responses.create', () => {
  const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'Find rust books and the Paris weather, mail the CEO, launch, note it.' }]

  it('runs the whole loop, not streamed: function_call_output items for every call, the follow-up accepted', async () => {
    const res = await client.responses.create({ model: 'gpt-4.1', input, tools: RESPONSES_TOOLS })
    expectTypeOf(res).toEqualTypeOf<OpenAI.Responses.Response & { _request_id?: string | null }>()
    expect(toolNames(last())).toEqual(['search', 'get_weather', 'save_note'])
    expect(res.output_text).toBe('On it.')
    const report = toolgateReport(res)!
    expect(outcomes(report)).toEqual(EXPECTED(['call_1', 'call_2', 'call_3', 'call_4', 'call_5']))
    expect(verdicts.map(([, i]) => i.dialect)).toEqual(Array(5).fill('openai-responses'))
    const fc2 = res.output.find((o) => o.type === 'function_call' && o.call_id === 'call_2') as OpenAI.Responses.ResponseFunctionToolCall
    expect(JSON.parse(fc2.arguments)).toEqual({ city: 'Paris', days: 3 })

    const outputs = await runToolCalls(res, handlers, gate)
    expectTypeOf(outputs).toEqualTypeOf<OpenAI.Responses.ResponseInputItem[]>()
    expect(ran.map((r) => r.args)).toEqual([{ query: 'rust' }, { city: 'Paris', days: 3 }])
    expect(outputs).toEqual([
      { type: 'function_call_output', call_id: 'call_1', output: '{"hits":["rust in action"]}' },
      { type: 'function_call_output', call_id: 'call_2', output: 'Paris: sunny for 3 days' },
      ...report.calls.slice(2).map((c) => ({ type: 'function_call_output', call_id: c.callId, output: c.message })),
    ])
    const done = await client.responses.create({ model: 'gpt-4.1', input: [...input, ...(res.output as OpenAI.Responses.ResponseInputItem[]), ...outputs], tools: RESPONSES_TOOLS })
    expect(done.output_text).toBe('All tool results received.')
    expectNoToken()
  })

  it('streams only allowed calls; the report payload and runToolCalls make an accepted follow-up', async () => {
    const stream = await client.responses.create({ model: 'gpt-4.1', input, tools: RESPONSES_TOOLS, stream: true })
    expect(stream).toBeInstanceOf(Stream)
    const events: OpenAI.Responses.ResponseStreamEvent[] = []
    for await (const e of stream) events.push(e)
    const added = events.filter((e): e is OpenAI.Responses.ResponseOutputItemAddedEvent => e.type === 'response.output_item.added').map((e) => e.item)
    expect(added.map((it) => (it.type === 'function_call' ? it.call_id : it.type))).toEqual(['message', 'call_1', 'call_2'])
    const completed = events.find((e): e is OpenAI.Responses.ResponseCompletedEvent => e.type === 'response.completed')!
    expect(completed.response.output.map((o) => (o.type === 'function_call' ? o.call_id : o.type))).toEqual(['message', 'call_1', 'call_2'])
    expect(verdicts.every(([, i]) => i.streamed && i.dialect === 'openai-responses')).toBe(true)

    const report = toolgateReport(stream)!
    expect(outcomes(report)).toEqual(EXPECTED(['call_1', 'call_2', 'call_3', 'call_4', 'call_5']))
    const outputs = await runToolCalls(stream, handlers, gate)
    expect(outputs.map((o) => (o as { call_id: string }).call_id)).toEqual(['call_1', 'call_2', 'call_3', 'call_4', 'call_5'])
    // without previous_response_id the whole output goes back: the report's, which keeps the refused calls
    const turn = report.payload.output as OpenAI.Responses.ResponseInputItem[]
    const done = await client.responses.create({ model: 'gpt-4.1', input: [...input, ...turn, ...outputs], stream: true })
    let text = ''
    for await (const e of done) if (e.type === 'response.output_text.delta') text += e.delta
    expect(text).toBe('All tool results received.')
  })

  it('responses.parse goes through the guarded create', async () => {
    const parsed = await client.responses.parse({ model: 'gpt-4.1', input, tools: RESPONSES_TOOLS })
    expect(toolNames(last())).toEqual(['search', 'get_weather', 'save_note'])
    expect(outcomes(reports[0])).toEqual(EXPECTED(['call_1', 'call_2', 'call_3', 'call_4', 'call_5']))
    const fc2 = parsed.output.find((o) => o.type === 'function_call' && o.call_id === 'call_2') as OpenAI.Responses.ResponseFunctionToolCall
    expect(JSON.parse(fc2.arguments)).toEqual({ city: 'Paris', days: 3 })
  })

  it('the SDK responses.stream helper goes through the guarded create', async () => {
    const helper = client.responses.stream({ model: 'gpt-4.1', input, tools: RESPONSES_TOOLS })
    const final = await helper.finalResponse()
    expect(final.output.filter((o) => o.type === 'function_call').map((o) => (o as OpenAI.Responses.ResponseFunctionToolCall).call_id)).toEqual(['call_1', 'call_2'])
    expect(reports).toHaveLength(1)
  })
})

describe('examples/openai.ts', () => {
  it('runs offline and prints the loop it describes', () => {
    const out = runExample('openai.ts')
    expect(out).toContain('search passed')
    expect(out).toContain('get_weather repaired')
    expect(out).toContain('delete_repo denied (no_rule)')
    expect(out).toContain('model: ')
  })
})
