// toolgate/ai-sdk against the real `ai` package (7.0.173), offline: generateText and streamText
// drive their multi-step tool loop over the AI SDK's own MockLanguageModelV4, through the real
// native addon. For each path: an allowed call runs, a repairable call runs with the repaired
// arguments, a refused call never reaches its tool and the model reads the gate's refusal as the
// call's tool result, and the next model request answers every call id exactly once (checked
// with the loopback upstream's OpenAI and Anthropic pairing rules).
import { describe, expect, expectTypeOf, it } from 'vitest'
import { z } from 'zod'

import {
  generateText,
  modelMessageSchema,
  simulateReadableStream,
  stepCountIs,
  streamText,
  tool,
  wrapLanguageModel,
  type LanguageModelMiddleware,
  type ToolCallRepairFunction,
  type ToolSet,
} from 'ai'
import { MockLanguageModelV4 } from 'ai/test'

import { gateRepairToolCall, gateTools, toolgateMiddleware, ToolRefusedError, type AiSdkVerdictInfo } from '../src-ts/adapters/ai-sdk'
import { ToolGate, ToolGateError, type CallContext, type Verdict } from '../src-ts/index'
import { normalizeToolSchemas } from '../src-ts/schema-input'
import { streamTurn, usage } from './helpers/ai-sdk-turns'
import { anthropicPairingError, chatPairingError } from './helpers/upstream'
import { runExample } from './helpers/tsx-child'

// One tool set, declared once: the zod schemas the AI SDK tools parse with are the gate's too.
const weatherInput = z.object({ city: z.string(), days: z.number().int().min(1).max(7).optional(), unit: z.enum(['celsius', 'fahrenheit']).optional() })
const deleteInput = z.object({ path: z.string() })
const emailInput = z.object({ to: z.string(), body: z.string() })
const pathInput = z.object({ path: z.string().refine((p) => !p.includes('..'), 'no parent segments') })

const config = normalizeToolSchemas({
  tools: [
    { name: 'get_weather', inputSchema: weatherInput },
    { name: 'delete_file', inputSchema: deleteInput, destructive: true },
    { name: 'send_email', inputSchema: emailInput, writes: true },
    { name: 'read_file', inputSchema: pathInput },
  ],
  policy: {
    rules: [
      { effect: 'allow', tools: ['get_weather', 'send_email', 'read_file'] },
      { effect: 'allow', roles: ['admin'], tools: ['delete_file'] },
    ],
  },
})

const visitor: CallContext = { subject: 'ana', session: 's-ana' }
const admin: CallContext = { subject: 'root', roles: ['admin'], session: 's-root' }

type Doc = { type: 'tool-call'; toolCallId: string; toolName: string; input: string } | { type: 'text'; text: string }

function toolTurn(...content: Doc[]) {
  return { content, finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' }, usage, warnings: [] }
}
function textTurn(text: string) {
  return { content: [{ type: 'text' as const, text }], finishReason: { unified: 'stop' as const, raw: 'stop' }, usage, warnings: [] }
}
const call = (toolCallId: string, toolName: string, input: string): Doc => ({ type: 'tool-call', toolCallId, toolName, input })

/** The AI SDK tools of the scenario, recording what ran. `shell` is known to the SDK but not declared to the gate. */
function makeTools() {
  const ran: [string, unknown][] = []
  const tools = {
    get_weather: tool({
      description: 'Weather for a city',
      inputSchema: weatherInput,
      execute: async (input) => {
        ran.push(['get_weather', input])
        return { forecast: 'sunny', ...input }
      },
    }),
    delete_file: tool({
      inputSchema: deleteInput,
      execute: async (input) => {
        ran.push(['delete_file', input])
        return 'deleted'
      },
    }),
    send_email: tool({
      inputSchema: emailInput,
      execute: async (input) => {
        ran.push(['send_email', input])
        return 'sent'
      },
    }),
    read_file: tool({
      inputSchema: pathInput,
      execute: async (input) => {
        ran.push(['read_file', input])
        return 'contents'
      },
    }),
    shell: tool({
      inputSchema: z.object({ cmd: z.string() }),
      execute: async (input) => {
        ran.push(['shell', input])
        return 'ran'
      },
    }),
  }
  return { tools, ran }
}

/** Records every verdict told to `onVerdict`. */
function verdictLog() {
  const seen: { verdict: Verdict; info: AiSdkVerdictInfo }[] = []
  return { seen, onVerdict: (verdict: Verdict, info: AiSdkVerdictInfo) => void seen.push({ verdict, info }) }
}

type PromptMessage = MockLanguageModelV4['doGenerateCalls'][number]['prompt'][number]
type Part = { type: string; [k: string]: unknown }

/** The tool-result parts a model request carries, by call id. */
function toolResults(prompt: PromptMessage[]): Map<string, Part[]> {
  const out = new Map<string, Part[]>()
  for (const m of prompt) {
    if (m.role !== 'tool') continue
    for (const p of m.content as unknown as Part[]) {
      if (p.type !== 'tool-result') continue
      const id = p.toolCallId as string
      out.set(id, [...(out.get(id) ?? []), p])
    }
  }
  return out
}

/**
 * A model request as OpenAI Chat Completions and as the Anthropic Messages API would receive it
 * (the conversion the AI SDK's own providers make), checked with the loopback upstream's pairing
 * rules: every tool call answered exactly once, right after its turn.
 */
function expectAcceptedByProviders(prompt: PromptMessage[]): void {
  const chat: unknown[] = []
  const anthropic: { role: string; content: unknown[] }[] = []
  for (const m of prompt) {
    if (m.role === 'system') {
      chat.push({ role: 'system', content: m.content })
      continue
    }
    const parts = m.content as unknown as Part[]
    if (m.role === 'user') {
      const text = parts.map((p) => (p.type === 'text' ? (p.text as string) : '')).join('')
      chat.push({ role: 'user', content: text })
      anthropic.push({ role: 'user', content: [{ type: 'text', text }] })
    } else if (m.role === 'assistant') {
      const text = parts.filter((p) => p.type === 'text').map((p) => p.text as string).join('')
      const calls = parts.filter((p) => p.type === 'tool-call')
      chat.push({
        role: 'assistant',
        content: text === '' ? null : text,
        ...(calls.length > 0 ? { tool_calls: calls.map((c) => ({ id: c.toolCallId, type: 'function', function: { name: c.toolName, arguments: JSON.stringify(c.input) } })) } : {}),
      })
      anthropic.push({
        role: 'assistant',
        content: [...(text === '' ? [] : [{ type: 'text', text }]), ...calls.map((c) => ({ type: 'tool_use', id: c.toolCallId, name: c.toolName, input: c.input }))],
      })
    } else if (m.role === 'tool') {
      const results = parts.filter((p) => p.type === 'tool-result')
      for (const r of results) chat.push({ role: 'tool', tool_call_id: r.toolCallId, content: JSON.stringify(r.output) })
      anthropic.push({ role: 'user', content: results.map((r) => ({ type: 'tool_result', tool_use_id: r.toolCallId, content: JSON.stringify(r.output) })) })
    }
  }
  expect(chatPairingError(chat)).toBeUndefined()
  expect(anthropicPairingError(anthropic)).toBeUndefined()
}

/** The gate's own `ai-sdk` feedback part for a refused call of `turn` (what `guard` would send back). */
function feedbackPart(gate: ToolGate, turn: Doc[], callId: string, ctx: CallContext): Part {
  const report = gate.guard({ content: turn }, { dialect: 'ai-sdk', ...ctx })
  const part = report.feedback.flatMap((m) => m.content).find((p) => p.toolCallId === callId)
  expect(part, `no feedback for ${callId}`).toBeDefined()
  return part as unknown as Part
}

// Compile-time (checked by `npm run typecheck`): the caller's types are kept.
expectTypeOf(gateTools(makeTools().tools, new ToolGate({ tools: [] }))).toEqualTypeOf<ReturnType<typeof makeTools>['tools']>()
expectTypeOf(toolgateMiddleware).returns.toEqualTypeOf<LanguageModelMiddleware>()
expectTypeOf(gateRepairToolCall<ReturnType<typeof makeTools>['tools']>).returns.toEqualTypeOf<ToolCallRepairFunction<ReturnType<typeof makeTools>['tools']>>()

describe('generateText with the middleware and gated tools', () => {
  it('runs allowed and repaired calls, answers refused ones with the gate’s message, and the next request is accepted', async () => {
    const gate = new ToolGate(config)
    const turn1 = [
      { type: 'text' as const, text: 'Checking.' },
      call('c1', 'get_weather', '{"city":"Paris","days":"2","unit":"CELSIUS"}'),
      call('c2', 'get_weather', '{"city":"Oslo"}'),
      call('c3', 'delete_file', '{"path":"/etc/passwd"}'),
      call('c4', 'shell', '{"cmd":"rm -rf /"}'),
    ]
    const mock = new MockLanguageModelV4({ doGenerate: [toolTurn(...turn1), textTurn('Paris and Oslo: sunny. I may not delete files or run commands.')] })
    const log = verdictLog()
    const model = wrapLanguageModel({ model: mock, middleware: toolgateMiddleware(gate, visitor, { onVerdict: log.onVerdict }) })
    const { tools, ran } = makeTools()

    const result = await generateText({ model, tools: gateTools(tools, gate, visitor), stopWhen: stepCountIs(3), prompt: 'Weather in Paris and Oslo, then clean up.' })

    expect(result.text).toBe('Paris and Oslo: sunny. I may not delete files or run commands.')
    // allowed: c2 as sent, c1 with the gate's repairs (zod alone would have refused "2"); the refused never ran
    expect(ran).toEqual([
      ['get_weather', { city: 'Paris', days: 2, unit: 'celsius' }],
      ['get_weather', { city: 'Oslo' }],
    ])
    expect(log.seen.map(({ verdict, info }) => [info.callId, info.source, verdict.outcome, verdict.reason])).toEqual([
      ['c1', 'generate', 'repaired', undefined],
      ['c2', 'generate', 'passed', undefined],
      ['c3', 'generate', 'denied', 'no_rule'],
      ['c4', 'generate', 'rejected', 'unknown_tool'],
    ])
    expect(log.seen[0].info.context).toEqual(visitor)

    // tool-list filtering: the model was offered only what this caller could call
    expect(mock.doGenerateCalls[0].tools!.map((t) => t.name)).toEqual(['get_weather', 'send_email', 'read_file'])
    // and the marker gateTools sets never reaches the provider
    expect(JSON.stringify(mock.doGenerateCalls[0].tools)).not.toContain('toolgate')

    // the second request: every id answered once, refusals as the gate's own ai-sdk feedback
    const second = mock.doGenerateCalls[1].prompt
    const results = toolResults(second)
    expect([...results.keys()].sort()).toEqual(['c1', 'c2', 'c3', 'c4'])
    for (const parts of results.values()) expect(parts).toHaveLength(1)
    for (const id of ['c3', 'c4']) {
      expect(results.get(id)![0]).toEqual(feedbackPart(new ToolGate(config), turn1, id, visitor))
    }
    expect(results.get('c1')![0].output).toEqual({ type: 'json', value: { forecast: 'sunny', city: 'Paris', days: 2, unit: 'celsius' } })
    expectAcceptedByProviders(second)
    for (const m of result.response.messages) modelMessageSchema.parse(m)

    // the host sees the refusal as a tool error carrying the verdict's facts
    const errors = result.steps[0].content.filter((p) => p.type === 'tool-error')
    expect(errors.map((e) => e.toolCallId)).toEqual(['c3', 'c4'])
    expect(errors[0].error).toBeInstanceOf(ToolRefusedError)
    expect(errors[0].error).toMatchObject({ tool: 'delete_file', callId: 'c3', outcome: 'denied', reason: 'no_rule' })
  })

  it('offers and runs what the caller’s own context allows (a context function, asked per request)', async () => {
    const gate = new ToolGate(config)
    let who: CallContext = visitor
    let asked = 0
    const ctx = () => (asked++, who)
    const mock = new MockLanguageModelV4({ doGenerate: [toolTurn(call('d1', 'delete_file', '{"path":"/tmp/x"}')), textTurn('Deleted.')] })
    const model = wrapLanguageModel({ model: mock, middleware: toolgateMiddleware(gate, ctx) })
    const { tools, ran } = makeTools()
    who = admin
    const result = await generateText({ model, tools: gateTools(tools, gate, ctx), stopWhen: stepCountIs(2), prompt: 'Delete /tmp/x' })
    expect(result.text).toBe('Deleted.')
    expect(mock.doGenerateCalls[0].tools!.map((t) => t.name)).toEqual(['get_weather', 'delete_file', 'send_email', 'read_file'])
    expect(ran).toEqual([['delete_file', { path: '/tmp/x' }]])
    // once per model call (two steps), once per tool call
    expect(asked).toBe(3)
  })

  it('a write needing confirmation is a refusal for this turn; the token reaches only onVerdict, and gate.confirm runs it', async () => {
    const gate = new ToolGate(config)
    const turn1 = [call('m1', 'send_email', '{"to":"bob@example.com","body":"hi"}')]
    const mock = new MockLanguageModelV4({ doGenerate: [toolTurn(...turn1), textTurn('I asked for your confirmation.')] })
    const log = verdictLog()
    const model = wrapLanguageModel({ model: mock, middleware: toolgateMiddleware(gate, visitor, { onVerdict: log.onVerdict }) })
    const { tools, ran } = makeTools()
    const result = await generateText({ model, tools: gateTools(tools, gate, visitor), stopWhen: stepCountIs(2), prompt: 'Mail Bob' })

    expect(ran).toEqual([])
    const verdict = log.seen[0].verdict
    expect(verdict.outcome).toBe('confirm')
    const token = verdict.confirmation!.token
    const second = mock.doGenerateCalls[1].prompt
    expect(toolResults(second).get('m1')).toEqual([{ type: 'tool-result', toolCallId: 'm1', toolName: 'send_email', output: { type: 'error-text', value: verdict.message } }])
    // nothing the model sees, nor anything the host keeps of the run, holds the token
    expect(JSON.stringify(second)).not.toContain(token)
    expect(JSON.stringify(result.response.messages)).not.toContain(token)
    expect(JSON.stringify(result.steps.map((s) => s.content))).not.toContain(token)

    // the host asks the user, then confirms: the same call, allowed, with its exact arguments
    const confirmed = gate.confirm(token, visitor)
    expect(confirmed).toMatchObject({ allowed: true, tool: 'send_email', arguments: { to: 'bob@example.com', body: 'hi' } })
  })

  it('a refinement JSON Schema cannot carry: the gate allows, the tool’s own schema still refuses', async () => {
    const gate = new ToolGate(config)
    const mock = new MockLanguageModelV4({ doGenerate: [toolTurn(call('r1', 'read_file', '{"path":"../secrets"}')), textTurn('Cannot read that.')] })
    const log = verdictLog()
    const model = wrapLanguageModel({ model: mock, middleware: toolgateMiddleware(gate, visitor, { onVerdict: log.onVerdict }) })
    const { tools, ran } = makeTools()
    await generateText({
      model,
      tools: gateTools(tools, gate, visitor),
      experimental_repairToolCall: gateRepairToolCall(gate, visitor),
      stopWhen: stepCountIs(2),
      prompt: 'Read ../secrets',
    })
    expect(log.seen.map((s) => s.verdict.outcome)).toEqual(['passed'])
    expect(ran).toEqual([])
    const answer = toolResults(mock.doGenerateCalls[1].prompt).get('r1')!
    expect(answer).toHaveLength(1)
    expect(JSON.stringify(answer[0].output)).toContain('no parent segments')
    expectAcceptedByProviders(mock.doGenerateCalls[1].prompt)
  })

  it('refuses to wrap a model whose tools are not gated: the AI SDK would run refused calls', async () => {
    const gate = new ToolGate(config)
    const mock = new MockLanguageModelV4({ doGenerate: [textTurn('never')] })
    const model = wrapLanguageModel({ model: mock, middleware: toolgateMiddleware(gate, visitor) })
    const { tools } = makeTools()
    const run = generateText({ model, tools, prompt: 'hi' })
    await expect(run).rejects.toBeInstanceOf(ToolGateError)
    await expect(run).rejects.toMatchObject({ code: 'E_CONFIG', message: expect.stringContaining('`get_weather`, `delete_file`, `send_email`, `read_file`, `shell` did not come from gateTools') })
    expect(mock.doGenerateCalls).toHaveLength(0)
    // without tools there is nothing to run, and nothing to check
    await expect(generateText({ model, prompt: 'hi' })).resolves.toMatchObject({ text: 'never' })
  })
})

describe('streamText with the middleware and gated tools', () => {
  it('streams text live, runs the repaired call, answers the refused one, and the next request is accepted', async () => {
    const gate = new ToolGate(config)
    const mock = new MockLanguageModelV4({
      doStream: [
        streamTurn('On it.', [
          { id: 's1', name: 'get_weather', input: '{"city":"Rome","days":"3"}' },
          { id: 's2', name: 'delete_file', input: '{"path":"/var"}' },
        ]),
        streamTurn('Rome: sunny. Deleting is not allowed.', []),
      ],
    })
    const log = verdictLog()
    const model = wrapLanguageModel({ model: mock, middleware: toolgateMiddleware(gate, visitor, { onVerdict: log.onVerdict }) })
    const { tools, ran } = makeTools()
    const result = streamText({ model, tools: gateTools(tools, gate, visitor), stopWhen: stepCountIs(3), prompt: 'Weather in Rome, then delete /var' })

    const parts: Part[] = []
    for await (const p of result.fullStream) parts.push(p as Part)
    expect(await result.text).toBe('Rome: sunny. Deleting is not allowed.')
    expect((await result.steps).map((s) => s.text)).toEqual(['On it.', 'Rome: sunny. Deleting is not allowed.'])
    expect(ran).toEqual([['get_weather', { city: 'Rome', days: 3 }]])
    expect(log.seen.map(({ verdict, info }) => [info.callId, info.source, verdict.outcome])).toEqual([
      ['s1', 'stream', 'repaired'],
      ['s2', 'stream', 'denied'],
    ])
    // text streamed before the calls were decided; the repaired call carried its repaired input
    const types = parts.map((p) => p.type)
    expect(types.indexOf('text-delta')).toBeLessThan(types.indexOf('tool-call'))
    expect(parts.filter((p) => p.type === 'tool-call').map((p) => [p.toolCallId, p.input])).toEqual([
      ['s1', { city: 'Rome', days: 3 }],
      ['s2', { path: '/var' }],
    ])
    const refusal = parts.find((p) => p.type === 'tool-error')!
    expect(refusal).toMatchObject({ toolCallId: 's2', error: expect.any(ToolRefusedError) })
    // the stream's own tool list was filtered too
    expect(mock.doStreamCalls[0].tools!.map((t) => t.name)).toEqual(['get_weather', 'send_email', 'read_file'])

    const second = mock.doStreamCalls[1].prompt
    const results = toolResults(second)
    expect([...results.keys()].sort()).toEqual(['s1', 's2'])
    expect(results.get('s2')).toEqual([{ type: 'tool-result', toolCallId: 's2', toolName: 'delete_file', output: { type: 'error-text', value: log.seen[1].verdict.message } }])
    expectAcceptedByProviders(second)
  })

  it('a stream cut off before its finish part fails instead of leaving calls undecided', async () => {
    const gate = new ToolGate(config)
    const cut = streamTurn('', [{ id: 'x1', name: 'get_weather', input: '{"city":"Rome"}' }])
    const chunks: unknown[] = []
    const reader = cut.stream.getReader()
    for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value)
    chunks.pop() // no finish
    chunks.splice(chunks.length - 1) // and the tool-call part never arrived either
    const mock = new MockLanguageModelV4({ doStream: { stream: simulateReadableStream({ chunks: chunks as never[] }) } })
    const model = wrapLanguageModel({ model: mock, middleware: toolgateMiddleware(gate, visitor) })
    const { tools, ran } = makeTools()
    const result = streamText({ model, tools: gateTools(tools, gate, visitor), prompt: 'go' })
    const consume = async () => {
      for await (const _ of result.fullStream) void _
    }
    // like a broken connection: the stream fails, and so does everything waiting for the turn
    await expect(consume()).rejects.toMatchObject({ code: 'E_PAYLOAD', message: expect.stringContaining('without its `finish` part') })
    await expect(result.text).rejects.toBeInstanceOf(ToolGateError)
    expect(ran).toEqual([])
  })

  it('a gate with plugged engines cannot stream: E_ASYNC before the request is sent; generate awaits the engines', async () => {
    const gate = new ToolGate(config, { engines: [async () => 'delegate' as const] })
    const mock = new MockLanguageModelV4({ doStream: streamTurn('x', []), doGenerate: [toolTurn(call('e1', 'get_weather', '{"city":"Rome"}')), textTurn('ok')] })
    const model = wrapLanguageModel({ model: mock, middleware: toolgateMiddleware(gate, visitor) })
    const { tools, ran } = makeTools()
    const errors: unknown[] = []
    const streamed = streamText({ model, tools: gateTools(tools, gate, visitor), prompt: 'go', onError: ({ error }) => void errors.push(error) })
    for await (const _ of streamed.fullStream) void _
    expect(errors[0]).toMatchObject({ code: 'E_ASYNC' })
    expect(mock.doStreamCalls).toHaveLength(0)
    const generated = await generateText({ model, tools: gateTools(tools, gate, visitor), stopWhen: stepCountIs(2), prompt: 'go' })
    expect(generated.text).toBe('ok')
    expect(ran).toEqual([['get_weather', { city: 'Rome' }]])
  })
})

describe('gated tools and the repair function, without the middleware', () => {
  it('the repair function hands rejected arguments to the gate; gated tools decide the rest', async () => {
    const gate = new ToolGate(config)
    const turn1 = [
      call('t1', 'get_weather', '{"city":"Lima","days":"4"}'), // zod rejects "4": repaired by the gate
      call('t2', 'delete_file', '{"path":"/srv"}'), // zod accepts: denied at the tool
      call('t3', 'get_weather', '{"town":"Lima"}'), // both reject
    ]
    const mock = new MockLanguageModelV4({ doGenerate: [toolTurn(...turn1), textTurn('done')] })
    const log = verdictLog()
    const { tools, ran } = makeTools()
    const result = await generateText({
      model: mock,
      tools: gateTools(tools, gate, visitor, { onVerdict: log.onVerdict }),
      experimental_repairToolCall: gateRepairToolCall(gate, visitor, { onVerdict: log.onVerdict }),
      stopWhen: stepCountIs(2),
      prompt: 'go',
    })
    expect(result.text).toBe('done')
    expect(ran).toEqual([['get_weather', { city: 'Lima', days: 4 }]])
    // each call decided once: t1 by the repair function (and not again by its tool)
    expect(log.seen.map(({ verdict, info }) => [info.callId, info.source, verdict.outcome])).toEqual([
      ['t1', 'repair', 'repaired'],
      ['t3', 'repair', 'rejected'],
      ['t2', 'tool', 'denied'],
    ])
    const results = toolResults(mock.doGenerateCalls[1].prompt)
    expect([...results.keys()].sort()).toEqual(['t1', 't2', 't3'])
    const byId = Object.fromEntries(log.seen.map((s) => [s.info.callId, s.verdict]))
    expect(results.get('t2')![0].output).toEqual({ type: 'error-text', value: byId.t2.message })
    // a call the AI SDK itself could not parse is answered by the AI SDK, framing the gate's message
    expect(results.get('t3')![0].output).toEqual({ type: 'error-text', value: `AI_ToolCallRepairError: Error repairing tool call: ${byId.t3.message}` })
    expectAcceptedByProviders(mock.doGenerateCalls[1].prompt)
  })

  it('alone, a gated tool runs repairs through the tool’s own schema again (pins reach the tool)', async () => {
    const pinned = new ToolGate(
      normalizeToolSchemas({ tools: [{ name: 'list_orders', inputSchema: z.object({ owner: z.string(), status: z.enum(['open', 'closed']).default('open') }), args: { owner: { pin: 'subject' } } }] }),
    )
    const got: unknown[] = []
    const tools = gateTools(
      { list_orders: tool({ inputSchema: z.object({ owner: z.string(), status: z.enum(['open', 'closed']).default('open') }), execute: async (input) => (got.push(input), 'ok') }) },
      pinned,
      { subject: 'ana' },
    )
    const mock = new MockLanguageModelV4({ doGenerate: [toolTurn(call('o1', 'list_orders', '{"owner":"bob"}')), textTurn('done')] })
    await generateText({ model: mock, tools, stopWhen: stepCountIs(2), prompt: 'orders' })
    expect(got).toEqual([{ owner: 'ana', status: 'open' }])
  })

  it('a streaming tool (async function*) keeps streaming its preliminary results', async () => {
    const gate = new ToolGate(config)
    const tools = gateTools(
      {
        get_weather: tool({
          inputSchema: weatherInput,
          async *execute(input) {
            yield { status: 'loading', city: input.city }
            yield { status: 'done', city: input.city }
          },
        }),
      },
      gate,
      visitor,
    )
    const mock = new MockLanguageModelV4({ doStream: [streamTurn('', [{ id: 'p1', name: 'get_weather', input: '{"city":"Rome"}' }]), streamTurn('ok', [])] })
    const result = streamText({ model: mock, tools, stopWhen: stepCountIs(2), prompt: 'go' })
    const outputs: unknown[] = []
    for await (const p of result.fullStream) if (p.type === 'tool-result') outputs.push([p.preliminary === true, p.output])
    expect(outputs).toEqual([
      [true, { status: 'loading', city: 'Rome' }],
      [true, { status: 'done', city: 'Rome' }],
      [false, { status: 'done', city: 'Rome' }],
    ])
  })

  it('the caller’s tool objects are not changed; tools without execute are marked only', () => {
    const gate = new ToolGate(config)
    const { tools } = makeTools()
    const hostRun = { get_weather: tool({ inputSchema: weatherInput }) }
    const before = { ...tools.get_weather }
    const gated = gateTools({ ...tools, ...hostRun }, gate)
    expect(tools.get_weather).toEqual(before)
    expect(gated.get_weather.execute).toBeUndefined()
    expect(gated.get_weather.providerOptions).toEqual({ toolgate: { gated: true } })
    expect(gated.delete_file.execute).not.toBe(tools.delete_file.execute)
  })
})

describe('arguments', () => {
  it('every piece names what is wrong with E_CONFIG', () => {
    const gate = new ToolGate(config)
    const bad = [
      () => toolgateMiddleware({} as ToolGate),
      () => toolgateMiddleware(gate, [] as never),
      () => toolgateMiddleware(gate, visitor, { onVerdit: () => {} } as never),
      () => gateTools(null as unknown as ToolSet, gate),
      () => gateTools({}, gate, visitor, { onVerdict: 'log' } as never),
      () => gateRepairToolCall(gate, 'ana' as never),
    ]
    for (const f of bad) expect(f).toThrow(ToolGateError)
    expect(() => toolgateMiddleware(gate, visitor, { onVerdit: () => {} } as never)).toThrow('toolgateMiddleware: unknown option `onVerdit` (expected onVerdict)')
  })

  it('ToolRefusedError reads as the gate’s message alone, and carries no confirmation token', () => {
    const v: Verdict = { outcome: 'confirm', allowed: false, tool: 'send_email', flags: [], reason: 'confirm_required', message: 'Needs confirmation.', confirmation: { token: 'SECRET', expiresAt: 'x', summary: 's' } }
    const e = new ToolRefusedError(v, 'k1')
    expect(String(e)).toBe('Needs confirmation.')
    expect(JSON.stringify(e)).not.toContain('SECRET')
    expect(JSON.stringify({ ...e })).not.toContain('SECRET')
  })
})

describe('the example', () => {
  it('examples/ai-sdk.ts runs and prints what its comments say', () => {
    const out = runExample('ai-sdk.ts')
    const lines = out.trim().split('\n')
    expect(lines).toEqual([
      'verdict c1 get_weather repaired',
      'verdict c2 delete_file denied (no_rule)',
      'ran get_weather {"city":"Paris","days":2}',
      'c1 answered: {"type":"json","value":{"city":"Paris","days":2,"forecast":"sunny"}}',
      expect.stringMatching(/^c2 answered: \{"type":"error-text","value":".*delete_file.*"\}$/),
      'answer: Paris: sunny for 2 days. I may not delete files.',
    ])
  })
})
