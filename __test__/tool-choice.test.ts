// A request's `tool_choice` naming a tool the gate's filter removed is never sent upstream as it
// is: it would tell the model the name of a tool this caller may not see (and the API would
// answer 400, or force a call the gate refuses). It is sent as `auto` (request-tool-choice.ts) —
// by `filterBody` (the guarded OpenAI / Anthropic clients) and by the HTTP proxy, which logs why.
// Checked on the bodies themselves, and on what the loopback upstream receives from the real SDK
// clients, guarded and through `toolgate proxy`.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import type Anthropic from '@anthropic-ai/sdk'
import { generateText, jsonSchema, tool, wrapLanguageModel } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'
import type OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { gateTools, toolgateMiddleware } from '../src-ts/adapters/ai-sdk'
import { guardAnthropic } from '../src-ts/adapters/anthropic'
import { guardOpenAI } from '../src-ts/adapters/openai'
import { ToolGate, type CallContext, type ToolGateConfig } from '../src-ts/index'
import { filterBody } from '../src-ts/request-tools'
import { fitToolChoice } from '../src-ts/request-tool-choice'
import { startProxy, type RunningProxy } from './helpers/http-proxy'
import { CHAT_TURN, MESSAGE_TURN } from './helpers/turns'
import { anthropicAt, openaiAt } from './helpers/sdk-clients'
import { startUpstream, type Upstream } from './helpers/upstream'

const config: ToolGateConfig = {
  tools: ['search', 'send_email', 'web_search'].map((name) => ({ name, inputSchema: { type: 'object' } })),
  policy: { rules: [{ effect: 'allow', roles: ['analyst'], tools: ['search'] }] },
}
const gate = new ToolGate(config)
const ana: CallContext = { subject: 'ana', roles: ['analyst'] }
type Json = Record<string, unknown>

const chatTools = ['search', 'send_email'].map((name) => ({ type: 'function', function: { name, parameters: { type: 'object' } } }))
const responsesTools = [
  ...['search', 'send_email'].map((name) => ({ type: 'function', name, parameters: { type: 'object' }, strict: false })),
  { type: 'web_search' },
]
const anthropicTools = ['search', 'send_email'].map((name) => ({ name, input_schema: { type: 'object' } }))

const sent = (body: Json, dialect: 'openai' | 'openai-responses' | 'anthropic', why: string[] = []) => filterBody(body, gate, dialect, ana, (w) => why.push(w)) as Json

describe('filterBody', () => {
  it('Chat Completions: a function choice naming a removed tool is sent as auto, with why', () => {
    const why: string[] = []
    const out = sent({ tools: chatTools, tool_choice: { type: 'function', function: { name: 'send_email' } } }, 'openai', why)
    expect(out.tool_choice).toBe('auto')
    expect(why).toEqual(['tool_choice named `send_email`, which this caller may not call: sent as "auto"'])
    // a choice of a tool still offered, a string choice, and a name that was never offered are the host's own
    expect(sent({ tools: chatTools, tool_choice: { type: 'function', function: { name: 'search' } } }, 'openai').tool_choice).toEqual({ type: 'function', function: { name: 'search' } })
    expect(sent({ tools: chatTools, tool_choice: 'required' }, 'openai').tool_choice).toBe('required')
    expect(sent({ tools: chatTools, tool_choice: { type: 'function', function: { name: 'nope' } } }, 'openai').tool_choice).toEqual({ type: 'function', function: { name: 'nope' } })
  })

  it('Chat Completions: allowed_tools keeps the tools still offered, or becomes auto', () => {
    const spec = (name: string) => ({ type: 'function', function: { name } })
    const both = { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [spec('search'), spec('send_email')] } }
    expect(sent({ tools: chatTools, tool_choice: both }, 'openai').tool_choice).toEqual({ type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [spec('search')] } })
    const only = { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [spec('send_email')] } }
    expect(sent({ tools: chatTools, tool_choice: only }, 'openai').tool_choice).toBe('auto')
  })

  it('Responses: function, built-in and allowed_tools choices; required with nothing left', () => {
    expect(sent({ tools: responsesTools, tool_choice: { type: 'function', name: 'send_email' } }, 'openai-responses').tool_choice).toBe('auto')
    expect(sent({ tools: responsesTools, tool_choice: { type: 'web_search' } }, 'openai-responses').tool_choice).toBe('auto')
    expect(sent({ tools: responsesTools, tool_choice: { type: 'function', name: 'search' } }, 'openai-responses').tool_choice).toEqual({ type: 'function', name: 'search' })
    const allowed = { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'search' }, { type: 'web_search' }] }
    expect(sent({ tools: responsesTools, tool_choice: allowed }, 'openai-responses').tool_choice).toEqual({ type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'search' }] })
    const none = filterBody({ tools: responsesTools, tool_choice: 'required' }, gate, 'openai-responses', { subject: 'guest' }) as Json
    expect(none).toMatchObject({ tools: [], tool_choice: 'auto' })
  })

  it('Anthropic: a tool choice naming a removed tool becomes auto (parallel setting kept); any with nothing left too', () => {
    const why: string[] = []
    const out = sent({ tools: anthropicTools, tool_choice: { type: 'tool', name: 'send_email', disable_parallel_tool_use: true } }, 'anthropic', why)
    expect(out.tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true })
    expect(why[0]).toMatch(/`send_email`.*\{"type":"auto"\}/)
    expect(sent({ tools: anthropicTools, tool_choice: { type: 'tool', name: 'search' } }, 'anthropic').tool_choice).toEqual({ type: 'tool', name: 'search' })
    expect(sent({ tools: anthropicTools, tool_choice: { type: 'any' } }, 'anthropic').tool_choice).toEqual({ type: 'any' })
    const guest = filterBody({ tools: anthropicTools, tool_choice: { type: 'any' } }, gate, 'anthropic', { subject: 'guest' }) as Json
    expect(guest).toMatchObject({ tools: [], tool_choice: { type: 'auto' } })
  })
})

describe('fitToolChoice with the filtered list given lazily (the HTTP proxy)', () => {
  it('answers as with the list, and reads it only for a choice that could be rewritten', () => {
    const kept = chatTools.slice(0, 1)
    const spec = (name: string) => ({ type: 'function', function: { name } })
    const cases: [unknown, unknown[], 'openai' | 'openai-responses' | 'anthropic', boolean][] = [
      ['auto', chatTools, 'openai', false],
      ['none', chatTools, 'openai', false],
      ['required', chatTools, 'openai', true],
      [spec('send_email'), chatTools, 'openai', true],
      [spec('search'), chatTools, 'openai', true],
      [spec('never_declared'), chatTools, 'openai', false],
      [{ type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [spec('search'), spec('send_email')] } }, chatTools, 'openai', true],
      [{ type: 'auto' }, anthropicTools, 'anthropic', false],
      [{ type: 'tool', name: 'send_email' }, anthropicTools, 'anthropic', true],
      [{ type: 'any' }, anthropicTools, 'anthropic', true],
    ]
    for (const [choice, before, dialect, reads] of cases) {
      const after = dialect === 'anthropic' ? anthropicTools.slice(0, 1) : kept
      let read = 0
      const lazy = fitToolChoice(choice, before, () => (read++, after), dialect)
      expect(lazy, JSON.stringify(choice)).toEqual(fitToolChoice(choice, before, after, dialect))
      expect(read, JSON.stringify(choice)).toBe(reads ? 1 : 0)
      // a filtered answer that is not a list rewrites nothing, as before
      expect(fitToolChoice(choice, before, () => ({}), dialect)).toBeUndefined()
    }
  })
})

describe('guarded clients and the HTTP proxy send no removed tool’s name upstream', () => {
  let upstream: Upstream
  let proxy: RunningProxy
  let dir: string
  beforeAll(async () => {
    upstream = await startUpstream({ chat: CHAT_TURN, messages: MESSAGE_TURN })
    dir = mkdtempSync(join(tmpdir(), 'toolgate-tool-choice-'))
    writeFileSync(join(dir, 'toolgate.config.json'), JSON.stringify(config))
    proxy = await startProxy(['--upstream', upstream.origin, '--port', '0', '--config', join(dir, 'toolgate.config.json')], { cwd: tmpdir() })
  })
  afterAll(async () => {
    await proxy?.close()
    await upstream?.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const last = (): Json => upstream.requests[upstream.requests.length - 1].body
  const analyst = { 'x-toolgate-subject': 'ana', 'x-toolgate-roles': 'analyst' }
  const chatBody = { model: 'gpt-4.1', messages: [{ role: 'user' as const, content: 'mail the CEO' }], tools: chatTools as OpenAI.Chat.Completions.ChatCompletionTool[] }
  const messagesBody = { model: 'claude-sonnet-5-5', max_tokens: 100, messages: [{ role: 'user' as const, content: 'mail the CEO' }], tools: anthropicTools as Anthropic.Messages.Tool[] }

  it('guardOpenAI, the rewrite told to onToolChoice', async () => {
    const told: string[] = []
    const client = guardOpenAI(openaiAt(upstream.origin), gate, ana, {
      onToolChoice: (why, info) => void told.push(`${info.dialect} ${info.context.subject}: ${why}`),
    })
    await client.chat.completions.create({ ...chatBody, tool_choice: { type: 'function', function: { name: 'send_email' } } })
    expect(last().tool_choice).toBe('auto')
    expect(JSON.stringify(last())).not.toContain('send_email')
    expect(told).toEqual(['openai ana: tool_choice named `send_email`, which this caller may not call: sent as "auto"'])
    await client.chat.completions.create({ ...chatBody, tool_choice: { type: 'function', function: { name: 'search' } } })
    expect(last().tool_choice).toEqual({ type: 'function', function: { name: 'search' } })
    expect(told).toHaveLength(1)
  })

  it('guardAnthropic, the rewrite told to onToolChoice', async () => {
    const told: string[] = []
    const client = guardAnthropic(anthropicAt(upstream.origin), gate, ana, { onToolChoice: (why) => void told.push(why) })
    await client.messages.create({ ...messagesBody, tool_choice: { type: 'tool', name: 'send_email' } })
    expect(last().tool_choice).toEqual({ type: 'auto' })
    expect(JSON.stringify(last())).not.toContain('send_email')
    expect(told).toHaveLength(1)
  })

  it('toolgate proxy, both APIs, the rewrite logged', async () => {
    const openai = openaiAt(proxy.url, analyst)
    await openai.chat.completions.create({ ...chatBody, tool_choice: { type: 'function', function: { name: 'send_email' } } })
    expect(last().tool_choice).toBe('auto')
    expect(JSON.stringify(last())).not.toContain('send_email')
    const anthropic = anthropicAt(proxy.url, analyst)
    await anthropic.messages.create({ ...messagesBody, tool_choice: { type: 'tool', name: 'send_email', disable_parallel_tool_use: true } })
    expect(last().tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true })
    expect(JSON.stringify(last())).not.toContain('send_email')
    expect(proxy.stderr()).toMatch(/anthropic.*tool_choice named `send_email`, which this caller may not call/)
  })
})

describe('the AI SDK middleware', () => {
  const text = { content: [{ type: 'text' as const, text: 'ok' }], finishReason: { unified: 'stop' as const, raw: 'stop' }, usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } }, warnings: [] }
  const tools = () =>
    gateTools(
      Object.fromEntries(['search', 'send_email'].map((name) => [name, tool({ inputSchema: jsonSchema<{ q?: string }>({ type: 'object' }), execute: async () => 'done' })])),
      gate,
      ana,
    )

  it('a toolChoice naming a removed tool is sent as auto (the AI SDK then says the forced call is missing); one still offered is kept', async () => {
    const run = async (toolName: string) => {
      const mock = new MockLanguageModelV4({ doGenerate: text as never })
      const model = wrapLanguageModel({ model: mock, middleware: toolgateMiddleware(gate, ana) })
      const done = generateText({ model, tools: tools(), toolChoice: { type: 'tool', toolName }, prompt: 'mail the CEO' })
      return { mock, done }
    }
    const hidden = await run('send_email')
    // the AI SDK checks the answer against the toolChoice the host passed: its own clear error
    await expect(hidden.done).rejects.toThrow(/required tool 'send_email'/)
    expect(hidden.mock.doGenerateCalls[0].tools!.map((t) => t.name)).toEqual(['search'])
    expect(hidden.mock.doGenerateCalls[0].toolChoice).toEqual({ type: 'auto' })
    const shown = await run('search')
    await shown.done.catch(() => undefined)
    expect(shown.mock.doGenerateCalls[0].toolChoice).toEqual({ type: 'tool', toolName: 'search' })
  })
})
