// Config reload for `toolgate mcp-proxy` (SIGHUP): one config every MCP proxy of the process
// follows — the stdio proxy, or each session of the Streamable HTTP listener — swapped in only
// once it compiles for every one of them.
import { ToolGate } from '../../gate'
import type { GateState } from '../../state'
import type { ToolGateConfig } from '../../types'
import type { McpToolSet } from './tools'

/**
 * The config the MCP proxies of one process are built from, and the tool sets built from it.
 * A proxy given this (`McpProxyOptions.reloads`) takes its config from {@link config} and is
 * tracked until its server goes away. {@link reload} is all or nothing: it builds the new gate of
 * every tracked tool set first (over the tools each has learned from its server) and swaps them
 * only when every one compiled; a config that does not compile throws (`ToolGateError`
 * `E_CONFIG`) and every proxy keeps the gate it had. Loop, taint, rate-limit and confirmation
 * state is kept across a reload (each tool set keeps its state store); the `proxy` and `state`
 * blocks are read at start only, and `identity` is the listener's verifier, which the CLI
 * rebuilds and swaps in with this (src-ts/identity/servers.ts).
 */
export class McpConfigReloads {
  #config: ToolGateConfig | undefined
  readonly #state: GateState
  /** Weak, so that a session dropped without its server closing is not kept alive by this. */
  readonly #sets = new Set<WeakRef<McpToolSet>>()

  /** `state`: the store the proxies share (a config checked while no proxy runs is compiled over it, so no second store is opened). */
  constructor(config: ToolGateConfig | undefined, state: GateState) {
    this.#config = config
    this.#state = state
  }

  /** The config in force now: a proxy built from now on uses it. */
  get config(): ToolGateConfig | undefined {
    return this.#config
  }

  /** Tracks a tool set built from {@link config}, so that {@link reload} reaches it. */
  track(set: McpToolSet): void {
    this.#sets.add(new WeakRef(set))
  }

  /** Stops tracking a tool set (its server went away). */
  untrack(set: McpToolSet): void {
    for (const ref of this.#sets) if (ref.deref() === set) this.#sets.delete(ref)
  }

  /** How many tool sets a reload reaches now. */
  get tracked(): number {
    return this.#live().length
  }

  /**
   * Validates `config` against every tracked tool set, then swaps it in everywhere at once.
   * Returns how many running proxies took it. Throws (nothing swapped) when it does not compile.
   */
  reload(config: ToolGateConfig): number {
    const live = this.#live()
    // no proxy running (a listener between sessions): the config is still compiled before it is taken
    if (live.length === 0) void new ToolGate(config, { state: this.#state, learnsTools: true }).flush()
    const commits = live.map((set) => set.prepare(config)) // throws before anything is swapped
    for (const commit of commits) commit()
    this.#config = config
    return live.length
  }

  #live(): McpToolSet[] {
    const out: McpToolSet[] = []
    for (const ref of this.#sets) {
      const set = ref.deref()
      if (set === undefined) this.#sets.delete(ref)
      else out.push(set)
    }
    return out
  }
}
