// The model turns the OpenAI/Anthropic adapter tests and the HTTP proxy tests guard, as the APIs
// answer them: five tool calls (`search`, `get_weather` with `days: "3"` to repair,
// `send_email`, `launch_rockets` that no request declares, `save_note`), so each test's config
// and policy decide which pass, are repaired or are refused.
import type { ToolGateConfig } from '../../src-ts/index'

/** A Chat Completions function tool call. */
export const call = (id: string, name: string, args: string) => ({ id, type: 'function', function: { name, arguments: args } })
/** A Messages `tool_use` block. */
export const use = (id: string, name: string, input: object) => ({ type: 'tool_use', id, name, input })

/** A Responses function call item `call_<n>`. */
export const fnItem = (n: number | string, name: string, args: string) => ({ type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name, arguments: args, status: 'completed' })

/** A Chat Completions answer whose assistant message makes these tool calls (see `call`). */
export const chatAnswer = (toolCalls: object[]) => ({
  id: 'chatcmpl-1', object: 'chat.completion', created: 1741569952, model: 'gpt-4.1',
  choices: [{
    index: 0, logprobs: null, finish_reason: 'tool_calls',
    message: { role: 'assistant', content: null, refusal: null, annotations: [], tool_calls: toolCalls },
  }],
  usage: { prompt_tokens: 82, completion_tokens: 40, total_tokens: 122 },
})

/** A Messages answer with these content blocks (text and `use` blocks). */
export const messageAnswer = (content: object[]) => ({
  id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-5-5',
  content,
  stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 90, output_tokens: 60 },
})

/** A Responses answer with these output items (messages and `fnItem`s). */
export const responsesAnswer = (output: object[]) => ({
  id: 'resp_1', object: 'response', created_at: 1741569952, status: 'completed', model: 'gpt-4.1', error: null,
  output,
  usage: { input_tokens: 82, output_tokens: 40, total_tokens: 122 },
})

/** A Responses assistant message item with this text. */
export const textItem = (text: string) => ({ type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] })

/** A Chat Completions answer with the five calls. */
export const CHAT_TURN = chatAnswer([
  call('call_a', 'search', '{"query":"rust"}'),
  call('call_b', 'get_weather', '{"city":"Paris","days":"3"}'),
  call('call_c', 'send_email', '{"to":"ceo@example.com"}'),
  call('call_d', 'launch_rockets', '{}'),
  call('call_e', 'save_note', '{"text":"remember"}'),
])

/** A Messages answer with text and the five calls. */
export const MESSAGE_TURN = messageAnswer([
  { type: 'text', text: 'Let me look that up.' },
  use('toolu_a', 'search', { query: 'rust' }),
  use('toolu_b', 'get_weather', { city: 'Paris', days: '3' }),
  use('toolu_c', 'send_email', { to: 'ceo@example.com' }),
  use('toolu_d', 'launch_rockets', {}),
  use('toolu_e', 'save_note', { text: 'remember' }),
])

/** A Responses answer with text and the five calls (`call_1` … `call_5`). */
export const RESPONSES_TURN = responsesAnswer([
  textItem('On it.'),
  fnItem(1, 'search', '{"query":"rust"}'),
  fnItem(2, 'get_weather', '{"city":"Paris","days":"3"}'),
  fnItem(3, 'send_email', '{"to":"ceo@example.com"}'),
  fnItem(4, 'launch_rockets', '{}'),
  fnItem(5, 'save_note', '{"text":"remember"}'),
])

/**
 * The gate the adapter tests decide the five calls with: `search` and `get_weather` (days 1–14)
 * allowed to analysts, `save_note` a write awaiting confirmation, `send_email` declared but
 * allowed to no one (`no_rule`), `launch_rockets` not declared (`unknown_tool`).
 */
export const ADAPTER_CONFIG = {
  tools: [
    { name: 'search', inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } },
    {
      name: 'get_weather',
      inputSchema: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1, maximum: 14 } }, required: ['city'], additionalProperties: false },
    },
    { name: 'send_email', inputSchema: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] } },
    { name: 'save_note', writes: true, inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
  ],
  policy: { rules: [{ id: 'analysts', effect: 'allow', roles: ['analyst'], tools: ['search', 'get_weather', 'save_note'] }] },
} satisfies ToolGateConfig
