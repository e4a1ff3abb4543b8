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
//
// A request with `stream: true` gets the same turn as server-sent events, cut the way the APIs cut
// them (see chatChunks, messageEvents, responseEvents): Chat Completions chunks ending
// `data: [DONE]`, Messages events `message_start` … `message_stop` (with a `ping`), Responses
// events `response.created` … `response.completed`; each tool call's arguments arrive in two
// deltas.
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
  /** The HTTP status answered (a stream is 200 with its events). */
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

// --- streaming: a whole turn cut into the events each API streams it as ---

/** One server-sent event: its `event:` name (Messages API only) and its data (an object, or `[DONE]`). */
export interface SseEvent {
  event?: string
  data: unknown
}

/** The SSE body text of `events`. */
export function sseText(events: SseEvent[]): string {
  return events.map((e) => `${e.event === undefined ? '' : `event: ${e.event}\n`}data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`).join('')
}

/** Two halves of a text, so a call's arguments arrive in more than one delta. */
function halves(text: string): [string, string] {
  const at = Math.ceil(text.length / 2)
  return [text.slice(0, at), text.slice(at)]
}

/**
 * A `chat.completion` as the chunks Chat Completions streams (choice 0): the role, the text, per
 * tool call a chunk with its id and name and two with its arguments, the finish reason, a usage
 * chunk with no choices (as `stream_options.include_usage` gives), then `[DONE]`.
 */
export function chatChunks(completion: unknown): SseEvent[] {
  const c = completion as Json
  const choice = (list(c.choices)[0] ?? {}) as Json
  const message = (choice.message ?? {}) as Json
  const head = { id: c.id, object: 'chat.completion.chunk', created: c.created, model: c.model, system_fingerprint: null }
  const chunk = (delta: Json, finish: unknown = null): SseEvent => ({ data: { ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] } })
  const out: SseEvent[] = [chunk({ role: 'assistant', content: typeof message.content === 'string' ? '' : null, refusal: null })]
  if (typeof message.content === 'string') for (const part of halves(message.content)) out.push(chunk({ content: part }))
  for (const [i, call] of list(message.tool_calls).entries()) {
    const fn = (call as Json).function as Json
    out.push(chunk({ tool_calls: [{ index: i, id: (call as Json).id, type: 'function', function: { name: fn.name, arguments: '' } }] }))
    for (const part of halves(String(fn.arguments))) out.push(chunk({ tool_calls: [{ index: i, function: { arguments: part } }] }))
  }
  out.push(chunk({}, choice.finish_reason ?? 'stop'))
  out.push({ data: { ...head, choices: [], usage: c.usage ?? null } })
  out.push({ data: '[DONE]' })
  return out
}

/**
 * A Messages API `message` as the events the API streams: `message_start` (empty content),
 * per block `content_block_start` / deltas (`text_delta`, or `input_json_delta` in two parts) /
 * `content_block_stop`, a `ping`, `message_delta` with the stop reason, `message_stop`.
 */
export function messageEvents(message: unknown): SseEvent[] {
  const m = message as Json
  const usage = (m.usage ?? {}) as Json
  const ev = (data: Json): SseEvent => ({ event: String(data.type), data })
  const out: SseEvent[] = [ev({ type: 'message_start', message: { ...m, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: usage.input_tokens ?? 0, output_tokens: 1 } } })]
  for (const [index, block] of list(m.content).entries()) {
    const b = block as Json
    if (b.type === 'tool_use') {
      out.push(ev({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } }))
      for (const part of halves(JSON.stringify(b.input))) out.push(ev({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: part } }))
    } else {
      out.push(ev({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }))
      out.push(ev({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: String(b.text) } }))
    }
    out.push(ev({ type: 'content_block_stop', index }))
    if (index === 0) out.push(ev({ type: 'ping' }))
  }
  out.push(ev({ type: 'message_delta', delta: { stop_reason: m.stop_reason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens ?? 0 } }))
  out.push(ev({ type: 'message_stop' }))
  return out
}

/**
 * A Responses API `response` as the events the API streams: `response.created`,
 * `response.in_progress`, per output item `output_item.added` / its text or argument deltas and
 * `.done` / `output_item.done`, then `response.completed` holding the whole response.
 */
export function responseEvents(response: unknown): SseEvent[] {
  const r = response as Json
  let seq = 0
  const ev = (data: Json): SseEvent => ({ event: String(data.type), data: { ...data, sequence_number: seq++ } })
  const pending = { ...r, status: 'in_progress', output: [], usage: null }
  const out: SseEvent[] = [ev({ type: 'response.created', response: pending }), ev({ type: 'response.in_progress', response: pending })]
  for (const [output_index, item] of list(r.output).entries()) {
    const it = item as Json
    if (it.type === 'function_call') {
      out.push(ev({ type: 'response.output_item.added', output_index, item: { ...it, status: 'in_progress', arguments: '' } }))
      for (const delta of halves(String(it.arguments))) out.push(ev({ type: 'response.function_call_arguments.delta', item_id: it.id, output_index, delta }))
      out.push(ev({ type: 'response.function_call_arguments.done', item_id: it.id, output_index, arguments: it.arguments }))
    } else if (it.type === 'message') {
      out.push(ev({ type: 'response.output_item.added', output_index, item: { ...it, status: 'in_progress', content: [] } }))
      for (const [content_index, part] of list(it.content).entries()) {
        const p = part as Json
        out.push(ev({ type: 'response.content_part.added', item_id: it.id, output_index, content_index, part: { ...p, text: '' } }))
        out.push(ev({ type: 'response.output_text.delta', item_id: it.id, output_index, content_index, delta: p.text, logprobs: [] }))
        out.push(ev({ type: 'response.output_text.done', item_id: it.id, output_index, content_index, text: p.text, logprobs: [] }))
        out.push(ev({ type: 'response.content_part.done', item_id: it.id, output_index, content_index, part: p }))
      }
    } else {
      out.push(ev({ type: 'response.output_item.added', output_index, item: it }))
    }
    out.push(ev({ type: 'response.output_item.done', output_index, item: it }))
  }
  out.push(ev({ type: 'response.completed', response: r }))
  return out
}

/** A 200 answer: the turn as JSON, or, for `stream: true`, as its SSE events. */
function turnAnswer(body: Json, turn: unknown, events: (turn: unknown) => SseEvent[]): [number, unknown] | [number, unknown, string] {
  return body.stream === true ? [200, turn, sseText(events(turn))] : [200, turn]
}

/** What the upstream answers one request with: a status, a JSON body, and the SSE text for a stream. */
function answer(path: string, body: Json, script: Script): [number, unknown] | [number, unknown, string] {
  if (path === '/v1/chat/completions' && script.chat !== undefined) {
    if (typeof body.model !== 'string') return [400, openaiError("Missing required parameter: 'model'.", 'model')]
    const err = chatPairingError(body.messages)
    if (err) return [400, err]
    const called = list(body.messages).some((m) => isObj(m) && m.role === 'assistant' && list(m.tool_calls).length > 0)
    return turnAnswer(body, called ? chatFinal(body.model) : script.chat, chatChunks)
  }
  if (path === '/v1/messages' && script.messages !== undefined) {
    if (typeof body.model !== 'string') return [400, anthropicError('model: Field required')]
    if (typeof body.max_tokens !== 'number') return [400, anthropicError('max_tokens: Field required')]
    const err = anthropicPairingError(body.messages)
    if (err) return [400, err]
    const called = list(body.messages).some((m) => isObj(m) && m.role === 'assistant' && list(m.content).some((b) => isObj(b) && b.type === 'tool_use'))
    return turnAnswer(body, called ? messagesFinal(body.model) : script.messages, messageEvents)
  }
  if (path === '/v1/responses' && script.responses !== undefined) {
    if (typeof body.model !== 'string') return [400, openaiError("Missing required parameter: 'model'.", 'model')]
    const err = responsesPairingError(body.input)
    if (err) return [400, err]
    const called = list(body.input).some((it) => isObj(it) && it.type === 'function_call')
    return turnAnswer(body, called ? responsesFinal(body.model) : script.responses, responseEvents)
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
      let sse: string | undefined
      try {
        const parsed: unknown = JSON.parse(text)
        if (!isObj(parsed)) throw new Error('not an object')
        body = parsed
        ;[status, out, sse] = req.method === 'POST' ? answer(path, body, script) : [405, openaiError('Method not allowed', null)]
      } catch {
        ;[status, out] = [400, openaiError('We could not parse the JSON body of your request.', null)]
      }
      requests.push({ path, body, status })
      const n = requests.length
      const type = sse === undefined ? 'application/json' : 'text/event-stream'
      res.writeHead(status, { 'content-type': type, 'x-request-id': `req_${n}`, 'request-id': `req_${n}` })
      res.end(sse ?? JSON.stringify(out))
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
