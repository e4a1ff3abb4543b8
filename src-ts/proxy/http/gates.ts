// Which tools the HTTP proxy's gate knows, request by request. The host (never the model) writes
// a request's `tools`, so the tools a request declares are learned from it: each becomes a tool
// of the gate with the request's own schema (`parameters` / `input_schema`). The config's tools
// win for their names (a configured tool without `inputSchema` takes the request's), and a
// config `policy` still denies by default, learned tools included. Provider-hosted tools are
// learned under the names the core's tool filter looks them up by, so without a policy they stay
// in the request and with one they stay only when a rule allows them.
//
// One gate per distinct set of learned definitions, compiled once and kept in an LRU (default 64
// gates): requests declaring the same tools share a gate. Requests declaring no tool beyond the
// config's all share the config's own gate. Loop, taint and confirmation state belongs to the
// caller's session, not to a gate: every gate of the cache keeps it in one shared `GateState`,
// so a conversation whose tool list changes, or whose gate was evicted (another client can force
// that with 65 distinct tool lists), keeps its taint, loop counts and tokens.
//
// Audit: every gate records through its own trail; trails of one process writing one file (or
// stdout) share its hash chain (src-ts/audit/trail.ts), so the file holds one chain whatever the
// number of gates, each gate's `open` record naming its config.
import { canonicalJson, MAX_CANONICAL_DEPTH } from '../../canonical-json'
import { isObj } from '../../json-object'
import { createHash } from 'node:crypto'

import { ToolGateError } from '../../errors'
import { ToolGate } from '../../gate'
import { GateState } from '../../state'
import type { ToolConfig, ToolGateConfig } from '../../types'
import type { RequestDialect } from '../../request-dialect'

/** The default number of gates kept. */
export const DEFAULT_GATE_CACHE = 64
/** Tool lists longer than this (JSON text) are not remembered by their text (see {@link GateCache.gateFor}). */
const MAX_REMEMBERED_TEXT = 256 * 1024
/** The remembered tool-list texts hold at most this many characters together (oldest forgotten first). */
const MAX_REMEMBERED_CHARS = 4 * 1024 * 1024

/** Responses built-ins the host runs itself, and the call item type their calls are gated under. */
const RESPONSES_CLIENT_BUILTINS: Readonly<Record<string, string>> = Object.freeze({
  computer: 'computer_call',
  computer_use_preview: 'computer_call',
  shell: 'shell_call',
  local_shell: 'local_shell_call',
  apply_patch: 'apply_patch_call',
})

const schemaOf = (v: unknown): ToolConfig['inputSchema'] | undefined => (isObj(v) || typeof v === 'boolean' ? (v as ToolConfig['inputSchema']) : undefined)
const tool = (name: string, schema: unknown): ToolConfig => {
  const s = schemaOf(schema)
  return s === undefined ? { name } : { name, inputSchema: s }
}

/**
 * The tools a request's `tools` list declares, as gate tools (name and input schema only), in
 * the names the core gates their calls under: Chat Completions `function.name` / `custom.name`;
 * Responses `name` (`namespace.name` inside a `namespace` tool), client built-ins by their call
 * item type (`computer_call`, `shell_call` …), other built-ins by `type` (`web_search` …);
 * Anthropic `name` (server tools too). Entries without a name are skipped (the core's filter
 * refuses them). Two different definitions of one name are `E_PAYLOAD`.
 */
export function learnTools(dialect: RequestDialect, tools: unknown): ToolConfig[] {
  if (!Array.isArray(tools)) return []
  const found: ToolConfig[] = []
  for (const t of tools) {
    if (!isObj(t)) continue
    if (dialect === 'openai') {
      const kind = typeof t.type === 'string' ? t.type : 'function'
      const def = t[kind]
      if (isObj(def) && typeof def.name === 'string' && def.name !== '') found.push(tool(def.name, kind === 'function' ? def.parameters : undefined))
    } else if (dialect === 'anthropic') {
      if (typeof t.name === 'string' && t.name !== '') found.push(tool(t.name, t.input_schema))
    } else {
      const kind = t.type
      if (typeof kind !== 'string') continue
      if (kind === 'function' || kind === 'custom') {
        if (typeof t.name === 'string' && t.name !== '') found.push(tool(t.name, kind === 'function' ? t.parameters : undefined))
      } else if (kind === 'namespace') {
        if (typeof t.name !== 'string' || !Array.isArray(t.tools)) continue
        for (const inner of t.tools) {
          if (isObj(inner) && typeof inner.name === 'string' && inner.name !== '') found.push(tool(`${t.name}.${inner.name}`, inner.parameters))
        }
      } else if (kind === 'tool_search' && t.execution === 'client') {
        found.push({ name: 'tool_search_call' })
      } else {
        found.push({ name: RESPONSES_CLIENT_BUILTINS[kind] ?? kind })
      }
    }
  }
  const byName = new Map<string, ToolConfig>()
  for (const t of found) {
    const seen = byName.get(t.name)
    if (seen === undefined) byName.set(t.name, t)
    else if (canonical(seen) !== canonical(t)) throw new ToolGateError('E_PAYLOAD', `request \`tools\`: two different definitions of \`${t.name}\``)
  }
  return [...byName.values()]
}

/** Canonical JSON of request tool definitions (equal definitions, equal text, whatever the key order); one nested past the bound is `E_PAYLOAD`. */
function canonical(v: unknown): string {
  try {
    return canonicalJson(v)
  } catch (err) {
    if (err instanceof RangeError) throw new ToolGateError('E_PAYLOAD', `request \`tools\`: a definition nested deeper than ${MAX_CANONICAL_DEPTH} levels`)
    throw err
  }
}

/** Options of {@link GateCache}. */
export interface GateCacheOptions {
  /** The config (paths absolute, receipt key inline): its tools win for their names. */
  config: ToolGateConfig
  /** Gates kept (LRU); default {@link DEFAULT_GATE_CACHE}. */
  max?: number
  /** Told when a request's tool schema cannot be compiled (that tool is left out). */
  log?: (line: string) => void
  /** The state store every gate of the cache shares (default: a new one for the config's `state` block: in memory, or its `state.redis`). */
  state?: GateState
}

/**
 * The gates of the HTTP proxy, one per distinct set of learned tool definitions (see the file
 * comment). `gateFor` never compiles the same set twice while it is cached; an evicted gate's
 * audit records are flushed.
 */
export class GateCache {
  readonly #config: ToolGateConfig
  readonly #configTools: Map<string, ToolConfig>
  readonly #max: number
  readonly #log: (line: string) => void
  readonly #base: ToolGate
  readonly #state: GateState
  readonly #gates = new Map<string, ToolGate>()
  /** A request's exact tools text (with its dialect) → its gate's key (`''`: the config's own gate). */
  readonly #byText = new Map<string, string>()
  #byTextChars = 0
  /** The last tools text looked up, with its dialect and gate key: a client sending one tool list again and again costs one comparison of the text, not a hash of it. */
  #last: { dialect: RequestDialect; text: string; key: string } | undefined

  /** Compiles the config's own gate; throws `E_CONFIG` as `new ToolGate` does. */
  constructor(opts: GateCacheOptions) {
    this.#configTools = new Map((opts.config.tools ?? []).map((t) => [t.name, t]))
    this.#max = Math.max(1, opts.max ?? DEFAULT_GATE_CACHE)
    this.#log = opts.log ?? (() => undefined)
    this.#config = opts.config
    this.#state = opts.state ?? GateState.forConfig(opts.config.state)
    this.#base = new ToolGate(opts.config, { state: this.#state })
  }

  /** The state store every gate of this cache shares. */
  get state(): GateState {
    return this.#state
  }

  /** The config's own gate (for requests declaring no tool beyond the config's). */
  get base(): ToolGate {
    return this.#base
  }

  /** Gates compiled and cached now, besides the config's own. */
  get size(): number {
    return this.#gates.size
  }

  /**
   * The gate for a request declaring `tools` in `dialect`'s request shape. `E_PAYLOAD` for
   * conflicting definitions. `text`, when given, is JSON text `tools` was parsed from (or its
   * `JSON.stringify`): a list seen before with exactly that text goes straight to its gate (no
   * learning, canonical form or hash again); any other text takes the full way, so the answer is
   * the same either way.
   */
  gateFor(dialect: RequestDialect, tools: unknown, text?: string): ToolGate {
    if (text === undefined || text.length > MAX_REMEMBERED_TEXT) return this.#gateFor(dialect, tools).gate
    const last = this.#last
    if (last !== undefined && last.text === text && last.dialect === dialect) {
      // the same text as the last request: its gate, while it is cached (an evicted key takes the full way)
      if (last.key === '') return this.#base
      const hit = this.#gates.get(last.key)
      if (hit !== undefined) {
        this.#gates.delete(last.key)
        this.#gates.set(last.key, hit)
        return hit
      }
    }
    // The text is kept (the last one, and in the memo) as a copy of its own: `text` may be a slice
    // of a whole request body, which the cache must not hold on to.
    const own = Buffer.from(text, 'utf8').toString('utf8')
    if (own !== text) return this.#gateFor(dialect, tools).gate // text no UTF-8 can hold: not remembered
    const found = this.#gateForText(dialect, tools, own)
    this.#last = { dialect, text: own, key: found.key }
    return found.gate
  }

  #gateForText(dialect: RequestDialect, tools: unknown, text: string): { gate: ToolGate; key: string } {
    const memo = `${dialect}\n${text}`
    const key = this.#byText.get(memo)
    if (key === '') return { gate: this.#base, key }
    if (key !== undefined) {
      const hit = this.#gates.get(key)
      if (hit !== undefined) {
        this.#gates.delete(key)
        this.#gates.set(key, hit)
        return { gate: hit, key }
      }
    }
    const found = this.#gateFor(dialect, tools)
    if (key === undefined) this.#byTextChars += memo.length
    else this.#byText.delete(memo)
    this.#byText.set(memo, found.key)
    while (this.#byText.size > this.#max * 4 || this.#byTextChars > MAX_REMEMBERED_CHARS) {
      const oldest = this.#byText.keys().next().value as string
      this.#byText.delete(oldest)
      this.#byTextChars -= oldest.length
    }
    return found
  }

  #gateFor(dialect: RequestDialect, tools: unknown): { gate: ToolGate; key: string } {
    const extra: ToolConfig[] = []
    for (const t of learnTools(dialect, tools)) {
      const mine = this.#configTools.get(t.name)
      if (mine === undefined) extra.push(t)
      else if (mine.inputSchema === undefined && t.inputSchema !== undefined) extra.push({ ...mine, inputSchema: t.inputSchema })
    }
    if (extra.length === 0) return { gate: this.#base, key: '' }
    extra.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    const key = createHash('sha256').update(canonical(extra)).digest('base64url')
    const hit = this.#gates.get(key)
    if (hit !== undefined) {
      this.#gates.delete(key)
      this.#gates.set(key, hit)
      return { gate: hit, key }
    }
    const gate = this.#build(extra)
    this.#gates.set(key, gate)
    if (this.#gates.size > this.#max) {
      const [oldKey, old] = this.#gates.entries().next().value as [string, ToolGate]
      this.#gates.delete(oldKey)
      void old.flush()
    }
    return { gate, key }
  }

  /** Writes out every cached gate's audit records. */
  async flush(): Promise<void> {
    await this.#base.flush()
    for (const g of this.#gates.values()) await g.flush()
  }

  #build(extra: ToolConfig[]): ToolGate {
    const replaced = new Set(extra.map((t) => t.name))
    const kept = [...this.#configTools.values()].filter((t) => !replaced.has(t.name))
    try {
      return new ToolGate({ ...this.#config, tools: [...extra, ...kept] }, { state: this.#state })
    } catch (err) {
      if (!(err instanceof ToolGateError) || err.code !== 'E_CONFIG') throw err
    }
    // A request schema the gate cannot compile: that tool is left out (so filtered from the
    // request and refused as unknown), the rest still gated.
    const ok = extra.filter((t) => {
      try {
        new ToolGate({ ...this.#config, tools: [t, ...kept.filter((k) => k.name !== t.name)], audit: undefined })
        return true
      } catch (err) {
        this.#log(`the request's schema for \`${t.name}\` cannot be compiled (${(err as Error).message}); the tool is removed from requests and its calls refused`)
        return false
      }
    })
    return new ToolGate({ ...this.#config, tools: [...ok, ...kept] }, { state: this.#state })
  }
}
