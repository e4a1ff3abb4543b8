// The HTTP proxy for model APIs (`toolgate proxy`): an OpenAI / Anthropic compatible endpoint in
// front of the real one. `POST /v1/chat/completions`, `/v1/responses` and `/v1/messages` (and any
// path ending the same way, Azure's included; paths normalised first: paths.ts) are
// guarded: the request's `tools` go through `gate.filterTools` for the caller, and the answer's
// tool calls through `gate.guard` (whole answers) or `gate.stream` (server-sent events, in
// sse.ts) — repaired arguments written back, refused calls removed and told as a text part
// and the `x-toolgate-refused` header. Requests on the pass-through list pass unchanged, streamed
// both ways; any other is refused (403). Every decision is the gate's; this file routes, bounds and answers failures.
import { isObj } from '../../json-object'
import { createServer, IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Readable } from 'node:stream'

import { fitOutside, outsideDefinitions, outsideTools, RequestMemberRefused } from '../../request-tools'
import { fitToolChoice } from '../../request-tool-choice'
import { ToolGateError } from '../../errors'
import type { ToolGate } from '../../gate'
import type { CallContext, ToolGateConfig, TurnCall } from '../../types'
import { DECODED_CODINGS, decodedBody, readStreamBounded, requestFailure, requestUpstream, upstreamAgents, UpstreamCancel, type UpstreamAgents, type UpstreamRequest } from './client'
import { GateCache, DEFAULT_GATE_CACHE } from './gates'
import { DEFAULT_IDENTITY_HEADERS, hasIdentityHeaders, identityHeaderSet, identityOf, isFixed, type IdentityHeaderNames, type IdentitySettings } from './identity'
import { jwtDoor, withUpstreamHeaders, type JwtDoor } from './identity'
import type { CallerVerifier } from '../../identity/verifier'
import type { RequestDialect } from '../../request-dialect'
import { RequestLayouts } from './request-layout'
import { REFUSED_HEADER, refusedHeader, type RefusedCall } from './refusal'
import { decidedAnswer, MAX_HEADER_CHARS, receiptsHeader, type GuardedAnswer } from './rewrite'
import { DEFAULT_PASS_THROUGH, passThroughList, type PassThroughList } from './paths'
import { guardSse } from './sse'
import { errorShape, MAX_ERROR_BODY_BYTES, statusPolicy } from './status'
import {
  clientHeaders, dialectForErrors, parseUpstream, proxyError, readRequestBounded, requestCoding, routeOf, upstreamHeaders,
  type ProxyError, type Route, type UpstreamBase,
} from './upstream'

/** Default upstream time limit: 10 minutes (long generations included). */
export const DEFAULT_TIMEOUT_MS = 600_000
/** Default largest request body: 10 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024
/** The response header listing the receipts of the allowed calls (receipts configured). */
export const RECEIPTS_HEADER = 'x-toolgate-receipts'
/** How long `close()` waits for requests in flight before cutting them. */
const CLOSE_GRACE_MS = 5_000

/** Options of {@link startHttpProxy}. */
export interface HttpProxyOptions {
  /** The model API base URL (`https://api.openai.com`, `https://api.anthropic.com`, `http://host/openai` …). */
  upstream: string
  /** Port to listen on; 0 picks a free one. */
  port: number
  /** Address to bind (default `127.0.0.1`). */
  host?: string
  /** The gate config (paths absolute, receipt key inline — see `loadProxyConfig`); default: no tools, no policy. */
  config?: ToolGateConfig
  /** A fixed caller: when it has any of subject, roles or session, identity headers are ignored. */
  fixed?: Pick<CallContext, 'subject' | 'roles' | 'session'>
  /** Identity header names (lower case). */
  identityHeaders?: Partial<IdentityHeaderNames>
  /**
   * Verified callers (docs/identity.md): every request must carry a bearer token this verifier
   * accepts, else 401; never with `fixed`. The client's `Authorization` is then never sent
   * upstream. It is asked per request: a verifier whose block a reload replaces (`ServerVerifier`,
   * as the CLI passes) changes what is accepted for the next request.
   */
  identity?: CallerVerifier
  /** Headers sent to the upstream on every request, over the client's (`proxy.upstreamHeaders`, resolved). */
  upstreamHeaders?: Record<string, string>
  /** Upstream time limit in ms, answered 504 (default {@link DEFAULT_TIMEOUT_MS}). */
  timeoutMs?: number
  /** Largest request body on a guarded path, answered 413 (default {@link DEFAULT_MAX_BODY_BYTES}). */
  maxBodyBytes?: number
  /** Gates kept, one per distinct set of request-declared tools (default 64). */
  gateCache?: number
  /** One line per guarded turn and per problem (no arguments, no headers). Default: nothing. */
  log?: (line: string) => void
  /**
   * The requests passed through unguarded, as `METHOD /path` entries (`*` for one path segment);
   * every other request that is not a guarded model endpoint is answered 403. Default
   * {@link DEFAULT_PASS_THROUGH}: requests that cannot return model output.
   */
  passThrough?: readonly string[]
}

/** A running proxy. */
export interface HttpProxy {
  /** `http://host:port` (the port the OS picked for `port: 0`). */
  url: string
  port: number
  /** The upstream, without user name or password. */
  upstream: string
  /** The receipts' verifying key (base64url) when the config has `receipts`: one key for every gate of the proxy. */
  publicKey: string | undefined
  /** Stops listening, lets requests in flight finish (5 s at most), and flushes every gate's audit records. */
  close(): Promise<void>
  /**
   * Swaps in `config`, validated first: a config that does not compile throws (`E_CONFIG`) and
   * the running one stays. Requests from now on are decided by the new tools, policy, limits,
   * rate limits and audit settings; requests in flight finish on the old gates, whose audit
   * records are flushed; loop, taint, rate and token state is kept (the same store). The `proxy`
   * and `state` blocks are read at start only; `identity` is the verifier's (`opts.identity`):
   * the CLI builds the reloaded block's verifier first and swaps it in right after this returns.
   */
  reload(config: ToolGateConfig): void
}

type Obj = Record<string, unknown>
const clip = (s: string, n = 80) => (s.length > n ? `${s.slice(0, n)}…` : s)

/** Starts the proxy; resolves once it listens. Throws `E_CONFIG` for a bad config or upstream URL. */
export async function startHttpProxy(opts: HttpProxyOptions): Promise<HttpProxy> {
  const base = parseUpstream(opts.upstream)
  if (typeof base === 'string') throw new ToolGateError('E_CONFIG', `upstream: ${base}`)
  const log = opts.log ?? (() => undefined)
  const passThrough = passThroughList(opts.passThrough ?? DEFAULT_PASS_THROUGH) // E_CONFIG for a malformed entry
  const gates = new GateCache({ config: opts.config ?? { tools: [] }, max: opts.gateCache ?? DEFAULT_GATE_CACHE, log })
  const identity: IdentitySettings = { fixed: opts.fixed ?? {}, headers: { ...DEFAULT_IDENTITY_HEADERS, ...opts.identityHeaders } }
  if (opts.identity !== undefined && isFixed(identity)) throw new ToolGateError('E_CONFIG', 'identity: a fixed caller (--subject/--role/--session or config proxy.subject/roles/session) cannot be combined with verified callers')
  let self = 'http://127.0.0.1'
  const settings: Settings = {
    base,
    gates,
    layouts: new RequestLayouts(),
    agents: upstreamAgents(),
    identity,
    strip: new Set([...identityHeaderSet(identity), ...(opts.identity !== undefined ? ['authorization'] : []), ...Object.keys(opts.upstreamHeaders ?? {})]),
    door: opts.identity === undefined ? undefined : jwtDoor({ verifier: opts.identity, sessionHeader: identity.headers.session, fallbackOrigin: () => self, log }),
    upstreamExtra: opts.upstreamHeaders,
    timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxBodyBytes: opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    maxUpstreamBytes: opts.config?.limits?.maxPayloadBytes ?? 8 * 1024 * 1024,
    log,
    warnedFixed: false,
    passThrough,
    remote: gates.state.remote,
  }
  const server = createServer((req, res) => {
    handle(req, res, settings).catch((err: unknown) => {
      log(`internal error: ${err instanceof Error ? err.message : String(err)}`)
      if (!res.headersSent) send(res, proxyError(dialectForErrors(req.url ?? '/'), 'bad_upstream_response', 'internal error'))
      else res.destroy()
    })
  })
  await listen(server, opts.port, opts.host ?? '127.0.0.1')
  const addr = server.address() as AddressInfo
  const hostPart = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address
  self = `http://${hostPart}:${addr.port}`
  let closing: Promise<void> | undefined
  return {
    url: `http://${hostPart}:${addr.port}`,
    port: addr.port,
    upstream: base.display,
    publicKey: gates.base.publicKey,
    close: () => (closing ??= closeServer(server, settings)),
    reload: (config) => {
      const next = new GateCache({ config, max: opts.gateCache ?? DEFAULT_GATE_CACHE, log, state: settings.gates.state })
      const old = settings.gates
      settings.gates = next
      settings.maxUpstreamBytes = config.limits?.maxPayloadBytes ?? 8 * 1024 * 1024
      void old.flush()
    },
  }
}

interface Settings {
  base: UpstreamBase
  gates: GateCache
  /** Where request bodies' `tools` lie, the last list remembered (see request-layout.ts). */
  layouts: RequestLayouts
  agents: UpstreamAgents
  identity: IdentitySettings
  strip: ReadonlySet<string>
  /** Verified callers (identity configured). */
  door: JwtDoor | undefined
  upstreamExtra: Record<string, string> | undefined
  timeoutMs: number
  maxBodyBytes: number
  maxUpstreamBytes: number
  log: (line: string) => void
  warnedFixed: boolean
  passThrough: PassThroughList
  /** The gates' state store is remote (Redis; the same store across reloads): answers are guarded off the event loop. */
  remote: boolean
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
}

async function closeServer(server: Server, s: Settings): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()))
  server.closeIdleConnections()
  let timer: NodeJS.Timeout | undefined
  const grace = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      server.closeAllConnections()
      resolve()
    }, CLOSE_GRACE_MS)
  })
  await Promise.race([closed, grace])
  clearTimeout(timer)
  s.agents.destroy()
  await s.gates.flush()
  // the shared state's connections (Redis; a no-op in memory)
  await s.gates.state.close()
}

function send(res: ServerResponse, e: ProxyError, extra: OutgoingHttpHeaders = {}): void {
  if (res.headersSent || res.destroyed) return
  res.writeHead(e.status, { ...extra, 'content-type': 'application/json', 'content-length': Buffer.byteLength(e.body) })
  res.end(e.body)
}

/** One exchange with the upstream: its cancel (client gone or timed out) and the timer. */
class Exchange {
  readonly cancel = new UpstreamCancel()
  timedOut = false
  #timer: NodeJS.Timeout | undefined

  constructor(res: ServerResponse) {
    res.on('close', () => {
      this.stop()
      if (!res.writableFinished) this.cancel.cancel(new Error('the client went away'))
    })
  }

  start(ms: number): void {
    this.#timer = setTimeout(() => {
      this.timedOut = true
      this.cancel.cancel(new Error(`no answer within ${ms} ms`))
    }, ms)
  }

  stop(): void {
    clearTimeout(this.#timer)
  }

  /** The answer for a failed upstream read: 504 when timed out, nothing when the client left, else 502. */
  failure(dialect: RequestDialect, err: unknown, s: Settings, what: string): ProxyError | undefined {
    if (this.timedOut) return proxyError(dialect, 'upstream_timeout', `the upstream did not answer within ${s.timeoutMs} ms`)
    if (this.cancel.cancelled) return undefined
    return proxyError(dialect, what === 'connect' ? 'upstream_unreachable' : 'bad_upstream_response', `${what === 'connect' ? 'cannot reach' : 'lost'} the upstream ${s.base.display} (${requestFailure(err)})`)
  }
}

async function handle(req: IncomingMessage, res: ServerResponse, s: Settings): Promise<void> {
  const caller = s.door === undefined ? undefined : await s.door.admit(req, res)
  if (s.door !== undefined && caller === undefined) return // answered: 401, or the RFC 9728 metadata
  const route = routeOf(req.method, req.url, s.base, s.passThrough)
  if (route.refused !== undefined) {
    s.log(`refused ${clip(req.method ?? 'GET', 16)} ${clip(route.apiPath)}: ${route.refused.message}`)
    req.resume()
    send(res, proxyError(dialectForErrors(route.apiPath), route.refused.kind, route.refused.message), { connection: 'close' })
    return
  }
  const ex = new Exchange(res)
  try {
    if (route.dialect !== undefined) await guarded(req, res, route, route.dialect, ex, s, caller)
    else await passThrough(req, res, route, ex, s)
  } finally {
    ex.stop()
  }
}

/** Sends `body` to the client as it arrives (backpressure kept; stops when the client goes). */
async function pipeBody(body: Readable, res: ServerResponse): Promise<void> {
  for await (const chunk of body) {
    if (res.destroyed) return
    if (!res.write(chunk)) await drained(res)
  }
  res.end()
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done)
      res.off('close', done)
      resolve()
    }
    res.on('drain', done)
    res.on('close', done)
  })
}

/** The upstream's answer (status and headers in), or the proxy's error answer, or nothing when the client left. */
async function sendUpstream(route: Route, r: Omit<UpstreamRequest, 'cancel'>, ex: Exchange, dialect: RequestDialect, s: Settings): Promise<IncomingMessage | ProxyError | undefined> {
  try {
    return await requestUpstream(s.agents, route.target, { ...r, cancel: ex.cancel })
  } catch (err) {
    return ex.failure(dialect, err, s, 'connect')
  }
}

const isAnswer = (v: IncomingMessage | ProxyError | undefined): v is IncomingMessage => v instanceof IncomingMessage

/** Any other request: forwarded as it is (identity headers stripped), answered as the upstream answers, both bodies streamed untouched. */
async function passThrough(req: IncomingMessage, res: ServerResponse, route: Route, ex: Exchange, s: Settings): Promise<void> {
  const dialect = dialectForErrors(route.apiPath)
  const method = req.method ?? 'GET'
  const hasBody = method !== 'GET' && method !== 'HEAD'
  ex.start(s.timeoutMs)
  const up = await sendUpstream(route, { method, headers: withUpstreamHeaders(upstreamHeaders(req.headers, s.strip, 'passed'), s.upstreamExtra), body: hasBody ? req : undefined }, ex, dialect, s)
  if (!isAnswer(up)) {
    if (up !== undefined) send(res, up)
    return
  }
  res.writeHead(up.statusCode ?? 502, clientHeaders(up, false))
  try {
    await pipeBody(up, res)
  } catch (err) {
    s.log(`${method} ${clip(route.apiPath)}: the upstream body broke off (${ex.timedOut ? 'timed out' : requestFailure(err)})`)
    res.destroy()
  }
}

/** A guarded request: tools filtered, the answer guarded. */
async function guarded(req: IncomingMessage, res: ServerResponse, route: Route, dialect: RequestDialect, ex: Exchange, s: Settings, caller?: CallContext): Promise<void> {
  // the body is read as uncoded JSON: a coded one would be decided as one text and read upstream as another
  const coding = requestCoding(req.headers)
  if (coding !== undefined) {
    req.resume()
    send(res, proxyError(dialect, 'unsupported_encoding', `the request body of POST ${route.apiPath} has content-encoding \`${clip(coding)}\`; a guarded request body is read as uncoded JSON, so send it without Content-Encoding (or \`identity\`)`), { connection: 'close' })
    return
  }
  const raw = await readRequestBounded(req, s.maxBodyBytes)
  if (raw === 'too_large') {
    send(res, proxyError(dialect, 'payload_too_large', `the request body is larger than ${s.maxBodyBytes} bytes (--max-body-bytes)`), { connection: 'close' })
    return
  }
  const rawText = raw.toString('utf8')
  let body: unknown
  try {
    // JSON.parse, without parsing the last request's tools again (see request-layout.ts)
    body = s.layouts.parse(rawText)
  } catch (err) {
    send(res, proxyError(dialect, 'bad_request', `the request body of POST ${route.apiPath} is not JSON (${(err as Error).message})`))
    return
  }
  if (!isObj(body)) {
    send(res, proxyError(dialect, 'bad_request', `the request body of POST ${route.apiPath} must be a JSON object`))
    return
  }
  if (body.tools !== undefined && !Array.isArray(body.tools)) {
    send(res, proxyError(dialect, 'bad_request', `request \`tools\`: expected an array of tool definitions`))
    return
  }
  const who = caller !== undefined ? { context: caller, fromHeaders: false } : identityOf(req, s.identity)
  if (typeof who === 'string') {
    send(res, proxyError(dialect, 'bad_request', who))
    return
  }
  if (!s.warnedFixed && isFixed(s.identity) && hasIdentityHeaders(req, s.identity)) {
    s.warnedFixed = true
    s.log('identity headers ignored: this proxy has a fixed caller (--subject/--role/--session or config proxy)')
  }
  const context = who.context
  let gate: ToolGate
  let sent: string
  try {
    ;({ gate, sent } = filteredRequest(body, rawText, dialect, context, s))
  } catch (err) {
    // a refused member's message names it; anything else is about the tool lists
    send(res, proxyError(dialect, 'bad_request', err instanceof RequestMemberRefused ? err.message : `request \`tools\`: ${(err as Error).message}`))
    return
  }
  ex.start(s.timeoutMs)
  const headers = withUpstreamHeaders(upstreamHeaders(req.headers, s.strip, 'guarded'), s.upstreamExtra)
  headers['content-type'] = 'application/json'
  const up = await sendUpstream(route, { method: 'POST', headers, body: sent }, ex, dialect, s)
  if (!isAnswer(up)) {
    if (up !== undefined) send(res, up)
    return
  }
  const status = up.statusCode ?? 502
  const contentType = up.headers['content-type'] ?? ''
  const answerBody = decodedBody(up)
  if (status < 200 || status > 299) {
    await upstreamError(res, up, answerBody, status, dialect, ex, s)
    return
  }
  if ('unsupported' in answerBody) {
    up.destroy()
    send(res, proxyError(dialect, 'bad_upstream_response', `the upstream answered with content-encoding \`${clip(answerBody.unsupported)}\`, which the proxy cannot decode (it asks for ${DECODED_CODINGS}); not forwarded unguarded`))
    return
  }
  if (/^\s*text\/event-stream/i.test(contentType)) {
    await streamed(res, up, answerBody, gate, dialect, context, ex, s)
    return
  }
  let text: Buffer | 'too_large'
  try {
    text = await readStreamBounded(answerBody, s.maxUpstreamBytes)
  } catch (err) {
    const e = ex.failure(dialect, err, s, 'read')
    if (e !== undefined) send(res, e)
    return
  }
  if (text === 'too_large') {
    send(res, proxyError(dialect, 'bad_upstream_response', `the upstream's answer is larger than ${s.maxUpstreamBytes} bytes (limits.maxPayloadBytes); not forwarded unguarded`))
    return
  }
  const json = text.toString('utf8')
  if (!json.trimStart().startsWith('{')) {
    send(res, proxyError(dialect, 'bad_upstream_response', `the upstream answered ${status} with a body that is not a JSON object (content-type ${clip(contentType === '' ? 'none' : contentType)}); not forwarded unguarded`))
    return
  }
  let answer: GuardedAnswer
  try {
    // with state in Redis the decision runs off the event loop (docs/state.md); in memory it is
    // decided in place (the proxy's gates have no plugged engines to wait for): no promise hop
    const opts = { ...context, dialect }
    const report = s.remote ? await gate.guardAsync(json, opts) : gate.guard(json, opts)
    s.log(turnLine(dialect, report.calls, context))
    // what goes out is the decided turn: every call part re-encoded from its verdict, by position
    answer = decidedAnswer(dialect, json, report.calls)
  } catch (err) {
    s.log(`${dialect}: the upstream's answer cannot be guarded (${(err as Error).message})`)
    send(res, proxyError(dialect, 'bad_upstream_response', `the upstream's answer cannot be guarded (${(err as Error).message}); not forwarded unguarded`))
    return
  }
  const out = answer.text
  const h = clientHeaders(up, true)
  const refused = boundedRefused(answer.refused)
  if (refused !== undefined) h[REFUSED_HEADER] = refused
  const receipts = receiptsHeader(answer.receipts)
  if (receipts !== undefined) h[RECEIPTS_HEADER] = receipts
  h['content-length'] = Buffer.byteLength(out)
  res.writeHead(status, h)
  res.end(out)
}

/**
 * A non-2xx answer to a guarded request. A redirect (or any status outside 400–599) is answered
 * 502 — its `Location` is never passed, so the client cannot be sent to an answer the gate never
 * saw. An error passes with its status and headers only as the API's error shape, re-encoded
 * (status.ts); any other body (not JSON, another shape, too large, a coding the proxy cannot
 * decode) is answered 502.
 */
async function upstreamError(res: ServerResponse, up: IncomingMessage, body: ReturnType<typeof decodedBody>, status: number, dialect: RequestDialect, ex: Exchange, s: Settings): Promise<void> {
  const refuse = (why: string) => {
    up.destroy()
    s.log(`${dialect}: the upstream answered ${status}: ${why}; answered 502`)
    send(res, proxyError(dialect, 'bad_upstream_response', `the upstream answered ${status} ${why}; not forwarded`))
  }
  if (statusPolicy(status) === 'refuse') return refuse(status >= 300 && status < 400 ? '(a redirect, which a guarded request never follows)' : '(not a success or an error)')
  if ('unsupported' in body) return refuse(`with content-encoding \`${clip(body.unsupported)}\`, which the proxy cannot decode`)
  let text: Buffer | 'too_large'
  try {
    text = await readStreamBounded(body, MAX_ERROR_BODY_BYTES)
  } catch (err) {
    const e = ex.failure(dialect, err, s, 'read')
    if (e !== undefined) send(res, e)
    return
  }
  if (text === 'too_large') return refuse(`with an error body larger than ${MAX_ERROR_BODY_BYTES} bytes`)
  const shaped = errorShape(dialect, text.toString('utf8'))
  if (shaped === undefined) return refuse(`with a body that is not the ${dialect === 'anthropic' ? 'Anthropic' : 'OpenAI'} error shape`)
  const h = clientHeaders(up, true)
  delete h.location
  delete h['content-location']
  h['content-type'] = 'application/json'
  h['content-length'] = Buffer.byteLength(shaped)
  res.writeHead(status, h)
  res.end(shaped)
}

/**
 * The gate for a request and the body to send upstream: its `tools` through `gate.filterTools`
 * (as JSON text, which the gate reads and answers as text, and which also finds the gate by the
 * exact tools text — see `GateCache.gateFor`; read once per distinct text, tool-list-memo.ts), every other member as the client sent it, except
 * the members that give the model tools outside `tools` (request-tools.ts `outsideTools`): those
 * are learned with `tools` (a hosted member under its hosted tool's name, an item's tool list as
 * it is), then kept, removed or refused as the gate's filter answers for this caller
 * (`fitOutside`); a refused one throws `RequestMemberRefused`, answered 400 naming it. A body
 * that mentions none of them (`mentionsOutsideTools`) and has no `tools` goes out as its own
 * text. When Chat Completions is left with no tool the request has no `tools`, `tool_choice` or
 * `parallel_tool_calls` (the API refuses them without tools); a `tool_choice` naming a removed
 * tool is sent as `auto` and the rewrite logged (`fitToolChoice`), as is each removed member.
 * Throws as `gateFor` and `filterTools` do.
 */
function filteredRequest(body: Obj, rawText: string, dialect: RequestDialect, context: CallContext, s: Settings): { gate: ToolGate; sent: string } {
  const tools = body.tools as unknown[] | undefined
  // A text naming no member or item outside `tools` (and without `\u` escapes) cannot be read
  // as declaring tools elsewhere by any parser; one that does is decided on this parse and sent
  // re-serialized from it, so a key written twice cannot show upstream a member not decided.
  const { mentioned, once, written } = s.layouts.layout(rawText, dialect, tools !== undefined)
  if (tools === undefined && !mentioned) return { gate: s.gates.base, sent: rawText }
  const found = mentioned ? outsideTools(dialect, body, 'proxy') : { hosted: [], lists: [] }
  const extra = outsideDefinitions(dialect, found)
  // The tools as the client wrote them when the body names `tools` once (request-layout.ts `onceTools`) and
  // nothing outside them: the gate then reads, strictly, the very text that goes upstream (a
  // key written twice inside them refuses the request), and nothing is serialized. Otherwise
  // the parsed list, serialized.
  const toolsText = tools === undefined ? undefined : (written ?? JSON.stringify(tools))
  let gate: ToolGate
  if (extra.length === 0) gate = tools === undefined ? s.gates.base : s.gates.gateFor(dialect, tools, toolsText)
  else {
    // learned together: a hosted member's stand-in and an item's tools are declarations like
    // `tools` entries (two different definitions of one name are E_PAYLOAD, as within `tools`)
    const learned = [...(tools ?? []), ...extra]
    gate = s.gates.gateFor(dialect, learned, JSON.stringify(learned))
  }
  const outside = found.hosted.length > 0 || found.lists.length > 0 ? fitOutside(body, found, gate, dialect, context) : undefined
  for (const why of outside?.why ?? []) s.log(`${dialect}${subjectPart(context)}: ${why}`)
  const filtered = toolsText === undefined ? undefined : gate.filterTools(toolsText, { ...context, dialect })
  // Chat Completions refuses an empty `tools` list, and `tool_choice` without tools
  const noTools = dialect === 'openai' && filtered !== undefined && /^\s*\[\s*\]\s*$/.test(filtered) && (tools as unknown[]).length > 0
  // a tool_choice naming a removed tool is sent as auto, never upstream as it is
  const fit = noTools || filtered === undefined || body.tool_choice === undefined ? undefined : fitToolChoice(body.tool_choice, tools, () => JSON.parse(filtered) as unknown, dialect)
  if (fit !== undefined) s.log(`${dialect}${subjectPart(context)}: ${fit.why}`)
  // nothing removed, nothing refitted: the body goes out as the client wrote it (no second
  // serialization), unless its text could be read with another `tools` (see onceTools). The
  // gate answers compact text: tools the client spaced its own way, all kept, equal their
  // serialized form (the gate's strict read of the client's text agreed with this parse).
  if (!noTools && fit === undefined && once && (filtered === toolsText || (written !== undefined && filtered === JSON.stringify(tools)))) return { gate, sent: rawText }
  // Otherwise the body is written from the decision, member by member.
  const dropped = new Set<string>(outside?.removed ?? [])
  if (noTools) for (const k of ['tools', 'tool_choice', 'parallel_tool_calls']) dropped.add(k)
  let out = '{'
  for (const k in body) {
    if (dropped.has(k)) continue
    if (out.length > 1) out += ','
    if (k === 'tools' && filtered !== undefined) out += `"tools":${filtered}`
    else {
      const value = k === 'tool_choice' && fit !== undefined ? fit.toolChoice : k === 'input' && outside?.input !== undefined ? outside.input : body[k]
      out += `${JSON.stringify(k)}:${JSON.stringify(value)}`
    }
  }
  return { gate, sent: `${out}}` }
}

/** A streamed answer: headers now, events as the gate forwards them, the refused calls in a trailer. */
async function streamed(res: ServerResponse, up: IncomingMessage, body: Readable, gate: ToolGate, dialect: RequestDialect, context: CallContext, ex: Exchange, s: Settings): Promise<void> {
  const h = clientHeaders(up, true)
  h.trailer = gate.publicKey !== undefined ? `${REFUSED_HEADER}, ${RECEIPTS_HEADER}` : REFUSED_HEADER
  res.writeHead(up.statusCode ?? 200, h)
  const result = await guardSse({
    gate,
    dialect,
    context,
    upstream: body,
    write: async (chunk) => {
      if (res.destroyed) throw new Error('the client went away')
      if (!res.write(chunk)) await drained(res)
      if (res.destroyed) throw new Error('the client went away')
    },
    log: s.log,
  })
  const why = result.error === undefined ? '' : ` (stopped: ${ex.timedOut ? `no answer within ${s.timeoutMs} ms` : result.error})`
  s.log(`${dialect} stream${subjectPart(context)}: ${result.refused.length} refused${result.refused.map((r) => ` ${clip(r.tool, 64)}#${clip(r.callId, 40)} ${r.outcome} (${r.reason ?? r.outcome})`).join(',')}${why}`)
  if (res.destroyed) return
  const trailers: Record<string, string> = {}
  const refused = boundedRefused(result.refused)
  if (refused !== undefined) trailers[REFUSED_HEADER] = refused
  const receipts = receiptsHeader(result.receipts)
  if (receipts !== undefined) trailers[RECEIPTS_HEADER] = receipts
  if (Object.keys(trailers).length > 0) res.addTrailers(trailers)
  res.end()
}

/** The refused header, whole calls only, within {@link MAX_HEADER_CHARS}. */
function boundedRefused(refused: readonly RefusedCall[]): string | undefined {
  let n = refused.length
  while (n > 0) {
    const h = refusedHeader(refused.slice(0, n))
    if (h.length <= MAX_HEADER_CHARS) return h
    n--
  }
  return undefined
}

function subjectPart(context: CallContext): string {
  return context.subject === undefined ? '' : ` for ${clip(context.subject, 64)}`
}

/** The log line of one guarded turn: dialect, caller, each call's tool, id and outcome — never arguments. */
function turnLine(dialect: RequestDialect, calls: readonly TurnCall[], context: CallContext): string {
  const each = calls.map((c) => `${clip(c.tool, 64)}#${clip(c.callId, 40)} ${c.outcome}${c.reason === undefined ? '' : ` (${c.reason})`}`)
  return `${dialect}${subjectPart(context)}: ${calls.length} call${calls.length === 1 ? '' : 's'}${each.length > 0 ? `: ${each.join(', ')}` : ''}`
}
