// The last check on a guarded stream before its events reach the client: every event that names
// a tool call — a Chat Completions `delta.tool_calls[]` entry, a Messages `tool_use` block (in
// `content_block_start` or a `message_start` snapshot) and its `input_json_delta`s, a Responses
// call item (`output_item.added` / `.done`, the `output` of `response.created` …
// `response.completed`) and its argument deltas and `.done` — is compared with what the gate
// decided for that call: the call must be one the gate allowed, with the same tool, the same
// name, namespace and type at every mention, and exactly the decided arguments. A mismatch is an
// `E_PAYLOAD` that stops the stream (sse.ts writes the dialect's error event); it is never
// forwarded. No decision is made here: the gate's verdicts are the reference.
import { isObj } from '../../json-object'
import { isDeepStrictEqual } from 'node:util'

import { ToolGateError } from '../../errors'
import type { TurnCall } from '../../types'
import { responsesCallShape, responsesMember, type AnswerDialect } from './call-parts'

type Obj = Record<string, unknown>

/** What the gate decided for one call, and how the stream first spelled it. */
interface Decided {
  call: TurnCall
  /** `type`, `name`, `namespace` at the first forwarded mention: every later mention must repeat them. */
  spelled?: string
  /** A start (`tool_use` block, Chat entry, Responses `output_item.added`) was forwarded. */
  started: boolean
}

/** Argument text streamed for one forwarded call, by its forwarded index. */
interface Open {
  callId: string
  text: string
}

const clip = (s: string) => (s.length > 64 ? `${s.slice(0, 64)}…` : s)

/**
 * The calls a stream's gate decided, and the check of every forwarded event against them (see
 * the file comment). {@link StreamDecisions.note} takes what `ToolCallStream.push` answered;
 * {@link StreamDecisions.check} takes what `forward()` released, before it is written, and throws
 * `E_PAYLOAD` naming the mismatch.
 */
export class StreamDecisions {
  readonly #dialect: AnswerDialect
  readonly #calls = new Map<string, Decided>()
  /** Chat: by choice and forwarded tool call index; Messages: by block index; Responses: by output index. */
  readonly #open = new Map<string, Open>()

  constructor(dialect: AnswerDialect) {
    this.#dialect = dialect
  }

  /** Records the calls the gate just decided. Two calls with one id make the stream ambiguous: refused. */
  note(calls: readonly TurnCall[]): void {
    for (const c of calls) {
      if (this.#calls.has(c.callId)) this.#fail(`two tool calls share the id \`${clip(c.callId)}\``)
      this.#calls.set(c.callId, { call: c, started: false })
    }
  }

  /** Checks `events` (as `forward()` released them); throws `E_PAYLOAD` at the first one that does not match a decision. */
  check(events: readonly unknown[]): void {
    for (const ev of events) {
      if (!isObj(ev)) continue
      if (this.#dialect === 'openai') this.#chat(ev)
      else if (this.#dialect === 'anthropic') this.#messages(ev)
      else this.#responses(ev)
    }
  }

  #fail(what: string): never {
    throw new ToolGateError('E_PAYLOAD', `${this.#dialect} stream: ${what}; the stream is stopped, the call never forwarded`)
  }

  /** The allowed decision for `id`, its spelling checked (and fixed at the first mention). */
  #decided(id: unknown, tool: string, spelled: string): Decided {
    if (typeof id !== 'string' || id === '') this.#fail('a tool call without an id would be forwarded')
    const d = this.#calls.get(id)
    if (d === undefined) this.#fail(`call \`${clip(id)}\` would be forwarded, but the gate decided no call with that id`)
    if (!d.call.allowed) this.#fail(`call \`${clip(id)}\` would be forwarded, but the gate refused it`)
    if (tool !== d.call.tool) this.#fail(`call \`${clip(id)}\` would be forwarded as \`${clip(tool)}\`, but the gate decided \`${clip(d.call.tool)}\``)
    if (d.spelled === undefined) d.spelled = spelled
    else if (d.spelled !== spelled) this.#fail(`call \`${clip(id)}\` changed its name, namespace or type after it was forwarded`)
    return d
  }

  /** Argument text must be the decided arguments: the same text, or JSON of the same value. */
  #sameText(d: Decided, text: unknown, what: string): void {
    if (typeof text !== 'string') this.#fail(`the ${what} of call \`${clip(d.call.callId)}\` are not text`)
    this.#sameStreamed(d, text, what)
  }

  #sameValue(d: Decided, value: unknown, what: string): void {
    if (!isDeepStrictEqual(value, d.call.arguments)) this.#fail(`the ${what} of call \`${clip(d.call.callId)}\` differ from the arguments the gate decided`)
  }

  /** Streamed argument text must be the decided arguments, as text or as the same JSON value. */
  #sameStreamed(d: Decided, text: string, what: string): void {
    if (text === d.call.argumentsJson) return
    let v: unknown
    try {
      v = JSON.parse(text)
    } catch {
      this.#fail(`the ${what} of call \`${clip(d.call.callId)}\` are not the arguments the gate decided`)
    }
    this.#sameValue(d, v, what)
  }

  #start(d: Decided): void {
    if (d.started) this.#fail(`call \`${clip(d.call.callId)}\` would be forwarded twice`)
    d.started = true
  }

  // ---- Chat Completions --------------------------------------------------------------------

  #chat(ev: Obj): void {
    if (!Array.isArray(ev.choices)) return
    for (const c of ev.choices) {
      if (!isObj(c)) continue
      for (const where of ['delta', 'message'] as const) {
        const m = c[where]
        if (!isObj(m)) continue
        if (m.function_call !== undefined && m.function_call !== null) this.#fail('a legacy `function_call` would be forwarded')
        if (m.tool_calls === undefined || m.tool_calls === null) continue
        if (where === 'message' || !Array.isArray(m.tool_calls)) this.#fail('tool calls would be forwarded outside `delta.tool_calls`')
        for (const e of m.tool_calls) this.#chatEntry(e)
      }
    }
  }

  #chatEntry(e: unknown): void {
    if (!isObj(e)) this.#fail('a tool call that is not an object would be forwarded')
    const has = (k: string) => e[k] !== undefined && e[k] !== null
    if (has('function') && has('custom')) this.#fail('a tool call carrying both `function` and `custom` would be forwarded')
    const type = e.type === 'custom' ? 'custom' : e.type === 'function' ? 'function' : this.#fail('a tool call without type `function` or `custom` would be forwarded')
    const body = e[type]
    if (!isObj(body) || typeof body.name !== 'string') this.#fail('a tool call fragment would be forwarded (the gate releases whole calls)')
    const d = this.#decided(e.id, body.name, `${type}:${body.name}`)
    this.#start(d)
    this.#sameText(d, body[type === 'function' ? 'arguments' : 'input'], 'arguments')
  }

  // ---- Anthropic Messages ------------------------------------------------------------------

  #messages(ev: Obj): void {
    if (ev.type === 'message_start' && isObj(ev.message) && Array.isArray(ev.message.content)) {
      for (const b of ev.message.content) {
        if (!isObj(b) || b.type !== 'tool_use') continue
        const d = this.#decided(b.id, String(b.name), `tool_use:${String(b.name)}`)
        this.#start(d)
        this.#sameValue(d, b.input, 'input')
      }
      return
    }
    if (typeof ev.type === 'string' && !ev.type.startsWith('content_block_')) {
      // a snapshot riding on any other event (`message_delta`, an event of a newer API …) carries no call
      for (const holder of [ev.message, ev.delta]) {
        if (isObj(holder) && Array.isArray(holder.content) && holder.content.some((b) => isObj(b) && b.type === 'tool_use')) this.#fail(`a \`${clip(ev.type)}\` event carrying a tool_use block would be forwarded`)
      }
      return
    }
    const key = `b${String(ev.index)}`
    if (ev.type === 'content_block_start' && isObj(ev.content_block) && ev.content_block.type === 'tool_use') {
      const b = ev.content_block
      const d = this.#decided(b.id, String(b.name), `tool_use:${String(b.name)}`)
      this.#start(d)
      if (b.input !== undefined && !(isObj(b.input) && Object.keys(b.input).length === 0)) this.#sameValue(d, b.input, 'input')
      this.#open.set(key, { callId: d.call.callId, text: isObj(b.input) && Object.keys(b.input).length > 0 ? JSON.stringify(b.input) : '' })
      return
    }
    const open = this.#open.get(key)
    if (open === undefined) return
    if (ev.type === 'content_block_delta') {
      const delta = isObj(ev.delta) ? ev.delta : {}
      if (delta.type !== 'input_json_delta' || typeof delta.partial_json !== 'string') this.#fail(`a ${JSON.stringify(delta.type)?.slice(0, 40)} delta inside a tool_use block would be forwarded`)
      open.text += delta.partial_json
    } else if (ev.type === 'content_block_stop') {
      this.#open.delete(key)
      const d = this.#calls.get(open.callId)!
      this.#sameStreamed(d, open.text === '' ? '{}' : open.text, 'input')
    }
  }

  // ---- Responses ---------------------------------------------------------------------------

  /** A Responses call item: its decision, checked for tool and spelling; `undefined` for items the host does not run. */
  #item(item: Obj): { d: Decided; member: string; text: boolean } | undefined {
    const shape = responsesCallShape(item)
    if (shape === undefined) return undefined
    const type = String(item.type)
    const name = typeof item.name === 'string' ? item.name : undefined
    const ns = typeof item.namespace === 'string' && item.namespace !== '' ? item.namespace : undefined
    if (shape === 'text' && name === undefined) this.#fail('a call item without a name would be forwarded')
    const tool = shape === 'builtin' ? type : ns === undefined ? name! : `${ns}.${name!}`
    const d = this.#decided(item.call_id, tool, JSON.stringify([type, name ?? null, ns ?? null]))
    return { d, member: responsesMember(item), text: shape === 'text' }
  }

  #responses(ev: Obj): void {
    const type = typeof ev.type === 'string' ? ev.type : ''
    const key = `o${String(ev.output_index)}`
    if ((type === 'response.output_item.added' || type === 'response.output_item.done') && isObj(ev.item)) {
      const it = this.#item(ev.item)
      if (it === undefined) return
      const v = ev.item[it.member]
      if (type === 'response.output_item.added') {
        this.#start(it.d)
        if (it.text) {
          if (v !== '' && v !== undefined) this.#sameText(it.d, v, 'arguments')
          this.#open.set(key, { callId: it.d.call.callId, text: '' })
        } else if (v !== undefined) this.#sameValue(it.d, v, 'action') // a built-in may be announced before its action
      } else if (it.text) this.#sameText(it.d, v, 'arguments')
      else this.#sameValue(it.d, v, 'action')
      return
    }
    if (type.endsWith('_arguments.delta') || type.endsWith('_input.delta') || type.endsWith('_arguments.done') || type.endsWith('_input.done')) {
      const open = this.#open.get(key)
      if (open === undefined) return
      const d = this.#calls.get(open.callId)!
      if (type.endsWith('.delta')) {
        if (typeof ev.delta !== 'string') this.#fail('an argument delta without text would be forwarded')
        open.text += ev.delta
        return
      }
      this.#sameText(d, open.text, 'streamed arguments')
      this.#sameText(d, type.endsWith('_arguments.done') ? ev.arguments : ev.input, 'arguments')
      return
    }
    if (isObj(ev.response) && Array.isArray(ev.response.output)) {
      for (const item of ev.response.output) {
        if (!isObj(item)) continue
        const it = this.#item(item)
        if (it === undefined) continue
        if (it.text) this.#sameText(it.d, item[it.member], 'arguments')
        else this.#sameValue(it.d, item[it.member], 'action')
      }
    }
  }
}
