// An OpenAI agent loop guarded by toolgate in one line.
//   npx tsx examples/openai.ts
// Runs offline: a scripted stand-in model answers through the client's `fetch` option. Remove
// `fetch: standInModel` (and set OPENAI_API_KEY) to talk to the real API.
//
// The policy lets support agents search and read the weather; `delete_repo` is declared but no
// rule allows it. The model is offered only what the caller may call, its almost-right arguments
// are repaired ("3" days → 3), the refused call never runs and the model is told why.
import OpenAI from 'openai'

import { guardOpenAI, runToolCalls, type ToolHandlers } from '../src-ts/adapters/openai'
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
  search: (args) => ({ hits: [`${String(args.query)}: 3 results`] }),
  get_weather: (args) => `${String(args.city)}: sunny for ${String(args.days)} days`,
}

const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = ['search', 'get_weather', 'delete_repo'].map((name) => ({
  type: 'function',
  function: { name, parameters: { type: 'object' } },
}))

async function main(): Promise<void> {
  const openai = new OpenAI({ apiKey: process.env.OPENAI_API_KEY ?? 'sk-offline', fetch: standInModel })
  // the one line: who is calling comes from your auth, never from the model
  const client = guardOpenAI(openai, gate, { subject: 'u_42', roles: ['support'] }, {
    onVerdict: (v, info) => console.log(`${info.callId} ${v.tool} ${v.outcome}${v.reason ? ` (${v.reason})` : ''}`),
  })

  const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris for 3 days, search toolgate, then delete the old repo.' }]
  for (let turn = 0; turn < 4; turn++) {
    const res = await client.chat.completions.create({ model: 'gpt-4.1', messages, tools })
    const message = res.choices[0].message
    if (!message.tool_calls?.length) {
      console.log(`model: ${message.content}`)
      return
    }
    // the assistant message (repairs written back) + one tool message per call id
    messages.push(...(await runToolCalls(res, handlers, gate)))
  }
}

/** A scripted model: first a turn with three calls, then a summary of the tool messages it got. */
async function standInModel(_url: string | URL | Request, init?: RequestInit): Promise<Response> {
  const body = JSON.parse(String(init?.body)) as { messages: { role: string; content?: unknown }[]; tools?: { function: { name: string } }[] }
  console.log(`offered to the model: ${(body.tools ?? []).map((t) => t.function.name).join(', ') || '(none)'}`)
  const results = body.messages.filter((m) => m.role === 'tool').map((m) => String(m.content))
  const call = (id: string, name: string, args: object) => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } })
  const message =
    results.length === 0
      ? { role: 'assistant', content: null, tool_calls: [call('call_1', 'search', { query: 'toolgate' }), call('call_2', 'get_weather', { city: 'Paris', days: '3' }), call('call_3', 'delete_repo', { repo: 'old' })] }
      : { role: 'assistant', content: `I got ${results.length} results: ${results.map((r) => r.split('\n')[0]).join(' | ')}` }
  const completion = {
    id: `chatcmpl-${results.length}`, object: 'chat.completion', created: 0, model: 'gpt-4.1',
    choices: [{ index: 0, message, finish_reason: results.length === 0 ? 'tool_calls' : 'stop', logprobs: null }],
  }
  return new Response(JSON.stringify(completion), { headers: { 'content-type': 'application/json' } })
}

main().catch((err: unknown) => {
  console.error(err)
  process.exit(1)
})
