// An Anthropic agent loop guarded by toolgate in one line.
//   npx tsx examples/anthropic.ts
// Runs offline: a scripted stand-in model answers through the client's `fetch` option. Remove
// `fetch: standInModel` (and set ANTHROPIC_API_KEY) to talk to the real API.
//
// The policy lets support agents search and read the weather; `delete_repo` is declared but no
// rule allows it. The model is offered only what the caller may call, its almost-right input is
// repaired ("3" days → 3), the refused call never runs and the model is told why, in the same
// user message as the other results.
import Anthropic from '@anthropic-ai/sdk'

import { guardAnthropic, runToolCalls, type ToolHandlers } from '../src-ts/adapters/anthropic'
import { ToolGate } from '../src-ts/index'

const gate = new ToolGate({
  tools: [
    { name: 'search', inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } },
    { name: 'get_weather', inputSchema: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city'] } },
    { name: 'delete_repo', inputSchema: { type: 'object', properties: { repo: { type: 'string' } }, required: ['repo'] } },
  ],
  policy: { rules: [{ effect: 'allow', roles: ['support'], tools: ['search', 'get_weather'] }] },
})

const handlers: ToolHandlers = {
  search: (input) => ({ hits: [`${String(input.query)}: 3 results`] }),
  get_weather: (input) => `${String(input.city)}: sunny for ${String(input.days)} days`,
}

const tools: Anthropic.Messages.Tool[] = ['search', 'get_weather', 'delete_repo'].map((name) => ({ name, input_schema: { type: 'object' } }))

async function main(): Promise<void> {
  const anthropic = new Anthropic({ apiKey: process.env.ANTHROPIC_API_KEY ?? 'sk-ant-offline', fetch: standInModel })
  // the one line: who is calling comes from your auth, never from the model
  const client = guardAnthropic(anthropic, gate, { subject: 'u_42', roles: ['support'] }, {
    onVerdict: (v, info) => console.log(`${info.callId} ${v.tool} ${v.outcome}${v.reason ? ` (${v.reason})` : ''}`),
  })

  const messages: Anthropic.Messages.MessageParam[] = [{ role: 'user', content: 'Weather in Paris for 3 days, search toolgate, then delete the old repo.' }]
  for (let turn = 0; turn < 4; turn++) {
    const msg = await client.messages.create({ model: 'claude-sonnet-5-5', max_tokens: 1024, messages, tools })
    // one user message answering every tool_use id: results, then the gate's refusals
    const results = await runToolCalls(msg, handlers, gate)
    if (results === undefined) {
      console.log(`model: ${msg.content.map((b) => (b.type === 'text' ? b.text : '')).join('')}`)
      return
    }
    messages.push({ role: 'assistant', content: msg.content }, results)
  }
}

/** A scripted model: first a turn with three calls, then a summary of the tool results it got. */
async function standInModel(_url: string | URL | Request, init?: RequestInit): Promise<Response> {
  const body = JSON.parse(String(init?.body)) as { messages: { role: string; content: unknown }[]; tools?: { name: string }[] }
  console.log(`offered to the model: ${(body.tools ?? []).map((t) => t.name).join(', ') || '(none)'}`)
  const lastTurn = body.messages[body.messages.length - 1].content
  const results = (Array.isArray(lastTurn) ? lastTurn : []).filter((b: { type?: string }) => b.type === 'tool_result') as { content: string; is_error?: boolean }[]
  const use = (id: string, name: string, input: object) => ({ type: 'tool_use', id, name, input })
  const content =
    results.length === 0
      ? [{ type: 'text', text: 'On it.' }, use('toolu_1', 'search', { query: 'toolgate' }), use('toolu_2', 'get_weather', { city: 'Paris', days: '3' }), use('toolu_3', 'delete_repo', { repo: 'old' })]
      : [{ type: 'text', text: `I got ${results.length} results: ${results.map((r) => `${r.is_error ? '(error) ' : ''}${r.content.split('\n')[0]}`).join(' | ')}` }]
  const message = {
    id: `msg_${results.length}`, type: 'message', role: 'assistant', model: 'claude-sonnet-5-5', content,
    stop_reason: results.length === 0 ? 'tool_use' : 'end_turn', stop_sequence: null, usage: { input_tokens: 10, output_tokens: 10 },
  }
  return new Response(JSON.stringify(message), { headers: { 'content-type': 'application/json' } })
}

main().catch((err: unknown) => {
  console.error(err)
  process.exit(1)
})
