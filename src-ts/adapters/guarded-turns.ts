// One guarded model request, for the `openai` and `@anthropic-ai/sdk` clients (shared by
// toolgate/openai and toolgate/anthropic; both SDKs answer `create` with the same Stainless
// `APIPromise` and `Stream`). Before the request: the body's `tools` through `gate.filterTools`.
// After it: a whole response through `gate.guardAsync`, a stream event by event through
// `gate.stream`. Nothing here decides anything; the report of each turn is kept where
// `runToolCalls` and `toolgateReport` find it.
import { isObj } from '../json-object'
import { ToolGateError } from '../errors'
import { ToolGate } from '../gate'
import type { ToolCallStream } from '../stream'
import { filterBody } from '../request-tools'
import type { CallContext, TurnCall, TurnReport } from '../types'

/** The dialects of the OpenAI and Anthropic adapters. */
export type ClientDialect = 'openai' | 'openai-responses' | 'anthropic'

/**
 * Who is calling: a `CallContext`, or a function returning one that is asked once per request
 * (for example from the host's auth, held in an `AsyncLocalStorage`). It must answer
 * synchronously: the request body is filtered before the request leaves.
 */
export type ContextSource = CallContext | (() => CallContext)

/** What a guarded client tells `onVerdict` besides the verdict. */
export interface VerdictInfo {
  /** The dialect of the turn (`'openai'` for Chat Completions, `'openai-responses'`, `'anthropic'`). */
  dialect: ClientDialect
  /** The call's wire id (`tool_call_id`, `call_id`, `tool_use id`). */
  callId: string
  /** True when the verdict came from a streamed response (told the moment the call completed). */
  streamed: boolean
  /** The caller the verdict was decided for. */
  context: CallContext
}

/** What a guarded client tells `onReport` besides the report. */
export interface ReportInfo {
  /** True when the turn was streamed (told when the stream ended). */
  streamed: boolean
  /** The caller the turn was decided for. */
  context: CallContext
}

/** Options of `guardOpenAI` / `guardAnthropic`. Unknown keys are `E_CONFIG`. */
export interface GuardClientOptions<D extends ClientDialect = ClientDialect> {
  /**
   * Told every verdict of every guarded turn, in call order, before the response (or, in a
   * stream, the call's events) reaches your code: the host's log, and the only place a `confirm`
   * outcome's `verdict.confirmation.token` appears (the model gets `verdict.message` only).
   * Awaited when it returns a promise; a throw fails the request (or the stream) instead.
   */
  onVerdict?: (verdict: TurnCall, info: VerdictInfo) => void | Promise<void>
  /**
   * Told each guarded turn's whole report: for a response before it reaches your code, for a
   * stream when it ends. The way to the report of a stream consumed by an SDK helper
   * (`messages.stream()`, `chat.completions.stream()`), which keeps the stream to itself.
   * Awaited when it returns a promise; a throw fails the request (or the stream's end).
   */
  onReport?: (report: TurnReport<D>, info: ReportInfo) => void | Promise<void>
  /**
   * Told when a request's `tool_choice` named a tool the filter removed for this caller (or
   * forced a call with no tool left) and was sent as `auto` instead (README "Tool choice"):
   * `why` names the tool, for the host's log — the model never sees it. Called before the request
   * is sent; a throw fails the request.
   */
  onToolChoice?: (why: string, info: ToolChoiceInfo) => void
}

/** What a guarded client tells `onToolChoice` besides why. */
export interface ToolChoiceInfo {
  /** The dialect of the request (`'openai'`, `'openai-responses'`, `'anthropic'`). */
  dialect: ClientDialect
  /** The caller the tools were filtered for. */
  context: CallContext
}

const OPTION_KEYS: ReadonlySet<string> = new Set(['onVerdict', 'onReport', 'onToolChoice'])

/** Where a guarded response or stream keeps its turn. */
interface Entry {
  gate: ToolGate
  dialect: ClientDialect
  /** Undefined until a stream has ended. */
  report: TurnReport | undefined
}

const turns = new WeakMap<object, Entry>()

/** The entry of a response or stream a guarded client answered, if it is one. */
export function entryOf(value: unknown): Entry | undefined {
  return typeof value === 'object' && value !== null ? turns.get(value) : undefined
}

/** Checks the arguments common to `guardOpenAI` / `guardAnthropic`; `E_CONFIG` names what is wrong. */
export function checkGuardArgs(where: string, client: unknown, gate: unknown, ctx: unknown, options: unknown): void {
  if (client === null || typeof client !== 'object') throw new ToolGateError('E_CONFIG', `${where}: \`client\` must be an SDK client object`)
  if (!(gate instanceof ToolGate)) throw new ToolGateError('E_CONFIG', `${where}: \`gate\` must be a ToolGate`)
  if (typeof ctx !== 'function' && !isObj(ctx)) throw new ToolGateError('E_CONFIG', `${where}: \`ctx\` must be a CallContext or a function returning one`)
  if (!isObj(options)) throw new ToolGateError('E_CONFIG', `${where}: options must be an object`)
  const unknown = Object.keys(options).filter((k) => !OPTION_KEYS.has(k))
  if (unknown.length > 0) {
    throw new ToolGateError('E_CONFIG', `${where}: unknown option ${unknown.map((k) => `\`${k}\``).join(', ')} (expected onVerdict, onReport, onToolChoice)`)
  }
  for (const k of OPTION_KEYS) {
    if (options[k] !== undefined && typeof options[k] !== 'function') throw new ToolGateError('E_CONFIG', `${where}: ${k} must be a function`)
  }
}

/** The caller for one request; `E_CONFIG` when the source gives no `CallContext` object. */
export function contextOf(source: ContextSource | undefined, where: string): CallContext {
  const ctx = typeof source === 'function' ? source() : (source ?? {})
  if (!isObj(ctx)) {
    throw new ToolGateError('E_CONFIG', `${where}: the context function must return a CallContext object, got ${ctx === null ? 'null' : Array.isArray(ctx) ? 'an array' : typeof ctx}`)
  }
  return ctx
}

/** The SDK's `APIPromise` helper this module builds on (both SDKs: a new APIPromise over the same response). */
interface ThenUnwrap {
  _thenUnwrap(transform: (data: unknown) => unknown): unknown
}

/** The SDK `Stream` constructor (both SDKs: `new Stream(iterator, controller, client?)`). */
type StreamConstructor = new (iterator: () => AsyncIterator<unknown>, controller: AbortController) => AsyncIterable<unknown>

/**
 * The guarded version of a `create` method: `tools` filtered for the caller, then the response
 * guarded (or the stream wrapped). Returns the SDK's own `APIPromise` type, so `await`,
 * `.withResponse()` and `.asResponse()` keep working (`asResponse()` is the raw HTTP response,
 * which toolgate never reads).
 */
export function guardedCreate(
  original: (...args: unknown[]) => unknown,
  resource: object,
  spec: { gate: ToolGate; dialect: ClientDialect; ctx: ContextSource; options: GuardClientOptions; where: string },
): (...args: unknown[]) => unknown {
  const { gate, dialect, options, where } = spec
  return function create(body: unknown, ...rest: unknown[]): unknown {
    const context = contextOf(spec.ctx, where)
    const told = options.onToolChoice
    const sent = filterBody(body, gate, dialect, context, told === undefined ? undefined : (why) => told(why, { dialect, context }))
    // Created before the request so a gate that cannot stream (E_ASYNC) fails before anything is sent.
    const toolStream = isObj(sent) && sent.stream === true ? gate.stream({ ...context, dialect }) : undefined
    const promise = original.call(resource, sent, ...rest) as Partial<ThenUnwrap> | null
    if (promise === null || typeof promise !== 'object' || typeof promise._thenUnwrap !== 'function') {
      throw new ToolGateError('E_CONFIG', `${where}: create did not answer an APIPromise; is the client of the supported SDK version?`)
    }
    return promise._thenUnwrap((data) => {
      if (toolStream !== undefined && isAsyncIterable(data)) return wrapStream(data, toolStream, gate, dialect, context, options, where)
      return guardResponse(data, gate, dialect, context, options)
    })
  }
}

function isAsyncIterable(v: unknown): v is AsyncIterable<unknown> & { controller: AbortController } {
  return isObj(v) && typeof (v as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function' && v.controller instanceof AbortController
}

async function tell(report: TurnReport, streamed: boolean, context: CallContext, options: GuardClientOptions): Promise<void> {
  if (options.onVerdict !== undefined) {
    for (const c of report.calls) await options.onVerdict(c, { dialect: report.dialect as ClientDialect, callId: c.callId, streamed, context })
  }
  if (options.onReport !== undefined) await options.onReport(report as TurnReport<ClientDialect>, { streamed, context })
}

/** A whole response, guarded: the report's payload (repairs written back, refused calls kept). */
async function guardResponse(data: unknown, gate: ToolGate, dialect: ClientDialect, context: CallContext, options: GuardClientOptions): Promise<unknown> {
  if (!isObj(data)) return data
  const report = await gate.guardAsync(data, { ...context, dialect })
  const out = report.payload
  if (!isObj(out)) return out
  if (out !== data) {
    // the SDK's non-enumerable extras (`_request_id` …) stay on the object the caller gets
    for (const key of Object.getOwnPropertyNames(data)) {
      const d = Object.getOwnPropertyDescriptor(data, key)
      if (d !== undefined && !d.enumerable && !(key in out)) Object.defineProperty(out, key, d)
    }
  }
  turns.set(out, { gate, dialect, report })
  // a throw here fails the request: the host's log hook saw nothing, so the caller gets nothing
  await tell(report, false, context, options)
  return out
}

/**
 * A stream, guarded: a new SDK `Stream` (same class, same controller, so `tee()`,
 * `toReadableStream()` and `controller.abort()` work) whose events are what `gate.stream`
 * forwards: text live, each call held until complete, then released repaired or dropped.
 */
function wrapStream(
  source: AsyncIterable<unknown> & { controller: AbortController },
  toolStream: ToolCallStream,
  gate: ToolGate,
  dialect: ClientDialect,
  context: CallContext,
  options: GuardClientOptions,
  where: string,
): unknown {
  const entry: Entry = { gate, dialect, report: undefined }
  const told = new Set<string>()
  const tellCalls = async (calls: TurnCall[]): Promise<void> => {
    for (const c of calls) {
      if (told.has(c.callId)) continue
      told.add(c.callId)
      await options.onVerdict?.(c, { dialect, callId: c.callId, streamed: true, context })
    }
  }
  async function* events(): AsyncGenerator<unknown, void, undefined> {
    for await (const event of source) {
      await tellCalls(toolStream.push(event as object))
      yield* toolStream.forward()
    }
    const report = toolStream.end()
    // a call the stream never completed is refused by `end()`: told here
    await tellCalls(report.calls)
    entry.report = report
    if (options.onReport !== undefined) await options.onReport(report as TurnReport<ClientDialect>, { streamed: true, context })
    // whatever `end()` still releases (a final event held back) reaches the consumer too
    yield* toolStream.forward()
  }
  const Stream = (source as { constructor?: unknown }).constructor
  if (typeof Stream !== 'function') throw new ToolGateError('E_CONFIG', `${where}: the SDK answered a stream without a Stream class`)
  const guarded = new (Stream as StreamConstructor)(() => events(), source.controller)
  turns.set(guarded, entry)
  return guarded
}
