// `toolgate proxy` and the request members that give the model tools outside `tools` (the built
// CLI, real `openai` / `@anthropic-ai/sdk` clients, a loopback upstream that records each body).
// A caller whose policy allows only `get_weather` must not get provider-run tools by declaring
// them elsewhere: Anthropic `mcp_servers` (the MCP connector) and `container` are gated as the
// hosted tools `mcp` and `code_execution` (removed when hidden), Chat `web_search_options` as
// `web_search` (refused when hidden), a Responses `additional_tools` item's list is filtered
// like `tools`, and what the gate cannot see into (legacy `functions`, a stored prompt, stored
// conversation state, an Anthropic `tool_addition` block) is refused, 400 naming it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { ToolGate } from '../src-ts/index'
import { filterBody } from '../src-ts/request-tools'
import { startProxy, startRawUpstream, type RawUpstream, type RunningProxy } from './helpers/http-proxy'
import { chatAnswer, messageAnswer, responsesAnswer, textItem } from './helpers/turns'

type Json = Record<string, unknown>

const CONFIG = {
  tools: [{ name: 'get_weather' }, { name: 'web_search' }, { name: 'mcp' }, { name: 'code_execution' }, { name: 'lookup' }],
  policy: {
    rules: [
      { effect: 'allow' as const, tools: ['get_weather'] },
      { effect: 'allow' as const, roles: ['admin'], tools: ['web_search', 'mcp', 'code_execution', 'lookup'] },
    ],
  },
}
const ADMIN = { 'x-toolgate-subject': 'root', 'x-toolgate-roles': 'admin' }
const USER = { 'x-toolgate-subject': 'eve' }

const MCP_SERVERS = [{ type: 'url' as const, url: 'https://mcp.example.com/sse', name: 'internal-admin', tool_configuration: { enabled: true } }]
const WEATHER_CHAT = { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object' } } }
const WEATHER_ANTHROPIC = { name: 'get_weather', input_schema: { type: 'object' as const } }
const WEATHER_RESPONSES = { type: 'function', name: 'get_weather', parameters: { type: 'object' }, strict: false }
const LOOKUP_RESPONSES = { type: 'function', name: 'lookup', parameters: { type: 'object' }, strict: false }

let dir: string
let upstream: RawUpstream
let proxy: RunningProxy
let open: RunningProxy

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-outside-tools-'))
  writeFileSync(join(dir, 'policy.json'), JSON.stringify(CONFIG))
  upstream = await startRawUpstream((req, res) => {
    const out = req.url.includes('/messages')
      ? messageAnswer([{ type: 'text', text: 'ok' }])
      : req.url.includes('/responses')
        ? responsesAnswer([textItem('ok')])
        : chatAnswer([])
    if (!req.url.includes('/messages') && !req.url.includes('/responses')) {
      const c = out as { choices: { message: Json; finish_reason: string }[] }
      c.choices[0].message = { role: 'assistant', content: 'ok' }
      c.choices[0].finish_reason = 'stop'
    }
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify(out))
  })
  ;[proxy, open] = await Promise.all([
    startProxy(['--upstream', upstream.origin, '--port', '0', '--config', join(dir, 'policy.json')]),
    startProxy(['--upstream', upstream.origin, '--port', '0']),
  ])
})
afterAll(async () => {
  await proxy?.close()
  await open?.close()
  await upstream?.close()
  rmSync(dir, { recursive: true, force: true })
})

const openai = (headers: Record<string, string>, p = proxy) => new OpenAI({ baseURL: `${p.url}/v1`, apiKey: 'k', maxRetries: 0, defaultHeaders: headers })
const anthropic = (headers: Record<string, string>, p = proxy) => new Anthropic({ baseURL: p.url, apiKey: 'k', maxRetries: 0, defaultHeaders: headers })
const last = () => upstream.requests[upstream.requests.length - 1]
const lastBody = (): Json => JSON.parse(last().body) as Json

/** Runs `send` and answers the 400 the proxy gave, checking nothing reached the upstream. */
async function refused(send: () => Promise<unknown>): Promise<string> {
  const before = upstream.requests.length
  const err = await send().then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(Error)
  expect((err as { status?: number }).status).toBe(400)
  expect(upstream.requests.length).toBe(before)
  return (err as Error).message
}

const raw = async (path: string, body: string, headers: Record<string, string> = USER) => {
  const before = upstream.requests.length
  const res = await fetch(`${proxy.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body })
  return { status: res.status, text: await res.text(), sent: upstream.requests.length > before ? last().body : undefined }
}

describe('Anthropic mcp_servers: the hosted tool `mcp`', () => {
  const create = (headers: Record<string, string>, p = proxy) =>
    anthropic(headers, p).beta.messages.create({ model: 'claude', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], tools: [WEATHER_ANTHROPIC], mcp_servers: MCP_SERVERS, betas: ['mcp-client-2025-04-04'] })

  it('a caller who may not use `mcp`: the servers are removed before the request goes upstream, and the rewrite logged', async () => {
    const msg = await create(USER)
    expect(msg.content).toEqual([{ type: 'text', text: 'ok' }])
    const sent = lastBody()
    expect(sent.mcp_servers).toBeUndefined()
    expect(last().body).not.toContain('internal-admin')
    expect(sent.tools).toEqual([WEATHER_ANTHROPIC])
    expect(proxy.stderr()).toContain('anthropic for eve: `mcp_servers` enables the hosted tool `mcp`, which this caller may not use: removed')
  })

  it('a caller a rule allows `mcp`, and any caller without a policy: the servers go upstream as sent', async () => {
    await create(ADMIN)
    expect(lastBody().mcp_servers).toEqual(MCP_SERVERS)
    await create(USER, open)
    expect(lastBody().mcp_servers).toEqual(MCP_SERVERS)
  })

  it('without any `tools`, and spelled with a `\\u` escape or written twice, the member is still decided on what goes upstream', async () => {
    const base = '"model":"claude","max_tokens":10,"messages":[{"role":"user","content":"hi"}]'
    const servers = JSON.stringify(MCP_SERVERS)
    for (const body of [`{${base},"mcp_servers":${servers}}`, `{${base},"mcp\\u005fservers":${servers}}`, `{${base},"mcp_servers":${servers},"mcp_servers":null}`, `{${base},"mcp_servers":null,"mcp_servers":${servers}}`]) {
      const r = await raw('/v1/messages', body)
      expect(r.status).toBe(200)
      expect(r.sent).toBeDefined()
      expect(r.sent).not.toContain('internal-admin')
    }
  })
})

describe('Anthropic container: the hosted tool `code_execution`', () => {
  it('removed for a caller who may not run code, kept for one who may', async () => {
    const container = { skills: [{ type: 'custom' as const, skill_id: 'skill_admin_tools', version: 'latest' }] }
    const create = (headers: Record<string, string>) =>
      anthropic(headers).beta.messages.create({ model: 'claude', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], tools: [WEATHER_ANTHROPIC, { type: 'code_execution_20250825', name: 'code_execution' }], container, betas: ['skills-2025-10-02'] })
    await create(USER)
    expect(lastBody().container).toBeUndefined()
    expect(lastBody().tools).toEqual([WEATHER_ANTHROPIC])
    await create(ADMIN)
    expect(lastBody().container).toEqual(container)
  })
})

describe('Anthropic tool_addition blocks', () => {
  it('a tool offered inside `messages` is refused, naming the block', async () => {
    const message = await refused(() =>
      anthropic(USER).beta.messages.create({
        model: 'claude',
        max_tokens: 10,
        tools: [WEATHER_ANTHROPIC],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'tool_addition', tool: { type: 'tool_definition', definition: { name: 'delete_all_files', input_schema: { type: 'object' } } } } as never] }],
      }),
    )
    expect(message).toContain('request `messages[0].content[1]`: a `tool_addition` block')
  })

  it('a server-held thread is refused', async () => {
    const message = await refused(() => anthropic(USER).beta.messages.create({ model: 'claude', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], thread: { type: 'continue', previous_message_id: 'msg_1' } }))
    expect(message).toContain('request `thread`')
  })
})

describe('Chat Completions web_search_options: the hosted tool `web_search`', () => {
  const create = (headers: Record<string, string>, p = proxy) =>
    openai(headers, p).chat.completions.create({ model: 'gpt-4o-search-preview', messages: [{ role: 'user', content: 'hi' }], tools: [WEATHER_CHAT], web_search_options: {} })

  it('a caller who may not search is answered 400 naming the member; nothing goes upstream', async () => {
    const message = await refused(() => create(USER))
    expect(message).toContain('request `web_search_options`: it enables the hosted tool `web_search`, which this caller may not use')
  })

  it('a caller a rule allows `web_search`, and any caller without a policy: sent as it is', async () => {
    await create(ADMIN)
    expect(lastBody().web_search_options).toEqual({})
    await create(USER, open)
    expect(lastBody().web_search_options).toEqual({})
  })

  it('without `tools` too', async () => {
    const r = await raw('/v1/chat/completions', '{"model":"m","messages":[{"role":"user","content":"hi"}],"web_search_options":{}}')
    expect(r.status).toBe(400)
    expect(r.sent).toBeUndefined()
  })
})

describe('Chat Completions legacy functions', () => {
  it('`functions` and `function_call` are refused, saying to send `tools`, even without a policy', async () => {
    for (const p of [proxy, open]) {
      const message = await refused(() =>
        openai(USER, p).chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }], tools: [WEATHER_CHAT], functions: [{ name: 'delete_all_files', description: 'wipe', parameters: { type: 'object' } }] }),
      )
      expect(message).toContain('request `functions`')
      expect(message).toContain('as `tools`')
    }
    const message = await refused(() => openai(USER).chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }], function_call: { name: 'delete_all_files' } }))
    expect(message).toContain('request `function_call`')
  })
})

describe('Responses', () => {
  it('an `additional_tools` input item is filtered like `tools`', async () => {
    const input = [
      { role: 'user' as const, content: 'hi' },
      { type: 'additional_tools', role: 'developer', tools: [WEATHER_RESPONSES, LOOKUP_RESPONSES] },
    ]
    const create = (headers: Record<string, string>) => openai(headers).responses.create({ model: 'gpt-5', input: input as never, tools: [WEATHER_RESPONSES as never] })
    await create(USER)
    expect((lastBody().input as Json[])[1]).toEqual({ type: 'additional_tools', role: 'developer', tools: [WEATHER_RESPONSES] })
    expect(last().body).not.toContain('lookup')
    expect(proxy.stderr()).toContain('openai-responses for eve: input[1] (additional_tools): tools this caller may not use removed')
    await create(ADMIN)
    expect((lastBody().input as Json[])[1]).toEqual({ type: 'additional_tools', role: 'developer', tools: [WEATHER_RESPONSES, LOOKUP_RESPONSES] })
  })

  it('a stored prompt, a previous response, a conversation and an item reference are refused, naming them', async () => {
    const client = openai(USER)
    const base = { model: 'gpt-5', input: 'hi' }
    expect(await refused(() => client.responses.create({ ...base, prompt: { id: 'pmpt_1' } }))).toContain('request `prompt`')
    expect(await refused(() => client.responses.create({ ...base, previous_response_id: 'resp_1' }))).toContain('request `previous_response_id`')
    expect(await refused(() => client.responses.create({ ...base, conversation: 'conv_1' }))).toContain('request `conversation`')
    expect(await refused(() => client.responses.create({ model: 'gpt-5', input: [{ type: 'item_reference', id: 'at_1' }] }))).toContain('request `input[0]`')
  })
})

describe('the client adapters fit the same members (filterBody)', () => {
  it('mcp_servers removed for a caller the gate hides `mcp` from; legacy functions refused; stored state passes', () => {
    const gate = new ToolGate(CONFIG)
    const told: string[] = []
    const body = { model: 'claude', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], tools: [WEATHER_ANTHROPIC], mcp_servers: MCP_SERVERS }
    const sent = filterBody(body, gate, 'anthropic', { subject: 'eve' }, (why) => told.push(why)) as Json
    expect(sent.mcp_servers).toBeUndefined()
    expect(told).toEqual(['`mcp_servers` enables the hosted tool `mcp`, which this caller may not use: removed'])
    expect(body.mcp_servers).toBe(MCP_SERVERS) // the host's body untouched
    expect((filterBody(body, gate, 'anthropic', { subject: 'root', roles: ['admin'] }) as Json).mcp_servers).toEqual(MCP_SERVERS)
    expect(() => filterBody({ model: 'm', messages: [], functions: [{ name: 'delete_all_files' }] }, gate, 'openai', {})).toThrow(/request `functions`/)
    expect((filterBody({ model: 'm', input: 'hi', previous_response_id: 'resp_1' }, gate, 'openai-responses', {}) as Json).previous_response_id).toBe('resp_1')
  })
})
