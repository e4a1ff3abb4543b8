// Conversion only: a context object a host passes call after call (`gate.check(tool, args, ctx)`
// with the same `ctx`) goes to the binding as the caller already prepared from its text, without
// serializing it again — but only while it holds exactly what it held then. What is decided is
// the same either way: the caller was prepared from the text JSON.stringify made of this object.
import type { BindingCaller } from '../binding/index'
import { knownCaller, type Known } from './context'

/** A remembered context object: the caller prepared from its text, and that text parsed (what the object held). */
interface Memo {
  known: Known
  held: unknown
}

/** Remembered objects, each with its caller: gone with the object (the caller with it). */
const memos = new WeakMap<object, Memo>()

/**
 * Objects seen once with a caller already prepared for their text, as strong references in a
 * ring: an object is remembered when it comes again while still here, so a host building a new
 * context per call pays a store here and never a `WeakMap` entry. At most this many objects are
 * held past their call.
 */
const RING = 16
const ring: (object | undefined)[] = new Array(RING).fill(undefined)
let ringAt = 0

/** Deepest nesting compared; a deeper context takes the text path every time. */
const MAX_DEPTH = 32

/**
 * The handle of the caller prepared for `ctx` when `ctx` is a remembered object that still holds
 * exactly what it held (compared value by value, as `JSON.stringify` would read it); `undefined`
 * otherwise — the caller then serializes `ctx` and decides on that text, as without this memo.
 */
export function rememberedCallerHandle(ctx: object): number | undefined {
  const m = memos.get(ctx)
  return m !== undefined && holds(ctx, m.held, 0) ? m.known.handle : undefined
}

/**
 * {@link knownCaller}'s handle for `text`, the JSON text of `ctx`; remembers `ctx` on its second
 * call with a caller prepared (the first puts it in the ring).
 */
export function knownCallerHandleOf(Binding: typeof BindingCaller, ctx: object, text: string): number | undefined {
  const known = knownCaller(Binding, text)
  if (known === undefined) return undefined
  const at = ring.indexOf(ctx)
  if (at >= 0) {
    ring[at] = undefined
    memos.set(ctx, { known, held: JSON.parse(text) })
  } else {
    ring[ringAt] = ctx
    ringAt = (ringAt + 1) % RING
  }
  return known.handle
}

/**
 * Whether `JSON.stringify(live)` would read the same JSON value as `held` (a value `JSON.parse`
 * made), key order aside. Conservative: `false` for anything `JSON.stringify` would not read as
 * it is — `toJSON`, a non-finite number, `undefined` in an array, a function, symbol or bigint
 * value, nesting past {@link MAX_DEPTH} — so such an object always takes the text path.
 */
function holds(live: unknown, held: unknown, depth: number): boolean {
  if (live === held) return typeof live !== 'number' || Number.isFinite(live)
  if (typeof live !== 'object' || live === null || typeof held !== 'object' || held === null || depth >= MAX_DEPTH) return false
  if (typeof (live as { toJSON?: unknown }).toJSON === 'function') return false
  if (Array.isArray(live)) {
    if (!Array.isArray(held) || live.length !== held.length) return false
    for (let i = 0; i < live.length; i++) {
      const v: unknown = live[i]
      if (v === undefined || !holds(v, held[i], depth + 1)) return false
    }
    return true
  }
  if (Array.isArray(held)) return false
  const h = held as Record<string, unknown>
  let n = 0
  for (const k of Object.keys(live)) {
    const v = (live as Record<string, unknown>)[k]
    // JSON.stringify leaves out a key whose value is undefined
    if (v === undefined) continue
    if (!Object.hasOwn(h, k) || !holds(v, h[k], depth + 1)) return false
    n++
  }
  return n === Object.keys(h).length
}
