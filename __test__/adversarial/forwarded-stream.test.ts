// Adversarial: a streamed answer through the HTTP proxy gives the client's SDK exactly the calls
// the gate allowed. The upstream's event stream is attacker-shaped: seeded mutants of Chat
// Completions, Responses and Messages streams — calls to allowed, hidden and undeclared tools,
// arguments needing a repair or broken, ids repeated or missing, argument deltas cut anywhere,
// events duplicated, moved, re-indexed or lost, another id, name or arguments on a later event —
// go from a loopback upstream through the real proxy (in process, a fixed `viewer` caller, a
// policy hiding `delete_file`) to the official `openai` and `@anthropic-ai/sdk` clients, whose
// own accumulators (`finalChatCompletion`, `finalResponse`, `finalMessage`) say what the client
// would run. Whenever one finishes without an error, its tool calls must be exactly the calls the
// gate allowed on the same events (`gate.stream`, a twin gate of the same tools and policy): the
// same tools with the decided arguments, in the order decided (the order they completed in: a
// hostile stream may complete its calls in another order than it numbers them). Deterministic.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { ToolGate, type ToolGateConfig } from '../../src-ts/index'
import { startHttpProxy, type HttpProxy } from '../../src-ts/proxy/http/proxy'
import { startRawUpstream, type RawUpstream } from '../helpers/http-proxy'
import { rng } from '../helpers/rng'
import { responseEvents } from '../helpers/upstream'
import { anthropicAt, openaiAt } from '../helpers/sdk-clients'

const TOOLS = [
  { name: 'search', schema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } },
  { name: 'get_weather', schema: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1, maximum: 14 } }, required: ['city'], additionalProperties: false } },
  { name: 'delete_file', schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
]
const policy = { rules: [{ effect: 'allow' as const, roles: ['viewer'], tools: ['search', 'get_weather'] }] }
/** The proxy's config: the tools by name (their schemas are learned from the request), the policy. */
const proxyConfig = { tools: TOOLS.map((t) => ({ name: t.name })), policy } as unknown as ToolGateConfig
/** The twin that decides the same events in process: the tools as the request declares them. */
const twin = new ToolGate({ tools: TOOLS.map((t) => ({ name: t.name, inputSchema: t.schema })), policy } as ToolGateConfig)
const requestTools = TOOLS.map((t) => ({ type: 'function' as const, function: { name: t.name, parameters: t.schema } }))
const MUTANTS = Number(process.env.FORWARDED_MUTANTS) || 120

type Obj = Record<string, unknown>
const ARGS: Record<string, string[]> = {
  search: ['{"query":"rust"}', '{"query":5}', '{}', '{"query":"a","query":"b"}'],
  get_weather: ['{"city":"Paris","days":"3"}', '{"city":"Oslo"}', '{"city":"Rome","days":99}', '{"city":"X","extra":1}', '{"city":'],
  delete_file: ['{"path":"/etc/passwd"}'],
  launch_rockets: ['{}'],
}

/**
 * The event-level mutations every stream shares: `e` of `list` sent twice (`how` 0), moved to
 * another place at or after `from` (1), or lost (2).
 */
function reshuffle<T>(list: T[], e: T, how: 0 | 1 | 2, r: () => number, from: number): void {
  const at = list.indexOf(e)
  if (how === 0) list.splice(at + 1, 0, structuredClone(e))
  else {
    list.splice(at, 1)
    if (how === 1) list.splice(from + Math.floor(r() * (list.length - from)), 0, e)
  }
}

/** A mutant stream of chunks (the SSE `data:` texts, `[DONE]` last). */
function mutantStream(r: () => number): string[] {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]
  const head = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', system_fingerprint: null }
  const chunk = (delta: Obj, finish: string | null = null): Obj => ({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })
  const chunks: Obj[] = [chunk({ role: 'assistant', content: '', refusal: null }), chunk({ content: 'Looking.' })]
  const n = 1 + Math.floor(r() * 3)
  for (let i = 0; i < n; i++) {
    const tool = pick(Object.keys(ARGS))
    const args = pick(ARGS[tool])
    const id = pick([`call_${i}`, `call_${i}`, `call_${i}`, 'call_0', ''])
    chunks.push(chunk({ tool_calls: [{ index: i, id, type: 'function', function: { name: tool, arguments: '' } }] }))
    // the arguments cut in one to three pieces anywhere
    const cuts = [0, ...Array.from({ length: Math.floor(r() * 3) }, () => Math.floor(r() * args.length)).sort((a, b) => a - b), args.length]
    for (let k = 1; k < cuts.length; k++) chunks.push(chunk({ tool_calls: [{ index: i, function: { arguments: args.slice(cuts[k - 1], cuts[k]) } }] }))
  }
  chunks.push(chunk({}, 'tool_calls'))
  for (let k = Math.floor(r() * 3); k > 0; k--) {
    const calls = chunks.filter((c) => Array.isArray(((c.choices as Obj[])[0].delta as Obj).tool_calls))
    const c = pick(calls)
    const entry = (((c.choices as Obj[])[0].delta as Obj).tool_calls as Obj[])[0]
    switch (Math.floor(r() * 6)) {
      case 0:
      case 1:
        reshuffle(chunks, c, Math.floor(r() * 2) as 0 | 1, r, 1) // a chunk sent twice, or moved
        break
      case 2:
        entry.index = Math.floor(r() * 4) // re-indexed
        break
      case 3:
        entry.id = pick(['call_9', 'call_0', '']) // another id on a later delta
        break
      case 4:
        entry.function = { ...(entry.function as Obj), name: pick(['delete_file', 'search', 'h']) } // a name on a later delta
        break
      default:
        reshuffle(chunks, c, 2, r, 1) // a chunk lost
    }
  }
  return [...chunks.map((c) => JSON.stringify(c)), '[DONE]']
}

/** A mutant Messages event stream (the SSE `data:` texts; each event's `type` is its SSE `event:` name). */
function mutantMessageStream(r: () => number): string[] {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]
  const message = { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } }
  const events: Obj[] = [{ type: 'message_start', message }, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }]
  events.push({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Looking.' } }, { type: 'content_block_stop', index: 0 })
  const n = 1 + Math.floor(r() * 3)
  for (let i = 1; i <= n; i++) {
    const tool = pick(Object.keys(ARGS))
    const input = pick(ARGS[tool])
    events.push({ type: 'content_block_start', index: i, content_block: { type: 'tool_use', id: pick([`toolu_${i}`, `toolu_${i}`, 'toolu_1', '']), name: tool, input: {} } })
    const cuts = [0, ...Array.from({ length: Math.floor(r() * 3) }, () => Math.floor(r() * input.length)).sort((a, b) => a - b), input.length]
    for (let k = 1; k < cuts.length; k++) events.push({ type: 'content_block_delta', index: i, delta: { type: 'input_json_delta', partial_json: input.slice(cuts[k - 1], cuts[k]) } })
    events.push({ type: 'content_block_stop', index: i })
  }
  events.push({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 9 } }, { type: 'message_stop' })
  for (let k = Math.floor(r() * 3); k > 0; k--) {
    const blocks = events.filter((e) => typeof e.index === 'number' && e.index > 0)
    const e = pick(blocks)
    switch (Math.floor(r() * 6)) {
      case 0:
      case 1:
        reshuffle(events, e, Math.floor(r() * 2) as 0 | 1, r, 1) // an event sent twice, or moved
        break
      case 2:
        e.index = Math.floor(r() * 5) // re-indexed
        break
      case 3:
        if (e.type === 'content_block_start') e.content_block = { ...(e.content_block as Obj), name: pick(['delete_file', 'search', 'launch_rockets']) }
        else e.delta = { type: 'input_json_delta', partial_json: pick(['}', '{"path":"/"}', '', '"']) }
        break
      case 4:
        if (e.type === 'content_block_start') e.content_block = { ...(e.content_block as Obj), input: { path: '/etc/passwd' } } // input given at the start
        break
      default:
        reshuffle(events, e, 2, r, 1) // an event lost
    }
  }
  return events.map((e) => JSON.stringify(e))
}

/** A mutant Responses event stream: a response's events (helpers/upstream.ts), then mutated. */
function mutantResponseStream(r: () => number): string[] {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]
  const text = { type: 'message', id: 'msg_a', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Looking.', annotations: [] }] }
  const calls = Array.from({ length: 1 + Math.floor(r() * 3) }, (_, i) => {
    const tool = pick(Object.keys(ARGS))
    return { type: 'function_call', id: `fc_${i}`, call_id: pick([`call_${i}`, `call_${i}`, 'call_0', '']), name: tool, arguments: pick(ARGS[tool]), status: 'completed' }
  })
  const response = { id: 'resp_1', object: 'response', created_at: 1, status: 'completed', model: 'm', error: null, output: [text, ...calls], usage: { input_tokens: 5, output_tokens: 9, total_tokens: 14 } }
  const events = responseEvents(response).map((e) => e.data as Obj)
  for (let k = Math.floor(r() * 3); k > 0; k--) {
    const about = events.filter((e) => typeof e.output_index === 'number' && (e.output_index as number) > 0)
    const e = pick(about)
    const item = e.item as Obj | undefined
    switch (Math.floor(r() * 7)) {
      case 0:
      case 1:
        reshuffle(events, e, Math.floor(r() * 2) as 0 | 1, r, 2) // an event sent twice, or moved
        break
      case 2:
        e.output_index = Math.floor(r() * 5) // re-indexed
        break
      case 3:
        if (item !== undefined) e.item = { ...item, name: pick(['delete_file', 'search', 'launch_rockets']) }
        else e.delta = pick(['}', '{"path":"/"}', '"'])
        break
      case 4:
        if (item !== undefined) e.item = { ...item, arguments: '{"path":"/etc/passwd"}', call_id: pick(['call_9', 'call_0']) }
        break
      case 5: {
        // the final response says something else than the stream did
        const done = events[events.length - 1].response as Obj
        const output = done.output as Obj[]
        output.push({ type: 'function_call', id: 'fc_x', call_id: 'call_x', name: pick(Object.keys(ARGS)), arguments: '{"path":"/etc/passwd"}', status: 'completed' })
        break
      }
      default:
        reshuffle(events, e, 2, r, 1) // an event lost
    }
  }
  return events.map((e) => JSON.stringify(e))
}

/**
 * What the gate allows for `events` in process, in the order it decided them (each call when it
 * completed, which is the order the stream forwards them in: a hostile stream may complete its
 * calls in another order than they are numbered); `undefined` when the stream fails.
 */
function decided(dialect: 'openai' | 'openai-responses' | 'anthropic', events: string[]): { name: string; arguments: unknown }[] | undefined {
  try {
    const s = twin.stream({ dialect, roles: ['viewer'] })
    const allowed: { name: string; arguments: unknown }[] = []
    for (const e of events) for (const c of s.push(`data: ${e}`)) if (c.allowed) allowed.push({ name: c.tool, arguments: c.arguments })
    s.end()
    return allowed
  } catch {
    return undefined
  }
}

describe('a streamed answer through the HTTP proxy gives the SDK exactly the allowed calls', () => {
  let upstream: RawUpstream
  let proxy: HttpProxy
  let current: string[] = []
  beforeAll(async () => {
    upstream = await startRawUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      // a Messages event goes with its type as the SSE event name, as the API writes it
      const named = (e: string) => (e.startsWith('{"type":') ? `event: ${(JSON.parse(e) as Obj).type as string}\n` : '')
      res.end(current.map((e) => `${named(e)}data: ${e}\n\n`).join(''))
    })
    proxy = await startHttpProxy({ upstream: upstream.origin, port: 0, config: proxyConfig, fixed: { roles: ['viewer'] }, log: () => {} })
  })
  afterAll(async () => {
    await proxy?.close()
    await upstream?.close()
  })

  /**
   * Runs `MUTANTS` streams made by `make` through the proxy, each read by `run` (the SDK's own
   * accumulation: the calls the client would run, or a throw when the stream failed there).
   */
  async function sweep(dialect: 'openai' | 'openai-responses' | 'anthropic', seed: number, make: (r: () => number) => string[], run: () => Promise<{ name: string; arguments: unknown }[]>): Promise<void> {
    const r = rng(seed)
    let finished = 0
    let withCalls = 0
    for (let m = 0; m < MUTANTS; m++) {
      current = make(r)
      const want = decided(dialect, current)
      let got: { name: string; arguments: unknown }[]
      try {
        got = await run()
      } catch {
        continue // the stream ended in an error: the client has no answer to run
      }
      const where = `mutant ${m}: ${current.join('\n')}`
      expect(want, `the SDK finished a stream the gate could not: ${where}\ngot ${JSON.stringify(got)}`).toBeDefined()
      const allowed = want!
      expect(got, where).toEqual(allowed)
      finished++
      if (allowed.length > 0) withCalls++
    }
    // the mutants reach the client, with allowed calls in them, or this tests nothing
    expect(finished).toBeGreaterThan(MUTANTS / 5)
    expect(withCalls).toBeGreaterThan(MUTANTS / 20)
  }

  it(`${MUTANTS} mutant Chat Completions streams: what the openai client accumulates is what the gate allowed`, async () => {
    const client = openaiAt(proxy.url)
    await sweep('openai', 777, mutantStream, async () => {
      const final = await client.chat.completions.stream({ model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: requestTools }).finalChatCompletion()
      return (final.choices[0]?.message.tool_calls ?? []).map((c) => {
        const f = (c as { function: { name: string; arguments: string } }).function
        return { name: f.name, arguments: JSON.parse(f.arguments) as unknown }
      })
    })
  })

  it(`${MUTANTS} mutant Responses streams: what the openai client accumulates is what the gate allowed`, async () => {
    const client = openaiAt(proxy.url)
    const tools = TOOLS.map((t) => ({ type: 'function' as const, name: t.name, parameters: t.schema, strict: false }))
    await sweep('openai-responses', 779, mutantResponseStream, async () => {
      const final = await client.responses.stream({ model: 'm', input: 'hi', tools }).finalResponse()
      return final.output.filter((o) => o.type === 'function_call').map((o) => ({ name: o.name, arguments: JSON.parse(o.arguments) as unknown }))
    })
  })

  it(`${MUTANTS} mutant Messages streams: what the @anthropic-ai/sdk client accumulates is what the gate allowed`, async () => {
    const client = anthropicAt(proxy.url)
    const tools = TOOLS.map((t) => ({ name: t.name, input_schema: t.schema as { type: 'object' } }))
    await sweep('anthropic', 778, mutantMessageStream, async () => {
      const final = await client.messages.stream({ model: 'm', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }], tools }).finalMessage()
      return final.content.filter((b) => b.type === 'tool_use').map((b) => ({ name: b.name, arguments: b.input }))
    })
  })
})
