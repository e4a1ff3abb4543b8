// A loopback Chat Completions upstream for proxy tests that only care about decisions: it answers
// every request with the one tool call the last user message names (`{"tool":…,"args":…}` as its
// text), and `callThrough` sends such a request through a proxy and reads back what the gate did.
import { expect } from 'vitest'
import { startRawUpstream, type RawUpstream } from './http-proxy'

/** Starts the upstream. */
export function startToolCallUpstream(): Promise<RawUpstream> {
  return startRawUpstream((req, res) => {
    const body = JSON.parse(req.body) as { messages: { content: string }[] }
    const { tool, args } = JSON.parse(body.messages.at(-1)!.content) as { tool: string; args: object }
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(
      JSON.stringify({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1,
        model: 'm',
        choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: tool, arguments: JSON.stringify(args) } }] } }],
      }),
    )
  })
}

/**
 * One request through the proxy at `proxyUrl` asking for a call of `tool` (declared with an
 * open object schema among `declared`): `passed` when the call came back, else the refusal reason
 * from `x-toolgate-refused`.
 */
export async function callThrough(proxyUrl: string, declared: readonly string[], tool: string, args: object, who: { subject?: string; session?: string }): Promise<string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', authorization: 'Bearer sk-test' }
  if (who.subject) headers['x-toolgate-subject'] = who.subject
  if (who.session) headers['x-toolgate-session'] = who.session
  const r = await fetch(`${proxyUrl}/v1/chat/completions`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: JSON.stringify({ tool, args }) }], tools: declared.map((name) => ({ type: 'function', function: { name, parameters: { type: 'object' } } })) }),
  })
  expect(r.status).toBe(200)
  const refused = r.headers.get('x-toolgate-refused')
  const answer = (await r.json()) as { choices: { message: { tool_calls?: { function: { name: string } }[] } }[] }
  const calls = answer.choices[0]!.message.tool_calls ?? []
  if (refused === null) {
    expect(calls.map((c) => c.function.name)).toEqual([tool])
    return 'passed'
  }
  expect(calls).toEqual([])
  return /reason=(\w+)/.exec(refused)![1]!
}
