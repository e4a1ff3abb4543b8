// The tool lists `filterTools` has read, remembered by their JSON text, so that a list offered
// again — an agent host sending the same tools with every model request, a client adapter, the
// HTTP proxy's clients — is read by the core once, not on every filter. Nothing is decided here:
// a remembered list is the core's prepared list (crates/toolgate-core/src/tool_list.rs), whose
// every answer equals what `filterTools` answers for the text it was prepared from; which tools a
// caller may see is asked again on every filter.
//
// A list is prepared the second time its text is seen by the same gate in the same dialect (the
// first time it is only noted), so a list seen once — an MCP `tools/list` answer, a request of its
// own — costs what it cost before and no preparation. Bounded for the whole process, whatever the
// number of gates: at most REMEMBERED_TOOL_LISTS lists noted or prepared, texts of at least
// MIN_REMEMBERED_TOOL_LIST characters (a shorter list costs a few microseconds to read, and many
// of them — a one-tool list per tool, as the OpenAI Agents adapter asks — would push the long
// lists out) and at most MAX_REMEMBERED_TOOL_LIST, MAX_REMEMBERED_TOOL_LIST_CHARS characters
// together; the least recently used text is forgotten first.
import type { BindingTools } from '../binding/index'

/** Tool lists remembered in the process (noted or prepared, on any gate), the least recently used forgotten first. */
export const REMEMBERED_TOOL_LISTS = 16
/** A tool list text shorter than this (in characters) is read on every filter, never remembered. */
export const MIN_REMEMBERED_TOOL_LIST = 1024
/** A tool list text longer than this (in characters) is read on every filter, never remembered. */
export const MAX_REMEMBERED_TOOL_LIST = 256 * 1024
/** The remembered texts hold at most this many characters together. */
export const MAX_REMEMBERED_TOOL_LIST_CHARS = 4 * 1024 * 1024

/**
 * One remembered text: the text as kept (the key it is filed under, never a caller's slice), and
 * per gate and dialect `null` once noted, then the list the core prepared from it, or `false`
 * when the core refused to (the filter's own error is thrown each time; the list is not read
 * twice per filter to find that out again).
 */
interface Remembered {
  text: string
  lists: Map<string, BindingTools | null | false>
}

/**
 * Tool list texts by gate and dialect (see the file comment). A gate is named by a serial number
 * never given twice in the process (not by its binding handle, which a later gate may reuse).
 */
export class ToolListMemo {
  readonly #texts = new Map<string, Remembered>()
  #lists = 0
  #chars = 0

  /**
   * The core's prepared list for `text` read by gate `gate` in `dialect`, made with `prepare` on
   * the second sighting; `undefined` when the list is to be filtered as it comes (first seen,
   * too long, or `prepare` refused it: the filter then throws its own error). `copy`: `text` may
   * be a slice of a larger string (a request body), so a copy of its own is what is kept.
   */
  prepared(gate: number, dialect: string, text: string, copy: boolean, prepare: () => BindingTools): BindingTools | undefined {
    if (text.length < MIN_REMEMBERED_TOOL_LIST || text.length > MAX_REMEMBERED_TOOL_LIST) return undefined
    const key = `${gate}\u0000${dialect}`
    const hit = this.#texts.get(text)
    if (hit === undefined) {
      // a string sliced from a body keeps the whole body alive: the copy is flat and its own
      const own = copy ? Buffer.from(text, 'utf8').toString('utf8') : text
      this.#texts.set(own, { text: own, lists: new Map([[key, null]]) })
      this.#lists += 1
      this.#chars += own.length
      this.#trim()
      return undefined
    }
    // most recently used last, filed again under the kept text (not `text`, which may be a slice)
    this.#texts.delete(hit.text)
    this.#texts.set(hit.text, hit)
    const list = hit.lists.get(key)
    if (list) return list
    if (list === false) return undefined
    if (list === undefined) {
      hit.lists.set(key, null)
      this.#lists += 1
      this.#trim()
      return undefined
    }
    let made: BindingTools
    try {
      made = prepare()
    } catch {
      hit.lists.set(key, false)
      return undefined
    }
    hit.lists.set(key, made)
    return made
  }

  /** Lists noted or prepared now (for tests). */
  get size(): number {
    return this.#lists
  }

  /** Forgets the least recently used texts until within bounds. */
  #trim(): void {
    while (this.#lists > REMEMBERED_TOOL_LISTS || this.#chars > MAX_REMEMBERED_TOOL_LIST_CHARS) {
      const [text, old] = this.#texts.entries().next().value as [string, Remembered]
      this.#texts.delete(text)
      this.#lists -= old.lists.size
      this.#chars -= text.length
    }
  }
}

/** The process's memo, shared by every gate's `filterTools`. */
export const toolListMemo = new ToolListMemo()
