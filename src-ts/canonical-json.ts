// Canonical JSON for hashing and comparing definitions and arguments: shared by the MCP proxy's
// tool pins and the AI SDK adapter's argument-bound verdicts, so neither depends on the other.

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
