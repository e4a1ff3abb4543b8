// A loopback stand-in for the OpenAI and Anthropic HTTP APIs, for driving the official clients
// through an agent loop. It scripts the model (the first request of a conversation gets the
// tool-call turn it was given, any later one a final text answer) and enforces what the real APIs
// enforce about tool-call bookkeeping, answering 400 with each API's error shape otherwise:
//
// - Chat Completions: an assistant message with `tool_calls` must be followed immediately by `tool`
//   messages answering every id exactly once, and a `tool` message must answer an id of that run.
// - Messages: consecutive same-role turns are combined (as the API documents); the turn after an
//   assistant turn with `tool_use` blocks must be a user turn starting with `tool_result` blocks
//   answering every id exactly once, and no `tool_result` may answer an id of no such block.
// - Responses: every `function_call` input item needs exactly one `function_call_output` with its
//   `call_id`, and no output may name a call absent from the input.
//
// Error texts follow what the APIs answer (as quoted in public bug reports); the duplicate-result
// wording for Responses is not documented anywhere we found and is ours.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** The OpenAI error body: `{ error: { message, type, param, code } }`. */
export interface OpenAIErrorBody {
  error: { message: string; type: 'invalid_request_error'; param: string | null; code: string | null }
}

/** The Anthropic error body: `{ type: 'error', error: { type, message } }`. */
export interface AnthropicErrorBody {
  type: 'error'
  error: { type: 'invalid_request_error' | 'not_found_error'; message: string }
}

/** One request the upstream received, in arrival order. */
export interface Recorded {
  path: string
  body: Record<string, unknown>
  status: number
}

/** The model turns the upstream answers a conversation's first request with. */
export interface Script {
  /** A `chat.completion` holding tool calls (`POST /v1/chat/completions`). */
  chat?: unknown
  /** A Messages API `message` holding `tool_use` blocks (`POST /v1/messages`). */
  messages?: unknown
  /** A Responses API `response` holding `function_call` items (`POST /v1/responses`). */
  responses?: unknown
}

/** A running upstream. */
export interface Upstream {
  /** `http://127.0.0.1:<port>`: the Anthropic client's baseURL; append `/v1` for OpenAI's. */
  origin: string
  /** Every request received. */
  requests: Recorded[]
  /** Stops listening. */
  close(): Promise<void>
}

type Json = Record<string, unknown>
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])

function openaiError(message: string, param: string | null): OpenAIErrorBody {
  return { error: { message, type: 'invalid_request_error', param, code: null } }
}

function anthropicError(message: string): AnthropicErrorBody {
  return { type: 'error', error: { type: 'invalid_request_error', message } }
}

const TOOL_WITHOUT_CALL = "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."

/** The Chat Completions check on `messages`: the 400 body the API would answer, or undefined. */
export function chatPairingError(messages: unknown): OpenAIErrorBody | undefined {
  if (!Array.isArray(messages) || messages.length === 0) return openaiError("Invalid value for 'messages': expected a non-empty array.", 'messages')
  let i = 0
  while (i < messages.length) {
    const m = messages[i]
    if (!isObj(m) || typeof m.role !== 'string') return openaiError(`Invalid type for 'messages[${i}]': expected an object with a 'role'.`, `messages.[${i}]`)
    if (m.role === 'tool') return openaiError(TOOL_WITHOUT_CALL, `messages.[${i}].role`)
    const calls = m.role === 'assistant' ? list(m.tool_calls) : []
    const at = i++
    if (calls.length === 0) continue
    const expected: string[] = []
    for (const [j, c] of calls.entries()) {
      const fn = isObj(c) && isObj(c.function) ? c.function : undefined
      if (!isObj(c) || typeof c.id !== 'string' || fn === undefined || typeof fn.name !== 'string') {
        return openaiError(`Missing required parameter: 'messages[${at}].tool_calls[${j}]'.`, `messages.[${at}].tool_calls.[${j}]`)
      }
      if (typeof fn.arguments !== 'string') {
        return openaiError(`Invalid type for 'messages[${at}].tool_calls[${j}].function.arguments': expected a string, but got ${typeof fn.arguments} instead.`, `messages.[${at}].tool_calls.[${j}].function.arguments`)
      }
      expected.push(c.id)
    }
    const answeredAt = new Map<string, number>()
    while (i < messages.length && isObj(messages[i]) && (messages[i] as Json).role === 'tool') {
      const t = messages[i] as Json
      const id = t.tool_call_id
      if (typeof id !== 'string' || !expected.includes(id)) return openaiError(TOOL_WITHOUT_CALL, `messages.[${i}].role`)
      const first = answeredAt.get(id)
      if (first !== undefined) {
        return openaiError(`Invalid parameter: Duplicate value for 'tool_call_id' of '${id}', in messages[${first}] and messages[${i}].`, `messages.[${i}].tool_call_id`)
      }
      if (typeof t.content !== 'string' && !Array.isArray(t.content)) {
        return openaiError(`Invalid type for 'messages[${i}].content': expected one of a string or array of objects.`, `messages.[${i}].content`)
      }
      answeredAt.set(id, i++)
    }
    const missing = expected.filter((id) => !answeredAt.has(id))
    if (missing.length > 0) {
      return openaiError(
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. " +
          `The following tool_call_ids did not have response messages: ${missing.join(', ')}`,
        `messages.[${i}].role`,
      )
    }
  }
  return undefined
}

interface Turn {
  role: string
  /** Index of the turn's first message in the request. */
  index: number
  blocks: { block: Json; path: string }[]
}

/** Combines consecutive same-role messages into one turn, as the Messages API documents. */
function turnsOf(messages: unknown[]): Turn[] | AnthropicErrorBody {
  const turns: Turn[] = []
  for (const [i, m] of messages.entries()) {
    if (!isObj(m) || (m.role !== 'user' && m.role !== 'assistant')) return anthropicError(`messages.${i}.role: Input should be 'user' or 'assistant'`)
    const blocks: Turn['blocks'] = typeof m.content === 'string'
      ? [{ block: { type: 'text', text: m.content }, path: `messages.${i}.content` }]
      : list(m.content).map((b, j) => ({ block: isObj(b) ? b : {}, path: `messages.${i}.content.${j}` }))
    if (typeof m.content !== 'string' && !Array.isArray(m.content)) return anthropicError(`messages.${i}.content: Input should be a valid list`)
    const last = turns[turns.length - 1]
    if (last !== undefined && last.role === m.role) last.blocks.push(...blocks)
    else turns.push({ role: m.role, index: i, blocks })
  }
  return turns
}

/** The Messages API check on `messages`: the 400 body the API would answer, or undefined. */
export function anthropicPairingError(messages: unknown): AnthropicErrorBody | undefined {
  if (!Array.isArray(messages) || messages.length === 0) return anthropicError('messages: at least one message is required')
  const turns = turnsOf(messages)
  if (!Array.isArray(turns)) return turns
  for (const [t, turn] of turns.entries()) {
    const prev = turns[t - 1]
    const uses = prev?.role === 'assistant' ? prev.blocks.filter((b) => b.block.type === 'tool_use').map((b) => String(b.block.id)) : []
    const answered = new Set<string>()
    let leading = true
    for (const { block, path } of turn.blocks) {
      if (block.type !== 'tool_result') {
        leading = false
        continue
      }
      const id = String(block.tool_use_id)
      if (turn.role !== 'user' || !uses.includes(id)) {
        return anthropicError(`${path}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`)
      }
      if (answered.has(id)) {
        return anthropicError(`${path}: each tool_use must have a single result. Found multiple \`tool_result\` blocks with id: ${id}`)
      }
      if (block.content !== undefined && typeof block.content !== 'string' && !Array.isArray(block.content)) {
        return anthropicError(`${path}.content: Input should be a valid string or list`)
      }
      // Results must open the turn; one after other content answers nothing.
      if (leading) answered.add(id)
    }
    const mine = turn.role === 'assistant' ? turn.blocks.filter((b) => b.block.type === 'tool_use').map((b) => String(b.block.id)) : []
    if (mine.length === 0) continue
    const next = turns[t + 1]
    const nextAnswered = new Set<string>()
    for (const { block } of next?.role === 'user' ? next.blocks : []) {
      if (block.type !== 'tool_result') break
      nextAnswered.add(String(block.tool_use_id))
    }
    const missing = mine.filter((id) => !nextAnswered.has(id))
    if (missing.length > 0) {
      return anthropicError(`messages.${turn.index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`)
    }
  }
  return undefined
}

/** The Responses API check on `input`: the 400 body the API would answer, or undefined. */
export function responsesPairingError(input: unknown): OpenAIErrorBody | undefined {
  if (typeof input === 'string') return undefined
  if (!Array.isArray(input)) return openaiError("Invalid type for 'input': expected a string or an array.", 'input')
  const calls: string[] = []
  const outputs = new Set<string>()
  for (const item of input) {
    if (!isObj(item)) continue
    if (item.type === 'function_call') calls.push(String(item.call_id))
    if (item.type !== 'function_call_output') continue
    const id = String(item.call_id)
    if (!calls.includes(id)) return openaiError(`No tool call found for function call output with call_id ${id}.`, 'input')
    if (outputs.has(id)) return openaiError(`Duplicate function call output for call_id ${id}.`, 'input')
    outputs.add(id)
  }
  const missing = calls.find((id) => !outputs.has(id))
  return missing === undefined ? undefined : openaiError(`No tool output found for function call ${missing}.`, 'input')
}

const FINAL_TEXT = 'All tool results received.'

function chatFinal(model: unknown): Json {
  return {
    id: 'chatcmpl-final', object: 'chat.completion', created: 1741569953, model,
    choices: [{ index: 0, message: { role: 'assistant', content: FINAL_TEXT, refusal: null, annotations: [] }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 120, completion_tokens: 6, total_tokens: 126 },
  }
}

function messagesFinal(model: unknown): Json {
  return {
    id: 'msg_final', type: 'message', role: 'assistant', model, content: [{ type: 'text', text: FINAL_TEXT }],
    stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 120, output_tokens: 6 },
  }
}

function responsesFinal(model: unknown): Json {
  return {
    id: 'resp_final', object: 'response', created_at: 1741569953, status: 'completed', model, error: null,
    output: [{ type: 'message', id: 'msg_final', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: FINAL_TEXT, annotations: [] }] }],
    usage: { input_tokens: 120, output_tokens: 6, total_tokens: 126 },
  }
}

/** What the upstream answers one request with: a status and a JSON body. */
function answer(path: string, body: Json, script: Script): [number, unknown] {
  if (path === '/v1/chat/completions' && script.chat !== undefined) {
    if (typeof body.model !== 'string') return [400, openaiError("Missing required parameter: 'model'.", 'model')]
    const err = chatPairingError(body.messages)
    if (err) return [400, err]
    const called = list(body.messages).some((m) => isObj(m) && m.role === 'assistant' && list(m.tool_calls).length > 0)
    return [200, called ? chatFinal(body.model) : script.chat]
  }
  if (path === '/v1/messages' && script.messages !== undefined) {
    if (typeof body.model !== 'string') return [400, anthropicError('model: Field required')]
    if (typeof body.max_tokens !== 'number') return [400, anthropicError('max_tokens: Field required')]
    const err = anthropicPairingError(body.messages)
    if (err) return [400, err]
    const called = list(body.messages).some((m) => isObj(m) && m.role === 'assistant' && list(m.content).some((b) => isObj(b) && b.type === 'tool_use'))
    return [200, called ? messagesFinal(body.model) : script.messages]
  }
  if (path === '/v1/responses' && script.responses !== undefined) {
    if (typeof body.model !== 'string') return [400, openaiError("Missing required parameter: 'model'.", 'model')]
    const err = responsesPairingError(body.input)
    if (err) return [400, err]
    const called = list(body.input).some((it) => isObj(it) && it.type === 'function_call')
    return [200, called ? responsesFinal(body.model) : script.responses]
  }
  return path.startsWith('/v1/messages')
    ? [404, { type: 'error', error: { type: 'not_found_error', message: `Not found: ${path}` } }]
    : [404, { error: { message: `Invalid URL (POST ${path})`, type: 'invalid_request_error', param: null, code: null } }]
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const c of req) chunks.push(c as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

/** Starts the upstream on 127.0.0.1, port chosen by the OS. */
export async function startUpstream(script: Script): Promise<Upstream> {
  const requests: Recorded[] = []
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void readBody(req).then((text) => {
      const path = (req.url ?? '').split('?')[0]
      let body: Json = {}
      let status: number
      let out: unknown
      try {
        const parsed: unknown = JSON.parse(text)
        if (!isObj(parsed)) throw new Error('not an object')
        body = parsed
        ;[status, out] = req.method === 'POST' ? answer(path, body, script) : [405, openaiError('Method not allowed', null)]
      } catch {
        ;[status, out] = [400, openaiError('We could not parse the JSON body of your request.', null)]
      }
      requests.push({ path, body, status })
      const n = requests.length
      res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_${n}`, 'request-id': `req_${n}` })
      res.end(JSON.stringify(out))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve()))),
  }
}
