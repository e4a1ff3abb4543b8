// One client session of the MCP HTTP listener: the SDK's StreamableHTTPServerTransport as the
// wire to the client, an McpProxy as the router, and the session's own upstream (a spawned
// process or an HTTP MCP session). This file only routes: which HTTP stream a message to the
// client goes on, and what happens when either end goes away. With identity, a session belongs
// to the subject that opened it, and each client message is gated for the caller its own
// request's bearer token proved (carried to `onmessage` by the transport as `authInfo`, and
// handed to the router with the message: never a session-wide caller that a later request could
// change while an earlier message waits).
import { isObj as isObject } from '../../json-object'
import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'

import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js'

import { DEFAULT_MAX_PENDING, McpProxy, type McpProxyOptions } from './proxy'
import { CONNECTION_CLOSED, INVALID_REQUEST, OPEN_WHY, OVERLOADED, type Msg } from './rpc'
import type { RpcId } from './jsonrpc-lines'
import { refuse } from './http-guard'
import type { Upstream, UpstreamEvents } from './http-upstream'
import type { CallContext } from '../../types'

type TransportClass = typeof StreamableHTTPServerTransport

/** What a session needs from the listener. */
export interface SessionOptions {
  proxy: McpProxyOptions
  /** Starts this session's upstream, reporting to `events`. */
  startUpstream(events: UpstreamEvents): Upstream | Promise<Upstream>
  /** The SDK's server transport class (loaded once by the listener). */
  Transport: TransportClass
  log(line: string): void
  /** Called once when the session has ended (for whatever reason). */
  ended(session: McpHttpSession): void
  /** With identity: the verified subject this session belongs to (no other subject may use it). */
  owner?: string
}

/** Where a request's verified caller rides from `handle` to `onmessage` (the SDK's `req.auth` → `authInfo.extra`). */
const CALLER = 'toolgateCaller'

const key = (id: RpcId) => (typeof id === 'number' ? `n:${id}` : `s:${id}`)
const shownId = (id: RpcId) => {
  const shown = typeof id === 'number' ? String(id) : JSON.stringify(id)
  return shown.length > 200 ? `${shown.slice(0, 200)}…` : shown
}
const isId = (v: unknown): v is RpcId => typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v))

/** A client request the session has open (delivered to the router, not answered). */
interface OpenRequest {
  id: RpcId
  /** The key of its progress token, when it gave one. */
  token: string | undefined
  /** The client cancelled it: it waits for no answer, but the id stays in use until the server
   *  has answered (or can no longer answer) it. */
  cancelled: boolean
}

/**
 * A client session. Guarantees: every client request gets exactly one answer on its own HTTP
 * stream (the server's, the gate's refusal, or an error when the upstream is gone), but one the
 * client cancelled, which may get none; at most `maxPending` requests are open (in flight, or
 * cancelled and not yet answered by the server: an id stays in use until then), and a request
 * past that is answered with an error, never forwarded; messages the server starts go on the
 * stream of the request they belong to (progress by its token; anything else while the client
 * waits for a request, on the latest such) or on the client's GET stream; the upstream is
 * stopped when the session ends (DELETE, transport close, listener close, reaping).
 */
export class McpHttpSession {
  /** The session id (`Mcp-Session-Id`), fixed before the client's initialize is handled. */
  readonly id = randomUUID()
  /** Last time the client sent anything (ms since epoch): what idleness is measured from. */
  lastActive = Date.now()
  /** Whether the transport accepted the client's initialize. */
  initialized = false
  /** Why the upstream is gone, once it is. */
  upstreamGone: string | undefined
  /** Open GET (standalone SSE) requests of the client. */
  getStreams = 0
  /** Whether the client ever opened a GET stream (one that is gone now suggests the client is). */
  hadGetStream = false
  /** With identity: the verified subject that opened the session; requests of any other subject are refused by the listener. */
  readonly owner: string | undefined

  readonly #o: SessionOptions
  readonly #transport: StreamableHTTPServerTransport
  readonly #proxy: McpProxy
  #upstream: Upstream | undefined
  /** Messages for the upstream while it is being connected. */
  #queue: unknown[] | undefined = []
  /** Client requests not yet answered, in arrival order, the cancelled ones included: key → request. */
  readonly #open = new Map<string, OpenRequest>()
  /** How many of {@link #open} the client cancelled. */
  #cancelledOpen = 0
  /** The most requests {@link #open} may hold. */
  readonly #maxOpen: number
  /** Keys of the requests of POSTs in the transport's hands, not yet delivered to the router. */
  readonly #arriving = new Set<string>()
  /** Progress tokens of open client requests → the request's key. */
  readonly #progress = new Map<string, string>()
  #ended = false

  constructor(o: SessionOptions) {
    this.#o = o
    this.owner = o.owner
    this.#maxOpen = o.proxy.maxPending ?? DEFAULT_MAX_PENDING
    const log = (line: string) => o.log(`session ${this.id.slice(0, 8)}: ${line}`)
    this.#transport = new o.Transport({
      sessionIdGenerator: () => this.id,
      onsessioninitialized: () => {
        this.initialized = true
      },
    })
    this.#proxy = new McpProxy({ ...o.proxy, log }, {
      toClient: (m, related) => this.#toClient(m, related),
      toServer: (m) => this.#toServer(m),
      // a cancelled request the router is done with (never answered): its id is free again
      released: (id) => void this.#close(key(id)),
    })
    this.#transport.onmessage = (m, extra) => this.#fromClient(m, extra)
    this.#transport.onerror = (err) => log(err.message)
    this.#transport.onclose = () => void this.end('the client session was closed')
    const events: UpstreamEvents = {
      line: (e) => {
        this.#proxy.serverLine(e)
        this.#announceVersion()
      },
      message: (m) => {
        this.#proxy.fromServer(m)
        this.#announceVersion()
      },
      undelivered: (ids, why) => {
        for (const id of ids) this.#proxy.fromServer({ jsonrpc: '2.0', id, error: { code: CONNECTION_CLOSED, message: `toolgate: ${why}` } })
      },
      closed: (why) => {
        this.upstreamGone = why
        this.#proxy.serverClosed(`${why} before answering`)
      },
      log,
    }
    Promise.resolve()
      .then(() => o.startUpstream(events))
      .then(
        (up) => {
          if (this.#ended) return void up.close()
          this.#upstream = up
          const queued = this.#queue ?? []
          this.#queue = undefined
          for (const m of queued) up.send(m)
        },
        (err: Error) => events.closed(`the upstream MCP server could not be reached (${err.message})`),
      )
  }

  /**
   * Hands one HTTP request of this session (or its initialize) to the transport. `caller`: the
   * context its bearer token proved (identity on; the listener has checked it is the owner's),
   * used for the messages this request carries.
   */
  handle(req: IncomingMessage, res: ServerResponse, body?: unknown, caller?: CallContext): Promise<void> {
    this.lastActive = Date.now()
    // A request whose id is still in flight is refused here, before the transport sees it: the
    // transport would tie that id to this POST, and the first request's answer could come back
    // on it (or never), each answer taken for the other's.
    const claimed = body === undefined ? [] : this.#claim(body)
    if (!Array.isArray(claimed)) {
      this.#o.log(`session ${this.id.slice(0, 8)}: refused a request whose id ${claimed.shown} is still in flight; not forwarded`)
      refuse(req, res, { status: 400, message: `Invalid Request: request id ${claimed.shown} is still in flight (an id may not be reused within a session); not forwarded` }, INVALID_REQUEST, claimed.id)
      return Promise.resolve()
    }
    const r = req as IncomingMessage & { auth?: { token: string; clientId: string; scopes: string[]; extra: Record<string, unknown> } }
    if (caller !== undefined) r.auth = { token: '', clientId: caller.subject ?? '', scopes: [], extra: { [CALLER]: caller } }
    else delete r.auth
    const handled = this.#transport.handleRequest(r, res, body)
    if (claimed.length === 0) return handled
    // what the transport refused (never delivered) is no longer in flight
    return handled.finally(() => {
      for (const k of claimed) this.#arriving.delete(k)
    })
  }

  /**
   * The keys of the requests in a POST body, now in flight; or the first of them whose id is
   * already in flight (open, or in another POST not yet delivered, or earlier in this body).
   */
  #claim(body: unknown): string[] | { id: RpcId; shown: string } {
    const keys: string[] = []
    for (const m of Array.isArray(body) ? body : [body]) {
      if (!isObject(m) || typeof m.method !== 'string' || !isId(m.id)) continue
      const k = key(m.id)
      if (this.#open.has(k) || this.#arriving.has(k) || keys.includes(k)) return { id: m.id, shown: shownId(m.id) }
      keys.push(k)
    }
    for (const k of keys) this.#arriving.add(k)
    return keys
  }


  /** Whether the client waits for an answer (a request open that it did not cancel). */
  get busy(): boolean {
    return this.#open.size > this.#cancelledOpen
  }

  /** Ends the session: the client's streams are closed and the upstream stopped. Idempotent. */
  async end(why: string): Promise<void> {
    if (this.#ended) return
    this.#ended = true
    this.#o.log(`session ${this.id.slice(0, 8)}: ended (${why})`)
    this.#proxy.serverClosed(why)
    await this.#transport.close().catch(() => {})
    this.#o.ended(this)
    await this.#upstream?.close()
  }

  #announceVersion(): void {
    const v = this.#proxy.protocolVersion
    if (v !== undefined) this.#upstream?.setProtocolVersion(v)
  }

  #fromClient(m: JSONRPCMessage, extra?: MessageExtraInfo): void {
    this.lastActive = Date.now()
    // identity on: the caller of the request that carried this message, which goes with it to
    // the router (held, decided, awaiting approval, filtered for that caller alone); off: the
    // listener's fixed context (the router's default)
    let caller: CallContext | undefined
    if (this.owner !== undefined) {
      caller = extra?.authInfo?.extra?.[CALLER] as CallContext | undefined
      if (caller === undefined || caller.subject !== this.owner) {
        this.#o.log(`session ${this.id.slice(0, 8)}: a message without its owner's verified caller was refused`)
        const msg = m as unknown as Msg
        if (typeof msg.method === 'string' && isId(msg.id)) this.#send({ jsonrpc: '2.0', id: msg.id, error: { code: INVALID_REQUEST, message: 'toolgate: this session belongs to another caller' } }, msg.id)
        return
      }
    }
    const msg = m as unknown as Msg
    const isRequest = typeof msg.method === 'string' && isId(msg.id)
    if (isRequest) {
      const id = msg.id as RpcId
      this.#arriving.delete(key(id))
      if (this.upstreamGone !== undefined) {
        // McpProxy has stopped routing: answer here, so the client is not left waiting.
        this.#send({ jsonrpc: '2.0', id, error: { code: CONNECTION_CLOSED, message: `toolgate: ${this.upstreamGone}; start a new session` } }, id)
        return
      }
      if (this.#open.size >= this.#maxOpen) {
        // fail closed: never forwarded, so no id past the bound is ever in use
        this.#o.log(`session ${this.id.slice(0, 8)}: ${this.#maxOpen} requests are open (${OPEN_WHY}); request ${shownId(id)} answered with an error, not forwarded`)
        this.#send({ jsonrpc: '2.0', id, error: { code: OVERLOADED, message: `toolgate: ${this.#maxOpen} requests of this session are open (${OPEN_WHY}); not forwarded` } }, id)
        return
      }
      const k = key(id)
      const token = isObject(msg.params) && isObject(msg.params._meta) ? msg.params._meta.progressToken : undefined
      const t = isId(token) ? key(token) : undefined
      this.#open.set(k, { id, token: t, cancelled: false })
      if (t !== undefined) this.#progress.set(t, k)
    } else if (msg.method === 'notifications/cancelled' && isObject(msg.params) && isId(msg.params.requestId)) {
      // the client waits no more; the id stays open until the router releases it or it is answered
      const open = this.#open.get(key(msg.params.requestId))
      if (open !== undefined && !open.cancelled) {
        open.cancelled = true
        this.#cancelledOpen++
      }
    }
    this.#proxy.fromClient(msg, caller)
  }

  #toServer(m: unknown): void {
    if (this.#queue) this.#queue.push(m)
    else this.#upstream?.send(m)
  }

  #toClient(m: unknown, related?: RpcId): void {
    if (!isObject(m)) return
    const isResponse = typeof m.method !== 'string' && ('result' in m || 'error' in m)
    if (isResponse) {
      const id = isId(m.id) ? this.#close(key(m.id)) : undefined
      if (id === undefined) {
        this.#o.log(`session ${this.id.slice(0, 8)}: an answer for no open request (id ${JSON.stringify(m.id)}) was dropped`)
        return
      }
      this.#send(m, id)
      return
    }
    const on = (related !== undefined ? this.#open.get(key(related))?.id : undefined) ?? this.#relatedTo(m)
    if (on === undefined && this.getStreams === 0) {
      if (isId(m.id)) {
        // A server request with nowhere to go: tell the server now instead of leaving it waiting.
        this.#toServer({ jsonrpc: '2.0', id: m.id, error: { code: CONNECTION_CLOSED, message: 'toolgate: the client has no open stream to receive server requests' } })
      }
      this.#o.log(`session ${this.id.slice(0, 8)}: server ${isId(m.id) ? 'request' : 'notification'} ${String(m.method)} dropped (no client request open and no GET stream)`)
      return
    }
    this.#send(m, on)
  }

  /** Forgets the open request `k` (answered, or released by the router); its id, when it was open. */
  #close(k: string): RpcId | undefined {
    const open = this.#open.get(k)
    if (open === undefined) return undefined
    this.#open.delete(k)
    if (open.cancelled) this.#cancelledOpen--
    if (open.token !== undefined && this.#progress.get(open.token) === k) this.#progress.delete(open.token)
    return open.id
  }

  /** The client request a server-initiated message belongs to (undefined: the GET stream); the
   *  proxy's own messages (elicitation) name theirs. Progress goes by its token; anything else
   *  to the latest request the client still waits for (not one it cancelled). */
  #relatedTo(m: Msg): RpcId | undefined {
    const token = isObject(m.params) ? m.params.progressToken : undefined
    if (m.method === 'notifications/progress' && isId(token)) {
      const k = this.#progress.get(key(token))
      if (k !== undefined) return this.#open.get(k)?.id
    }
    let latest: RpcId | undefined
    for (const open of this.#open.values()) if (!open.cancelled) latest = open.id
    return latest
  }

  #send(m: Msg, relatedRequestId: RpcId | undefined): void {
    const opts = relatedRequestId === undefined || ('result' in m || 'error' in m) ? undefined : { relatedRequestId }
    this.#transport.send(m as unknown as JSONRPCMessage, opts).catch((err: Error) => {
      this.#o.log(`session ${this.id.slice(0, 8)}: could not deliver a message to the client (${err.message})`)
    })
  }
}
