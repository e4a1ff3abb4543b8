// `answer(report, results)` of every adapter: the gate's refusals and the host's own results for
// the allowed calls, merged in call order into what each API wants next. Checked with the real
// SDK clients against the loopback upstream (helpers/upstream.ts), which answers 400 — as the
// APIs do — when the follow-up does not answer every call id exactly once in the right place;
// LangChain's answers are real `ToolMessage`s, the AI SDK's pass its own `modelMessageSchema`.
// The gate: `search`, `get_weather` (its `days: "3"` repaired) allowed; `send_email` denied
// (`no_rule`), `launch_rockets` unknown, `save_note` awaiting confirmation.
import type Anthropic from '@anthropic-ai/sdk'
import { AIMessage, ToolMessage } from '@langchain/core/messages'
import { modelMessageSchema } from 'ai'
import type OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest'

import { answer as aiSdkAnswer } from '../src-ts/adapters/ai-sdk'
import { answer as anthropicAnswer } from '../src-ts/adapters/anthropic'
import { answer as geminiAnswer } from '../src-ts/adapters/gemini'
import { answer as langchainAnswer } from '../src-ts/adapters/langchain'
import { answer as openaiAnswer } from '../src-ts/adapters/openai'
import { ToolGate, ToolGateError, type CallContext, type TurnReport } from '../src-ts/index'
import { ADAPTER_CONFIG, CHAT_TURN, MESSAGE_TURN, RESPONSES_TURN } from './helpers/turns'
import { anthropicAt, openaiAt } from './helpers/sdk-clients'
import { startUpstream, type Upstream } from './helpers/upstream'

const gate = new ToolGate(ADAPTER_CONFIG)
const ana: CallContext = { subject: 'ana', roles: ['analyst'] }

let upstream: Upstream
let openai: OpenAI
let anthropic: Anthropic
beforeAll(async () => {
  upstream = await startUpstream({ chat: CHAT_TURN, messages: MESSAGE_TURN, responses: RESPONSES_TURN })
  openai = openaiAt(upstream.origin)
  anthropic = anthropicAt(upstream.origin)
})
afterAll(() => upstream.close())

const code = (f: () => unknown): string | undefined => {
  try {
    f()
  } catch (err) {
    if (err instanceof ToolGateError) return `${err.code}: ${err.message}`
    throw err
  }
  return undefined
}
const refusalOf = (report: TurnReport, callId: string) => report.calls.find((c) => c.callId === callId)!.message!

describe('types', () => {
  it('each answer is typed as the message type of its API', () => {
    expectTypeOf(openaiAnswer(gate.guard(CHAT_TURN, { ...ana, dialect: 'openai' }), { call_a: 'x', call_b: 'y' })).toEqualTypeOf<OpenAI.Chat.Completions.ChatCompletionToolMessageParam[]>()
    expectTypeOf(openaiAnswer(gate.guard(RESPONSES_TURN, { ...ana, dialect: 'openai-responses' }), { call_1: 'x', call_2: 'y' })).toEqualTypeOf<OpenAI.Responses.ResponseInputItem[]>()
    expectTypeOf(anthropicAnswer).returns.toEqualTypeOf<Anthropic.Messages.MessageParam | undefined>()
    expectTypeOf(langchainAnswer).returns.toEqualTypeOf<ToolMessage[]>()
    // a report of another dialect does not type-check
    // @ts-expect-error an anthropic report is no openai report
    expect(() => openaiAnswer(gate.guard(MESSAGE_TURN, { ...ana, dialect: 'anthropic' }), {})).toThrow(ToolGateError)
  })
})

describe('openai Chat Completions', () => {
  it('one tool message per call, in call order; the follow-up is accepted by the API', async () => {
    const user = { role: 'user', content: 'go' } as const
    const res = await openai.chat.completions.create({ model: 'gpt-4.1', messages: [user] })
    const report = gate.guard(res, { ...ana, dialect: 'openai' })
    // a result for the refused send_email (the host ran it anyway, or made it up) never replaces the refusal
    const messages = openaiAnswer(report, { call_a: 'rust in action', call_b: [{ type: 'text', text: 'Paris: sunny' }], call_c: 'SENT' })
    expect(messages.map((m) => m.tool_call_id)).toEqual(['call_a', 'call_b', 'call_c', 'call_d', 'call_e'])
    expect(messages[0]).toEqual({ role: 'tool', tool_call_id: 'call_a', content: 'rust in action' })
    expect(messages[1].content).toEqual([{ type: 'text', text: 'Paris: sunny' }])
    expect(messages[2].content).toBe(refusalOf(report, 'call_c'))
    expect(JSON.stringify(messages)).not.toContain('SENT')
    expect(messages.slice(2)).toEqual(report.feedback)
    const assistant = (report.payload as OpenAI.Chat.Completions.ChatCompletion).choices[0].message
    const done = await openai.chat.completions.create({ model: 'gpt-4.1', messages: [user, assistant, ...messages] })
    expect(done.choices[0].message.content).toBe('All tool results received.')
  })

  it('a missing result names the call; a result for no call of the turn, a made-up report and another dialect are refused', () => {
    const report = gate.guard(CHAT_TURN, { ...ana, dialect: 'openai' })
    expect(code(() => openaiAnswer(report, { call_a: 'x' }))).toMatch(/^E_CONFIG: .*no result for the allowed call call_b \(`get_weather`\)/)
    expect(code(() => openaiAnswer(report, new Map([['call_a', 'x'], ['call_b', 'y'], ['call_zz', 'z']])))).toMatch(/^E_CONFIG: .*`call_zz`.*no call of this turn/)
    expect(code(() => openaiAnswer(report, new Map([['call_a', 'x'], ['call_b', 'y']])))).toBeUndefined()
    expect(code(() => openaiAnswer({ ...report }, { call_a: 'x', call_b: 'y' }))).toMatch(/^E_CONFIG: .*TurnReport/)
    expect(code(() => openaiAnswer(report, { call_a: 'x', call_b: { hits: 1 } as never }))).toMatch(/^E_CONFIG: .*call_b.*string/)
    const other = gate.guard(MESSAGE_TURN, { ...ana, dialect: 'anthropic' })
    expect(code(() => openaiAnswer(other as never, {}))).toMatch(/^E_DIALECT/)
    // keys are own keys only: a prototype key is no result
    expect(code(() => openaiAnswer(report, Object.assign(Object.create({ call_b: 'inherited' }) as object, { call_a: 'x' })))).toMatch(/no result for the allowed call call_b/)
  })
})

describe('openai Responses', () => {
  it('one output item per call, in call order; the follow-up is accepted by the API', async () => {
    const res = await openai.responses.create({ model: 'gpt-4.1', input: 'go' })
    const report = gate.guard(res, { ...ana, dialect: 'openai-responses' })
    const items = openaiAnswer(report, { call_1: 'rust in action', call_2: 'Paris: sunny', call_3: 'SENT' })
    expect(items.map((i) => (i as { call_id: string }).call_id)).toEqual(['call_1', 'call_2', 'call_3', 'call_4', 'call_5'])
    expect(items[1]).toEqual({ type: 'function_call_output', call_id: 'call_2', output: 'Paris: sunny' })
    expect(items.slice(2)).toEqual(report.feedback)
    const output = (report.payload as OpenAI.Responses.Response).output as OpenAI.Responses.ResponseInputItem[]
    const done = await openai.responses.create({ model: 'gpt-4.1', input: [{ role: 'user', content: 'go' }, ...output, ...items] })
    expect(done.output_text).toBe('All tool results received.')
  })

  it('a whole answer item is taken as given (call_id filled in); one for another call is refused', () => {
    const report = gate.guard(RESPONSES_TURN, { ...ana, dialect: 'openai-responses' })
    const items = openaiAnswer(report, { call_1: { type: 'function_call_output', output: 'x' }, call_2: 'y' })
    expect(items[0]).toEqual({ type: 'function_call_output', call_id: 'call_1', output: 'x' })
    expect(code(() => openaiAnswer(report, { call_1: { type: 'function_call_output', call_id: 'call_9', output: 'x' }, call_2: 'y' }))).toMatch(/^E_CONFIG: .*call_9/)
  })
})

describe('anthropic', () => {
  it('ONE user message with every tool_result block, in call order; refusals is_error; the follow-up is accepted by the API', async () => {
    const user = { role: 'user', content: 'go' } as const
    const msg = await anthropic.messages.create({ model: 'claude-sonnet-5-5', max_tokens: 100, messages: [user] })
    const report = gate.guard(msg, { ...ana, dialect: 'anthropic' })
    const reply = anthropicAnswer(report, {
      toolu_a: 'rust in action',
      toolu_b: { type: 'tool_result', content: 'weather service down', is_error: true },
      toolu_c: 'SENT',
    })!
    expect(reply.role).toBe('user')
    const blocks = reply.content as Anthropic.Messages.ToolResultBlockParam[]
    expect(blocks.map((b) => [b.tool_use_id, b.is_error ?? false])).toEqual([
      ['toolu_a', false],
      ['toolu_b', true],
      ['toolu_c', true],
      ['toolu_d', true],
      ['toolu_e', true],
    ])
    expect(blocks[2].content).toBe(refusalOf(report, 'toolu_c'))
    expect(blocks.slice(2)).toEqual((report.feedback[0] as { content: unknown[] }).content)
    const assistant = { role: 'assistant' as const, content: (report.payload as Anthropic.Messages.Message).content }
    const done = await anthropic.messages.create({ model: 'claude-sonnet-5-5', max_tokens: 100, messages: [user, assistant, reply] })
    expect(done.content[0]).toMatchObject({ type: 'text', text: 'All tool results received.' })
  })

  it('a turn without calls has no answer; a missing result names the call', () => {
    const text = { id: 'm', type: 'message', role: 'assistant', content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn' }
    expect(anthropicAnswer(gate.guard(text, { ...ana, dialect: 'anthropic' }), {})).toBeUndefined()
    expect(code(() => anthropicAnswer(gate.guard(MESSAGE_TURN, { ...ana, dialect: 'anthropic' }), { toolu_a: 'x' }))).toMatch(/toolu_b \(`get_weather`\)/)
  })
})

describe('gemini', () => {
  const response = (withIds: boolean) => ({
    candidates: [{
      content: {
        role: 'model',
        parts: [
          { text: 'On it.' },
          { functionCall: { ...(withIds ? { id: 'fc-a' } : {}), name: 'search', args: { query: 'rust' } } },
          { functionCall: { ...(withIds ? { id: 'fc-b' } : {}), name: 'send_email', args: { to: 'ceo@example.com' } } },
          { functionCall: { ...(withIds ? { id: 'fc-c' } : {}), name: 'get_weather', args: { city: 'Paris', days: '3' } } },
        ],
      },
      finishReason: 'STOP',
    }],
  })

  it('ONE content of functionResponse parts, in call order, ids echoed', () => {
    const report = gate.guard(response(true), { ...ana, dialect: 'gemini' })
    const content = geminiAnswer(report, { 'fc-a': { output: ['rust in action'] }, 'fc-b': 'SENT', 'fc-c': 'sunny' })!
    expect(content).toEqual({
      role: 'user',
      parts: [
        { functionResponse: { id: 'fc-a', name: 'search', response: { output: ['rust in action'] } } },
        { functionResponse: { id: 'fc-b', name: 'send_email', response: { error: refusalOf(report, 'fc-b') } } },
        { functionResponse: { id: 'fc-c', name: 'get_weather', response: { output: 'sunny' } } },
      ],
    })
  })

  it('calls without ids are keyed by position and answered without an id', () => {
    const report = gate.guard(response(false), { ...ana, dialect: 'gemini' })
    expect(report.calls.map((c) => c.callId)).toEqual(['0', '1', '2'])
    const content = geminiAnswer(report, { 0: 'hits', 2: { temperature: 21 } })!
    expect(content.parts.map((p) => (p as { functionResponse: unknown }).functionResponse)).toEqual([
      { name: 'search', response: { output: 'hits' } },
      { name: 'send_email', response: { error: refusalOf(report, '1') } },
      { name: 'get_weather', response: { temperature: 21 } },
    ])
    expect(code(() => geminiAnswer(report, { 0: 'hits' }))).toMatch(/^E_CONFIG: .*call 2 \(`get_weather`\)/)
  })
})

describe('langchain', () => {
  it('one ToolMessage per call, in call order, invalid_tool_calls answered as refusals', () => {
    const ai = new AIMessage({
      content: '',
      tool_calls: [
        { id: 'lc_a', name: 'search', args: { query: 'rust' }, type: 'tool_call' },
        { id: 'lc_b', name: 'send_email', args: { to: 'ceo@example.com' }, type: 'tool_call' },
        { id: 'lc_c', name: 'get_weather', args: { city: 'Paris', days: '3' }, type: 'tool_call' },
      ],
      invalid_tool_calls: [{ id: 'lc_d', name: 'search', args: '{"query":', error: 'not JSON', type: 'invalid_tool_call' }],
    })
    const report = gate.guard(ai, { ...ana, dialect: 'langchain' })
    const out = langchainAnswer(report, { lc_a: 'rust in action', lc_b: 'SENT', lc_c: [{ type: 'text', text: 'sunny' }] })
    expect(out.every((m) => m instanceof ToolMessage)).toBe(true)
    expect(out.map((m) => [m.tool_call_id, m.status ?? 'success'])).toEqual([
      ['lc_a', 'success'],
      ['lc_b', 'error'],
      ['lc_c', 'success'],
      ['lc_d', 'error'],
    ])
    expect(out[1].content).toBe(refusalOf(report, 'lc_b'))
    expect(out[2].content).toEqual([{ type: 'text', text: 'sunny' }])
    expect(out[0].name).toBe('search')
    expect(code(() => langchainAnswer(report, { lc_a: new ToolMessage({ content: 'x', tool_call_id: 'lc_c' }), lc_c: 'y' }))).toMatch(/^E_CONFIG: .*lc_c/)
  })
})

describe('ai-sdk', () => {
  it('ONE tool message with a tool-result part per call, in call order, valid for the AI SDK', () => {
    const turn = {
      role: 'assistant',
      content: [
        { type: 'tool-call', toolCallId: 't1', toolName: 'search', input: { query: 'rust' } },
        { type: 'tool-call', toolCallId: 't2', toolName: 'send_email', input: { to: 'ceo@example.com' } },
        { type: 'tool-call', toolCallId: 't3', toolName: 'get_weather', input: { city: 'Paris' } },
      ],
    }
    const report = gate.guard(turn, { ...ana, dialect: 'ai-sdk' })
    const msg = aiSdkAnswer(report, { t1: { hits: ['rust in action'] }, t2: 'SENT', t3: 'sunny' })!
    expect(msg.content).toEqual([
      { type: 'tool-result', toolCallId: 't1', toolName: 'search', output: { type: 'json', value: { hits: ['rust in action'] } } },
      { type: 'tool-result', toolCallId: 't2', toolName: 'send_email', output: { type: 'error-text', value: refusalOf(report, 't2') } },
      { type: 'tool-result', toolCallId: 't3', toolName: 'get_weather', output: { type: 'text', value: 'sunny' } },
    ])
    expect(modelMessageSchema.safeParse(msg).success).toBe(true)
  })
})
