// Conversion only for `gate.prepareTools`: a tool list read once and filtered for each caller.
// Which tools a caller may see is decided by the core (crates/toolgate-core/src/tool_list.rs);
// this keeps what was prepared and builds each answer from it.
import type { BindingTools } from '../binding/index'
import { bareContextText, Caller, callerHandle, callerOption, contextText, deepFreeze, type CallerOption } from './context'
import { rememberedCallerHandle } from './context-memo'
import { toToolGateError } from './errors'
import { cutRemovals, keptLiveTools, removalTree, type LiveTools } from './tools'
import type { CallContext } from './types'

/** Only `ToolGate.prepareTools` makes prepared lists. */
const PREPARE = Symbol('toolgate.prepareTools')

/** How a prepared list reaches the gate that prepared it: the binding's filters on that gate (the list and the caller by handle), and `visibleTools` for live objects. */
export interface PreparedToolsGate {
  filter: (list: number, ctx: string, caller: number | undefined) => string
  removals: (list: number, ctx: string, caller: number | undefined) => string
  visible: (names: string[], ctx: string) => boolean[]
  /** The caller the binding prepared from the context text `text` of `ctx` when that text was seen before (see `knownCallerHandleOf`). */
  known: (ctx: object, text: string) => number | undefined
}

/** What was prepared: the core's list (held, so its handle stays live as long as this), and what the answers are built from. */
export type PreparedSource =
  | { kind: 'text'; native: BindingTools; list: number }
  | { kind: 'data'; native: BindingTools; list: number; snapshot: unknown }
  | { kind: 'live'; live: LiveTools }

/**
 * A tool list read and checked once by {@link ToolGate.prepareTools}, to filter for many callers:
 * `filter` answers what `gate.filterTools(tools, { dialect, ...caller })` answers for the list as
 * it was when prepared, without sending the list across or reading it again (the core asks only
 * which of its names the caller may see, and remembers what each set of answers removes).
 *
 * - Prepared from text, `filter` answers text.
 * - Prepared from JSON data (an OpenAI, Anthropic, MCP, Gemini … list as objects), `filter`
 *   answers objects: a new outer container (and a new one on the way to each removal) holding
 *   the list's definitions as they were read when it was prepared — plain JSON data, frozen and
 *   shared between answers. Later changes to the objects it was prepared from are not seen, and
 *   helpers' functions (openai's `zodFunction` parsers) are not kept: for those, use
 *   `filterTools`, which keeps the caller's own objects.
 * - Prepared from live tool objects (an AI SDK record, a LangChain tool array), `filter` answers
 *   the very tool objects it was prepared with, by their names then.
 */
export class PreparedTools<T = unknown> {
  readonly #gate: PreparedToolsGate
  readonly #source: PreparedSource

  /** @internal Use {@link ToolGate.prepareTools}. */
  constructor(token: symbol, gate: PreparedToolsGate, source: PreparedSource) {
    if (token !== PREPARE) throw new TypeError('PreparedTools: prepare a tool list with gate.prepareTools(tools, { dialect })')
    this.#gate = gate
    this.#source = source
    if (source.kind === 'data') deepFreeze(source.snapshot)
  }

  /**
   * The list with only the tools this caller could call (`opts`: the caller's context fields,
   * or `{ caller }` prepared with {@link ToolGate.caller}, or that `Caller` itself). Throws
   * `E_CONFIG` for a context the core refuses, naming a key that is not a context field.
   */
  filter(opts?: (CallContext & CallerOption) | Caller): T {
    const o = opts instanceof Caller ? { caller: opts } : opts
    const src = this.#source
    try {
      const prepared = callerOption(o)
      if (src.kind === 'live') return keptLiveTools(src.live, this.#gate.visible(src.live.names, prepared === undefined ? bareContextText(o) : contextText(o))) as T
      // a bare context object passed before that still holds what it held, or one whose text was
      // seen before, goes as the caller prepared from that text (the same decision, without the
      // core reading the context again); else every key of it is sent, so the core names one that
      // is not a context field
      let h = prepared !== undefined ? callerHandle(prepared) : o === undefined ? undefined : rememberedCallerHandle(o)
      let c = ''
      if (h === undefined && prepared === undefined) {
        c = bareContextText(o)
        if (c !== '' && o !== undefined) h = this.#gate.known(o, c)
      }
      if (src.kind === 'text') return this.#gate.filter(src.list, c, h) as T
      // the snapshot is plain JSON data, so the cut is always made; the filtered text, parsed, is
      // the answer should it ever not be
      const kept = cutRemovals(src.snapshot, removalTree(this.#gate.removals(src.list, c, h)))
      return (kept ?? deepFreeze(JSON.parse(this.#gate.filter(src.list, c, h)) as unknown)) as T
    } catch (err) {
      throw toToolGateError(err, 'E_PAYLOAD')
    }
  }
}

/** Makes a {@link PreparedTools} (for `ToolGate.prepareTools`). */
export function makePreparedTools<T>(gate: PreparedToolsGate, source: PreparedSource): PreparedTools<T> {
  return new PreparedTools<T>(PREPARE, gate, source)
}
