// How a request body's text is laid out around its `tools`: what the HTTP proxy reads before it
// decides whether the body may go upstream as the client wrote it (`filteredRequest`). Reading
// only — nothing here decides what a caller may call.
//
// A client sends one tool list request after request — ~40 KB for an MCP toolbox — with a new
// conversation around it, and scanning that text for the names below took ~150 µs a request.
// The scans of the last list are remembered with its text; a body holding exactly that text as
// its `tools` scans only the text around it. That is the same answer: every pattern scanned for
// (`"tools"`, `\u`, a quoted member name) holds neither `[` nor `]`, which the list's text opens
// and closes with, so no occurrence lies across its edges — the whole text holds one exactly
// where the list or the text around it does.
import { mentionsOutsideTools } from '../../request-tools'
import type { RequestDialect } from '../../request-dialect'
import { valueOpen, valueSpan } from '../json-span'

/** What {@link RequestLayouts.layout} answers for a body. */
export interface RequestLayout {
  /** It names a member or item outside `tools`, or holds a `\u` escape (see `mentionsOutsideTools`). */
  mentioned: boolean
  /** It may go upstream as its own text once its tools were filtered (see {@link onceTools}). */
  once: boolean
  /** When `once`: the text of its `tools` array, `[` to `]` ({@link toolsSpan}), if laid out so. */
  written: string | undefined
}

/** Lists longer than this (characters) are not remembered. */
const MAX_REMEMBERED_SPAN = 256 * 1024

/**
 * Whether a request body may go upstream as its own text once its tools were filtered: the key
 * `"tools"` written once, and no `\u` escape (which could spell another). A body with two
 * `tools` members could be read upstream with the one the gate never filtered; such bodies (and
 * any with escapes) are written from the parsed request instead.
 */
export function onceTools(raw: string): boolean {
  const i = raw.indexOf('"tools"')
  return i >= 0 && raw.indexOf('"tools"', i + 1) < 0 && !raw.includes('\\u')
}

/**
 * The text of the `tools` array in a request body that parsed as a JSON object with a `tools`
 * array and names `"tools"` once (see {@link onceTools}) — that one occurrence is the member's
 * key — from its `[` to its `]`; `undefined` when the text is not laid out so.
 */
export function toolsSpan(raw: string): string | undefined {
  const span = valueSpan(raw, raw.indexOf('"tools"') + 7, '[')
  return span === undefined ? undefined : raw.slice(span.start, span.end)
}

/** The layout of request bodies of one proxy, the last `tools` text remembered with its scans. */
export class RequestLayouts {
  /** The last list laid out once (no `"tools"`, no `\u` inside it), a copy of its own, and whether it names a member outside `tools`. */
  #last: { dialect: RequestDialect; span: string; mentioned: boolean } | undefined

  /**
   * The layout of `raw`, a request body in `dialect` that parsed as a JSON object; `hasTools`:
   * it has a `tools` array. The same answer as scanning the whole text, found from the
   * remembered list when `raw` holds it (see the file comment).
   */
  layout(raw: string, dialect: RequestDialect, hasTools: boolean): RequestLayout {
    const last = this.#last
    const i = hasTools && last !== undefined && last.dialect === dialect ? raw.indexOf('"tools"') : -1
    if (last !== undefined && i >= 0) {
      const start = valueOpen(raw, i + 7, '[')
      const end = start + last.span.length
      if (start >= 0 && end <= raw.length && raw.slice(start, end) === last.span) {
        // split at the list's own `[` and `]` (see the file comment); before it, `"tools"` only
        // once: the key at its first occurrence, then whitespace and `:`
        const before = raw.slice(0, start)
        const after = raw.slice(end)
        // (a `\u` escape anywhere counts as mentioned)
        const mentioned = last.mentioned || mentionsOutsideTools(before, dialect) || mentionsOutsideTools(after, dialect)
        const once = !mentioned && !after.includes('"tools"')
        return { mentioned, once, written: once ? last.span : undefined }
      }
    }
    const mentioned = mentionsOutsideTools(raw, dialect)
    const once = hasTools && !mentioned && onceTools(raw)
    const written = once ? toolsSpan(raw) : undefined
    if (written !== undefined && written.length <= MAX_REMEMBERED_SPAN) this.#remember(dialect, written)
    return { mentioned, once, written }
  }

  /** Remembers `span` (laid out once, so holding no `"tools"` and no `\u`) as a copy of its own: it is a slice of a whole body. */
  #remember(dialect: RequestDialect, span: string): void {
    const own = Buffer.from(span, 'utf8').toString('utf8')
    // text no UTF-8 can hold: not remembered
    this.#last = own === span ? { dialect, span: own, mentioned: mentionsOutsideTools(own, dialect) } : undefined
  }
}
