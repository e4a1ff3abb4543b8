// Gate state shared across the gates of one process, or across processes through Redis: see
// docs/state.md and docs/architecture.md ("State").
import { ToolGateError } from './errors'
import { native } from './native'
import type { BindingState } from '../binding/index'
import type { RedisStateConfig, StateConfig } from './config-types.generated'

/** Options of {@link GateState}. */
export interface GateStateOptions {
  /** Sessions kept in memory (least recently used forgotten first; a forgotten session reads as tainted at the top label). Default 100000. Ignored with `redis`. */
  maxSessions?: number
  /** Keep the state in Redis instead, shared by every process using the same URL and key prefix (docs/state.md). */
  redis?: RedisStateConfig
}

/**
 * One state store — loop counters, session taint, rate counters, pending confirmation tokens —
 * shared by every gate built with it (`new ToolGate(config, { state })`).
 *
 * State belongs to the caller's session, not to a gate instance: a gate rebuilt because its tool
 * list changed, or evicted from a cache and built again, keeps every session's taint, loop counts
 * and tokens. A token is still honoured only by a gate that declares its tool. The store's
 * settings apply instead of each config's `state` block. In memory it is per process; with
 * `redis` every process using the same Redis and `keyPrefix` shares it, and gates using it refuse
 * sync `check`/`guard`/`confirm` (`E_ASYNC`): use the async methods.
 */
export class GateState {
  /** @internal the native store */
  readonly binding: BindingState

  constructor(options: GateStateOptions = {}) {
    const max = options.maxSessions
    if (max !== undefined && !(Number.isInteger(max) && max >= 1 && max <= 10_000_000)) {
      throw new ToolGateError('E_CONFIG', `GateState maxSessions: expected an integer between 1 and 10000000, got ${String(max)}`)
    }
    const redis = options.redis
    if (redis !== undefined && (redis === null || typeof redis !== 'object' || typeof redis.url !== 'string')) {
      throw new ToolGateError('E_CONFIG', 'GateState redis: expected { url, keyPrefix?, timeoutMs? }')
    }
    try {
      this.binding = new (native().BindingState)(max, redis === undefined ? undefined : JSON.stringify(redis))
    } catch (err) {
      throw new ToolGateError('E_CONFIG', `GateState: ${(err as Error).message}`, { cause: err })
    }
  }

  /**
   * The store a server should share across its gates for a config's `state` block, with a
   * `--state-url` flag winning over `state.redis.url` (its `keyPrefix`/`timeoutMs` still apply).
   */
  static forConfig(state: StateConfig | undefined, stateUrl?: string): GateState {
    const redis = stateUrl !== undefined ? { ...state?.redis, url: stateUrl } : state?.redis
    return new GateState({ maxSessions: state?.maxSessions, redis })
  }

  /** The session bound the store was made with (in memory). */
  get maxSessions(): number {
    return this.binding.maxSessions
  }

  /** Whether the store is remote (Redis). */
  get remote(): boolean {
    return this.binding.remote
  }

  /** Drops the store's Redis connections (a no-op in memory); decisions after it are refused `state_unavailable`. */
  async close(): Promise<void> {
    this.binding.close()
  }
}
