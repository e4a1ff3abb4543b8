// Gate state shared across the gates of one process: see docs/architecture.md ("State").
import { ToolGateError } from './errors'
import { native } from './native'
import type { BindingState } from '../binding/index'

/** Options of {@link GateState}. */
export interface GateStateOptions {
  /** Sessions kept (least recently used forgotten first; a forgotten session reads as tainted at the top label). Default 100000. */
  maxSessions?: number
}

/**
 * One in-memory state store — loop counters, session taint, pending confirmation tokens —
 * shared by every gate built with it (`new ToolGate(config, { state })`).
 *
 * State belongs to the caller's session, not to a gate instance: a gate rebuilt because its tool
 * list changed, or evicted from a cache and built again, keeps every session's taint, loop counts
 * and tokens. A token is still honoured only by a gate that declares its tool. The store's
 * `maxSessions` applies instead of each config's `state.maxSessions`. Per process: several
 * processes do not share it.
 */
export class GateState {
  /** @internal the native store */
  readonly binding: BindingState

  constructor(options: GateStateOptions = {}) {
    const max = options.maxSessions
    if (max !== undefined && !(Number.isInteger(max) && max >= 1 && max <= 10_000_000)) {
      throw new ToolGateError('E_CONFIG', `GateState maxSessions: expected an integer between 1 and 10000000, got ${String(max)}`)
    }
    this.binding = new (native().BindingState)(max)
  }

  /** The session bound the store was made with. */
  get maxSessions(): number {
    return this.binding.maxSessions
  }
}
