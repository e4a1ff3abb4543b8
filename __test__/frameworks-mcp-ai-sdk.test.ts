// The MCP and AI SDK dialects checked against the frameworks themselves, through the real native
// binding: every feedback item is parsed with the SDK's own schemas, a real MCP Client talks to a
// real McpServer through a gate in the middle, and a real generateText run (driven by the AI
// SDK's test model) carries the gate's repairs and refusals through its message history.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, expectTypeOf, it } from 'vitest'
import { z } from 'zod'

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ErrorCode,
  JSONRPCErrorResponseSchema,
  JSONRPCMessageSchema,
  JSONRPCResponseSchema,
  JSONRPCResultResponseSchema,
  ListToolsResultSchema,
  McpError,
  type CallToolRequest,
  type CallToolResult,
  type JSONRPCMessage,
  type ListToolsResult,
} from '@modelcontextprotocol/sdk/types.js'
import { generateText, modelMessageSchema, tool, wrapLanguageModel, type ModelMessage, type ToolCallPart, type ToolModelMessage, type ToolResultPart } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'

import { ToolGate, type TurnReport } from '../src-ts/index'
import type { AiSdkFeedback, AiSdkToolCallPart, AiSdkToolModelMessage, AiSdkToolResultPart } from '../src-ts/dialects/ai-sdk'
import type { McpCallToolParams, McpCallToolResult, McpFeedback, McpListToolsResult, McpToolErrorResult, McpToolsCallRequest } from '../src-ts/dialects/mcp'

const fixtureRoot = join(__dirname, 'fixtures', 'dialects')
const gate = ToolGate.fromFile(join(fixtureRoot, 'tools.json'))

interface Fixture {
  dialect: string
  payload?: unknown
  payloadText?: string
  options?: { protocolVersion?: string }
  expect?: { feedback?: unknown[] }
  error?: unknown
}

function fixtures(dialect: string): [string, Fixture][] {
  const dir = join(fixtureRoot, dialect)
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => [f, JSON.parse(readFileSync(join(dir, f), 'utf8')) as Fixture])
}

function guardFixture(fx: Fixture): TurnReport {
  const text = fx.payloadText ?? JSON.stringify(fx.payload)
  return gate.guard(text, { dialect: fx.dialect as never, ...(fx.options ?? {}) })
}

type Rpc = { jsonrpc: string; id?: string | number; method?: string; params?: unknown; result?: unknown; error?: { code: number; message: string } }

// Compile-time (checked by `npm run typecheck`): the SDKs' own values fit the hand-written types
// toolgate reads, and what toolgate writes fits the SDKs' types.
expectTypeOf<CallToolRequest['params']>().toExtend<McpCallToolParams>()
expectTypeOf<McpToolsCallRequest>().toExtend<JSONRPCMessage>()
expectTypeOf<CallToolResult>().toExtend<McpCallToolResult>()
expectTypeOf<ListToolsResult>().toExtend<McpListToolsResult>()
expectTypeOf<McpToolErrorResult>().toExtend<CallToolResult>()
expectTypeOf<McpFeedback>().toExtend<JSONRPCMessage>()
expectTypeOf<ToolCallPart>().toExtend<AiSdkToolCallPart>()
expectTypeOf<ToolResultPart>().toExtend<AiSdkToolResultPart>()
expectTypeOf<ToolModelMessage>().toExtend<AiSdkToolModelMessage>()
expectTypeOf<AiSdkFeedback>().toExtend<ToolModelMessage>()
expectTypeOf<AiSdkFeedback>().toExtend<ModelMessage>()

describe('MCP feedback, parsed by the MCP SDK', () => {
  const cases = fixtures('mcp').filter(([, fx]) => fx.expect)

  it('covers refusals of both kinds', () => {
    const kinds = new Set(cases.flatMap(([, fx]) => guardFixture(fx).feedback.map((f) => ('error' in (f as Rpc) ? 'error' : 'result'))))
    expect([...kinds].sort()).toEqual(['error', 'result'])
  })

  for (const [name, fx] of cases) {
    it(`${name}: every refused call answered once, with its own id value and type`, () => {
      const report = guardFixture(fx)
      const sent = JSON.parse(fx.payloadText ?? JSON.stringify(fx.payload)) as Rpc | Rpc[]
      const requests = (Array.isArray(sent) ? sent : [sent]).filter((m) => m.method === 'tools/call')
      const refused = report.calls.filter((c) => !c.allowed)
      expect(report.feedback.map((f) => String((f as Rpc).id))).toEqual(refused.map((c) => c.callId))
      for (const item of report.feedback) {
        const fb = JSONRPCResponseSchema.parse(item) as Rpc
        expect(JSONRPCMessageSchema.safeParse(item).success).toBe(true)
        const request = requests.find((r) => r.id === fb.id) // strict: a number id stays a number
        expect(request, `no request with id ${JSON.stringify(fb.id)}`).toBeDefined()
        const call = refused.find((c) => c.callId === String(fb.id))!
        if ('error' in fb) {
          JSONRPCErrorResponseSchema.parse(item)
          expect(fb.error!.code).toBe(ErrorCode.InvalidParams)
          expect(fb.error!.message).toBe(call.message)
        } else {
          JSONRPCResultResponseSchema.parse(item)
          const result = CallToolResultSchema.parse(fb.result)
          expect(result.isError).toBe(true)
          expect(result.content).toEqual([{ type: 'text', text: call.message }])
        }
      }
    })
  }

  it('answers -32602 exactly when the SDK’s own CallToolRequestSchema rejects the request', () => {
    let checked = 0
    for (const [, fx] of cases) {
      if (fx.payloadText !== undefined) continue
      const report = guardFixture(fx)
      const messages = (Array.isArray(fx.payload) ? fx.payload : [fx.payload]) as Rpc[]
      for (const m of messages.filter((x) => x.method === 'tools/call')) {
        const answer = report.feedback.find((f) => (f as Rpc).id === m.id) as Rpc | undefined
        expect(answer !== undefined && 'error' in answer, JSON.stringify(m)).toBe(!CallToolRequestSchema.safeParse(m).success)
        checked++
      }
    }
    expect(checked).toBeGreaterThanOrEqual(10)
  })
})

/** A real McpServer behind a gate: the test is the proxy in the middle of two in-memory links. */
async function connectThroughGate() {
  const server = new McpServer({ name: 'weather', version: '1.0.0' })
  const ran: { tool: string; args: unknown }[] = []
  server.registerTool(
    'get_weather',
    { inputSchema: { city: z.string(), days: z.number().int().optional(), unit: z.enum(['celsius', 'fahrenheit']).optional() } },
    async (args) => {
      ran.push({ tool: 'get_weather', args })
      return { content: [{ type: 'text', text: `weather ${JSON.stringify(args)}` }] }
    },
  )
  server.registerTool('delete_file', { inputSchema: { path: z.string() } }, async (args) => {
    ran.push({ tool: 'delete_file', args })
    return { content: [{ type: 'text', text: 'deleted' }] }
  })
  server.registerTool('shell', { inputSchema: { cmd: z.string() } }, async () => ({ content: [{ type: 'text', text: 'ran' }] }))

  const [clientSide, fromClient] = InMemoryTransport.createLinkedPair()
  const [toServer, serverSide] = InMemoryTransport.createLinkedPair()
  const reports: TurnReport[] = []
  const answered: unknown[] = []
  let protocolVersion: string | undefined
  fromClient.onmessage = (msg) => {
    const m = msg as Rpc
    if (m.method === 'tools/call') {
      const report = gate.guard(msg, { dialect: 'mcp', protocolVersion })
      reports.push(report)
      if (report.feedback.length > 0) {
        answered.push(...report.feedback)
        for (const fb of report.feedback) void fromClient.send(fb as JSONRPCMessage)
        return
      }
      void toServer.send(report.payload as JSONRPCMessage)
      return
    }
    void toServer.send(msg)
  }
  toServer.onmessage = (msg) => {
    const r = (msg as Rpc).result as { protocolVersion?: string } | undefined
    if (r && typeof r.protocolVersion === 'string') protocolVersion = r.protocolVersion
    void fromClient.send(msg)
  }
  await fromClient.start()
  await toServer.start()
  await server.connect(serverSide)
  const client = new Client({ name: 'agent', version: '1.0.0' })
  await client.connect(clientSide)
  return { client, server, ran, reports, answered, protocolVersion: () => protocolVersion }
}

describe('a real MCP Client and McpServer with the gate in the middle', () => {
  it('forwards repaired calls, answers refused ones with results the Client parses, keeps number ids', async () => {
    const { client, server, ran, reports, answered, protocolVersion } = await connectThroughGate()
    try {
      expect(protocolVersion()).toBe('2025-11-25')

      // Repaired: "2" would fail the server's own zod schema; the gate forwards 2.
      const ok = await client.callTool({ name: 'get_weather', arguments: { city: 'Zürich', days: '2', unit: 'CELSIUS' } })
      expect(ok.isError).toBeFalsy()
      expect(ran).toEqual([{ tool: 'get_weather', args: { city: 'Zürich', days: 2, unit: 'celsius' } }])
      expect(reports[0].calls[0].outcome).toBe('repaired')

      // Refused (a destructive tool with an unknown field): the server never sees it.
      const refused = await client.callTool({ name: 'delete_file', arguments: { path: 'a', force: true } })
      expect(refused.isError).toBe(true)
      expect(refused.content).toEqual([{ type: 'text', text: reports[1].calls[0].message }])
      expect(ran).toHaveLength(1)

      // Not declared to the gate (though the server has it): refused as unknown_tool.
      const shell = await client.callTool({ name: 'shell', arguments: { cmd: 'rm -rf /' } })
      expect(shell.isError).toBe(true)
      expect(reports[2].calls[0].reason).toBe('unknown_tool')

      // Malformed params: a JSON-RPC -32602 error the Client raises as an McpError.
      const bad = client.request({ method: 'tools/call', params: { arguments: {} } } as never, CallToolResultSchema)
      await expect(bad).rejects.toBeInstanceOf(McpError)
      await expect(bad).rejects.toMatchObject({ code: ErrorCode.InvalidParams })
      expect(ran).toHaveLength(1)

      // Every answer the gate sent is valid JSON-RPC with the Client's own (number) request id.
      expect(answered).toHaveLength(3)
      for (const a of answered) {
        JSONRPCResponseSchema.parse(a)
        expect(typeof (a as Rpc).id).toBe('number')
      }
      const results = answered.filter((a) => 'result' in (a as Rpc)).map((a) => CallToolResultSchema.parse((a as Rpc).result))
      expect(results.map((r) => r.isError)).toEqual([true, true])
    } finally {
      await client.close()
      await server.close()
    }
  })

  it('filters the server’s real tools/list result to the declared tools', async () => {
    const { client, server } = await connectThroughGate()
    try {
      const listed = await client.listTools()
      expect(listed.tools.map((t) => t.name).sort()).toEqual(['delete_file', 'get_weather', 'shell'])
      const filtered = gate.filterTools(listed, { dialect: 'mcp' })
      expect(ListToolsResultSchema.parse(filtered).tools.map((t) => t.name)).toEqual(['get_weather', 'delete_file'])
      expect(filtered.tools[0]).toEqual(listed.tools.find((t) => t.name === 'get_weather'))
    } finally {
      await client.close()
      await server.close()
    }
  })
})

describe('AI SDK feedback, validated by the ai package', () => {
  const cases = fixtures('ai-sdk').filter(([, fx]) => fx.expect)

  for (const [name, fx] of cases) {
    it(`${name}: feedback is one valid tool ModelMessage answering each refused call`, () => {
      const report = guardFixture(fx)
      const refused = report.calls.filter((c) => !c.allowed)
      if (refused.length === 0) {
        expect(report.feedback).toEqual([])
        return
      }
      expect(report.feedback).toHaveLength(1)
      const message = modelMessageSchema.parse(report.feedback[0]) as ToolModelMessage
      expect(message.role).toBe('tool')
      expect(message.content).toEqual(
        refused.map((c) => ({ type: 'tool-result', toolCallId: c.callId, toolName: c.tool, output: { type: 'error-text', value: c.message } })),
      )
    })
  }

  it('the message-shaped fixtures are valid ModelMessages themselves', () => {
    const shaped = cases.map(([, fx]) => fx.payload).filter((p) => (Array.isArray(p) ? p.every((m) => m && typeof m === 'object' && 'role' in m) : p && typeof p === 'object' && 'role' in p))
    expect(shaped.length).toBeGreaterThanOrEqual(3)
    for (const p of shaped) for (const m of Array.isArray(p) ? p : [p]) modelMessageSchema.parse(m)
  })
})

describe('a real generateText run with the gate around the model', () => {
  const usage = { inputTokens: { total: 5, noCache: 5, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 5, text: 5, reasoning: undefined } }

  it('repairs at the provider level, and its feedback completes the history the SDK accepts', async () => {
    const mock = new MockLanguageModelV4({
      doGenerate: [
        {
          content: [
            { type: 'text', text: 'On it.' },
            { type: 'tool-call', toolCallId: 'c1', toolName: 'get_weather', input: '{"city":"Paris","days":"2"}' },
            { type: 'tool-call', toolCallId: 'c2', toolName: 'shell', input: '{"cmd":"rm -rf /"}' },
            { type: 'tool-call', toolCallId: 'c3', toolName: 'search', input: '{"query":' },
          ],
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          usage,
          warnings: [],
        },
        { content: [{ type: 'text', text: 'Paris: sunny. I may not run shell commands.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] },
      ],
    })
    // Provider level (a middleware around the model): repairs written back before the SDK parses
    // the inputs against its own schemas.
    const providerReports: TurnReport[] = []
    const model = wrapLanguageModel({
      model: mock,
      middleware: {
        wrapGenerate: async ({ doGenerate }) => {
          const result = await doGenerate()
          const report = gate.guard(result, { dialect: 'ai-sdk' })
          providerReports.push(report)
          return report.payload as typeof result
        },
      },
    })
    // No `execute`: the host runs allowed calls itself, after the gate. `shell` is known to the
    // SDK but not declared to the gate.
    const tools = {
      get_weather: tool({ inputSchema: z.object({ city: z.string(), days: z.number().int().optional() }) }),
      search: tool({ inputSchema: z.object({ query: z.string() }) }),
      shell: tool({ inputSchema: z.object({ cmd: z.string() }) }),
    }
    const prompt: ModelMessage[] = [{ role: 'user', content: 'Weather in Paris, then clean up.' }]
    const first = await generateText({ model, tools, messages: prompt })

    expect(providerReports[0].calls.map((c) => [c.callId, c.outcome, c.reason])).toEqual([
      ['c1', 'repaired', undefined],
      ['c2', 'rejected', 'unknown_tool'],
      ['c3', 'rejected', 'bad_arguments'],
    ])
    // The SDK parsed the repaired input against its own schema ("2" would have made it invalid).
    const c1 = first.toolCalls.find((c) => c.toolCallId === 'c1')!
    expect(c1.input).toEqual({ city: 'Paris', days: 2 })
    expect('invalid' in c1 && c1.invalid).toBeFalsy()

    // The SDK's own provider-level tool list, filtered by the gate: undeclared `shell` goes.
    const providerTools = mock.doGenerateCalls[0].tools!
    expect(providerTools.map((t) => t.name).sort()).toEqual(['get_weather', 'search', 'shell'])
    expect(gate.filterTools(providerTools, { dialect: 'ai-sdk' }).map((t) => t.name).sort()).toEqual(['get_weather', 'search'])

    // The history (what will run is decided here): the SDK answered the call it could not parse
    // (c3) with its own tool-error result; the gate finds c1 and c2 pending.
    const history = first.response.messages
    const pending = gate.guard(history, { dialect: 'ai-sdk' })
    expect(pending.calls.map((c) => [c.callId, c.outcome])).toEqual([
      ['c1', 'passed'],
      ['c2', 'rejected'],
    ])
    const ran: ToolModelMessage = {
      role: 'tool',
      content: pending.allowed.map((a) => ({ type: 'tool-result', toolCallId: a.callId, toolName: a.tool, output: { type: 'json', value: { forecast: 'sunny', ...a.arguments } as never } })),
    }
    const messages: ModelMessage[] = [...prompt, ...history, ran, ...(pending.feedback as ModelMessage[])]
    for (const m of messages) modelMessageSchema.parse(m)

    // Accepted by generateText (a call left unanswered would throw MissingToolResultsError), and
    // the refusal reaches the model as an error tool result.
    const second = await generateText({ model, tools, messages })
    expect(second.text).toBe('Paris: sunny. I may not run shell commands.')
    const toolParts = mock.doGenerateCalls[1].prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content)
    const c2Answer = toolParts.find((p) => p.type === 'tool-result' && p.toolCallId === 'c2')
    expect(c2Answer).toMatchObject({ type: 'tool-result', toolName: 'shell', output: { type: 'error-text', value: pending.calls[1].message } })
    const answeredIds = toolParts.flatMap((p) => (p.type === 'tool-result' ? [p.toolCallId] : [])).sort()
    expect(answeredIds).toEqual(['c1', 'c2', 'c3'])
  })

  it('without the feedback the SDK refuses the history: the refused call must be answered', async () => {
    const mock = new MockLanguageModelV4({ doGenerate: { content: [{ type: 'text', text: 'x' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] } })
    const history: ModelMessage[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'k1', toolName: 'shell', input: { cmd: 'ls' } }] },
    ]
    const report = gate.guard(history, { dialect: 'ai-sdk' })
    expect(report.calls.map((c) => c.reason)).toEqual(['unknown_tool'])
    await expect(generateText({ model: mock, messages: [...history, { role: 'user', content: 'and?' }] })).rejects.toThrow(/tool result/i)
    const answered = await generateText({ model: mock, messages: [...history, ...(report.feedback as ModelMessage[]), { role: 'user', content: 'and?' }] })
    expect(answered.text).toBe('x')
  })

  it('reports provider-executed calls and gates only the client ones, from the SDK’s own result', async () => {
    const mock = new MockLanguageModelV4({
      doGenerate: {
        content: [
          { type: 'tool-call', toolCallId: 'srv1', toolName: 'web_search', input: '{"query":"news"}', providerExecuted: true },
          { type: 'tool-result', toolCallId: 'srv1', toolName: 'web_search', result: { hits: 0 } },
          { type: 'tool-call', toolCallId: 'c9', toolName: 'search', input: '{"query":"news"}' },
        ],
        finishReason: { unified: 'tool-calls', raw: 'tool_use' },
        usage,
        warnings: [],
      },
    })
    const result = await generateText({ model: mock, prompt: 'news?', tools: { search: tool({ inputSchema: z.object({ query: z.string() }) }) } })
    // Every place the SDK puts the calls reads the same way: the result (JSON of its steps), its
    // steps, toolCalls, content, response messages, and messages as a prompt option.
    for (const payload of [result, result.steps, result.toolCalls, result.content, result.response.messages, { messages: result.response.messages }]) {
      const report = gate.guard(payload as object, { dialect: 'auto' })
      expect(report.dialect).toBe('ai-sdk')
      expect(report.calls.map((c) => [c.callId, c.outcome])).toEqual([['c9', 'passed']])
    }
    expect(gate.guard(result, { dialect: 'ai-sdk' }).providerExecuted).toEqual([{ callId: 'srv1', tool: 'web_search', kind: 'tool-call' }])
  })
})
