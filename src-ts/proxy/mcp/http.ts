// The MCP proxy over Streamable HTTP (`toolgate mcp-proxy --listen HOST:PORT`): an HTTP server
// answering at `/mcp`, one McpProxy per client session (see http-session.ts), each with its
// own upstream: a process spawned for the session, or a session with an HTTP MCP server. Every
// request first passes the listener's checks (http-guard.ts): Host, Origin, bearer token,
// body size, session count. With identity (docs/identity.md), the bearer token of every request
// is verified instead, each session belongs to the subject that opened it, and the RFC 9728
// metadata is served. All gating decisions are the gate's, inside McpProxy.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

import { ToolGateError } from '../../errors'
import { scopedSession } from '../../identity/claims'
import { authorizationOf, challenge, METADATA_PATH, originOf, protectedResourceMetadata } from '../../identity/door'
import type { CallerVerifier } from '../../identity/verifier'
import type { CallContext } from '../../types'
import type { McpProxyOptions } from './proxy'
import { ToolPins } from './pins'
import { GateState } from '../../state'
import { checkBearer, checkHost, checkOrigin, isLoopbackHost, readBody, refuse } from './http-guard'
import { MAX_MESSAGE_DEPTH, messageHead, TOO_DEEP, valueDeeper } from './jsonrpc-lines'
import { McpHttpSession } from './http-session'
import { httpUpstream, stdioUpstream } from './http-upstream'
import { loadMcpSdk } from './sdk'
import { redactUrl } from '../redact-url'

/** Options of {@link listenMcpHttp}. */
export interface McpHttpListenOptions extends McpProxyOptions {
  /** Address to bind. Loopback (`127.0.0.1`, `::1`, `localhost`) unless the caller decided to expose it. */
  host: string
  /** Port to bind; 0 picks a free one (read it from {@link McpHttpListener.url}). */
  port: number
  /** The MCP server behind the proxy: a command spawned once per session (stdio), or an HTTP MCP endpoint (one upstream session per client session). */
  upstream: { command: string[] } | { url: string }
  /** Largest request body (one POST) from a client, and largest message from the upstream, in bytes; larger bodies are answered 413. */
  maxMessageBytes: number
  /** Browser origins allowed besides loopback ones (exact `scheme://host[:port]`). */
  allowedOrigins: string[]
  /** When set, every request must carry `Authorization: Bearer <token>` (401 otherwise). Never logged. */
  bearerToken?: string
  /** Most sessions at once (default 100); a new session beyond it is answered 503. */
  maxSessions?: number
  /** A session with nothing going on for this long is ended (default 30 minutes). */
  idleSessionMs?: number
  /**
   * Verified callers (docs/identity.md): every request must carry a bearer token this verifier
   * accepts (401 otherwise), the caller it proves is the gate's context, and a session serves
   * only the subject that opened it (another subject's request is answered 404, as an unknown
   * session). Not with `bearerToken` or a fixed `context`.
   */
  identity?: CallerVerifier
  /** Headers sent to an HTTP upstream (`{ url }`) with every request (`proxy.upstreamHeaders`, resolved). */
  upstreamHeaders?: Record<string, string>
  /** With identity: most sessions one subject may hold at once (default 10), so one user cannot take every session; beyond it, 429. */
  maxSessionsPerSubject?: number
}

/** A running listener. */
export interface McpHttpListener {
  /** The MCP endpoint, `http://host:port/mcp`. */
  url: string
  /** Ends every session (their upstreams stopped) and stops listening. */
  close(): Promise<void>
}

const PATH = '/mcp'
/** With identity: the request header naming a conversation inside the caller's own session scope. */
const SESSION_HEADER = 'x-toolgate-session'
const DEFAULT_MAX_SESSIONS = 100
const DEFAULT_SESSIONS_PER_SUBJECT = 10
/** A verified caller: always a subject. */
type Caller = CallContext & { subject: string }
const DEFAULT_IDLE_MS = 30 * 60_000
/** A session whose upstream is gone is ended after this long without activity. */
const DEAD_IDLE_MS = 10_000
/** A session whose client dropped its GET stream (the SDK Client's close() does, without a DELETE) and sent nothing since. */
const DETACHED_IDLE_MS = 60_000

/**
 * Serves MCP Streamable HTTP at `http://host:port/mcp` (stateful sessions, `Mcp-Session-Id`),
 * one gated {@link McpProxy} per client session. Guarantees: a request passes the Host check
 * (loopback names only when bound to loopback), the Origin check (absent, loopback, or in
 * `allowedOrigins`; else 403), the bearer check (401 with `WWW-Authenticate: Bearer`) and the
 * size bound (413) before anything else sees it; at most `maxSessions` sessions exist (503
 * beyond); each session's upstream is stopped when the session ends (DELETE, idle, `close()`); tool
 * definitions are pinned in one store shared by all sessions (`pins`, or the listener's own);
 * an upstream that dies fails that session's pending requests, and other sessions go on.
 * Rejects with `ToolGateError` `E_CONFIG` for bad options or an address it cannot bind.
 */
export async function listenMcpHttp(opts: McpHttpListenOptions): Promise<McpHttpListener> {
  validate(opts)
  const { StreamableHTTPServerTransport: Transport } = await loadMcpSdk(() => import('@modelcontextprotocol/sdk/server/streamableHttp.js'), 'toolgate mcp-proxy --listen')
  const log = opts.log ?? (() => {})
  const maxSessions = opts.maxSessions ?? DEFAULT_MAX_SESSIONS
  const idleMs = opts.idleSessionMs ?? DEFAULT_IDLE_MS
  const loopback = isLoopbackHost(opts.host)
  const sessions = new Map<string, McpHttpSession>()
  const { host, port, upstream, bearerToken, allowedOrigins, maxMessageBytes, maxSessions: _m, idleSessionMs: _i, identity, upstreamHeaders, maxSessionsPerSubject: _p, ...proxyOpts } = opts
  const perSubject = opts.maxSessionsPerSubject ?? DEFAULT_SESSIONS_PER_SUBJECT
  // The same config, context and pin store for every session: a server cannot swap a tool
  // between one session and the next (without `pins`, one in-memory store of the listener's).
  // One state store too: loop, taint and tokens belong to the caller's session scope, not to an
  // MCP session, so a caller cannot shed its taint by opening a new MCP session.
  const proxy: McpProxyOptions = {
    ...proxyOpts,
    pins: proxyOpts.pins ?? new ToolPins(),
    state: proxyOpts.state ?? GateState.forConfig(proxyOpts.config?.state),
  }
  let closing = false
  /** Where this listener is reached when a request's `Host` cannot say (set once listening). */
  let selfOrigin = 'http://127.0.0.1'

  const newSession = (owner: string | undefined) =>
    new McpHttpSession({
      proxy,
      Transport,
      log,
      owner,
      startUpstream: (events) => ('command' in upstream ? stdioUpstream(upstream.command, maxMessageBytes, events) : httpUpstream(upstream.url, maxMessageBytes, events, upstreamHeaders)),
      ended: (s) => {
        if (sessions.get(s.id) === s) sessions.delete(s.id)
      },
    })

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const refused =
      checkHost(req.headers.host, loopback) ?? checkOrigin(header(req, 'origin'), allowedOrigins) ?? checkBearer(header(req, 'authorization'), bearerToken)
    if (refused) return refuse(req, res, refused)
    const path = (req.url ?? '/').split('?')[0]
    let caller: Caller | undefined
    if (identity !== undefined) {
      const door = await admit(req, res, path, identity)
      if (door === undefined) return
      caller = door
    }
    if (path !== PATH) return refuse(req, res, { status: 404, message: `Not Found: the MCP endpoint is ${PATH}` })
    if (closing) return refuse(req, res, { status: 503, message: 'Service Unavailable: the listener is shutting down' })
    const sid = header(req, 'mcp-session-id')
    /** The session `sid` names, when it exists and (identity on) belongs to this caller — another subject's is "not found". */
    const sessionFor = (id: string): McpHttpSession | undefined => {
      const s = sessions.get(id)
      if (s === undefined || caller === undefined || s.owner === caller.subject) return s
      log(`session ${id.slice(0, 8)}: refused a request by another subject than the one that opened it`)
      return undefined
    }

    if (req.method === 'POST') {
      const body = await readBody(req, maxMessageBytes)
      if (!body.ok) return refuse(req, res, body.refusal)
      let parsed: unknown
      try {
        parsed = JSON.parse(body.text)
      } catch {
        return refuse(req, res, { status: 400, message: 'Parse error: the request body is not JSON' }, -32700)
      }
      if (valueDeeper(parsed, MAX_MESSAGE_DEPTH)) {
        // what reads it next (the SDK's transport, the router) recurses: a request is answered
        // here, with its id, as a body over the size limit is
        const head = messageHead(parsed)
        log(`client message ${TOO_DEEP}; not forwarded`)
        return refuse(req, res, { status: 400, message: `toolgate: message ${TOO_DEEP}; not forwarded` }, -32600, head.isResponse ? null : (head.id ?? null))
      }
      if (sid === undefined) {
        const isInit = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && (parsed as { method?: unknown }).method === 'initialize'
        if (!isInit) return refuse(req, res, { status: 400, message: 'Bad Request: no Mcp-Session-Id header, and the body is not an initialize request' })
        if (sessions.size >= maxSessions) {
          log(`refused a new session: ${sessions.size} sessions open (the limit)`)
          return refuse(req, res, { status: 503, message: `Service Unavailable: ${maxSessions} sessions are open, the limit; end one (DELETE) or retry later`, headers: { 'Retry-After': '5' } })
        }
        if (caller !== undefined && countOwned(caller.subject) >= perSubject) {
          log(`refused a new session: a verified caller holds ${perSubject} sessions (the per-subject limit)`)
          return refuse(req, res, { status: 429, message: `Too Many Requests: you hold ${perSubject} sessions, the limit; end one (DELETE) or retry later`, headers: { 'Retry-After': '5' } })
        }
        const session = newSession(caller?.subject)
        sessions.set(session.id, session)
        log(`session ${session.id.slice(0, 8)}: started${caller?.subject !== undefined ? ` for a verified caller` : ''}`)
        await session.handle(req, res, parsed, caller)
        if (!session.initialized) await session.end('the initialize request was refused by the transport')
        return
      }
      const session = sessionFor(sid)
      if (!session) return refuse(req, res, { status: 404, message: 'Session not found: it ended or never existed; initialize a new one' }, -32001)
      return session.handle(req, res, parsed, caller)
    }

    if (sid === undefined) return refuse(req, res, { status: 400, message: 'Bad Request: the Mcp-Session-Id header is required' })
    const session = sessionFor(sid)
    if (!session) return refuse(req, res, { status: 404, message: 'Session not found: it ended or never existed; initialize a new one' }, -32001)
    if (req.method === 'GET') {
      session.getStreams++
      session.hadGetStream = true
      res.once('close', () => session.getStreams--)
    }
    return session.handle(req, res, undefined, caller)
  }

  const countOwned = (subject: string): number => {
    let n = 0
    for (const s of sessions.values()) if (s.owner === subject) n++
    return n
  }

  /**
   * Identity on: the RFC 9728 metadata (no token needed), or the request's verified caller with
   * its session scope (`x-toolgate-session` names a conversation inside the subject's own), or
   * `undefined` once a refusal is answered: 401 with the challenge (503 when the keys cannot be
   * read), logged without the token.
   */
  const admit = async (req: IncomingMessage, res: ServerResponse, path: string, verifier: CallerVerifier): Promise<Caller | undefined> => {
    const origin = originOf(req, selfOrigin)
    if (path === METADATA_PATH || path === `${METADATA_PATH}${PATH}`) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return void refuse(req, res, { status: 405, message: `Method Not Allowed: ${path} answers GET`, headers: { Allow: 'GET, HEAD' } })
      const body = JSON.stringify(protectedResourceMetadata(`${origin}${PATH}`, verifier.issuer))
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'max-age=300' })
      return void res.end(body)
    }
    let caller: Caller
    try {
      caller = await verifier.verify(authorizationOf(req))
    } catch (err) {
      if (!(err instanceof ToolGateError) || err.code !== 'E_UNAUTHENTICATED') throw err
      const c = challenge(req, origin, err)
      log(c.logLine)
      return void refuse(req, res, { status: c.status, message: c.status === 401 ? `Unauthorized: ${err.message}` : `Service Unavailable: ${err.message}`, headers: c.headers })
    }
    const named = req.headersDistinct[SESSION_HEADER]
    const session = named === undefined ? scopedSession(caller.subject, undefined) : named.length === 1 ? scopedSession(caller.subject, named[0].trim()) : undefined
    if (session === undefined) return void refuse(req, res, { status: 400, message: `Bad Request: header ${SESSION_HEADER}: give it once, at most 256 characters` })
    return { ...caller, session }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: Error) => {
      log(`request failed: ${err.message}`)
      if (!res.headersSent) refuse(req, res, { status: 500, message: 'Internal error in the proxy' }, -32603)
      else res.destroy()
    })
  })
  // Receiving a request (headers and body, bounded by maxMessageBytes) must not take long;
  // answers (SSE streams) may (requestTimeout does not cover them).
  server.headersTimeout = 30_000
  server.requestTimeout = 60_000

  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(new ToolGateError('E_CONFIG', `mcp-proxy --listen ${opts.host}:${opts.port}: cannot listen (${err.code ?? err.message})`, { cause: err })))
    server.listen(port, host, () => resolve())
  })
  server.on('error', (err) => log(`listener error: ${err.message}`))
  const addr = server.address() as AddressInfo
  const shownHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address
  const url = `http://${shownHost}:${addr.port}${PATH}`
  selfOrigin = `http://${shownHost}:${addr.port}`
  log(`listening on ${url} (${'command' in upstream ? `spawning \`${upstream.command.join(' ')}\` per session` : `upstream ${redactUrl(upstream.url)}`}${bearerToken !== undefined ? ', bearer token required' : ''}${identity !== undefined ? `, callers verified (tokens of ${identity.issuer})` : ''})`)

  const reaper = setInterval(() => {
    const now = Date.now()
    for (const s of [...sessions.values()]) {
      const dead = s.upstreamGone !== undefined
      const detached = s.hadGetStream && s.getStreams === 0
      const limit = dead ? DEAD_IDLE_MS : detached ? Math.min(idleMs, DETACHED_IDLE_MS) : idleMs
      if (now - s.lastActive > limit && (dead || !s.busy)) {
        void s.end(dead ? 'its upstream is gone' : detached ? 'its client went away (no GET stream, nothing sent)' : `idle for ${Math.round(limit / 1000)} s`)
      }
    }
  }, Math.max(1000, Math.min(60_000, Math.floor(Math.min(idleMs, DEAD_IDLE_MS) / 2))))
  reaper.unref()

  return {
    url,
    async close() {
      if (closing) return
      closing = true
      clearInterval(reaper)
      const ending = [...sessions.values()].map((s) => s.end('the listener closed'))
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeAllConnections()
      await Promise.all([...ending, stopped])
      log('listener closed')
    },
  }
}

function validate(opts: McpHttpListenOptions): void {
  const bad = (what: string) => {
    throw new ToolGateError('E_CONFIG', `mcp-proxy --listen: ${what}`)
  }
  if (typeof opts.host !== 'string' || opts.host === '') bad('the host is empty')
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) bad(`the port must be a whole number 0–65535, got ${String(opts.port)}`)
  if (!Number.isSafeInteger(opts.maxMessageBytes) || opts.maxMessageBytes < 1024) bad('maxMessageBytes must be a whole number of bytes, at least 1024')
  const up = opts.upstream as { command?: unknown; url?: unknown } | undefined
  if (up && Array.isArray(up.command)) {
    if (up.command.length === 0 || !up.command.every((a) => typeof a === 'string') || up.command[0] === '') bad('the upstream command is empty')
  } else if (up && typeof up.url === 'string') {
    let u: URL | undefined
    try {
      u = new URL(up.url)
    } catch {
      bad(`the upstream URL \`${up.url}\` is not a URL`)
    }
    if (u && u.protocol !== 'http:' && u.protocol !== 'https:') bad(`the upstream URL \`${up.url}\` must be http: or https:`)
  } else bad('upstream must be { command: [...] } or { url }')
  if (!Array.isArray(opts.allowedOrigins) || !opts.allowedOrigins.every((o) => typeof o === 'string')) bad('allowedOrigins must be a list of origins')
  if (opts.identity !== undefined && opts.bearerToken !== undefined) bad('identity and a bearer token (--token-env) both read Authorization; give one')
  const fixed = opts.context
  if (opts.identity !== undefined && fixed !== undefined && (fixed.subject !== undefined || fixed.roles !== undefined || fixed.session !== undefined)) {
    bad('identity: callers are verified from their bearer tokens, so a fixed subject, roles or session (--subject/--role/--session, config proxy) cannot be given')
  }
  if (opts.bearerToken !== undefined && (typeof opts.bearerToken !== 'string' || !/^\S+$/.test(opts.bearerToken))) bad('the bearer token must be a non-empty string without spaces')
  if (opts.maxSessionsPerSubject !== undefined && (!Number.isInteger(opts.maxSessionsPerSubject) || opts.maxSessionsPerSubject < 1)) bad('maxSessionsPerSubject must be a whole number, at least 1')
  if (opts.maxSessions !== undefined && (!Number.isInteger(opts.maxSessions) || opts.maxSessions < 1)) bad('maxSessions must be a whole number, at least 1')
  if (opts.idleSessionMs !== undefined && (!Number.isInteger(opts.idleSessionMs) || opts.idleSessionMs < 1000)) bad('idleSessionMs must be a whole number of milliseconds, at least 1000')
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name]
  return Array.isArray(v) ? v[0] : v
}
