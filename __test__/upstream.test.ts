// The agent loop end to end: the official `openai` and `@anthropic-ai/sdk` clients talk to a
// loopback upstream (helpers/upstream.ts) that refuses, with HTTP 400 in each API's error shape,
// any follow-up request whose tool results do not answer every tool call id exactly once. The
// gate is real (native binding, __test__/fixtures/dialects/tools.json); so are the clients. The
// negative tests show the upstream does refuse a wrong answer, so the positive ones could fail.
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { ToolGate, type TurnReport } from '../src-ts/index'
import { anthropicAt, openaiAt } from './helpers/sdk-clients'
import { call, chatAnswer, fnItem, messageAnswer, responsesAnswer, use } from './helpers/turns'
import { startUpstream, type Upstream } from './helpers/upstream'

const gate = ToolGate.fromFile(join(__dirname, 'fixtures', 'dialects', 'tools.json'))

type Args = Record<string, unknown>
type Json = Record<string, unknown>

/** The host's own tools; each records what it was run with. */
const ran: { tool: string; args: Args }[] = []
const local: Record<string, (a: Args) => unknown> = {
  search: (a) => ({ hits: [`${String(a.query)} in action`] }),
  get_weather: (a) => {
    if (typeof a.days !== 'number') throw new Error(`get_weather got days=${JSON.stringify(a.days)}`)
    return { city: a.city, days: a.days, forecast: 'sunny' }
  },
}
function run(tool: string, args: Args): string {
  ran.push({ tool, args })
  return JSON.stringify(local[tool](args))
}

// --- the scripted model turns: one valid call, one repairable ("3" for an integer), one refused ---

const CHAT_TURN = chatAnswer([
  call('call_a', 'search', '{"query":"rust"}'),
  call('call_b', 'get_weather', '{"city":"Paris","days":"3"}'),
  call('call_c', 'send_email', '{"to":"ceo@example.com"}'),
])

const MESSAGE_TURN = messageAnswer([
  { type: 'text', text: 'Let me look that up.' },
  use('toolu_01', 'search', { query: 'rust' }),
  use('toolu_02', 'get_weather', { city: 'Paris', days: '3' }),
  use('toolu_03', 'delete_file', { path: '/tmp/x', force: true }),
])

const RESPONSES_TURN = responsesAnswer([
  fnItem(1, 'search', '{"query":"rust"}'),
  fnItem(2, 'get_weather', '{"city":"Paris","days":"3"}'),
  fnItem(3, 'send_email', '{}'),
])

let upstream: Upstream
let openai: OpenAI
let anthropic: Anthropic

beforeAll(async () => {
  upstream = await startUpstream({ chat: CHAT_TURN, messages: MESSAGE_TURN, responses: RESPONSES_TURN })
  openai = openaiAt(upstream.origin)
  anthropic = anthropicAt(upstream.origin)
})
afterAll(() => upstream.close())

/** Runs `send` and returns the error it rejects with (fails the test when it resolves). */
async function rejection(send: () => Promise<unknown>): Promise<Error & { status?: number }> {
  try {
    await send()
  } catch (err) {
    return err as Error & { status?: number }
  }
  throw new Error('the upstream accepted a request it should refuse')
}

function lastRequest(): Json {
  return upstream.requests[upstream.requests.length - 1].body
}

function outcomes(report: TurnReport): string[] {
  return report.calls.map((c) => `${c.callId} ${c.tool} ${c.outcome}${c.reason ? ` ${c.reason}` : ''}`)
}

describe('OpenAI Chat Completions, official client, loopback upstream', () => {
  const user = { role: 'user' as const, content: 'Find rust books and the Paris weather for 3 days, then mail the CEO.' }
  let report: TurnReport
  let assistant: OpenAI.Chat.ChatCompletionAssistantMessageParam
  let results: OpenAI.Chat.ChatCompletionToolMessageParam[]
  let feedback: OpenAI.Chat.ChatCompletionToolMessageParam[]
  const send = (messages: OpenAI.Chat.ChatCompletionMessageParam[]) => openai.chat.completions.create({ model: 'gpt-4.1', messages })

  beforeAll(async () => {
    // The raw response text: the hot path (parsed once, strictly, in Rust).
    const raw = await openai.chat.completions.create({ model: 'gpt-4.1', messages: [user] }).asResponse()
    report = gate.guard(await raw.text(), { dialect: 'openai' })
    const payload = report.payload as OpenAI.Chat.ChatCompletion
    assistant = payload.choices[0].message as OpenAI.Chat.ChatCompletionAssistantMessageParam
    ran.length = 0
    results = report.allowed.map((c) => ({ role: 'tool', tool_call_id: c.callId, content: run(c.tool, c.arguments) }))
    feedback = report.feedback as OpenAI.Chat.ChatCompletionToolMessageParam[]
  })

  it('guards the turn: one passed, one repaired, the undeclared tool refused', () => {
    expect(outcomes(report)).toEqual(['call_a search passed', 'call_b get_weather repaired', 'call_c send_email rejected unknown_tool'])
    expect(ran).toEqual([{ tool: 'search', args: { query: 'rust' } }, { tool: 'get_weather', args: { city: 'Paris', days: 3 } }])
    expect(feedback).toEqual([{ role: 'tool', tool_call_id: 'call_c', content: report.calls[2].message }])
  })

  it('the follow-up (payload message + results + feedback) is accepted, with the repaired arguments sent back', async () => {
    const done = await send([user, assistant, ...results, ...feedback])
    expect(done.choices[0].message.content).toBe('All tool results received.')
    const sent = (lastRequest().messages as Json[])[1] as { tool_calls: { function: { arguments: string } }[] }
    expect(JSON.parse(sent.tool_calls[1].function.arguments)).toEqual({ city: 'Paris', days: 3 })
  })

  it('refuses a follow-up without the feedback: the refused call id is unanswered', async () => {
    const err = await rejection(() => send([user, assistant, ...results]))
    expect(err).toBeInstanceOf(OpenAI.BadRequestError)
    expect(err.status).toBe(400)
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).type).toBe('invalid_request_error')
    expect(err.message).toContain('The following tool_call_ids did not have response messages: call_c')
  })

  it('refuses a follow-up that answers an id twice', async () => {
    const twice = { role: 'tool' as const, tool_call_id: 'call_c', content: 'host-side error text' }
    const err = await rejection(() => send([user, assistant, ...results, ...feedback, twice]))
    expect(err).toBeInstanceOf(OpenAI.BadRequestError)
    expect(err.message).toContain("Duplicate value for 'tool_call_id' of 'call_c', in messages[4] and messages[5]")
  })

  it('refuses a tool message answering an unknown id, and results that do not follow the assistant message', async () => {
    const stray = { role: 'tool' as const, tool_call_id: 'call_zzz', content: '{}' }
    let err = await rejection(() => send([user, assistant, ...results, ...feedback, stray]))
    expect(err.message).toContain("messages with role 'tool' must be a response to a preceeding message with 'tool_calls'")
    err = await rejection(() => send([user, assistant, { role: 'user', content: 'hurry up' }, ...results, ...feedback]))
    expect(err.message).toContain('did not have response messages: call_a, call_b, call_c')
  })
})

describe('Anthropic Messages, official client, loopback upstream', () => {
  const user: Anthropic.MessageParam = { role: 'user', content: 'Find rust books and the Paris weather for 3 days, then delete /tmp/x.' }
  let report: TurnReport
  let assistant: Anthropic.MessageParam
  let results: Anthropic.ToolResultBlockParam[]
  let feedback: Anthropic.MessageParam[]
  const send = (messages: Anthropic.MessageParam[]) => anthropic.messages.create({ model: 'claude-sonnet-5-5', max_tokens: 1024, messages })

  beforeAll(async () => {
    const first = await anthropic.messages.create({ model: 'claude-sonnet-5-5', max_tokens: 1024, messages: [user] })
    report = gate.guard(first, { dialect: 'anthropic' })
    assistant = { role: 'assistant', content: (report.payload as Anthropic.Message).content }
    ran.length = 0
    results = report.allowed.map((c) => ({ type: 'tool_result', tool_use_id: c.callId, content: run(c.tool, c.arguments) }))
    feedback = report.feedback as Anthropic.MessageParam[]
  })

  it('guards the turn: one passed, one repaired, the strict tool refused', () => {
    expect(outcomes(report)).toEqual(['toolu_01 search passed', 'toolu_02 get_weather repaired', 'toolu_03 delete_file rejected invalid'])
    expect(ran[1]).toEqual({ tool: 'get_weather', args: { city: 'Paris', days: 3 } })
    expect(feedback).toEqual([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_03', content: report.calls[2].message, is_error: true }] }])
  })

  it('the follow-up (host results merged with the feedback blocks in one user turn) is accepted', async () => {
    // The feedback is a whole user message; the host's own results must join it in the same turn.
    const merged: Anthropic.MessageParam = { role: 'user', content: [...results, ...feedback.flatMap((m) => m.content as Anthropic.ToolResultBlockParam[])] }
    const done = await send([user, assistant, merged])
    expect(done.content).toEqual([{ type: 'text', text: 'All tool results received.' }])
    const sent = (lastRequest().messages as Json[])[1] as { content: Json[] }
    expect(sent.content[2]).toEqual({ type: 'tool_use', id: 'toolu_02', name: 'get_weather', input: { city: 'Paris', days: 3 } })
  })

  it('refuses a follow-up without the feedback blocks: the refused tool_use id is unanswered', async () => {
    const err = await rejection(() => send([user, assistant, { role: 'user', content: results }]))
    expect(err).toBeInstanceOf(Anthropic.BadRequestError)
    expect(err.status).toBe(400)
    const body = (err as InstanceType<typeof Anthropic.BadRequestError>).error as { type: string; error: { type: string } }
    expect(body.type).toBe('error')
    expect(body.error.type).toBe('invalid_request_error')
    expect(err.message).toContain('messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_03')
  })

  it('refuses a follow-up that answers an id twice', async () => {
    const again: Anthropic.ToolResultBlockParam = { type: 'tool_result', tool_use_id: 'toolu_01', content: 'again' }
    const err = await rejection(() => send([user, assistant, { role: 'user', content: [...results, ...(feedback[0].content as Anthropic.ToolResultBlockParam[]), again] }]))
    expect(err).toBeInstanceOf(Anthropic.BadRequestError)
    expect(err.message).toContain('Found multiple `tool_result` blocks with id: toolu_01')
  })

  it('refuses a result for an unknown id, and results placed after other content', async () => {
    const stray: Anthropic.ToolResultBlockParam = { type: 'tool_result', tool_use_id: 'toolu_99', content: '{}' }
    const all = [...results, ...(feedback[0].content as Anthropic.ToolResultBlockParam[])]
    let err = await rejection(() => send([user, assistant, { role: 'user', content: [...all, stray] }]))
    expect(err.message).toContain('messages.2.content.3: unexpected `tool_use_id` found in `tool_result` blocks: toolu_99')
    err = await rejection(() => send([user, assistant, { role: 'user', content: [{ type: 'text', text: 'results:' }, ...all] }]))
    expect(err.message).toContain('without `tool_result` blocks immediately after: toolu_01, toolu_02, toolu_03')
  })
})

describe('OpenAI Responses, official client, loopback upstream', () => {
  const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'Find rust books and the Paris weather, then mail the CEO.' }]
  const send = (items: unknown[]) => openai.responses.create({ model: 'gpt-4.1', input: items as OpenAI.Responses.ResponseInputItem[] })
  const calls = RESPONSES_TURN.output as OpenAI.Responses.ResponseInputItem[]
  const output = (callId: string) => ({ type: 'function_call_output', call_id: callId, output: '{}' })

  it('the follow-up (payload items + outputs + feedback) is accepted', async () => {
    const first = await openai.responses.create({ model: 'gpt-4.1', input })
    const report = gate.guard(first, { dialect: 'openai-responses' })
    expect(outcomes(report)).toEqual(['call_1 search passed', 'call_2 get_weather repaired', 'call_3 send_email rejected unknown_tool'])
    expect(report.feedback).toEqual([{ type: 'function_call_output', call_id: 'call_3', output: report.calls[2].message }])
    const items = (report.payload as { output: unknown[] }).output
    const outputs = report.allowed.map((c) => ({ type: 'function_call_output', call_id: c.callId, output: run(c.tool, c.arguments) }))
    const done = await send([...input, ...items, ...outputs, ...report.feedback])
    expect(done.output_text).toBe('All tool results received.')
    const sent = (lastRequest().input as { call_id?: string; arguments?: string }[]).find((it) => it.call_id === 'call_2')
    expect(JSON.parse(sent!.arguments!)).toEqual({ city: 'Paris', days: 3 })
  })

  it('refuses a follow-up missing an output, answering a call twice, or answering an unknown call', async () => {
    let err = await rejection(() => send([...input, ...calls, output('call_1'), output('call_2')]))
    expect(err).toBeInstanceOf(OpenAI.BadRequestError)
    expect(err.message).toContain('No tool output found for function call call_3.')
    err = await rejection(() => send([...input, ...calls, output('call_1'), output('call_2'), output('call_3'), output('call_2')]))
    expect(err.message).toContain('Duplicate function call output for call_id call_2.')
    err = await rejection(() => send([...input, ...calls, output('call_1'), output('call_2'), output('call_3'), output('call_9')]))
    expect(err.message).toContain('No tool call found for function call output with call_id call_9.')
    const ok = await send([...input, ...calls, output('call_1'), output('call_2'), output('call_3')])
    expect(ok.output_text).toBe('All tool results received.')
  })
})
