// What the MCP proxy knows of the server's tools: each listed definition (its input schema for
// the gate, its fingerprint for the pins), the pin store's verdict on it, and the gate built
// from the learned tools merged with the configured ones. The router (proxy.ts) feeds it every
// tools/list answer and asks it, per call, for the gate and whether the tool is still approved.
import { isObj as isObject } from '../../json-object'
import { ToolGate } from '../../gate'
import { ToolGateError } from '../../errors'
import { GateState } from '../../state'
import type { ToolConfig, ToolGateConfig } from '../../types'
import { fingerprint, type PinnedField, type ToolFingerprint, type ToolPins } from './pins'

/** A tool learned from the server: its gate config, and its definition's fingerprint. */
export interface Learned {
  config: ToolConfig
  print: ToolFingerprint
}

/** Options of {@link McpToolSet}. */
export interface McpToolSetOptions {
  /** Configured tools and limits (a configured tool wins over the server's of that name). */
  config?: ToolGateConfig
  /** With configured tools: only those are gated (an allowlist, `--filter-list`). */
  allowlist: boolean
  pins: ToolPins
  log: (line: string) => void
  /** The state store the gates share (default: a new one for this tool set from the config's `state` block: in memory, or its `state.redis`). */
  state?: GateState
}

/**
 * The server's tools as last listed, pinned, and the gate over them. The constructor builds
 * the gate from the config alone (throws `ToolGateError` `E_CONFIG` for a broken config); every
 * {@link adopt} pins the definitions (logging each change once) and rebuilds the gate only when
 * a tool or an input schema changed. Every gate it builds keeps loop, taint and confirmation
 * state in one shared {@link GateState}, so a rebuilt gate keeps it: a model that can make the
 * server announce `list_changed` cannot clear its session's taint that way. A server schema the
 * gate cannot compile leaves that tool out.
 */
export class McpToolSet {
  #config: ToolGateConfig | undefined
  readonly #allowlist: boolean
  #configTools: Map<string, ToolConfig>
  readonly #pins: ToolPins
  readonly #log: (line: string) => void
  readonly #state: GateState
  /** The rule warnings last logged, so each is logged once while it holds. */
  #warnedOf = new Set<string>()
  /** The tools learned from the server (name → definition), in the server's order. */
  #learned = new Map<string, Learned>()
  /** What the gate was last built from (tool names and schema hashes): unchanged, no rebuild. */
  #builtFrom = ''
  /** Changed definitions already logged (name → hash), so each change is logged once. */
  readonly #reported = new Map<string, string>()
  #gate: ToolGate

  constructor(opts: McpToolSetOptions) {
    this.#config = opts.config
    this.#allowlist = opts.allowlist
    this.#configTools = new Map((opts.config?.tools ?? []).map((t) => [t.name, t]))
    this.#pins = opts.pins
    this.#log = opts.log
    this.#state = opts.state ?? GateState.forConfig(opts.config?.state)
    this.#gate = this.#build(this.#config, this.#configTools)
  }

  /** The state store every gate of this tool set keeps loop, taint and token state in. */
  get state(): GateState {
    return this.#state
  }

  /** The gate in use now. */
  get gate(): ToolGate {
    return this.#gate
  }

  /** For a tool the server listed whose current definition is not the pinned one: the fields that differ (`[]`: never approved). */
  changed(name: string): PinnedField[] | undefined {
    const learned = this.#learned.get(name)
    return learned && this.#pins.check(learned.print)
  }

  /** Whether an entry of a `tools/list` result names a tool whose current definition is not the pinned one. */
  unapproved(t: unknown): boolean {
    return isObject(t) && typeof t.name === 'string' && this.changed(t.name) !== undefined
  }

  /**
   * Learns one `tools/list` page: the first page replaces what was known, later pages add to it.
   * A page naming a tool twice with two definitions is `E_PAYLOAD` and learns nothing (see
   * {@link withPage}).
   */
  learn(tools: unknown[], firstPage: boolean): void {
    this.adopt(withPage(firstPage ? new Map() : this.#learned, tools))
  }

  /** The server's tools as now listed (every page): pinned (changes logged), and the gate rebuilt if a tool or schema changed. */
  adopt(next: Map<string, Learned>): void {
    this.#learned = next
    const prints = [...next.values()].map((t) => t.print)
    const { changes, writeError } = this.#pins.observe(prints)
    if (writeError) this.#log(`${writeError.message}; the pins hold in memory only`)
    for (const c of changes) {
      const print = next.get(c.tool)!.print
      if (c.status === 'accepted') this.#log(`the definition of \`${c.tool}\` changed (${fieldList(c.fields)}); the change is accepted and pinned`)
      else if ((c.status === 'changed' || c.status === 'unpinned') && this.#reported.get(c.tool) !== print.sha256) {
        this.#reported.set(c.tool, print.sha256)
        this.#log(
          c.status === 'changed'
            ? `the definition of \`${c.tool}\` changed since it was approved (${fieldList(c.fields)}); calls to it are refused until an operator accepts the change (--accept-tool-changes=${c.tool})`
            : `the definition of \`${c.tool}\` cannot be pinned (too deeply nested, or the pin store is full); calls to it are refused`,
        )
      }
    }
    const newPins = changes.filter((c) => c.status === 'new').length
    if (newPins > 0) this.#log(`pinned ${newPins} tool definition${newPins === 1 ? '' : 's'}`)
    if (schemasKey(next) === this.#builtFrom) return
    this.#rebuild()
  }

  /**
   * Builds the gate `config` gives over the tools learned so far without using it yet: throws
   * `ToolGateError` `E_CONFIG` when `config` does not compile (this tool set is left as it was).
   * The returned function swaps the new gate in; the state store stays the same, so loop, taint,
   * rate-limit and confirmation state carry over.
   */
  prepare(config: ToolGateConfig | undefined): () => void {
    const configTools = new Map((config?.tools ?? []).map((t) => [t.name, t]))
    const gate = this.#build(config, configTools)
    return () => {
      void this.#gate.flush() // the old gate's audit records first (see #rebuild)
      this.#config = config
      this.#configTools = configTools
      this.#gate = gate
      this.#builtFrom = schemasKey(this.#learned)
      this.#log(`gating ${gate.tools.length} tools`)
    }
  }

  #rebuild(): void {
    // The old gate's buffered audit records go out first: the new gate's trail continues the
    // file's hash chain from its last line (flush's work is synchronous).
    void this.#gate.flush()
    try {
      this.#gate = this.#build(this.#config, this.#configTools)
      this.#log(`gating ${this.#gate.tools.length} tools`)
      this.#builtFrom = schemasKey(this.#learned)
    } catch (err) {
      this.#log(`could not rebuild the gate (${(err as Error).message}); keeping the previous one`)
    }
  }

  /** The gate from the learned tools and the configured ones (config wins for a name). */
  #build(config: ToolGateConfig | undefined, configTools: Map<string, ToolConfig>): ToolGate {
    const base: ToolGateConfig = { ...(config ?? {}), tools: [] }
    const allowlist = this.#allowlist && configTools.size > 0
    const tools: ToolConfig[] = []
    const learned: ToolConfig[] = []
    for (const [name, t] of this.#learned) {
      const mine = configTools.get(name)
      if (mine) continue
      if (!allowlist) learned.push(t.config)
    }
    for (const [name, mine] of configTools) {
      const theirs = this.#learned.get(name)?.config
      tools.push(mine.inputSchema === undefined && theirs?.inputSchema !== undefined ? { ...mine, inputSchema: theirs.inputSchema } : mine)
    }
    try {
      return this.#warned(new ToolGate({ ...base, tools: [...learned, ...tools] }, { state: this.#state, learnsTools: true }))
    } catch (err) {
      if (learned.length === 0) throw err
    }
    // A server schema the gate cannot compile: that tool is left out (so refused as unknown).
    const ok = learned.filter((t) => {
      try {
        new ToolGate({ ...base, tools: [t] }, { learnsTools: true })
        return true
      } catch (err) {
        this.#log(`the server's schema for \`${t.name}\` cannot be compiled (${(err as Error).message}); calls to it are refused`)
        return false
      }
    })
    return this.#warned(new ToolGate({ ...base, tools: [...ok, ...tools] }, { state: this.#state, learnsTools: true }))
  }

  /** Logs, once per distinct message, the policy rules that match none of the tools known now (the server's list included). */
  #warned(gate: ToolGate): ToolGate {
    const now = new Set(gate.warnings)
    for (const w of now) if (!this.#warnedOf.has(w)) this.#log(`${w} (not among the server's tools either, so it applies to nothing yet)`)
    this.#warnedOf = now
    return gate
  }
}

/** The tool definitions of a `tools/list` result: name and input schema for the gate, and the fingerprint to pin. */
function toolsOf(list: unknown[]): Learned[] {
  const out: Learned[] = []
  for (const t of list) {
    const print = fingerprint(t)
    if (!isObject(t) || typeof t.name !== 'string' || print === undefined) continue
    const schema = t.inputSchema
    const config = isObject(schema) || typeof schema === 'boolean' ? { name: t.name, inputSchema: schema as ToolConfig['inputSchema'] } : { name: t.name }
    out.push({ config, print })
  }
  return out
}

/**
 * `known` (the earlier pages of one listing) with one more `tools/list` page added. A name listed
 * twice — in this page or an earlier one — with two different definitions (or one that cannot
 * be fingerprinted) is `E_PAYLOAD`, naming it: the client could show the model one definition
 * while the pins and the gate hold the other (a poisoned description beside the approved one).
 * The same definition listed twice is one tool.
 */
export function withPage(known: ReadonlyMap<string, Learned>, list: unknown[]): Map<string, Learned> {
  const next = new Map(known)
  for (const t of toolsOf(list)) {
    const had = next.get(t.config.name)
    if (had !== undefined && (had.print.sha256 !== t.print.sha256 || t.print.sha256 === '')) {
      const name = t.config.name.length > 80 ? `${t.config.name.slice(0, 80)}…` : t.config.name
      throw new ToolGateError('E_PAYLOAD', `the server lists \`${name}\` twice with different definitions`)
    }
    next.set(t.config.name, t)
  }
  return next
}

/** The tool names and schema hashes a gate is built from, as one string. */
function schemasKey(learned: Map<string, Learned>): string {
  return [...learned.values()].map((t) => `${t.config.name}\u0000${t.print.fields.inputSchema ?? ''}`).join('\u0001')
}

/** The refusal of a call to a tool whose definition is not the approved one. */
export function changedMessage(tool: string, fields: PinnedField[]): string {
  return fields.length === 0
    ? `\`${tool}\` cannot run: its definition could not be pinned for approval. Do not retry; tell the user an operator must check this tool.`
    : `\`${tool}\` cannot run: its definition changed since it was approved (${fieldList(fields)}), and an operator must accept the change before it runs again. Do not retry; tell the user.`
}

function fieldList(fields: PinnedField[]): string {
  return fields.length === 0 ? 'definition' : fields.join(', ')
}

