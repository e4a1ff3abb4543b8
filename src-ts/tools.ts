// Conversion only for `filterTools`: which tools a caller may see is decided by the core.
// JSON tool lists go to the core whole (it knows each dialect's shape); AI SDK records and
// LangChain tool arrays usually hold live objects (functions, zod schemas, class instances) that
// cannot cross as JSON, so for those the core is asked about names and the caller's own objects
// are kept, identical, in a container of the same shape. A JSON list given as text is answered
// as text; given as objects, the core answers where it removed something (paths into the list as
// sent) and those positions are cut from the caller's own objects — nothing else crosses back.
import { ToolGateError } from './errors'
import { payloadText } from './turn'
import type { Dialect } from './types'

type Visible = (names: string[]) => boolean[]
type FilterJson = (dialect: string, tools: string) => string
/** The core's removals for a list sent as text: JSON, an array of paths of keys and indices. */
type FilterRemovals = (dialect: string, tools: string) => string
type RemovalPath = (string | number)[]

/** A node of the removal tree: `true` removes that member or element, a node goes inside it. */
export type Cut = Map<string | number, Cut | true>

/** Marks a list that is not, at a removal's position, what its JSON text showed. */
const MISMATCH: unique symbol = Symbol('mismatch')

/** The removal paths as a tree; `undefined` for paths the core never answers (empty, or one inside another). */
function cutTree(paths: RemovalPath[]): Cut | undefined {
  const root: Cut = new Map()
  for (const p of paths) {
    if (!Array.isArray(p) || p.length === 0) return undefined
    let node = root
    for (let i = 0; i < p.length - 1; i++) {
      let next = node.get(p[i])
      if (next === true) return undefined
      if (next === undefined) {
        next = new Map()
        node.set(p[i], next)
      }
      node = next
    }
    if (node.has(p[p.length - 1])) return undefined
    node.set(p[p.length - 1], true)
  }
  return root
}

/** Whether `JSON.stringify` writes an object member holding `v` (it skips the others). */
function jsonVisible(v: unknown): boolean {
  return v !== undefined && typeof v !== 'function' && typeof v !== 'symbol'
}

/**
 * `v` with the tree's cuts made: the containers on the way are copied (arrays as arrays, plain
 * objects as plain objects, members in order), everything else is the caller's own value.
 * {@link MISMATCH} when a container on the way is not what `JSON.stringify` read there — a
 * `toJSON`, a class instance, an accessor, or a position it does not have.
 */
function cut(v: unknown, node: Cut): unknown {
  if (v === null || typeof v !== 'object' || typeof (v as { toJSON?: unknown }).toJSON === 'function') return MISMATCH
  if (Array.isArray(v)) {
    for (const k of node.keys()) if (typeof k !== 'number' || !Number.isInteger(k) || k < 0 || k >= v.length) return MISMATCH
    const out: unknown[] = []
    for (let i = 0; i < v.length; i++) {
      const n = node.get(i)
      if (n === true) continue
      const x = n === undefined ? v[i] : cut(v[i], n)
      if (x === MISMATCH) return MISMATCH
      out.push(x)
    }
    return out
  }
  const proto = Object.getPrototypeOf(v) as unknown
  if (proto !== Object.prototype && proto !== null) return MISMATCH
  for (const k of node.keys()) {
    if (typeof k !== 'string') return MISMATCH
    const d = Object.getOwnPropertyDescriptor(v, k)
    if (d === undefined || !('value' in d) || !d.enumerable || !jsonVisible(d.value)) return MISMATCH
  }
  const src = v as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(src)) {
    const n = node.get(k)
    if (n === true) continue
    const x = n === undefined ? src[k] : cut(src[k], n)
    if (x === MISMATCH) return MISMATCH
    // a member named `__proto__` (JSON.parse makes one) stays a member, not the copy's prototype
    if (k === '__proto__') Object.defineProperty(out, k, { value: x, writable: true, enumerable: true, configurable: true })
    else out[k] = x
  }
  return out
}

const LIVE_OBJECT_DIALECTS: ReadonlySet<Dialect> = new Set(['ai-sdk', 'ai-sdk-ui', 'langchain'])

/** The name a LangChain tool goes by: a tool instance or spec (`name`), or an OpenAI-format definition (`function.name`). */
function langchainName(t: unknown): string | undefined {
  if (t === null || typeof t !== 'object') return undefined
  const o = t as { name?: unknown; function?: { name?: unknown } }
  if (typeof o.name === 'string') return o.name
  if (o.function && typeof o.function.name === 'string') return o.function.name
  return undefined
}

/**
 * The tool objects of a list the core is asked about by name (AI SDK records, LangChain tool
 * arrays), read once: their names and the objects themselves, by position. `undefined` for any
 * other list (JSON data, sent to the core whole). Throws `E_PAYLOAD` for a LangChain tool
 * without a name.
 */
export function liveTools(tools: unknown, dialect: Dialect): LiveTools | undefined {
  if (!LIVE_OBJECT_DIALECTS.has(dialect)) return undefined
  if ((dialect === 'ai-sdk' || dialect === 'ai-sdk-ui') && tools !== null && typeof tools === 'object' && !Array.isArray(tools)) {
    const record = tools as Record<string, unknown>
    const names = Object.keys(record)
    return { record: true, names, values: names.map((n) => record[n]) }
  }
  if (dialect === 'langchain' && Array.isArray(tools)) {
    const names = tools.map((t, i) => {
      const n = langchainName(t)
      if (n === undefined) throw new ToolGateError('E_PAYLOAD', `langchain tool list at \`[${i}]\`: a tool without a name`)
      return n
    })
    return { record: false, names, values: [...tools] }
  }
  return undefined
}

/** What {@link liveTools} read: names and objects by position, and whether they came as a record (by key) or an array. */
export interface LiveTools {
  record: boolean
  names: string[]
  values: unknown[]
}

/** The live tools `keep` answers true for, in a new container of the shape they came in. */
export function keptLiveTools(live: LiveTools, keep: boolean[]): unknown {
  if (!live.record) return live.values.filter((_, i) => keep[i])
  const out: Record<string, unknown> = {}
  live.names.forEach((n, i) => {
    if (keep[i]) out[n] = live.values[i]
  })
  return out
}

/** Removal trees made, by the core's answer text (a list has a few answers: one per kind of caller). */
const trees = new Map<string, Cut | undefined>()
/** Removal trees kept (all cleared when full). */
const REMEMBERED_TREES = 32

/**
 * The core's removals (its JSON answer) as a tree to cut with; `undefined` for paths it never
 * answers. A tree is only read, never changed, so one is made per answer text and shared.
 */
export function removalTree(removals: string): Cut | undefined {
  if (trees.has(removals)) return trees.get(removals)
  const tree = cutTree(JSON.parse(removals) as RemovalPath[])
  if (trees.size >= REMEMBERED_TREES) trees.clear()
  trees.set(removals, tree)
  return tree
}

/**
 * `tools` (parsed JSON data or the caller's own objects) with the removals of `tree`
 * ({@link removalTree}) cut out: new containers on the way, every other value the same.
 * `undefined` when the list is not, at a removal's position, what its JSON text showed (see
 * {@link cut}), or there is no tree.
 */
export function cutRemovals(tools: unknown, tree: Cut | undefined): unknown {
  const kept = tree === undefined ? MISMATCH : cut(tools, tree)
  return kept === MISMATCH ? undefined : kept
}

/** Filters `tools` in `dialect`'s shape; see `ToolGate.filterTools`. */
export function filterToolList<T>(tools: T, dialect: Dialect, visible: Visible, filterJson: FilterJson, filterRemovals: FilterRemovals): T {
  const live = liveTools(tools, dialect)
  if (live !== undefined) return keptLiveTools(live, visible(live.names)) as T
  const text = payloadText(tools, `${dialect} tool list`)
  // the same shape back: JSON text in, JSON text out
  if (typeof tools === 'string') return filterJson(dialect, text) as T
  // the outer container is always new, as `Array.prototype.filter`'s answer is (with nothing
  // removed, a shallow copy); a list that is not plain data where something goes: the core's
  // filtered text, parsed
  return (cutRemovals(tools, removalTree(filterRemovals(dialect, text))) ?? JSON.parse(filterJson(dialect, text))) as T
}
