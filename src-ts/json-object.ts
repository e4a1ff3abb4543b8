// What a parsed JSON object is, for every module that walks model output, configs and wire
// messages: one test, so "object" means the same everywhere (never null, never an array).

/** Whether `v` is an object value that is neither `null` nor an array: what a JSON object parses to. */
export function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
