// Confirm-before-write through MCP elicitation. A `tools/call` the gate answers with outcome
// `confirm` is held by the proxy while it asks the client's user (`elicitation/create`, with an
// id of the proxy's own that neither the server nor the client's own requests use). On
// `accept` the gate confirms the call (`gate.confirm(token)`) and the proxy forwards it with the
// confirmed arguments; anything else — decline, cancel, an error, no answer before the token
// expires, the client cancelling its call — answers the call as a refused tool result.
// Every decision is the gate's (the second step of `confirm` runs policy again); this file keeps
// the two requests paired and bounded.
import { randomUUID } from 'node:crypto'

import type { TurnCall, Verdict } from '../../types'
import type { RpcId } from './jsonrpc-lines'
import type { Msg } from './rpc'

/** Elicitations one proxy keeps open at a time; past this, a call needing approval is refused. */
export const MAX_OPEN_ELICITATIONS = 64
/** The earliest protocol version with elicitation. */
const ELICITATION_SINCE = '2025-06-18'

/** What {@link McpConfirmations} needs from the proxy. */
export interface McpConfirmSinks {
  /** Writes to the client; `related` is the id of the client request the message belongs to. */
  toClient(msg: Msg, related?: RpcId): void
  /** Forwards the client's `call` to the server with the confirmed verdict's arguments (and receipt). */
  forward(call: Msg, verdict: Verdict): void
  log(line: string): void
}

/** Options of {@link McpConfirmations}. */
export interface McpConfirmOptions {
  /** Longest wait for the user's answer in ms (default, and never beyond: until the confirmation token expires). */
  timeoutMs?: number
}

interface Open {
  /** The client's `tools/call` that waits. */
  call: Msg
  callId: RpcId
  tool: string
  /** The proxy's `elicitation/create` id. */
  askId: string
  /** The gate's second step, bound to the gate that issued the token. */
  confirm: () => Verdict | Promise<Verdict>
  timer: NodeJS.Timeout
}

/** Whether the client's `initialize` capabilities offer form elicitation (`{}` means form). */
export function offersElicitation(capabilities: unknown): boolean {
  if (typeof capabilities !== 'object' || capabilities === null) return false
  const e = (capabilities as Msg).elicitation
  if (typeof e !== 'object' || e === null || Array.isArray(e)) return false
  return Object.keys(e).length === 0 || (e as Msg).form !== undefined
}

/**
 * The open confirmations of one client session. {@link ask} holds a client `tools/call` and
 * sends `elicitation/create`; {@link clientAnswer} takes the client's answer (never forwarded);
 * {@link cancelled} drops a call the client cancelled; {@link close} refuses every call still
 * waiting. Every held call is answered exactly once, or dropped when the client cancelled it.
 */
export class McpConfirmations {
  readonly #sinks: McpConfirmSinks
  readonly #timeoutMs: number | undefined
  /** Ids of the proxy's requests to the client: never shown to the server. */
  readonly #prefix = `toolgate-confirm-${randomUUID()}-`
  #seq = 0
  /** Open elicitations by their id. */
  readonly #open = new Map<string, Open>()
  /** The same, by the client call's id key. */
  readonly #byCall = new Map<string, Open>()
  /** Id keys of approved calls whose confirmation the gate is deciding off the event loop. */
  readonly #confirming = new Set<string>()
  #offered = false

  constructor(opts: McpConfirmOptions, sinks: McpConfirmSinks) {
    this.#timeoutMs = opts.timeoutMs
    this.#sinks = sinks
  }

  /** Records the client's `initialize` params (whether it offers elicitation). */
  clientInitialize(params: unknown): void {
    this.#offered = typeof params === 'object' && params !== null && offersElicitation((params as Msg).capabilities)
  }

  /** Whether the user can be asked: the client offered form elicitation and the protocol has it. */
  canAsk(protocolVersion: string | undefined): boolean {
    return this.#offered && protocolVersion !== undefined && protocolVersion >= ELICITATION_SINCE && this.#open.size < MAX_OPEN_ELICITATIONS
  }

  /** Whether `id` is one of this session's elicitation ids (a client answer to it is never forwarded). */
  owns(id: unknown): id is string {
    return typeof id === 'string' && id.startsWith(this.#prefix)
  }

  /** How many calls wait for the user. */
  get size(): number {
    return this.#open.size
  }

  /**
   * Holds `call` (the client's `tools/call`, whose verdict `v` is `confirm`) and asks the user.
   * `confirm` runs the gate's second step with the token (on the gate that issued it).
   */
  ask(call: Msg, callId: RpcId, v: TurnCall, confirm: (token: string) => Verdict | Promise<Verdict>): void {
    const c = v.confirmation!
    const askId = `${this.#prefix}${++this.#seq}`
    const untilExpiry = Math.max(0, Date.parse(c.expiresAt) - Date.now())
    const wait = Math.min(Number.isFinite(untilExpiry) ? untilExpiry : 0, this.#timeoutMs ?? Infinity)
    const timer = setTimeout(() => this.#timedOut(askId), wait)
    timer.unref?.()
    const open: Open = { call, callId, tool: v.tool, askId, confirm: () => confirm(c.token), timer }
    this.#open.set(askId, open)
    this.#byCall.set(key(callId), open)
    this.#sinks.log(`asking the user to approve ${v.tool} (id ${v.callId})`)
    this.#sinks.toClient(
      {
        jsonrpc: '2.0',
        id: askId,
        method: 'elicitation/create',
        params: {
          message: `Allow this tool call? It changes data.\n\n${c.summary}`,
          requestedSchema: { type: 'object', properties: {} },
        },
      },
      callId,
    )
  }

  /** A client response to one of {@link owns}'s ids: decides the held call. */
  clientAnswer(msg: Msg): void {
    const open = this.#take(msg.id as string)
    if (!open) return // late (timed out or cancelled): nothing waits for it
    const r = msg.result
    const action = typeof r === 'object' && r !== null ? (r as Msg).action : undefined
    if (action !== 'accept') {
      const why = msg.error !== undefined ? `the approval request failed (${clip(JSON.stringify(msg.error))})` : `the user answered ${typeof action === 'string' ? clip(action) : 'without an action'}`
      this.#sinks.log(`${open.tool} (id ${String(open.callId)}) not approved: ${why}`)
      this.#refuse(open, `The user did not approve \`${open.tool}\`, so it was not run. Do not retry it unless the user asks.`)
      return
    }
    const failed = (err: unknown) => {
      this.#sinks.log(`confirming ${open.tool} failed: ${(err as Error).message}`)
      this.#refuse(open, `\`${open.tool}\` was approved, but its confirmation could not be checked; it was not run.`)
    }
    let verdict: Verdict | Promise<Verdict>
    try {
      verdict = open.confirm()
    } catch (err) {
      failed(err)
      return
    }
    // with state in Redis the confirmation is decided off the event loop (docs/state.md); the
    // call still waits meanwhile
    if (verdict instanceof Promise) {
      const k = key(open.callId)
      this.#confirming.add(k)
      verdict.then(
        (v) => {
          this.#confirming.delete(k)
          this.#confirmed(open, v)
        },
        (err: unknown) => {
          this.#confirming.delete(k)
          failed(err)
        },
      )
    } else this.#confirmed(open, verdict)
  }

  /** Forwards an approved call whose confirmation the gate allowed, or refuses it. */
  #confirmed(open: Open, verdict: Verdict): void {
    if (!verdict.allowed) {
      this.#sinks.log(`${open.tool} (id ${String(open.callId)}) approved by the user, refused on confirmation: ${verdict.reason}`)
      this.#refuse(open, verdict.message ?? `\`${open.tool}\` was not run.`)
      return
    }
    this.#sinks.log(`${open.tool} (id ${String(open.callId)}) approved by the user; forwarding`)
    this.#sinks.forward(open.call, verdict)
  }

  /** The client's answer to elicitation `id` was too large to read: the call is refused. */
  clientAnswerUnreadable(id: string): void {
    const open = this.#take(id)
    if (open) this.#refuse(open, `The user's answer about \`${open.tool}\` could not be read, so it was not run.`)
  }

  /** The client cancelled its call `callId`: when it waits for the user, the question is withdrawn and the call dropped (answered never). Returns whether it waited. */
  cancelled(callId: RpcId): boolean {
    const open = this.#byCall.get(key(callId))
    if (!open) return false
    this.#take(open.askId)
    this.#sinks.log(`${open.tool} (id ${String(callId)}) cancelled by the client while waiting for approval`)
    this.#withdraw(open, 'the tool call was cancelled')
    return true
  }

  /** Whether the client call `callId` waits for the user, or for the gate's confirmation of the user's approval. */
  waiting(callId: RpcId): boolean {
    if (this.#byCall.size === 0 && this.#confirming.size === 0) return false
    const k = key(callId)
    return this.#byCall.has(k) || this.#confirming.has(k)
  }

  /** Ends every open confirmation: each waiting call is answered with `answer(callId)`. */
  close(answer: (callId: RpcId) => Msg): void {
    for (const open of [...this.#open.values()]) {
      this.#take(open.askId)
      this.#withdraw(open, 'the proxy is closing')
      this.#sinks.toClient(answer(open.callId), open.callId)
    }
  }

  /** Forgets every open confirmation without a word (the client is gone). */
  drop(): void {
    for (const open of [...this.#open.values()]) this.#take(open.askId)
  }

  #timedOut(askId: string): void {
    const open = this.#take(askId)
    if (!open) return
    this.#sinks.log(`${open.tool} (id ${String(open.callId)}) not approved in time`)
    this.#withdraw(open, 'no answer in time')
    this.#refuse(open, `The user did not approve \`${open.tool}\` in time, so it was not run. Do not retry it unless the user asks.`)
  }

  #take(askId: string): Open | undefined {
    const open = this.#open.get(askId)
    if (!open) return undefined
    clearTimeout(open.timer)
    this.#open.delete(askId)
    this.#byCall.delete(key(open.callId))
    return open
  }

  /** Tells the client the question is void (`notifications/cancelled` for the elicitation). */
  #withdraw(open: Open, reason: string): void {
    this.#sinks.toClient({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: open.askId, reason } }, open.callId)
  }

  #refuse(open: Open, text: string): void {
    this.#sinks.toClient({ jsonrpc: '2.0', id: open.callId, result: { content: [{ type: 'text', text }], isError: true } }, open.callId)
  }
}

const key = (id: RpcId) => (typeof id === 'number' ? `n:${id}` : `s:${id}`)

function clip(s: string): string {
  return s.length > 200 ? `${s.slice(0, 200)}…` : s
}
