// toolgate/ai-sdk's UI side against the real `ai` package (7.0.173), offline: streamText over the
// AI SDK's own MockLanguageModelV4 produces a real UI message stream (toUIMessageStream), the gate
// sits on it (gateUIMessageStream), and the AI SDK's own client reader (readUIMessageStream) builds
// the message useChat would show. Hostile streams are written with createUIMessageStream. The
// messages a client sends back go through gateUIMessages, then the AI SDK's own validateUIMessages
// and convertToModelMessages.
import { describe, expect, it } from 'vitest'

import {
  convertToModelMessages,
  createUIMessageStream,
  jsonSchema,
  type JSONSchema7,
  readUIMessageStream,
  streamText,
  tool,
  validateUIMessages,
  type UIMessage,
  type UIMessageChunk,
} from 'ai'
import { MockLanguageModelV4 } from 'ai/test'

import { gateUIMessages, gateUIMessageStream, type AiSdkVerdictInfo } from '../src-ts/adapters/ai-sdk'
import { ToolGate, ToolGateError, type CallContext, type Verdict } from '../src-ts/index'
import { streamTurn } from './helpers/ai-sdk-turns'

const weather = { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1, maximum: 7 } }, required: ['city'], additionalProperties: false }
const remove = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false }
const email = { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] }

const gateConfig = {
  tools: [
    { name: 'get_weather', inputSchema: weather },
    { name: 'delete_file', inputSchema: remove, destructive: true },
  ],
}
const caller: CallContext = { subject: 'ana', session: 's-ana' }

// client-side tools (no `execute`): the browser runs them in onToolCall, after this stream
const clientTools = {
  get_weather: tool({ inputSchema: jsonSchema(weather as JSONSchema7) }),
  delete_file: tool({ inputSchema: jsonSchema(remove as JSONSchema7) }),
  send_email: tool({ inputSchema: jsonSchema(email as JSONSchema7) }),
}

const calls = [
  { id: 'c_w', name: 'get_weather', input: '{"city":"Paris","days":"2"}' },
  { id: 'c_m', name: 'send_email', input: '{"to":"eve@example.com"}' },
  { id: 'c_d', name: 'delete_file', input: '{"file":"/etc/passwd"}' },
]

function uiStream(): ReadableStream<UIMessageChunk> {
  const model = new MockLanguageModelV4({ doStream: streamTurn('Doing it.', calls) })
  return streamText({ model, tools: clientTools, prompt: 'go' }).toUIMessageStream()
}

/** What useChat would show: the last message readUIMessageStream builds. */
async function lastMessage(stream: ReadableStream<UIMessageChunk>): Promise<UIMessage> {
  let last: UIMessage | undefined
  for await (const m of readUIMessageStream({ stream, terminateOnError: true })) last = m
  if (last === undefined) throw new Error('no message')
  return last
}

function toolParts(m: UIMessage) {
  return m.parts.filter((p) => p.type.startsWith('tool-') || p.type === 'dynamic-tool') as { type: string; toolCallId: string; state: string; input?: unknown; errorText?: string }[]
}

describe('gateUIMessageStream on a real toUIMessageStream', () => {
  it('releases the repaired call, and the client sees every refused call as output-error with the gate message', async () => {
    const gate = new ToolGate(gateConfig)
    const told: [Verdict, AiSdkVerdictInfo][] = []
    const message = await lastMessage(gateUIMessageStream(uiStream(), gate, () => caller, { onVerdict: (v, i) => void told.push([v, i]) }))
    const parts = toolParts(message)
    expect(parts.map((p) => [p.type, p.toolCallId, p.state])).toEqual([
      ['tool-get_weather', 'c_w', 'input-available'],
      ['tool-send_email', 'c_m', 'output-error'],
      ['tool-delete_file', 'c_d', 'output-error'],
    ])
    expect(parts[0].input).toEqual({ city: 'Paris', days: 2 })
    const byId = new Map(told.map(([v, i]) => [i.callId, v]))
    expect(parts[1].errorText).toBe(byId.get('c_m')?.message)
    expect(byId.get('c_m')?.reason).toBe('unknown_tool')
    expect(parts[2].errorText).toBe(byId.get('c_d')?.message)
    expect(byId.get('c_d')?.reason).toBe('invalid')
    expect(told.map(([, i]) => [i.callId, i.source, i.context])).toEqual([
      ['c_w', 'ui-stream', caller],
      ['c_m', 'ui-stream', caller],
      ['c_d', 'ui-stream', caller],
    ])
    expect(message.parts.find((p) => p.type === 'text')).toMatchObject({ text: 'Doing it.' })
  })

  it('passes the SDK own answer to a call it cannot parse (tool-input-error), which is not a call to decide', async () => {
    const model = new MockLanguageModelV4({ doStream: streamTurn('Trying.', [{ id: 'c_x', name: 'no_such_tool', input: '{}' }]) })
    const told: string[] = []
    const stream = gateUIMessageStream(streamText({ model, tools: clientTools, prompt: 'go' }).toUIMessageStream(), new ToolGate(gateConfig), caller, { onVerdict: (_, i) => void told.push(i.callId) })
    const [part] = toolParts(await lastMessage(stream))
    expect(part).toMatchObject({ toolCallId: 'c_x', state: 'output-error' })
    expect(part.errorText).toContain('no_such_tool')
    expect(told).toEqual([])
  })

  it('never hands a refused call to onToolCall: the client runs only what the gate released', async () => {
    const gate = new ToolGate(gateConfig)
    const ran: unknown[] = []
    const reader = gateUIMessageStream(uiStream(), gate, caller).getReader()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      // what useChat's onToolCall is given: every tool-input-available chunk that is not provider-executed
      if (value.type === 'tool-input-available') ran.push([value.toolName, value.input])
    }
    expect(ran).toEqual([['get_weather', { city: 'Paris', days: 2 }]])
  })
})

describe('gateUIMessageStream on hostile streams (createUIMessageStream)', () => {
  const run = (chunks: UIMessageChunk[]) => {
    const stream = createUIMessageStream({
      execute: ({ writer }) => {
        for (const c of chunks) writer.write(c)
      },
    })
    return lastMessage(gateUIMessageStream(stream, new ToolGate(gateConfig), caller))
  }

  it('fails closed on an output for a call never decided', async () => {
    await expect(run([{ type: 'tool-input-start', toolCallId: 'x1', toolName: 'get_weather' }, { type: 'tool-output-available', toolCallId: 'x1', output: 'sunny' }])).rejects.toMatchObject({
      code: 'E_PAYLOAD',
      message: expect.stringContaining('never decided'),
    })
  })

  it('fails closed when tool-input-available names another tool than its start', async () => {
    await expect(
      run([
        { type: 'tool-input-start', toolCallId: 'x1', toolName: 'get_weather' },
        { type: 'tool-input-available', toolCallId: 'x1', toolName: 'delete_file', input: { path: '/' } },
      ]),
    ).rejects.toBeInstanceOf(ToolGateError)
  })

  it('fails closed on a repeated call id, after releasing only the first call', async () => {
    const seen: UIMessageChunk[] = []
    const stream = createUIMessageStream({
      execute: ({ writer }) => {
        writer.write({ type: 'tool-input-available', toolCallId: 'x1', toolName: 'get_weather', input: { city: 'Oslo' } })
        writer.write({ type: 'tool-input-available', toolCallId: 'x1', toolName: 'delete_file', input: { path: '/' } })
      },
    })
    const reader = gateUIMessageStream(stream, new ToolGate(gateConfig), caller).getReader()
    const drain = async () => {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) return
        seen.push(value)
      }
    }
    await expect(drain()).rejects.toMatchObject({ code: 'E_PAYLOAD', message: expect.stringContaining('appears twice') })
    expect(seen.filter((c) => c.type === 'tool-input-available')).toEqual([{ type: 'tool-input-available', toolCallId: 'x1', toolName: 'get_weather', input: { city: 'Oslo' } }])
  })
})

describe('gateUIMessages on what a client sends back', () => {
  it('decides the pending parts of real UI messages; the result passes the SDK own validation and conversion', async () => {
    // the messages as useChat holds them after an ungated stream
    const assistant = await lastMessage(uiStream())
    const user: UIMessage = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'go' }] }
    const gate = new ToolGate(gateConfig)
    const { messages, report } = await gateUIMessages([user, assistant], gate, caller)
    expect(report.calls.map((c) => [c.callId, c.outcome])).toEqual([
      ['c_w', 'repaired'],
      ['c_m', 'rejected'],
      ['c_d', 'rejected'],
    ])
    const parts = toolParts(messages[1])
    expect(parts.map((p) => p.state)).toEqual(['input-available', 'output-error', 'output-error'])
    expect(parts[0].input).toEqual({ city: 'Paris', days: 2 })
    expect(parts[1].errorText).toBe(report.calls[1].message)
    // what toolgate wrote is a valid UI message for the SDK itself
    await expect(validateUIMessages({ messages })).resolves.toHaveLength(2)
    // and the model reads each refusal as the call's tool result
    const model = await convertToModelMessages(messages)
    const results = model.flatMap((m) => (m.role === 'tool' ? m.content : [])).filter((p) => p.type === 'tool-result')
    expect(results.map((r) => [r.toolCallId, r.output])).toEqual([
      ['c_m', { type: 'error-text', value: report.calls[1].message }],
      ['c_d', { type: 'error-text', value: report.calls[2].message }],
    ])
    // the caller's messages are not changed
    expect(toolParts(assistant).map((p) => p.state)).toEqual(['input-available', 'input-available', 'input-available'])
  })

  it('decides an approved call again on the input the client sent back (an edited approval is refused)', async () => {
    const assistant: UIMessage = {
      id: 'a1',
      role: 'assistant',
      parts: [
        {
          type: 'tool-delete_file',
          toolCallId: 'c1',
          state: 'approval-responded',
          input: { path: '/tmp/x', recursive: true },
          approval: { id: 'ap1', approved: true },
        },
      ],
    }
    const { messages, report } = await gateUIMessages([assistant], new ToolGate(gateConfig), caller)
    expect(report.calls[0]).toMatchObject({ callId: 'c1', outcome: 'rejected', reason: 'invalid' })
    expect(messages[0].parts[0]).toMatchObject({ state: 'output-error', errorText: report.calls[0].message, approval: { id: 'ap1', approved: true } })
  })

  it('an approved call the gate refuses never runs in the next streamText (and without the gate it would)', async () => {
    const approved = (): UIMessage[] => [
      { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'clean up' }] },
      {
        id: 'a1',
        role: 'assistant',
        parts: [
          { type: 'step-start' },
          { type: 'tool-delete_file', toolCallId: 'c1', state: 'approval-responded', input: { path: '/etc', recursive: true }, approval: { id: 'ap1', approved: true } },
        ],
      },
    ]
    const runWith = async (messages: UIMessage[]) => {
      const ran: unknown[] = []
      const tools = {
        delete_file: tool({
          inputSchema: jsonSchema(remove as JSONSchema7),
          needsApproval: true,
          execute: async (input: unknown) => {
            ran.push(input)
            return 'deleted'
          },
        }),
      }
      const model = new MockLanguageModelV4({ doStream: streamTurn('Done.', []) })
      await streamText({ model, tools, messages: await convertToModelMessages(messages) }).consumeStream()
      return ran
    }
    // the client edited the approved input: the SDK alone runs it
    expect(await runWith(approved())).toEqual([{ path: '/etc', recursive: true }])
    const { messages, report } = await gateUIMessages(approved(), new ToolGate(gateConfig), caller)
    expect(report.calls[0]).toMatchObject({ outcome: 'rejected', reason: 'invalid' })
    expect(await runWith(messages)).toEqual([])
  })

  it('refuses a payload whose ids collide (an answered part claiming a pending call id)', async () => {
    const assistant: UIMessage = {
      id: 'a1',
      role: 'assistant',
      parts: [
        { type: 'tool-delete_file', toolCallId: 'c1', state: 'input-available', input: { path: '/' } },
        { type: 'tool-delete_file', toolCallId: 'c1', state: 'output-available', input: { path: '/' }, output: 'ok' },
      ],
    }
    await expect(gateUIMessages([assistant], new ToolGate(gateConfig), caller)).rejects.toMatchObject({ code: 'E_PAYLOAD' })
  })
})

describe('filterTools with dialect ai-sdk-ui', () => {
  it('keeps the server tool record by key, live tool objects untouched', () => {
    const kept = new ToolGate(gateConfig).filterTools(clientTools, { ...caller, dialect: 'ai-sdk-ui' })
    expect(Object.keys(kept)).toEqual(['get_weather', 'delete_file'])
    expect(kept.get_weather).toBe(clientTools.get_weather)
  })

  it('refuses a tool list of another shape', () => {
    expect(() => new ToolGate(gateConfig).filterTools([{ name: 'get_weather' }], { dialect: 'ai-sdk-ui' })).toThrow(expect.objectContaining({ code: 'E_PAYLOAD' }))
  })
})
