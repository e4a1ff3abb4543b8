// Conversion only: the caller's context (`CallContext`, possibly spread into an options object
// such as `{ dialect, ...ctx }`, or a `Caller` prepared once) to what the binding reads. Unknown
// keys of a bare context are refused by the core (a typo such as `role` must not silently drop a
// role).
import type { BindingCaller } from '../binding/index'
import { ToolGateError } from './errors'
import type { CallContext } from './types'

/**
 * The keys of an options object (`guard`, `guardAsync`, `filterTools`, `stream`) that are options
 * of the call rather than fields of the caller's context. Every other key is the context's: it is
 * sent, so the core names one that is not a context field (as it does for `check`'s `ctx`).
 */
const CALL_OPTIONS: ReadonlySet<string> = new Set(['dialect', 'protocolVersion', 'caller'])

/** The `caller` option of `guard`, `guardAsync`, `filterTools` and `stream`: a prepared caller instead of the context fields. */
export interface CallerOption {
  /** A caller prepared with {@link ToolGate.caller} (then no context field may be given beside it). */
  caller?: Caller
}

/** Only `ToolGate.caller` makes callers (a handle must come from the binding). */
const PREPARE = Symbol('toolgate.prepareCaller')

let handleOf: (c: Caller) => number
let textOf: (c: Caller) => string

/**
 * A caller prepared once with {@link ToolGate.caller}: its context is read and checked when it is
 * prepared, so a call made with it (`gate.check(tool, args, caller)`, `gate.guard(payload,
 * { dialect, caller })`) costs no conversion of the context. Reuse one per caller (per user,
 * per session) across calls. It is a snapshot: later changes to the object it was prepared from
 * are not seen. It may be used with any gate.
 */
export class Caller {
  /** The context this caller was prepared from (a deep, frozen copy). */
  readonly context: Readonly<CallContext>
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: never read, only held, so the native caller (and so its handle) lives exactly as long as this object
  readonly #native: BindingCaller
  readonly #handle: number
  readonly #text: string

  /** @internal Use {@link ToolGate.caller}. */
  constructor(token: symbol, native: BindingCaller, text: string, context: CallContext) {
    if (token !== PREPARE) throw new TypeError('Caller: prepare a caller with gate.caller(ctx)')
    this.#native = native
    this.#handle = native.handle
    this.#text = text
    this.context = deepFreeze(context)
  }

  static {
    handleOf = (c) => c.#handle
    textOf = (c) => c.#text
  }
}

/** Prepares a caller with the binding's `BindingCaller` (throws `E_CONFIG` for a context the core refuses). */
export function prepareCaller(Binding: typeof BindingCaller, ctx: CallContext | Caller | null | undefined): Caller {
  if (ctx instanceof Caller) return ctx
  if (ctx !== null && ctx !== undefined && (typeof ctx !== 'object' || Array.isArray(ctx))) {
    throw new ToolGateError('E_CONFIG', 'caller: expected a CallContext object')
  }
  const text = bareContextText(ctx)
  // a deep copy, from the very text the binding read: what engines are shown is what was decided on
  return new Caller(PREPARE, new Binding(text), text, text === '' ? {} : (JSON.parse(text) as CallContext))
}

/** `v` with every object and array in it frozen (plain JSON data: no cycles). */
export function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object') {
    for (const x of Object.values(v)) deepFreeze(x)
    Object.freeze(v)
  }
  return v
}

/** The binding handle of a prepared caller. */
export function callerHandle(c: Caller): number {
  return handleOf(c)
}

/**
 * The prepared caller of an options object (`opts.caller`), or `undefined`. Throws `E_CONFIG`
 * when `caller` is not a `Caller`, or when context fields are given beside it (one or the other).
 */
export function callerOption(opts: object | null | undefined): Caller | undefined {
  const c = (opts as { caller?: unknown } | null | undefined)?.caller
  if (c === undefined) return undefined
  if (!(c instanceof Caller)) throw new ToolGateError('E_CONFIG', 'options.caller: expected a Caller (from gate.caller(ctx))')
  for (const k in opts) {
    if (!CALL_OPTIONS.has(k) && (opts as Record<string, unknown>)[k] !== undefined) {
      throw new ToolGateError('E_CONFIG', `options: \`caller\` and the context field \`${k}\` were both given; put the whole context in the caller`)
    }
  }
  return c
}

/**
 * JSON text of the context fields of `opts` — every key that is not an option of the call
 * (`dialect`, `protocolVersion`, `caller`), so the core names one that is not a `CallContext`
 * field instead of it being dropped — or of its prepared `caller`; `''` when there are none.
 */
export function contextText(opts: object | null | undefined): string {
  if (opts === null || opts === undefined) return ''
  const prepared = callerOption(opts)
  if (prepared !== undefined) return textOf(prepared)
  const o = opts as Record<string, unknown>
  let picked: Record<string, unknown> | undefined
  for (const k in o) {
    const v = o[k]
    if (v !== undefined && !CALL_OPTIONS.has(k)) (picked ??= {})[k] = v
  }
  return picked === undefined ? '' : JSON.stringify(picked)
}

/**
 * JSON text of a bare context passed as `check`'s or `confirm`'s `ctx` argument (every key is
 * sent, so the core names any that is not a `CallContext` field), or of a prepared caller.
 */
export function bareContextText(ctx: CallContext | Caller | null | undefined): string {
  if (ctx === null || ctx === undefined) return ''
  if (ctx instanceof Caller) return textOf(ctx)
  let empty = true
  for (const k in ctx) {
    if ((ctx as Record<string, unknown>)[k] !== undefined) {
      empty = false
      break
    }
  }
  return empty ? '' : JSON.stringify(ctx)
}

/** A context text the binding has read as a caller: the `BindingCaller` (kept alive here) and its handle. */
export interface Known {
  native: BindingCaller
  handle: number
}

/**
 * Contexts seen with recent calls, by their JSON text: `null` once seen, then the caller the
 * binding prepared from that text on the second sighting, or `false` for a text it refused.
 * Bounded (cleared when full): a host passing a new context per call pays one `Map.set`.
 */
const seen = new Map<string, Known | null | false>()
const SEEN_MAX = 512

/**
 * The handle of a caller prepared from the context text `text` (as {@link ToolGate.caller} would
 * prepare it) when this text has been passed before, so a host repeating a context object call
 * after call gets the prepared caller's cost; `undefined` the first time, or for a context the
 * binding refuses (the call then reads the text itself and throws as before). The decision is
 * the same: the binding reads the same text either way.
 */
export function knownCallerHandle(Binding: typeof BindingCaller, text: string): number | undefined {
  return knownCaller(Binding, text)?.handle
}

/** {@link knownCallerHandle}'s caller itself: holding it keeps its handle valid. */
export function knownCaller(Binding: typeof BindingCaller, text: string): Known | undefined {
  const hit = seen.get(text)
  if (hit) return hit
  if (hit === false) return undefined
  if (hit === undefined) {
    if (seen.size >= SEEN_MAX) seen.clear()
    seen.set(text, null)
    return undefined
  }
  let native: BindingCaller
  try {
    native = new Binding(text)
  } catch {
    seen.set(text, false)
    return undefined
  }
  const known = { native, handle: native.handle }
  seen.set(text, known)
  return known
}

/** The plain context of a `CallContext` or prepared caller (what engines are shown). */
export function plainContext(ctx: CallContext | Caller | null | undefined): CallContext {
  if (ctx instanceof Caller) return ctx.context as CallContext
  return ctx ?? {}
}
