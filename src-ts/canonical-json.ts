// Canonical JSON for hashing and comparing definitions and arguments: shared by the MCP proxy's
// tool pins, the HTTP proxy's request tools and the AI SDK adapter's argument-bound verdicts, so
// none depends on another; and JSON equality (key order ignored) for the CLI's corpus and replay.

/** The deepest nesting {@link canonicalJson} writes before it throws (a deeper MCP tool definition is never approved). */
export const MAX_CANONICAL_DEPTH = 512

/**
 * JSON with object keys sorted (at every depth), `undefined` members left out (in arrays: `null`)
 * and no whitespace, so equal values give equal text whatever their key order. Throws a
 * `RangeError` past {@link MAX_CANONICAL_DEPTH}.
 */
export function canonicalJson(v: unknown, depth = 0): string {
  if (depth > MAX_CANONICAL_DEPTH) throw new RangeError('definition nested too deeply')
  if (Array.isArray(v)) return `[${v.map((x) => canonicalJson(x === undefined ? null : x, depth + 1)).join(',')}]`
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>
    const keys = Object.keys(o).filter((k) => o[k] !== undefined).sort()
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k], depth + 1)}`).join(',')}}`
  }
  return JSON.stringify(v) ?? 'null'
}

/** Whether two JSON values are equal, object key order ignored (arrays keep their order). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a)) {
    const bb = b as unknown[]
    return a.length === bb.length && a.every((x, i) => sameJson(x, bb[i]))
  }
  const oa = a as Record<string, unknown>
  const ob = b as Record<string, unknown>
  const ka = Object.keys(oa)
  return ka.length === Object.keys(ob).length && ka.every((k) => Object.hasOwn(ob, k) && sameJson(oa[k], ob[k]))
}
