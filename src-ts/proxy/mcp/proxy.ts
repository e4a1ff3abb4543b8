// The MCP proxy: sits between an MCP client and an MCP server, passes every message through
// unchanged, and gates the client's `tools/call` requests with a ToolGate built from the server's
// own `tools/list` answers (merged with the configured tools). All decisions are the gate's: this
// file only routes messages and keeps track of ids (pending-requests.ts; its own JSON-RPC answers
// and line checks: rpc.ts). Tool definitions are pinned (pins.ts);
// calls needing the user's approval are asked through elicitation (confirm.ts); the stdio
// runner is stdio.ts.
import { isObj as isObject } from '../../json-object'
import { randomUUID } from 'node:crypto'

import { guardSingleCall, type ToolGate } from '../../gate'
import type { SingleCallDecision } from '../../single-call'
import type { GateState } from '../../state'
import type { CallerOption } from '../../context'
import type { CallContext, GuardOptions, ToolGateConfig, TurnReport, Verdict } from '../../types'
import { RECEIPT_META } from '../../require-receipt'
import { MAX_MESSAGE_DEPTH, messageHead, sniffOversized, TOO_DEEP, valueDeeper, type LineEvent, type MessageHead, type RpcId } from './jsonrpc-lines'
import { McpConfirmations } from './confirm'
import { ToolPins } from './pins'
import type { McpConfigReloads } from './reload'
import { changedMessage, McpToolSet, withPage, type Learned } from './tools'
import { CALL, PendingRequests } from './pending-requests'
import { argumentsAt, clip, CONNECTION_CLOSED, idText, INVALID_REQUEST, isId, oneId, oneLine, OPEN_WHY, OVERLOADED, PARSE_ERROR, rpcError, type Msg } from './rpc'

/** Options of {@link McpProxy}. */
export interface McpProxyOptions {
  /** Configured tools and limits. A configured tool wins over the server's tool of that name
   *  (a configured tool without `inputSchema` takes the server's). */
  config?: ToolGateConfig
  /** Who is calling: the caller of every client message not given its own (`fromClient(msg, ctx)`),
   *  read when the message arrives; passed to its `guard`, `confirm` and `filterTools`. */
  context?: CallContext
  /** Send the client only the tools the gate keeps; with configured tools, only those are listed
   *  and callable (an allowlist). */
  filterList?: boolean
  /** Log sink (one line per call, no newline). Default: nothing. */
  log?: (line: string) => void
  /** The approved tool definitions (share one store between proxies fronting the same server).
   *  Default: a store of this proxy's own, in memory, accepting no changes. */
  pins?: ToolPins
  /** The store of loop, taint and confirmation state (share one between proxies serving the same
   *  callers, as the Streamable HTTP listener does across its sessions). Default: this proxy's own. */
  state?: GateState
  /** Longest wait in ms for the user to approve a call by elicitation (never beyond the
   *  confirmation token's expiry, which is also the default). */
  confirmTimeoutMs?: number
  /** Client messages held at most while the proxy's own `tools/list` is in flight; past it the
   *  oldest is failed (a request answered with a JSON-RPC error, a notification dropped).
   *  Default {@link DEFAULT_MAX_HELD}. */
  maxHeld?: number
  /** Client requests open at most: in flight to the server, or cancelled by the client and not
   *  yet answered by the server (their ids stay in use); past it a new one is answered with an
   *  error, not forwarded. The Streamable HTTP listener bounds each session's open requests by
   *  it too. Default {@link DEFAULT_MAX_PENDING}. */
  maxPending?: number
  /** A config the process may swap while it runs (`toolgate mcp-proxy` on SIGHUP): when given,
   *  the proxy is built from its current config (instead of `config`) and follows every reload. */
  reloads?: McpConfigReloads
}

/** Default bound on the client messages held while the proxy lists the server's tools. */
export const DEFAULT_MAX_HELD = 1024
/** Default bound on the client requests open: in flight to the server, or cancelled and not yet answered by it. */
export const DEFAULT_MAX_PENDING = 10_000

/** The two directions the proxy writes to. */
export interface McpProxySinks {
  /** To the client; `related` is the id of the client request a proxy-made message belongs to
   *  (an `elicitation/create` or answer for a held `tools/call`), for transports that route by it. */
  toClient(msg: unknown, related?: RpcId): void
  toServer(msg: unknown): void
  /** Optional: a client request the proxy is done with though it never answered it, so its id is
   *  free again — one the client cancelled while it waited for the user's approval (it never
   *  reached the server), or one the client cancelled that the server has now answered (the
   *  answer was dropped) or can no longer answer (it went away). For transports that track the
   *  client's open requests. */
  released?(id: RpcId): void
  /** Optional: a message to the client as its JSON text (one line, no newline) — a server
   *  message the proxy passes on untouched, written as the server wrote it. Without it the proxy
   *  calls {@link toClient} with the parsed message. */
  toClientText?(text: string): void
  /** Optional: a message to the server as JSON text — a decided `tools/call` as the very text
   *  the gate decided. Without it the proxy calls {@link toServer} with the parsed message. */
  toServerText?(text: string): void
}

/** A client message held while the proxy lists the server's tools, with the caller who sent it. */
interface Held {
  msg: Msg
  ctx: CallContext | undefined
}


/** How long the client's messages are held for the proxy's own tools/list. */
const LIST_TIMEOUT_MS = 10_000



/**
 * The proxy as a message router. Feed it every message each side sends ({@link fromClient},
 * {@link fromServer}, or the raw-line variants); it writes through `sinks`. Call
 * {@link serverClosed} when the server goes away: every request still waiting is answered with
 * an error.
 *
 * Tool discovery: after the client's `notifications/initialized` (when the server announced the
 * `tools` capability) the proxy asks the server for `tools/list` itself, with ids of its own
 * (`toolgate-<uuid>-<n>`, never seen by the client), and holds the client's later messages, in
 * order, until that list is in. Every `tools/list` answer to the client updates the gate too
 * (it is rebuilt when a tool or schema changed).
 *
 * Pinning: every listed definition goes to the pin store (`opts.pins`); a call to a tool whose
 * current definition is not the pinned one is refused (never forwarded) with a tool result
 * saying an operator must accept the change, and with `filterList` such a tool is not listed.
 *
 * Confirm-before-write: a call the gate answers `confirm` is, when the client offered form
 * elicitation, held while the user is asked (`elicitation/create` with ids of the proxy's own);
 * on `accept` the gate's `confirm` decides and the call is forwarded with the confirmed
 * arguments, otherwise it is refused. Without elicitation the gate's message goes back.
 */
export class McpProxy {
  readonly #opts: McpProxyOptions
  readonly #sinks: McpProxySinks
  readonly #log: (line: string) => void
  readonly #ownPrefix = `toolgate-${randomUUID()}-`
  #ownSeq = 0
  /** Client requests forwarded to the server and not yet answered: id → the request's method. */
  readonly #pending = new PendingRequests()
  /** Ids of forwarded requests the client cancelled and the server has not answered: a late
   *  answer to one is dropped, and the id is not reused meanwhile. Never forgotten before that
   *  answer (a forgotten id could be reused, and the late answer taken for the new request's):
   *  they count with {@link #pending} against `maxPending`. */
  readonly #cancelled = new Set<RpcId>()
  /** Ids of `tools/call`s the gate is deciding off the event loop (state in Redis). */
  readonly #deciding = new Set<RpcId>()
  /** The proxy's own tools/list requests in flight: id → whether it was the first page. */
  readonly #own = new Map<string, boolean>()
  /** The server's tools as learned, pinned, and the gate built from them. */
  readonly #tools: McpToolSet
  /** Pages of the proxy's own listing gathered so far. */
  #fetching: Map<string, Learned> | undefined
  readonly #confirm: McpConfirmations
  /** Client messages held while the proxy's own listing is in flight, each with its own caller. */
  #held: Held[] | undefined
  #protocolVersion: string | undefined
  #initializeId: RpcId | undefined
  #serverHasTools = false
  /** Whether the client's `notifications/initialized` went through. */
  #initialized: 'sent' | undefined
  #initAnswered = false
  #closed = false
  #closedWhy = 'the MCP server went away'
  /** The options of the last `tools/call` guard, with its caller prepared: made again only for a
   *  call of another context (a listener with identity gives each message its request's caller).
   *  No protocol version: the gate reads it only for a batch, and the proxy guards one message at
   *  a time. */
  #guardOpts: GuardOptions & { dialect: 'mcp' } & CallContext & CallerOption
  /** The context {@link #guardOpts} was made for. */
  #guardCtx: CallContext | undefined
  /** The state store is remote (Redis): calls are decided off the event loop. Fixed for the tool set's life. */
  readonly #remote: boolean

  constructor(opts: McpProxyOptions, sinks: McpProxySinks) {
    this.#opts = opts
    this.#sinks = sinks
    this.#log = opts.log ?? (() => {})
    // throws ToolGateError E_CONFIG for a broken config
    const config = opts.reloads !== undefined ? opts.reloads.config : opts.config
    this.#tools = new McpToolSet({ config, allowlist: opts.filterList === true, pins: opts.pins ?? new ToolPins(), log: this.#log, state: opts.state })
    opts.reloads?.track(this.#tools)
    this.#remote = this.#tools.state.remote
    this.#guardCtx = opts.context
    this.#guardOpts = this.#makeGuardOpts(opts.context)
    this.#confirm = new McpConfirmations(
      { timeoutMs: opts.confirmTimeoutMs },
      { toClient: (m, related) => sinks.toClient(m, related), forward: (call, v) => this.#forwardConfirmed(call, v), log: this.#log },
    )
  }

  /** The gate in use now (rebuilt when a listed tool or its schema changes). */
  get gate(): ToolGate {
    return this.#tools.gate
  }

  /** Guard options for `ctx`: the caller prepared (a context the gate cannot read is spread instead, and each guard refuses its call as before). */
  #makeGuardOpts(ctx: CallContext | undefined): GuardOptions & { dialect: 'mcp' } & CallContext & CallerOption {
    try {
      return { dialect: 'mcp', caller: this.#tools.gate.caller(ctx ?? {}) }
    } catch {
      return { dialect: 'mcp', ...ctx }
    }
  }

  /** The negotiated protocol version (from the server's initialize result). */
  get protocolVersion(): string | undefined {
    return this.#protocolVersion
  }

  /**
   * A raw line (or oversized-line report) from the client. A message nested deeper than
   * {@link MAX_MESSAGE_DEPTH} goes no further than its parse (what would read it next recurses).
   */
  clientLine(e: LineEvent): void {
    if (e.kind === 'oversized') {
      // never parsed: its id and method are read from its two ends
      this.#clientUnreadable(sniffOversized(e.head, e.tail), e.bytes)
      return
    }
    let msg: unknown
    try {
      msg = JSON.parse(e.text)
    } catch (err) {
      this.#log(`client sent a line that is not JSON (${(err as Error).message}); not forwarded: ${clip(e.text)}`)
      this.#sinks.toClient(rpcError(null, PARSE_ERROR, 'Parse error: the line is not JSON'))
      return
    }
    if (valueDeeper(msg, MAX_MESSAGE_DEPTH)) {
      this.#clientUnreadable(messageHead(msg), undefined)
      return
    }
    this.#fromClient(msg, e.text, this.#opts.context)
  }

  /**
   * A client message the proxy does not read: over the size limit (`bytes`), else nested too
   * deeply. A request is answered -32600; a response to a server request is replaced by an error
   * to the server (or, to the proxy's own question, refuses the call that waits for it).
   */
  #clientUnreadable(s: MessageHead, bytes: number | undefined): void {
    const why = bytes !== undefined ? `of ${bytes} bytes is over the limit` : TOO_DEEP
    this.#log(`client message ${why}; not forwarded`)
    if (s.isResponse && this.#confirm.owns(s.id)) {
      this.#confirm.clientAnswerUnreadable(s.id)
      return
    }
    if (s.isResponse) {
      // A client response to a server request: tell the server it will not come.
      if (s.id !== undefined) this.#sinks.toServer(rpcError(s.id, INVALID_REQUEST, bytes !== undefined ? `toolgate: the client's response was ${bytes} bytes, over the proxy's limit` : `toolgate: the client's response ${why}`))
      return
    }
    this.#sinks.toClient(rpcError(s.id ?? null, INVALID_REQUEST, `toolgate: message ${why}${bytes !== undefined ? ' (--max-message-bytes)' : ''}; not forwarded`), s.id)
  }

  /**
   * A raw line (or oversized-line report) from the server. A message nested deeper than
   * {@link MAX_MESSAGE_DEPTH} goes no further than its parse.
   */
  serverLine(e: LineEvent): void {
    if (e.kind === 'oversized') {
      // never parsed: its id and method are read from its two ends
      this.#serverUnreadable(sniffOversized(e.head, e.tail), e.bytes)
      return
    }
    let msg: unknown
    try {
      msg = JSON.parse(e.text)
    } catch (err) {
      this.#log(`server wrote a line that is not JSON (${(err as Error).message}); not forwarded: ${clip(e.text)}`)
      return
    }
    if (valueDeeper(msg, MAX_MESSAGE_DEPTH)) {
      this.#serverUnreadable(messageHead(msg), undefined)
      return
    }
    this.#fromServer(msg, e.text)
  }

  /**
   * A parsed message from the client (the listener has bounded its depth, before the SDK's
   * transport read it). `ctx`: who sent it (a listener with identity: the caller its request's
   * token proved); default `opts.context`. It is read now and kept with the message: a call held,
   * being decided or awaiting approval, and a `tools/list` in flight, are decided (and filtered)
   * for this caller, whatever the client sends meanwhile.
   */
  fromClient(msg: unknown, ctx: CallContext | undefined = this.#opts.context): void {
    this.#fromClient(msg, undefined, ctx)
  }

  /** `line`: the message's own text when it came as one line (a batch's members never do); `ctx`: its caller. */
  #fromClient(msg: unknown, line: string | undefined, ctx: CallContext | undefined): void {
    if (this.#closed) {
      // the server is gone: a request still gets its answer (an error), never silence
      if (isObject(msg) && typeof msg.method === 'string' && isId(msg.id)) this.#sinks.toClient(rpcError(msg.id, CONNECTION_CLOSED, `toolgate: ${this.#closedWhy}`), msg.id)
      else if (Array.isArray(msg)) for (const m of msg) this.#fromClient(m, undefined, ctx)
      return
    }
    if (Array.isArray(msg)) {
      // A 2025-03-26 batch: each message is routed on its own (the server answers each).
      for (const m of msg) this.#fromClient(m, undefined, ctx)
      return
    }
    if (!isObject(msg)) {
      this.#log(`client sent JSON that is not a JSON-RPC message; not forwarded: ${clip(JSON.stringify(msg))}`)
      this.#sinks.toClient(rpcError(null, INVALID_REQUEST, 'Invalid Request: expected a JSON-RPC 2.0 message object'))
      return
    }
    if (!('method' in msg) && this.#confirm.owns(msg.id)) {
      this.#confirm.clientAnswer(msg) // the user's answer to the proxy's own question: never forwarded
      return
    }
    if (typeof msg.method === 'string') {
      if (!('id' in msg) && !msg.method.startsWith('notifications/')) {
        // a request without an id: servers that dispatch on `method` alone would run it unchecked
        this.#log(`dropped a \`${clip(msg.method)}\` request without an id (a notification may not carry a request); not forwarded`)
        return
      }
      if ('id' in msg && !isId(msg.id)) {
        this.#log(`refused a \`${clip(msg.method)}\` request whose id is not a string or an integer; not forwarded`)
        this.#sinks.toClient(rpcError(null, INVALID_REQUEST, 'Invalid Request: a request id must be a string or an integer'))
        return
      }
      if ('id' in msg && this.#inFlight(msg.id as RpcId)) {
        // MCP: a request id is never reused within a session. Forwarded, this one's answer and
        // the first one's could each be taken for the other's (a `tools/list` answer passed on
        // unfiltered as the answer to a `ping`).
        const id = msg.id as RpcId
        this.#log(`refused a \`${clip(msg.method)}\` request whose id ${idText(id)} is still in flight; not forwarded`)
        this.#sinks.toClient(rpcError(id, INVALID_REQUEST, `Invalid Request: request id ${idText(id)} is still in flight (an id may not be reused within a session); not forwarded`), id)
        return
      }
    }
    if (this.#held) {
      if (this.#held.length >= (this.#opts.maxHeld ?? DEFAULT_MAX_HELD)) {
        const oldest = this.#held.shift()!.msg
        this.#log(`more than ${this.#opts.maxHeld ?? DEFAULT_MAX_HELD} client messages held while the server's tools are listed; the oldest is failed`)
        if (typeof oldest.method === 'string' && isId(oldest.id)) this.#sinks.toClient(rpcError(oldest.id, OVERLOADED, 'toolgate: too many messages while the proxy was learning the server\'s tools; not forwarded'), oldest.id)
      }
      // held with its caller: decided for who sent it, not for whoever sends the next message
      this.#held.push({ msg, ctx })
      return
    }
    this.#route(msg, line, ctx)
  }

  /**
   * Whether a client request with this id is in flight: held while the server's tools are
   * listed, being decided, waiting for the user's approval, forwarded and not yet answered, or
   * forwarded and cancelled (the server may still answer it).
   */
  #inFlight(id: RpcId): boolean {
    if (this.#pending.get(id) !== undefined || this.#confirm.waiting(id) || this.#deciding.has(id) || this.#cancelled.has(id)) return true
    const held = this.#held
    if (held !== undefined) for (const { msg: m } of held) if (m.id === id && typeof m.method === 'string') return true
    return false
  }

  /**
   * Whether a new request may go to the server: fewer than `maxPending` are open (in flight, or
   * cancelled and not yet answered); when not, it is answered with an error here.
   */
  #room(id: RpcId): boolean {
    const max = this.#opts.maxPending ?? DEFAULT_MAX_PENDING
    if (this.#pending.size + this.#cancelled.size < max) return true
    this.#log(`${max} client requests are open (${OPEN_WHY}); request ${idText(id)} answered with an error, not forwarded`)
    this.#sinks.toClient(rpcError(id, OVERLOADED, `toolgate: ${max} requests are open (${OPEN_WHY}); not forwarded`), id)
    return false
  }

  /** `ctx`: the caller who sent `msg`, as it was when the message arrived. */
  #route(msg: Msg, line: string | undefined, ctx: CallContext | undefined): void {
    const method = msg.method
    if (typeof method === 'string' && 'id' in msg) {
      const id = msg.id
      if (method === 'tools/call') {
        this.#call(msg, line, ctx)
        return
      }
      if (isId(id)) {
        if (!this.#room(id)) return
        const cursor = isObject(msg.params) && msg.params.cursor !== undefined
        // a tools/list answer is filtered for the caller who asked, whoever sends what meanwhile
        this.#pending.set(id, method === 'tools/list' ? { method, cursor, ctx } : { method, cursor })
        if (method === 'initialize') this.#initializeId = id
      }
      if (method === 'initialize') this.#confirm.clientInitialize(msg.params)
      this.#sinks.toServer(msg)
      return
    }
    if (method === 'notifications/cancelled' && isObject(msg.params) && isId(msg.params.requestId)) {
      // a call waiting for the user's approval never reached the server: the proxy drops it
      const id = msg.params.requestId
      if (this.#confirm.cancelled(id)) {
        this.#sinks.released?.(id)
        return
      }
      // the server may never answer a cancelled request: nothing to fail for it later; its id
      // stays in use until it does (a late answer is dropped, never taken for a later request's),
      // and counts against maxPending meanwhile
      if (this.#pending.get(id) !== undefined) {
        this.#pending.delete(id)
        this.#cancelled.add(id)
      }
    }
    this.#sinks.toServer(msg)
    if (method === 'notifications/initialized' && this.#initialized === undefined) {
      this.#initialized = 'sent'
      if (this.#serverHasTools) this.#startListing()
      else if (!this.#initAnswered && this.#initializeId !== undefined) this.#held ??= [] // the initialize answer is not in yet: wait for it
    }
  }

  /**
   * `line`: the message as the client wrote it, when it came as one line: the gate decides that
   * very text. `ctx`: the caller who sent it: the gate decides (and its confirmation runs) for
   * that caller, also when the call was held or is decided off the event loop.
   */
  #call(msg: Msg, line: string | undefined, ctx: CallContext | undefined): void {
    const name = isObject(msg.params) ? msg.params.name : undefined
    const changed = typeof name === 'string' ? this.#tools.changed(name) : undefined
    if (changed) {
      this.#log(`refused ${String(name)} (id ${String(msg.id)}): its definition is not the approved one`)
      this.#sinks.toClient({ jsonrpc: '2.0', id: isId(msg.id) ? msg.id : null, result: { content: [{ type: 'text', text: changedMessage(String(name), changed) }], isError: true } })
      return
    }
    const gate = this.#tools.gate
    const malformed = (err: unknown) => {
      // A tools/call the codec cannot read (an id that is not a string or integer …): never forwarded.
      this.#log(`refused a malformed tools/call: ${(err as Error).message}`)
      this.#sinks.toClient(rpcError(isId(msg.id) ? msg.id : null, INVALID_REQUEST, `Invalid Request: ${(err as Error).message}`))
    }
    // The text the gate decides is the text forwarded when the gate changed nothing: the line as
    // the client wrote it (the gate's strict parse refuses a line a server could read two ways —
    // a key written twice, a `__proto__` key), else the message serialized once. An unreadable
    // message is refused below, as the gate refuses it.
    let text: string
    if (line !== undefined) {
      text = line
    } else {
      try {
        text = JSON.stringify(msg)
      } catch (err) {
        malformed(err)
        return
      }
    }
    if (ctx !== this.#guardCtx) {
      this.#guardCtx = ctx
      this.#guardOpts = this.#makeGuardOpts(ctx)
    }
    const opts = this.#guardOpts
    if (this.#remote) {
      // state in Redis: decided off the event loop, then forwarded (docs/state.md); its id is in
      // flight meanwhile
      const id = msg.id as RpcId
      this.#deciding.add(id)
      gate.guardAsync(text, opts).then(
        (report) => {
          this.#deciding.delete(id)
          this.#decided(msg, text, gate, report, ctx)
        },
        (err: unknown) => {
          this.#deciding.delete(id)
          malformed(err)
        },
      )
      return
    }
    let report: TurnReport<'mcp'>
    try {
      // a plain call is answered without building a report
      const single = guardSingleCall(gate, text, opts)
      if (single !== undefined && single.kind !== 'report') {
        this.#decidedSingle(msg, text, single)
        return
      }
      report = single !== undefined ? (single.report as TurnReport<'mcp'>) : gate.guard(text, opts)
    } catch (err) {
      malformed(err)
      return
    }
    this.#decided(msg, text, gate, report, ctx)
  }

  /** {@link #decided} for a plain call's short answer: forwarded as decided (see {@link #forward}), or refused. */
  #decidedSingle(msg: Msg, text: string, d: Exclude<SingleCallDecision, { kind: 'report' }>): void {
    if (d.kind === 'refused') {
      this.#log(`refused ${d.tool || '(no name)'} (id ${String(msg.id)}): ${d.reason}`)
      this.#sinks.toClient(d.feedback)
      return
    }
    const params = isObject(msg.params) ? msg.params : undefined
    if (d.kind === 'changed' && d.outcome === 'repaired') this.#log(`repaired ${String(params?.name)} (id ${String(msg.id)}): ${d.flags.map((f) => `${f.code} ${f.path}`).join(', ')}`)
    const id = msg.id as RpcId
    if (!this.#room(id)) return
    this.#pending.set(id, CALL)
    // the message is read from the text the gate decided, never again from `msg` (a message
    // handed in as an object could answer differently when read a second time)
    if (d.kind === 'untouched') {
      this.#forward(msg, text, undefined, () => JSON.parse(text))
      return
    }
    this.#forward(msg, text, d.argumentsJson, () => {
      const decided = JSON.parse(text) as Msg
      return { ...decided, params: { ...(decided.params as Msg), arguments: JSON.parse(d.argumentsJson) } }
    })
  }

  /**
   * Sends an allowed call on as the gate decided it, where the transport writes text: the very
   * text it decided (`changed` undefined), or that text with `changed` in place of its arguments
   * object (no parse and re-serialization of the whole message). Otherwise — no text sink, no
   * arguments object to replace, or a text another reader could split (see {@link oneLine}) — the
   * message `decided()` answers.
   */
  #forward(msg: Msg, text: string, changed: string | undefined, decided: () => unknown): void {
    const toServerText = this.#sinks.toServerText
    if (toServerText !== undefined && oneLine(text)) {
      if (changed === undefined) {
        toServerText(text)
        return
      }
      const at = isObject(msg.params) && isObject(msg.params.arguments) ? argumentsAt(text) : undefined
      if (at !== undefined) {
        toServerText(`${text.slice(0, at.start)}${changed}${text.slice(at.end)}`)
        return
      }
    }
    this.#sinks.toServer(decided())
  }

  /**
   * Forwards a decided `tools/call` (`text`: the text the gate decided), asks the user to confirm
   * it, or answers its refusal. `ctx`: the caller the call was decided for, who confirms it.
   */
  #decided(msg: Msg, text: string, gate: ToolGate, report: TurnReport<'mcp'>, ctx: CallContext | undefined): void {
    const first = report.calls[0]
    if (first?.outcome === 'confirm' && first.confirmation !== undefined && isId(msg.id) && this.#confirm.canAsk(this.#protocolVersion)) {
      const remote = this.#remote
      this.#confirm.ask(msg, msg.id, first, (token) => (remote ? gate.confirmAsync(token, ctx) : gate.confirm(token, ctx)))
      return
    }
    if (report.feedback.length > 0) {
      for (const c of report.calls) if (!c.allowed) this.#log(`refused ${c.tool || '(no name)'} (id ${c.callId}): ${c.reason}`)
      for (const fb of report.feedback) this.#sinks.toClient(fb)
      return
    }
    const call = report.calls[0]
    if (call?.outcome === 'repaired') this.#log(`repaired ${call.tool} (id ${call.callId}): ${call.flags.map((f) => `${f.code} ${f.path}`).join(', ')}`)
    const id = msg.id as RpcId
    if (!this.#room(id)) return
    this.#pending.set(id, CALL)
    if (call !== undefined && call.receipt === undefined && report.calls.length === 1) {
      this.#forward(msg, text, call.outcome === 'passed' ? undefined : call.argumentsJson, () => report.payload)
      return
    }
    const forward = report.payload
    // the receipt travels with the call, so a server checking receipts (requireReceipt) runs it
    if (call?.receipt !== undefined && isObject(forward) && isObject(forward.params)) {
      forward.params._meta = { ...(isObject(forward.params._meta) ? forward.params._meta : {}), [RECEIPT_META]: call.receipt }
    }
    this.#sinks.toServer(forward)
  }

  /** A call the user approved and the gate confirmed: forwarded with the confirmed arguments. */
  #forwardConfirmed(call: Msg, v: Verdict): void {
    const id = call.id as RpcId
    if (this.#closed) {
      this.#sinks.toClient(rpcError(id, CONNECTION_CLOSED, 'toolgate: the MCP server went away before the approved call could run'), id)
      return
    }
    const params = isObject(call.params) ? call.params : {}
    // the server may have changed the tool while the user was asked: the pin decides again
    const changed = this.#tools.changed(v.tool)
    if (changed) {
      this.#log(`refused ${v.tool} (id ${String(id)}) after approval: its definition is not the approved one`)
      this.#sinks.toClient({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: changedMessage(v.tool, changed) }], isError: true } }, id)
      return
    }
    const meta = isObject(params._meta) ? params._meta : undefined
    const out: Msg = { ...call, params: { ...params, arguments: v.arguments ?? {} } }
    if (v.receipt !== undefined) (out.params as Msg)._meta = { ...(meta ?? {}), [RECEIPT_META]: v.receipt }
    this.#pending.set(id, CALL)
    this.#sinks.toServer(out)
  }

  /** A parsed message from the server (an HTTP upstream's, read by the MCP SDK): bounded as a line is. */
  fromServer(msg: unknown): void {
    if (valueDeeper(msg, MAX_MESSAGE_DEPTH)) {
      this.#serverUnreadable(messageHead(msg), undefined)
      return
    }
    this.#fromServer(msg, undefined)
  }

  /**
   * A server message the proxy did not read: over the size limit (`bytes`), else nested too
   * deeply. What it answers or asks, by the id and method read from it, is answered here: the
   * client's request it answered with an error (so the client does not wait for it forever), the
   * server's request with an error to the server.
   */
  #serverUnreadable(s: MessageHead, bytes: number | undefined): void {
    const why = bytes !== undefined ? `of ${bytes} bytes is over the limit` : TOO_DEEP
    this.#log(`server message ${why}; not forwarded`)
    if (s.id === undefined) return
    if (this.#pending.get(s.id) !== undefined && !s.method) {
      this.#pending.delete(s.id)
      const answer = bytes !== undefined ? `toolgate: the server's answer was ${bytes} bytes, over the proxy's limit (--max-message-bytes)` : `toolgate: the server's answer ${why}; not forwarded`
      this.#sinks.toClient(rpcError(s.id, INVALID_REQUEST, answer), s.id)
    } else if (typeof s.id === 'string' && this.#own.has(s.id)) {
      this.#ownFailed(s.id)
    } else if (s.method) {
      this.#sinks.toServer(rpcError(s.id, INVALID_REQUEST, bytes !== undefined ? `toolgate: request of ${bytes} bytes is over the proxy's limit` : `toolgate: request ${why}`))
    } else if (this.#cancelled.delete(s.id)) {
      this.#sinks.released?.(s.id)
    }
  }

  /** Writes a server message the proxy passes on untouched: as the server wrote it when it can (`line`). */
  #passToClient(msg: Msg, line: string | undefined): void {
    if (line !== undefined && this.#sinks.toClientText !== undefined && oneId(line)) this.#sinks.toClientText(line)
    else this.#sinks.toClient(msg)
  }

  /** `line`: the message's own text when it came as one line (a batch's members never do). */
  #fromServer(msg: unknown, line: string | undefined): void {
    if (this.#closed) return
    if (Array.isArray(msg)) {
      for (const m of msg) this.#fromServer(m, undefined)
      return
    }
    if (!isObject(msg)) {
      this.#log(`server wrote JSON that is not a JSON-RPC message; not forwarded: ${clip(JSON.stringify(msg))}`)
      return
    }
    if (typeof msg.method === 'string') {
      this.#passToClient(msg, line) // a server request or notification: untouched
      // The server's tools changed: learn them again before the next call is decided.
      if (msg.method === 'notifications/tools/list_changed' && this.#initialized === 'sent' && this.#own.size === 0) this.#startListing()
      return
    }
    if ('method' in msg || !('result' in msg || 'error' in msg)) {
      // neither a request nor an answer: nothing the client could take it for is passed on
      this.#log(`server wrote an object that is neither a JSON-RPC request nor an answer; not forwarded${line !== undefined ? `: ${clip(line)}` : ''}`)
      return
    }
    const id = msg.id
    if (typeof id === 'string' && id.startsWith(this.#ownPrefix)) {
      if (this.#own.has(id)) this.#ownAnswer(id, msg)
      else if (isObject(msg.result) && Array.isArray(msg.result.tools)) this.#learnLate(msg.result.tools) // late, after the timeout
      return // never shown to the client
    }
    const pending = isId(id) ? this.#pending.get(id) : undefined
    if (pending === undefined) {
      // An answer goes to the client only for the request it answers: one to no request in
      // flight (an answer sent twice, one to a request still held or awaiting approval, one made
      // up) could be taken by the client for a request of that id it has open.
      if (id === null) this.#passToClient(msg, line) // an error about no request (JSON-RPC: an unreadable one)
      else if (isId(id) && this.#cancelled.delete(id)) {
        this.#log(`the server answered the cancelled request ${idText(id)}; dropped`)
        this.#sinks.released?.(id)
      } else this.#log(`the server answered ${isId(id) ? `id ${idText(id)}, which no request in flight has` : 'with no request id'}; dropped`)
      return
    }
    this.#pending.delete(id as RpcId)
    if (id === this.#initializeId && isObject(msg.result)) {
      const r = msg.result
      if (typeof r.protocolVersion === 'string') this.#protocolVersion = r.protocolVersion
      this.#serverHasTools = isObject(r.capabilities) && r.capabilities.tools !== undefined
      this.#initAnswered = true
      if (this.#initialized === 'sent' && this.#held !== undefined && this.#own.size === 0) {
        // the client sent `initialized` before this answer arrived (its messages are held)
        this.#sinks.toClient(msg)
        if (this.#serverHasTools) this.#startListing()
        else this.#release()
        return
      }
    }
    if (pending.method !== 'tools/list' && pending.method !== 'initialize') {
      // an answer the proxy reads nothing from (a tools/call result …): passed on as it came
      this.#passToClient(msg, line)
      return
    }
    if (pending.method === 'tools/list' && isObject(msg.result) && Array.isArray(msg.result.tools)) {
      try {
        this.#tools.learn(msg.result.tools, !pending.cursor)
      } catch (err) {
        // a tool listed twice with two definitions: neither goes to the client, nothing is learned
        this.#log(`tools/list answer refused: ${(err as Error).message}; answering with an error`)
        this.#sinks.toClient(rpcError(id as RpcId, -32603, `toolgate: ${(err as Error).message}`))
        return
      }
      if (this.#opts.filterList) {
        try {
          // for the caller who asked (kept with the request), not whoever sent a message since
          // the list alone, not the whole answer: its text is the same in every answer that
          // lists the same tools (the id is not), so the gate reads a list served again once
          const kept = this.#tools.gate.filterTools({ tools: msg.result.tools as unknown[] }, { dialect: 'mcp', ...pending.ctx })
          // a tool whose definition is not the approved one cannot be called, so it is not listed
          msg = { ...msg, result: { ...msg.result, tools: kept.tools.filter((t: unknown) => !this.#tools.unapproved(t)) } }
        } catch (err) {
          this.#log(`tools/list answer could not be filtered (${(err as Error).message}); answering with an error`)
          msg = rpcError(id as RpcId, -32603, 'toolgate: the server’s tool list could not be read')
        }
      }
    }
    this.#sinks.toClient(msg)
  }

  /** The server went away: every request still waiting — and every request the client sends from now on — is answered with an error. */
  serverClosed(why: string): void {
    if (this.#closed) return
    this.#closed = true
    this.#closedWhy = why
    this.#opts.reloads?.untrack(this.#tools)
    const held = this.#held ?? []
    this.#held = undefined
    for (const { msg: m } of held) {
      if (typeof m.method === 'string' && isId(m.id)) this.#sinks.toClient(rpcError(m.id, CONNECTION_CLOSED, `toolgate: ${why}`))
    }
    for (const id of this.#pending.drain()) this.#sinks.toClient(rpcError(id, CONNECTION_CLOSED, `toolgate: ${why}`))
    // the server can no longer answer what the client cancelled
    const cancelled = [...this.#cancelled]
    this.#cancelled.clear()
    for (const id of cancelled) this.#sinks.released?.(id)
    this.#confirm.close((id) => rpcError(id, CONNECTION_CLOSED, `toolgate: ${why}`))
  }

  /** The client went away: calls waiting for the user's approval are dropped (nothing is answered). */
  clientClosed(): void {
    this.#confirm.drop()
  }

  /** How many client calls wait for the user's approval. */
  get awaitingApproval(): number {
    return this.#confirm.size
  }

  #startListing(cursor?: string): void {
    const id = `${this.#ownPrefix}${++this.#ownSeq}`
    this.#own.set(id, cursor === undefined)
    if (cursor === undefined) this.#fetching = new Map()
    this.#held ??= []
    this.#sinks.toServer({ jsonrpc: '2.0', id, method: 'tools/list', ...(cursor === undefined ? {} : { params: { cursor } }) })
    // A server that never answers must not hold the client forever.
    const timer = setTimeout(() => {
      if (!this.#own.has(id) || this.#closed) return
      this.#log(`the server did not answer tools/list in ${LIST_TIMEOUT_MS / 1000} s; gating with the tools known so far`)
      this.#ownFailed(id)
    }, LIST_TIMEOUT_MS)
    timer.unref?.()
  }

  /** A `tools/list` answer to the proxy's own listing that came after it gave up waiting. */
  #learnLate(tools: unknown[]): void {
    try {
      this.#tools.learn(tools, true)
    } catch (err) {
      this.#log(`the server's late tools/list was refused (${(err as Error).message}); the tools stay as they were`)
    }
  }

  #ownAnswer(id: string, msg: Msg): void {
    this.#own.delete(id)
    const r = msg.result
    if (!isObject(r) || !Array.isArray(r.tools)) {
      this.#log(`the server's tools/list failed (${clip(JSON.stringify(msg.error ?? msg.result))}); gating with the configured tools only`)
      this.#ownFailed(id)
      return
    }
    let page: Map<string, Learned>
    try {
      page = withPage(this.#fetching ?? new Map<string, Learned>(), r.tools)
    } catch (err) {
      this.#log(`the server's tools/list was refused (${(err as Error).message}); gating with the configured tools only`)
      this.#fetching = undefined
      this.#ownFailed(id)
      return
    }
    if (typeof r.nextCursor === 'string' && r.nextCursor !== '') {
      this.#fetching = page
      this.#startListing(r.nextCursor)
      this.#fetching = page // #startListing resets only for a first page
      return
    }
    this.#fetching = undefined
    this.#tools.adopt(page)
    this.#release()
  }

  #ownFailed(id: string): void {
    this.#own.delete(id)
    this.#fetching = undefined
    this.#release()
  }

  #release(): void {
    const held = this.#held ?? []
    this.#held = undefined
    for (const h of held) {
      // a second `initialized` may start another listing: what follows it is held again
      const again = this.#held as Held[] | undefined
      if (again) again.push(h)
      else this.#route(h.msg, undefined, h.ctx)
    }
  }
}


