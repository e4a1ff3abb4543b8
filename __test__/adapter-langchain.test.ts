// toolgate/langchain against LangChain.js and LangGraph.js themselves, through the real native
// binding: tools made with `tool()` and zod, LangGraph's own ToolNode and createReactAgent, and a
// StateGraph over MessagesAnnotation driven by a scripted chat model (a BaseChatModel subclass
// that emits tool calls, binds tools, streams, and — like the OpenAI API — refuses a request
// whose tool calls are not each answered exactly once). Offline: no model, no network.
import { describe, expect, expectTypeOf, it } from 'vitest'

import { BaseChatModel, type BindToolsInput } from '@langchain/core/language_models/chat_models'
import { AIMessage, AIMessageChunk, HumanMessage, ToolMessage, type BaseMessage, type ToolCall } from '@langchain/core/messages'
import { ChatGenerationChunk, type ChatResult } from '@langchain/core/outputs'
import type { Runnable, RunnableConfig } from '@langchain/core/runnables'
import { DynamicTool, tool, ToolInputParsingException } from '@langchain/core/tools'
import { convertToOpenAITool } from '@langchain/core/utils/function_calling'
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph'

import { gatedToolNode, gateTool, gateTools, toolsFromLangChain, type GatedToolNode, type LangChainVerdictInfo } from '../src-ts/adapters/langchain'
import { ToolGate, type CallContext, type Verdict } from '../src-ts/index'
import { bodies, fileParams, mailParams, OVERRIDES, POLICY, ran, weatherParams } from './helpers/framework-tools'
import { chatPairingError } from './helpers/upstream'
import { runExample, runScript } from './helpers/tsx-child'
import { thrownToolGateError } from './helpers/thrown'

// `@langchain/langgraph/prebuilt` has no types under this repository's node10 resolution: the
// members used here, written out.
interface Prebuilt {
  ToolNode: new (tools: unknown[]) => Runnable<{ messages: BaseMessage[] }, { messages: ToolMessage[] }>
  createReactAgent: (params: { llm: BaseChatModel; tools: unknown }) => Runnable<{ messages: BaseMessage[] }, { messages: BaseMessage[] }>
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const prebuilt = require('@langchain/langgraph/prebuilt') as Prebuilt
// eslint-disable-next-line @typescript-eslint/no-require-imports
const cjsTools = require('@langchain/core/tools') as { ToolInputParsingException: typeof ToolInputParsingException }

// ---------------------------------------------------------------------------------------------
// Tools, the gate, callers

const getWeather = tool(bodies.get_weather, { name: 'get_weather', description: 'Weather forecast for a city', schema: weatherParams })
const readFile = tool(bodies.read_file, { name: 'read_file', description: 'Read a file', schema: fileParams })
const sendEmail = tool(bodies.send_email, { name: 'send_email', description: 'Send an email', schema: mailParams })
const tools = [getWeather, readFile, sendEmail]

const gate = new ToolGate({ tools: toolsFromLangChain(tools, OVERRIDES), policy: POLICY })

const ana: CallContext = { subject: 'ana', roles: ['analyst'] }
/** The caller from the run's config, as a server would put it there from its auth. */
const fromConfig = (config: RunnableConfig | undefined): CallContext => {
  const user = config?.configurable?.user as { id: string; roles: string[] } | undefined
  return user === undefined ? {} : { subject: user.id, roles: user.roles }
}
const asAna: RunnableConfig = { configurable: { user: { id: 'ana', roles: ['analyst'] } } }

function call(name: string, args: Record<string, unknown>, id: string): ToolCall {
  return { id, name, args, type: 'tool_call' }
}

function record(): { seen: [Verdict, LangChainVerdictInfo][]; onVerdict: (v: Verdict, i: LangChainVerdictInfo) => void } {
  const seen: [Verdict, LangChainVerdictInfo][] = []
  return { seen, onVerdict: (v, i) => void seen.push([v, i]) }
}

// ---------------------------------------------------------------------------------------------
// A scripted chat model

/** The conversation as Chat Completions messages, to check it as the OpenAI API would. */
function asChatCompletions(messages: BaseMessage[]): unknown[] {
  return messages.map((m) => {
    const content = typeof m.content === 'string' ? m.content : JSON.stringify(m.content)
    switch (m.getType()) {
      case 'ai': {
        const ai = m as AIMessage
        const calls = [
          ...(ai.tool_calls ?? []).map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } })),
          ...(ai.invalid_tool_calls ?? []).map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.args ?? '' } })),
        ]
        return calls.length === 0 ? { role: 'assistant', content } : { role: 'assistant', content, tool_calls: calls }
      }
      case 'tool':
        return { role: 'tool', tool_call_id: (m as ToolMessage).tool_call_id, content }
      case 'system':
        return { role: 'system', content }
      default:
        return { role: 'user', content }
    }
  })
}

interface ModelRequest {
  messages: BaseMessage[]
  /** Names of the tools bound for this request. */
  tools: string[]
}

/**
 * Answers request n with `script[n]`; like the OpenAI API, refuses (throws the 400 message) a
 * conversation whose tool calls are not answered exactly once. Streams when asked to: text, then
 * each tool call as two `tool_call_chunks` pieces.
 */
class ScriptedChatModel extends BaseChatModel {
  readonly requests: ModelRequest[] = []
  readonly #script: AIMessage[]

  constructor(script: AIMessage[]) {
    super({})
    this.#script = script
  }

  _llmType(): string {
    return 'scripted'
  }

  override bindTools(tools: BindToolsInput[]): Runnable<Parameters<BaseChatModel['invoke']>[0], AIMessageChunk> {
    return this.withConfig({ tools: tools.map((t) => convertToOpenAITool(t)) } as RunnableConfig)
  }

  #next(messages: BaseMessage[], options: unknown): AIMessage {
    const bound = (options as { tools?: { function: { name: string } }[] }).tools ?? []
    const refused = chatPairingError(asChatCompletions(messages))
    if (refused !== undefined) throw new Error(`400 ${refused.error.message}`)
    this.requests.push({ messages: [...messages], tools: bound.map((t) => t.function.name) })
    const turn = this.#script[this.requests.length - 1]
    if (turn === undefined) throw new Error(`unexpected model request #${this.requests.length}`)
    return turn
  }

  async _generate(messages: BaseMessage[], options: this['ParsedCallOptions']): Promise<ChatResult> {
    const message = this.#next(messages, options)
    return { generations: [{ text: typeof message.content === 'string' ? message.content : '', message }] }
  }

  override async *_streamResponseChunks(messages: BaseMessage[], options: this['ParsedCallOptions']): AsyncGenerator<ChatGenerationChunk> {
    const message = this.#next(messages, options)
    const text = typeof message.content === 'string' ? message.content : ''
    for (const piece of text.split(/(?<= )/)) {
      if (piece !== '') yield new ChatGenerationChunk({ text: piece, message: new AIMessageChunk({ content: piece }) })
    }
    for (const [index, c] of (message.tool_calls ?? []).entries()) {
      const args = JSON.stringify(c.args)
      const half = Math.floor(args.length / 2)
      yield new ChatGenerationChunk({ text: '', message: new AIMessageChunk({ content: '', tool_call_chunks: [{ id: c.id, name: c.name, args: args.slice(0, half), index, type: 'tool_call_chunk' }] }) })
      yield new ChatGenerationChunk({ text: '', message: new AIMessageChunk({ content: '', tool_call_chunks: [{ args: args.slice(half), index, type: 'tool_call_chunk' }] }) })
    }
  }
}

const hasCalls = (state: typeof MessagesAnnotation.State): 'tools' | typeof END => {
  const last = state.messages[state.messages.length - 1] as AIMessage
  return (last.tool_calls?.length ?? 0) + (last.invalid_tool_calls?.length ?? 0) > 0 ? 'tools' : END
}

/** The classic LangGraph agent loop: the model offered only what the caller may call, then `toolsNode`. */
function agentGraph(model: ScriptedChatModel, toolsNode: GatedToolNode | Runnable<{ messages: BaseMessage[] }, { messages: ToolMessage[] }>) {
  return new StateGraph(MessagesAnnotation)
    .addNode('agent', async (state, config) => {
      const offered = gate.filterTools(tools, { dialect: 'langchain', ...fromConfig(config) })
      return { messages: [await model.bindTools(offered).invoke(state.messages, config)] }
    })
    .addNode('tools', toolsNode)
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', hasCalls, ['tools', END])
    .addEdge('tools', 'agent')
    .compile()
}

/** A model turn with one call of each kind: allowed, repairable, refused by the schema, refused by policy, unknown. */
function mixedTurn(): AIMessage {
  return new AIMessage({
    content: 'Let me check.',
    tool_calls: [
      call('get_weather', { city: 'Oslo', days: 2 }, 'call_ok'),
      call('get_weather', { city: 'Bergen', days: '3' }, 'call_repair'),
      call('get_weather', { city: 'Tromsø', days: 'many' }, 'call_invalid'),
      call('read_file', { path: 'reports/../secrets/keys.txt' }, 'call_denied'),
      call('drop_table', { name: 'users' }, 'call_unknown'),
    ],
  })
}

// ---------------------------------------------------------------------------------------------

describe('gateTool: one tool', () => {
  it('keeps the tool: same type, name, description and schema, so bindTools shows the model the same JSON Schema', () => {
    const gated = gateTool(getWeather, gate, ana)
    expectTypeOf(gated).toEqualTypeOf<typeof getWeather>()
    expectTypeOf(gateTools(tools, gate, ana)).toEqualTypeOf<(typeof tools)[number][]>()
    expect(gated).not.toBe(getWeather)
    expect(gated.name).toBe('get_weather')
    expect(gated.description).toBe(getWeather.description)
    expect(gated.schema).toBe(getWeather.schema)
    expect(convertToOpenAITool(gated)).toEqual(convertToOpenAITool(getWeather))
    expect(gated).toBeInstanceOf(getWeather.constructor)
  })

  it('runs an allowed call, and a repairable one with the repaired arguments (LangChain alone refuses it)', async () => {
    ran.length = 0
    const { seen, onVerdict } = record()
    const gated = gateTool(getWeather, gate, ana, { onVerdict })
    await expect(getWeather.invoke(call('get_weather', { city: 'Bergen', days: '3' }, 'c0'))).rejects.toThrow(ToolInputParsingException)

    const ok = await gated.invoke(call('get_weather', { city: 'Oslo', days: 2 }, 'c1'))
    expect(ToolMessage.isInstance(ok)).toBe(true)
    expect([ok.tool_call_id, ok.status, ok.content]).toEqual(['c1', 'success', 'Oslo: sunny for 2 days'])
    const repaired = await gated.invoke(call('get_weather', { city: 'Bergen', days: '3' }, 'c2'))
    expect([repaired.tool_call_id, repaired.status, repaired.content]).toEqual(['c2', 'success', 'Bergen: sunny for 3 days'])
    expect(ran).toEqual([
      { tool: 'get_weather', args: { city: 'Oslo', days: 2 } },
      { tool: 'get_weather', args: { city: 'Bergen', days: 3 } },
    ])
    expect(seen.map(([v]) => v.outcome)).toEqual(['passed', 'repaired'])
    expect(seen[1][0].flags).toEqual([{ code: 'StringToInteger', path: '/days', from: '3', to: 3 }])
    expect(seen[1][1].toolCall?.args).toEqual({ city: 'Bergen', days: '3' })
    expect(seen[1][1].context).toEqual(ana)
    // with bare arguments the tool's plain output comes back
    expect(await gated.invoke({ city: 'Oslo', days: '4' } as never)).toBe('Oslo: sunny for 4 days')
  })

  it('never runs a refused call: the model gets the gate’s ToolMessage with status error', async () => {
    ran.length = 0
    const { seen, onVerdict } = record()
    const weather = gateTool(getWeather, gate, ana, { onVerdict })
    const bad = await weather.invoke(call('get_weather', { city: 'Tromsø', days: 'many' }, 'c3'))
    expect(ToolMessage.isInstance(bad)).toBe(true)
    expect([bad.tool_call_id, bad.name, bad.status]).toEqual(['c3', 'get_weather', 'error'])
    expect(bad.content).toBe(seen[0][0].message)
    expect(seen[0][0]).toMatchObject({ outcome: 'rejected', reason: 'invalid' })

    // policy: no rule lets a caller without the analyst role read files
    const files = gateTool(readFile, gate, { subject: 'visitor' }, { onVerdict })
    const denied = await files.invoke(call('read_file', { path: 'reports/q3.csv' }, 'c4'))
    expect([denied.status, denied.content]).toEqual(['error', seen[1][0].message])
    expect(seen[1][0]).toMatchObject({ outcome: 'denied', reason: 'no_rule' })
    expect(ran).toEqual([])
  })

  it('refuses bare arguments by throwing ToolInputParsingException with the gate’s message', async () => {
    const { seen, onVerdict } = record()
    const gated = gateTool(getWeather, gate, ana, { onVerdict })
    const err = await gated.invoke({ city: 'Oslo', days: 'many' } as never).catch((e: unknown) => e)
    // LangChain's own class, from its CommonJS build (toolgate's adapters are CommonJS; this test
    // file gets the ESM build, a different class): the name tells it in either.
    expect(err).toBeInstanceOf(cjsTools.ToolInputParsingException)
    expect((err as Error).name).toBe('ToolInputParsingException')
    expect((err as Error).message).toBe(seen[0][0].message)
    expect(seen[0][1].toolCall).toBeUndefined()
  })

  it('reads the caller from the run’s config', async () => {
    ran.length = 0
    const files = gateTool(readFile, gate, fromConfig)
    const allowed = await files.invoke(call('read_file', { path: 'reports/./q3.csv' }, 'c5'), asAna)
    expect([allowed.status, allowed.content]).toEqual(['success', 'contents of reports/./q3.csv'])
    const anonymous = await files.invoke(call('read_file', { path: 'reports/q3.csv' }, 'c6'))
    expect(anonymous.status).toBe('error')
    expect(ran).toHaveLength(1)
  })

  it('answers confirm like a refusal; the token reaches only onVerdict, and gate.confirm takes it', async () => {
    ran.length = 0
    const { seen, onVerdict } = record()
    const mail = gateTool(sendEmail, gate, ana, { onVerdict })
    const answer = await mail.invoke(call('send_email', { to: 'boss@example.com', body: 'done' }, 'c7'))
    const verdict = seen[0][0]
    expect(verdict.outcome).toBe('confirm')
    const token = verdict.confirmation?.token ?? ''
    expect(token.length).toBeGreaterThan(20)
    expect([answer.status, answer.content]).toEqual(['error', verdict.message])
    expect(JSON.stringify(answer)).not.toContain(token)
    expect(ran).toEqual([])
    expect(gate.confirm(token, ana)).toMatchObject({ outcome: 'passed', arguments: { to: 'boss@example.com', body: 'done' } })
  })

  it('gates the deprecated call() too, and string tools as { input }', async () => {
    ran.length = 0
    const weather = gateTool(getWeather, gate, ana)
    expect(await weather.call({ city: 'Oslo', days: '5' } as never)).toBe('Oslo: sunny for 5 days')
    const echo = new DynamicTool({ name: 'echo', description: 'Echo the input', func: async (s: string) => `echo: ${s}` })
    const echoGate = new ToolGate({ tools: toolsFromLangChain([echo]) })
    const gatedEcho = gateTool(echo, echoGate)
    expect(await gatedEcho.invoke('hi')).toBe('echo: hi')
    const viaCall = (await gatedEcho.invoke(call('echo', { input: 42 }, 'c8'))) as unknown as ToolMessage
    expect([viaCall.status, viaCall.content]).toEqual(['success', 'echo: 42'])
    expect(await gateTool(gatedEcho, echoGate).invoke('once')).toBe('echo: once')
  })

  it('names the host’s mistakes with E_CONFIG', () => {
    const fails = (f: () => unknown): string => thrownToolGateError(f).code
    expect(fails(() => gateTool(getWeather, {} as ToolGate))).toBe('E_CONFIG')
    expect(fails(() => gateTool({} as typeof getWeather, gate))).toBe('E_CONFIG')
    expect(fails(() => gateTool(getWeather, gate, ana, { onVerdit: () => {} } as never))).toBe('E_CONFIG')
    expect(fails(() => gateTool(getWeather, gate, 'ana' as never))).toBe('E_CONFIG')
    expect(fails(() => gatedToolNode(tools, gate, ana, { handleErrors: true } as never))).toBe('E_CONFIG')
    expect(fails(() => toolsFromLangChain(tools, { sendEmail: { writes: true } }))).toBe('E_CONFIG')
  })
})

describe('gateTools in LangGraph’s own ToolNode', () => {
  it('runs allowed and repaired calls and answers each refused one, every call id once', async () => {
    ran.length = 0
    const node = new prebuilt.ToolNode(gateTools(tools, gate, fromConfig))
    const { messages } = await node.invoke({ messages: [new HumanMessage('go'), mixedTurn()] }, asAna)
    expect(messages.map((m) => [m.tool_call_id, m.status])).toEqual([
      ['call_ok', 'success'],
      ['call_repair', 'success'],
      ['call_invalid', 'error'],
      ['call_denied', 'error'],
      // ToolNode itself answers a call to a tool it does not have
      ['call_unknown', 'error'],
    ])
    expect(ran).toEqual([
      { tool: 'get_weather', args: { city: 'Oslo', days: 2 } },
      { tool: 'get_weather', args: { city: 'Bergen', days: 3 } },
    ])
  })
})

describe('gatedToolNode in a LangGraph StateGraph', () => {
  it('runs a two-turn agent: allowed and repaired calls run, refused ones get error ToolMessages, the next request is accepted', async () => {
    ran.length = 0
    const model = new ScriptedChatModel([mixedTurn(), new AIMessage('Oslo and Bergen look sunny.')])
    const { seen, onVerdict } = record()
    const graph = agentGraph(model, gatedToolNode(tools, gate, fromConfig, { onVerdict }))
    const { messages } = await graph.invoke({ messages: [new HumanMessage('Weather, and the keys file?')] }, asAna)

    expect(ran).toEqual([
      { tool: 'get_weather', args: { city: 'Oslo', days: 2 } },
      { tool: 'get_weather', args: { city: 'Bergen', days: 3 } },
    ])
    const answers = messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m))
    expect(answers.map((m) => [m.tool_call_id, m.name, m.status])).toEqual([
      ['call_ok', 'get_weather', 'success'],
      ['call_repair', 'get_weather', 'success'],
      ['call_invalid', 'get_weather', 'error'],
      ['call_denied', 'read_file', 'error'],
      ['call_unknown', 'drop_table', 'error'],
    ])
    expect(seen.map(([v]) => [v.outcome, v.reason])).toEqual([
      ['passed', undefined],
      ['repaired', undefined],
      ['rejected', 'invalid'],
      ['denied', 'no_rule'],
      ['rejected', 'unknown_tool'],
    ])
    for (const [i, m] of answers.entries()) if (m.status === 'error') expect(m.content).toBe(seen[i][0].message)
    expect(seen.map(([, info]) => info.toolCall?.id)).toEqual(['call_ok', 'call_repair', 'call_invalid', 'call_denied', 'call_unknown'])
    expect(seen[0][1].context).toEqual({ subject: 'ana', roles: ['analyst'] })
    // the second request carried every answer (the scripted model refuses it otherwise)
    expect(model.requests).toHaveLength(2)
    expect(model.requests[1].messages.filter((m) => m.getType() === 'tool')).toHaveLength(5)
    expect((messages[messages.length - 1] as AIMessage).content).toBe('Oslo and Bergen look sunny.')
  })

  it('offers the model only what the caller may call (filterTools), per request', async () => {
    const model = new ScriptedChatModel([new AIMessage('Hello.'), new AIMessage('Hello again.')])
    const graph = agentGraph(model, gatedToolNode(tools, gate, fromConfig))
    await graph.invoke({ messages: [new HumanMessage('hi')] }, asAna)
    await graph.invoke({ messages: [new HumanMessage('hi')] })
    expect(model.requests.map((r) => r.tools)).toEqual([['get_weather', 'read_file', 'send_email'], ['get_weather']])
  })

  it('answers calls LangChain could not parse, which ToolNode alone leaves unanswered (the next request then fails)', async () => {
    const broken = () =>
      new AIMessage({
        content: '',
        tool_calls: [call('get_weather', { city: 'Oslo', days: 1 }, 'call_fine')],
        invalid_tool_calls: [{ id: 'call_broken', name: 'get_weather', args: '{"city": "Os', error: 'Malformed args.', type: 'invalid_tool_call' }],
      })
    const plain = agentGraph(new ScriptedChatModel([broken(), new AIMessage('done')]), new prebuilt.ToolNode(tools))
    await expect(plain.invoke({ messages: [new HumanMessage('go')] }, asAna)).rejects.toThrow(/call_broken/)

    const model = new ScriptedChatModel([broken(), new AIMessage('done')])
    const { messages } = await agentGraph(model, gatedToolNode(tools, gate, fromConfig)).invoke({ messages: [new HumanMessage('go')] }, asAna)
    const answers = messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m))
    expect(answers.map((m) => [m.tool_call_id, m.status])).toEqual([
      ['call_fine', 'success'],
      ['call_broken', 'error'],
    ])
    expect(answers[1].content).toContain('Malformed args.')
    expect(model.requests).toHaveLength(2)
  })

  it('streams: a streaming model’s chunked tool calls are guarded, updates and messages stream', async () => {
    ran.length = 0
    const model = new ScriptedChatModel([mixedTurn(), new AIMessage('All sunny.')])
    const graph = agentGraph(model, gatedToolNode(tools, gate, fromConfig))
    const updates: string[] = []
    let toolMessages: ToolMessage[] = []
    for await (const chunk of await graph.stream({ messages: [new HumanMessage('go')] }, { ...asAna, streamMode: 'updates' })) {
      updates.push(...Object.keys(chunk))
      if (chunk.tools !== undefined) toolMessages = chunk.tools.messages as ToolMessage[]
    }
    expect(updates).toEqual(['agent', 'tools', 'agent'])
    expect(toolMessages.map((m) => [m.tool_call_id, m.status])).toEqual([
      ['call_ok', 'success'],
      ['call_repair', 'success'],
      ['call_invalid', 'error'],
      ['call_denied', 'error'],
      ['call_unknown', 'error'],
    ])
    expect(ran.map((r) => r.args)).toEqual([
      { city: 'Oslo', days: 2 },
      { city: 'Bergen', days: 3 },
    ])

    const tokens: string[] = []
    const streamedAnswers: string[] = []
    const again = agentGraph(new ScriptedChatModel([mixedTurn(), new AIMessage('All sunny.')]), gatedToolNode(tools, gate, fromConfig))
    for await (const [message] of await again.stream({ messages: [new HumanMessage('go')] }, { ...asAna, streamMode: 'messages' })) {
      if (AIMessageChunk.isInstance(message) && typeof message.content === 'string' && message.content !== '') tokens.push(message.content)
      if (ToolMessage.isInstance(message)) streamedAnswers.push(`${message.tool_call_id}:${message.status}`)
    }
    expect(tokens.join('')).toBe('Let me check.All sunny.')
    expect(streamedAnswers).toEqual(['call_ok:success', 'call_repair:success', 'call_invalid:error', 'call_denied:error', 'call_unknown:error'])
  })

  it('is a ToolNode: createReactAgent takes it as its tools, and Send inputs are guarded', async () => {
    ran.length = 0
    const model = new ScriptedChatModel([mixedTurn(), new AIMessage('Done.')])
    const node = gatedToolNode(tools, gate, fromConfig)
    expect(node).toBeInstanceOf(prebuilt.ToolNode)
    const agent = prebuilt.createReactAgent({ llm: model, tools: node })
    const { messages } = await agent.invoke({ messages: [new HumanMessage('go')] }, asAna)
    expect(messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m)).map((m) => m.status)).toEqual(['success', 'success', 'error', 'error', 'error'])
    expect(model.requests[0].tools).toEqual(['get_weather', 'read_file', 'send_email'])
    expect(ran).toHaveLength(2)

    // a single call sent with LangGraph's Send API (createReactAgent version "v2")
    const send = node as unknown as Runnable<Record<string, unknown>, { messages: ToolMessage[] }>
    const repaired = await send.invoke({ lg_tool_call: call('get_weather', { city: 'Oslo', days: '6' }, 's1'), messages: [] }, asAna)
    expect(repaired.messages.map((m) => [m.tool_call_id, m.status, m.content])).toEqual([['s1', 'success', 'Oslo: sunny for 6 days']])
    const refused = await send.invoke({ lg_tool_call: call('read_file', { path: 'etc/passwd' }, 's2'), messages: [] }, asAna)
    expect(refused.messages.map((m) => [m.tool_call_id, m.status])).toEqual([['s2', 'error']])
  })

  it('answers confirm without the token; the host gets it from onVerdict', async () => {
    ran.length = 0
    const { seen, onVerdict } = record()
    const node = gatedToolNode(tools, gate, ana, { onVerdict })
    const turn = new AIMessage({ content: '', tool_calls: [call('send_email', { to: 'team@example.com', body: 'hi' }, 'm1')] })
    const { messages } = await node.invoke({ messages: [turn] })
    const token = seen[0][0].confirmation?.token ?? ''
    expect(seen[0][0].outcome).toBe('confirm')
    expect(token).not.toBe('')
    expect(messages.map((m) => [m.tool_call_id, m.status, m.content])).toEqual([['m1', 'error', seen[0][0].message]])
    expect(JSON.stringify(messages)).not.toContain(token)
    expect(ran).toEqual([])
  })

  it('answers with a list for a list of messages, and only the calls no ToolMessage answers yet', async () => {
    const node = gatedToolNode(tools, gate, ana) as unknown as Runnable<BaseMessage[], ToolMessage[]>
    const turn = mixedTurn()
    const out = await node.invoke([turn, new ToolMessage({ content: 'already done', tool_call_id: 'call_ok' })])
    expect(out.map((m) => m.tool_call_id)).toEqual(['call_repair', 'call_invalid', 'call_denied', 'call_unknown'])
  })
})

describe('loading', () => {
  it('loads no LangChain package until one is needed, and names the one that is missing', () => {
    const script = [
      "const Module = require('node:module')",
      'const resolve = Module._resolveFilename',
      // @langchain/langgraph is not installed, as far as this process can tell
      "Module._resolveFilename = function (request, ...rest) { if (request.startsWith('@langchain/langgraph')) { const e = new Error(`Cannot find module '${request}'`); e.code = 'MODULE_NOT_FOUND'; throw e } return resolve.call(this, request, ...rest) }",
      "const { gatedToolNode } = require('./src-ts/adapters/langchain.ts')",
      "const { ToolGate } = require('./src-ts/index.ts')",
      'const loaded = Object.keys(require.cache).filter((k) => /@langchain/.test(k))',
      'let error',
      "try { gatedToolNode([], new ToolGate({ tools: [{ name: 'ping' }] })) } catch (e) { error = `${e.code} ${e.message}` }",
      'console.log(JSON.stringify({ loaded, error }))',
    ].join('\n')
    const out = runScript(script)
    const { loaded, error } = JSON.parse(out) as { loaded: string[]; error: string }
    expect(loaded).toEqual([])
    expect(error).toBe('E_CONFIG gatedToolNode: install @langchain/langgraph (>=1.7.3 <2) to use toolgate/langchain: `npm install @langchain/langgraph`')
  })
})

describe('examples/langchain.ts', () => {
  it('runs offline and prints what happened', () => {
    const out = runExample('langchain.ts')
    const lines = out.trim().split('\n')
    expect(lines.slice(0, 3)).toEqual(['gate: call_1 get_weather repaired', 'gate: call_2 read_file denied (no_rule)', 'tool call_1 (success): Oslo: sunny for 3 days'])
    expect(lines[3]).toMatch(/^tool call_2 \(error\): Not permitted: no policy rule allows `read_file`/)
    expect(lines[4]).toBe('model: Oslo looks sunny; I may not read that report for you.')
  })
})
