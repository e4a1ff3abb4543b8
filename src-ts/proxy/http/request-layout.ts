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
// where the list or the text around it does. The list's parsed value is remembered too, so such
// a body is parsed without it (`RequestLayouts.parse`).
import { deepFreeze } from '../../context'
import { isObj } from '../../json-object'
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

/** How many lists are remembered (the least recently used forgotten first): a few clients, each with its own toolbox. */
const REMEMBERED_LISTS = 8

/** A list laid out once (so holding no `"tools"` and no `\u`), remembered. */
interface Remembered {
  dialect: RequestDialect
  /** Its text, a copy of its own (the one it came in is a slice of a whole body). */
  span: string
  /** It names a member outside `tools` (see `mentionsOutsideTools`). */
  mentioned: boolean
  /** `JSON.parse(span)`, deep-frozen, shared by every body that holds it; made when first needed. */
  value?: { of: unknown }
}

/** The layout of request bodies of one proxy, the last few `tools` texts remembered with their scans. */
export class RequestLayouts {
  /** The remembered lists, the most recently used first. */
  readonly #lists: Remembered[] = []

  /**
   * `JSON.parse(raw)` — the same value, or the same error — without parsing a remembered list
   * again when `raw` holds it as its one `tools` member: the text around the list is parsed with
   * `[]` in its place, and the list's value (parsed once, deep-frozen, shared) is put back. A
   * body naming `"tools"` more than once, or holding a `\u` escape (which could spell it), is
   * parsed whole, as is one where the `[]` put in did not land in the body's own `tools`.
   */
  parse(raw: string): unknown {
    const at = this.#find(raw, undefined)
    if (at !== undefined && !at.after.includes('"tools"') && !raw.includes('\\u')) {
      let body: unknown
      try {
        body = JSON.parse(`${raw.slice(0, at.start)}[]${at.after}`)
      } catch {
        return JSON.parse(raw) // its own error message, positions and all
      }
      // `"tools"` is written once in the whole text (before the list only as its key, see
      // `layout`), so the body's own `tools` member is that key's exactly when it holds the `[]`
      if (isObj(body) && Array.isArray(body.tools) && body.tools.length === 0) {
        at.list.value ??= { of: deepFreeze(JSON.parse(at.list.span) as unknown) }
        body.tools = at.list.value.of
        return body
      }
    }
    return JSON.parse(raw)
  }

  /**
   * The layout of `raw`, a request body in `dialect` that parsed as a JSON object; `hasTools`:
   * it has a `tools` array. The same answer as scanning the whole text, found from a
   * remembered list when `raw` holds it (see the file comment).
   */
  layout(raw: string, dialect: RequestDialect, hasTools: boolean): RequestLayout {
    const at = hasTools ? this.#find(raw, dialect) : undefined
    if (at !== undefined) {
      // split at the list's own `[` and `]` (see the file comment); before it, `"tools"` only
      // once: the key at its first occurrence, then whitespace and `:`
      const before = raw.slice(0, at.start)
      // (a `\u` escape anywhere counts as mentioned)
      const mentioned = at.list.mentioned || mentionsOutsideTools(before, dialect) || mentionsOutsideTools(at.after, dialect)
      const once = !mentioned && !at.after.includes('"tools"')
      return { mentioned, once, written: once ? at.list.span : undefined }
    }
    const mentioned = mentionsOutsideTools(raw, dialect)
    const once = hasTools && !mentioned && onceTools(raw)
    const written = once ? toolsSpan(raw) : undefined
    if (written !== undefined && written.length <= MAX_REMEMBERED_SPAN) this.#remember(dialect, written)
    return { mentioned, once, written }
  }

  /**
   * The remembered list (of `dialect`, when given) that `raw` holds as the value of its first
   * `"tools"` key: where it opens, and the text after it; moved to the front.
   */
  #find(raw: string, dialect: RequestDialect | undefined): { list: Remembered; start: number; after: string } | undefined {
    const lists = this.#lists
    if (lists.length === 0) return undefined
    const i = raw.indexOf('"tools"')
    const start = i < 0 ? -1 : valueOpen(raw, i + 7, '[')
    if (start < 0) return undefined
    for (let k = 0; k < lists.length; k++) {
      const list = lists[k]
      const end = start + list.span.length
      if ((dialect === undefined || list.dialect === dialect) && end <= raw.length && raw.slice(start, end) === list.span) {
        if (k > 0) lists.unshift(...lists.splice(k, 1))
        return { list, start, after: raw.slice(end) }
      }
    }
    return undefined
  }

  /** Remembers `span` (laid out once) as a copy of its own: it is a slice of a whole body. */
  #remember(dialect: RequestDialect, span: string): void {
    const own = Buffer.from(span, 'utf8').toString('utf8')
    if (own !== span) return // text no UTF-8 can hold: not remembered
    this.#lists.unshift({ dialect, span: own, mentioned: mentionsOutsideTools(own, dialect) })
    this.#lists.length = Math.min(this.#lists.length, REMEMBERED_LISTS)
  }
}
