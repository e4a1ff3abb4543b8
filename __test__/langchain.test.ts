// LangChain.js end to end: real @langchain/core messages and tools through the real native
// binding. A message instance reaches the core as JSON.stringify gives it (the lc constructor
// form); the feedback must build real ToolMessages; live tool instances are filtered by name.
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { AIMessage, AIMessageChunk, HumanMessage, ToolMessage, mapChatMessagesToStoredMessages } from '@langchain/core/messages'
import { load } from '@langchain/core/load'
import { tool } from '@langchain/core/tools'
import { convertToOpenAITool } from '@langchain/core/utils/function_calling'
import { z } from 'zod'

import { ToolGate, type TurnReport } from '../src-ts/index'
import type { LangChainInvalidToolCall, LangChainToolCall, LangChainToolMessageFields } from '../src-ts/dialects/langchain'

const gate = ToolGate.fromFile(join(__dirname, 'fixtures', 'dialects', 'tools.json'))

function parallelCalls(): AIMessage {
  return new AIMessage({
    content: 'Checking.',
    tool_calls: [
      { id: 'call_a', name: 'search', args: { query: 'rust' }, type: 'tool_call' },
      { id: 'call_b', name: 'get_weather', args: { city: 'Paris', days: '3', unit: 'CELSIUS' }, type: 'tool_call' },
      { id: 'call_c', name: 'send_email', args: { to: 'x@y.z' }, type: 'tool_call' },
    ],
  })
}

function expectParallelVerdicts(report: TurnReport): void {
  expect(report.dialect).toBe('langchain')
  expect(report.calls.map((c) => [c.callId, c.tool, c.outcome])).toEqual([
    ['call_a', 'search', 'passed'],
    ['call_b', 'get_weather', 'repaired'],
    ['call_c', 'send_email', 'rejected'],
  ])
  expect(report.calls[1].arguments).toEqual({ city: 'Paris', days: 3, unit: 'celsius' })
  expect(report.calls[2].reason).toBe('unknown_tool')
  expect(report.allowed.map((a) => a.callId)).toEqual(['call_a', 'call_b'])
}

/** Each feedback item must build a real ToolMessage answering its refused call. */
function expectToolMessages(report: TurnReport): ToolMessage[] {
  const refused = report.calls.filter((c) => !c.allowed)
  expect(report.feedback).toHaveLength(refused.length)
  return report.feedback.map((fields, i) => {
    // every refused call here has an id, so the feedback is a complete ToolMessageFields
    const msg = new ToolMessage(fields as LangChainToolMessageFields & { tool_call_id: string })
    expect(msg).toBeInstanceOf(ToolMessage)
    expect(msg.type).toBe('tool')
    expect(msg.tool_call_id).toBe(refused[i].callId)
    expect(msg.status).toBe('error')
    expect(msg.name).toBe(refused[i].tool)
    expect(msg.content).toBe(refused[i].message)
    expect(typeof msg.content === 'string' && msg.content.length > 0).toBe(true)
    return msg
  })
}

describe('langchain: AIMessage instances and their plain forms', () => {
  it('guards an AIMessage instance (serialized by the TS layer) and writes repairs back in that form', async () => {
    const message = parallelCalls()
    const report = gate.guard(message, { dialect: 'langchain' })
    expectParallelVerdicts(report)
    // the repaired turn comes back in the serialized form and revives as a real AIMessage
    const revived = (await load(JSON.stringify(report.payload))) as AIMessage
    expect(revived).toBeInstanceOf(AIMessage)
    expect(revived.tool_calls?.map((c) => c.args)).toEqual([
      { query: 'rust' },
      { city: 'Paris', days: 3, unit: 'celsius' },
      { to: 'x@y.z' },
    ])
    // the caller's own instance is untouched
    expect(message.tool_calls?.[1].args).toEqual({ city: 'Paris', days: '3', unit: 'CELSIUS' })
    expectToolMessages(report)
  })

  it('recognizes the instance with dialect auto', () => {
    expectParallelVerdicts(gate.guard(parallelCalls(), { dialect: 'auto' }))
  })

  it('guards the object form and the StoredMessage form alike', () => {
    const m = parallelCalls()
    // the hand-written types accept what @langchain/core produces (checked by tsc)
    const typed: { tool_calls: LangChainToolCall[]; invalid_tool_calls: LangChainInvalidToolCall[] } = {
      tool_calls: m.tool_calls ?? [],
      invalid_tool_calls: m.invalid_tool_calls ?? [],
    }
    expect(typed.tool_calls).toHaveLength(3)
    expect(gate.guard({ content: 'plain', tool_calls: [] }, { dialect: 'langchain' }).calls).toEqual([])
    const objectForm = { type: 'ai', content: m.content, tool_calls: m.tool_calls, invalid_tool_calls: m.invalid_tool_calls }
    const stored = mapChatMessagesToStoredMessages([m])[0]
    for (const form of [objectForm, stored]) {
      const report = gate.guard(form, { dialect: 'langchain' })
      expectParallelVerdicts(report)
      expectToolMessages(report)
    }
    const repaired = gate.guard(objectForm, { dialect: 'langchain' }).payload as typeof objectForm
    expect(repaired.tool_calls?.[1].args).toEqual({ city: 'Paris', days: 3, unit: 'celsius' })
  })

  it('refuses invalid_tool_calls bad_arguments, naming the parse error, while the valid call runs', () => {
    const message = new AIMessage({
      content: '',
      tool_calls: [{ id: 'ok_1', name: 'ping', args: {}, type: 'tool_call' }],
      invalid_tool_calls: [{ id: 'bad_1', name: 'search', args: '{"query":', error: 'Malformed args.', type: 'invalid_tool_call' }],
    })
    const report = gate.guard(message, { dialect: 'langchain' })
    expect(report.calls.map((c) => [c.callId, c.outcome, c.reason])).toEqual([
      ['ok_1', 'passed', undefined],
      ['bad_1', 'rejected', 'bad_arguments'],
    ])
    expect(report.calls[1].message).toContain('Malformed args.')
    const [answer] = expectToolMessages(report)
    expect(answer.tool_call_id).toBe('bad_1')
  })

  it('refuses a streamed call whose raw chunk text was cut off, though LangChain parsed it leniently', () => {
    const chunk = new AIMessageChunk({
      content: '',
      tool_call_chunks: [
        { id: 'c1', name: 'search', args: '{"query":"rust","tags":["a', index: 0, type: 'tool_call_chunk' },
        { id: 'c2', name: 'ping', args: '{}', index: 1, type: 'tool_call_chunk' },
      ],
    })
    // LangChain's own reading: the truncated call looks like a complete, valid one
    expect(chunk.tool_calls?.map((c) => c.id)).toEqual(['c1', 'c2'])
    expect(chunk.tool_calls?.[0].args).toEqual({ query: 'rust', tags: ['a'] })
    expect(chunk.invalid_tool_calls).toEqual([])
    const report = gate.guard(chunk, { dialect: 'langchain' })
    expect(report.calls.map((c) => [c.callId, c.outcome, c.reason])).toEqual([
      ['c1', 'rejected', 'bad_arguments'],
      ['c2', 'passed', undefined],
    ])
    expectToolMessages(report)
  })

  it('gates only the calls of a message list that no ToolMessage answers yet', () => {
    const history = [
      new HumanMessage('Weather in Oslo, then tidy up.'),
      new AIMessage({ content: '', tool_calls: [{ id: 'old', name: 'get_weather', args: { city: 'Oslo' }, type: 'tool_call' }] }),
      new ToolMessage({ content: '12C', tool_call_id: 'old' }),
      new AIMessage({ content: '', tool_calls: [{ id: 'new', name: 'delete_file', args: { path: 7 }, type: 'tool_call' }] }),
    ]
    const report = gate.guard(history, { dialect: 'auto' })
    expect(report.dialect).toBe('langchain')
    expect(report.calls.map((c) => [c.callId, c.outcome, c.reason])).toEqual([['new', 'rejected', 'invalid']])
    const [answer] = expectToolMessages(report)
    // the answer closes the loop: guarding the history with it appended leaves nothing pending
    expect(gate.guard([...history, answer], { dialect: 'langchain' }).calls).toEqual([])
  })

  it('reads a text-only AIMessage as no calls', () => {
    const report = gate.guard(new AIMessage('Hello!'), { dialect: 'auto' })
    expect(report.dialect).toBe('langchain')
    expect(report.calls).toEqual([])
    expect(report.feedback).toEqual([])
  })
})

describe('langchain: filterTools', () => {
  const make = (name: string) =>
    tool(async ({ query }: { query: string }) => query, { name, description: `${name} tool`, schema: z.object({ query: z.string() }) })

  it('keeps the caller’s own tool instances, by name, in order', () => {
    const tools = [make('search'), make('drop_table'), make('ping'), make('wire_money')]
    const kept = gate.filterTools(tools, { dialect: 'langchain' })
    expect(kept).toHaveLength(2)
    expect(kept[0]).toBe(tools[0])
    expect(kept[1]).toBe(tools[2])
    expect(typeof kept[0].invoke).toBe('function')
  })

  it('filters OpenAI-format definitions from convertToOpenAITool, as a list and under `tools`', () => {
    const defs = [make('get_weather'), make('exfiltrate')].map((t) => convertToOpenAITool(t))
    expect(gate.filterTools(defs, { dialect: 'langchain' }).map((d) => d.function.name)).toEqual(['get_weather'])
    const wrapped = gate.filterTools({ tool_choice: 'auto', tools: defs }, { dialect: 'langchain' })
    expect(wrapped.tools.map((d) => d.function.name)).toEqual(['get_weather'])
    expect(wrapped.tool_choice).toBe('auto')
  })
})
