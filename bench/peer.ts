/**
 * The baseline toolgate is measured against: what a Node developer would hand-write to gate tool
 * calls without toolgate — `JSON.parse`, one ajv 8 validator per tool compiled up front with
 * ajv's own repair options (type coercion, defaults, pruning), and a role → allowed-tools `Map`.
 *
 * It deliberately uses ajv the way its documentation suggests and nothing more: no duplicate-key
 * detection, no prototype-key check, no strict mode for destructive tools, no enum repair. The
 * benchmark reports where that gives a different answer from the corpus; it still times every
 * case on both sides, so the work compared is the same set of calls.
 */
import { Ajv, type ValidateFunction } from 'ajv'

/** One tool as declared in a toolgate config (only the fields the peer needs). */
export interface PeerTool {
  name: string
  inputSchema: Record<string, unknown>
}

/** The subset of a toolgate config the peer reads. */
export interface PeerConfig {
  tools: PeerTool[]
}

/** What the peer answers for one call. */
export interface PeerResult {
  outcome: 'passed' | 'repaired' | 'rejected'
  /** Present iff allowed: the arguments after ajv's in-place coercion / defaults / pruning. */
  arguments?: Record<string, unknown>
}

/** Options for `makePeer`. */
export interface PeerOptions {
  /**
   * Tell `passed` from `repaired` by re-parsing the input and deep-comparing it with the
   * (possibly mutated) validated object. Default true — toolgate reports this distinction, so a
   * like-for-like baseline must compute it too. `false` gives the bare pipeline (every allowed call
   * reported as `passed`) as a lower bound on what the hand-written gate costs.
   */
  detectChanges?: boolean
}

/** The role every benchmark call is made under; the peer's allow-list is keyed by it. */
export const PEER_ROLE = 'user'

/**
 * Build the hand-written gate for a toolgate config: compile one ajv validator per tool, once.
 * Returns `check(tool, argsString)`.
 */
export function makePeer(config: PeerConfig, options: PeerOptions = {}): (tool: string, args: string) => PeerResult {
  const detectChanges = options.detectChanges ?? true
  const ajv = new Ajv({
    coerceTypes: 'array',
    useDefaults: true,
    removeAdditional: 'failing',
    allErrors: false,
    strict: false,
  })
  const validators = new Map<string, ValidateFunction>()
  for (const tool of config.tools) validators.set(tool.name, ajv.compile(tool.inputSchema))
  const allowedByRole = new Map<string, Set<string>>([[PEER_ROLE, new Set(config.tools.map((t) => t.name))]])

  return function check(tool: string, args: string): PeerResult {
    try {
      const allowed = allowedByRole.get(PEER_ROLE)
      const validate = validators.get(tool)
      if (allowed === undefined || !allowed.has(tool) || validate === undefined) return { outcome: 'rejected' }
      const data: unknown = JSON.parse(args)
      if (!validate(data)) return { outcome: 'rejected' }
      // ajv's root type check guarantees an object here (a coerced root would be lost anyway:
      // ajv can only coerce a root value in place when it has a parent to write to).
      if (data === null || typeof data !== 'object' || Array.isArray(data)) return { outcome: 'rejected' }
      const args_ = data as Record<string, unknown>
      if (!detectChanges) return { outcome: 'passed', arguments: args_ }
      return { outcome: deepEqual(JSON.parse(args), args_) ? 'passed' : 'repaired', arguments: args_ }
    } catch {
      // SyntaxError from JSON.parse (or anything else): refuse, never crash the agent loop.
      return { outcome: 'rejected' }
    }
  }
}

/** Structural equality for JSON values (key order ignored, as for JSON objects). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return typeof a === 'number' && typeof b === 'number' && Number.isNaN(a) && Number.isNaN(b)
  }
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  if (ka.length !== kb.length) return false
  for (const k of ka) {
    if (!Object.hasOwn(b, k)) return false
    if (!deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false
  }
  return true
}
