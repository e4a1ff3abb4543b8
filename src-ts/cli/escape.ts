// Text from a log line (or anything else a CLI did not write itself) shown on a terminal: every
// character that could move the cursor, repaint the screen, start an escape sequence (ESC, CSI,
// OSC …) or reorder what is shown (bidi overrides and isolates) is written as a visible escape
// (`\u001b`), so a tampered log cannot disguise the report that names it.

/**
 * C0 controls (newline and tab included: one value stays on one line), DEL, C1 controls (0x80–
 * 0x9f: a lone 0x9b is a CSI on some terminals), the bidi marks, embeddings, overrides and
 * isolates, the line and paragraph separators, zero-width characters and the BOM.
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g

/** Lone surrogates (not text; a terminal shows them as it likes). */
const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

const hex = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`

/** `text` with every character a terminal would act on, rather than show, written as `\uXXXX`. */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, hex).replace(LONE, hex)
}

/**
 * `JSON.stringify(value)` safe for a terminal and still valid JSON: JSON escapes C0 controls
 * itself; C1 controls, bidi marks and the other characters {@link terminalSafe} escapes are
 * written as `\uXXXX` too (JSON readers decode them back).
 */
export function terminalJson(value: unknown): string {
  return (JSON.stringify(value) ?? 'null').replace(UNSAFE, hex).replace(LONE, hex)
}

/** {@link terminalSafe} line by line: the newlines of a multi-line message stay newlines. */
export function terminalLines(text: string): string {
  return text.split('\n').map(terminalSafe).join('\n')
}

/**
 * `value` with every string in it (keys and values, at any depth) passed through
 * {@link terminalSafe}: for rendering a structure whose strings came from a model or a file
 * with code that prints them as they are.
 */
export function terminalSafeDeep<T>(value: T): T {
  if (typeof value === 'string') return terminalSafe(value) as T
  if (Array.isArray(value)) return value.map(terminalSafeDeep) as T
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[terminalSafe(k)] = terminalSafeDeep(v)
    return out as T
  }
  return value
}
