// Newline-delimited JSON-RPC framing (the MCP stdio transport): one message per line, UTF-8,
// no embedded newlines. Lines are bounded: a line longer than `maxLineBytes` is never buffered
// whole; the reader keeps only its first and last few KiB (enough to find its `method` and `id`)
// and reports it as oversized.
import { isAscii } from 'node:buffer'
import type { Readable, Writable } from 'node:stream'

/** What the reader hands over: a complete line, or the report of one that was too long. */
export type LineEvent =
  | { kind: 'line'; text: string }
  | { kind: 'oversized'; bytes: number; head: string; tail: string }

/**
 * Deepest nesting of arrays and objects a message may have (the message object is level 1), from
 * either side of either transport. JSON.parse reads any depth, but what the proxy and the MCP SDK
 * do with a message afterwards recurses (JSON.stringify, canonical JSON), and throws past a few
 * thousand levels; no MCP message comes near this bound.
 */
export const MAX_MESSAGE_DEPTH = 256
/** What a message past {@link MAX_MESSAGE_DEPTH} is told, after "message", "answer" …. */
export const TOO_DEEP = `nested deeper than ${MAX_MESSAGE_DEPTH} levels of arrays and objects is over the limit`

/**
 * Whether the parsed JSON value `v` nests arrays and objects deeper than `max` levels (`v` itself
 * is level 1). Strings are not looked into and the walk stops at the first level past `max`, so
 * it costs next to nothing beside the parse that made `v`, and recurses at most `max + 1` deep.
 */
export function valueDeeper(v: unknown, max: number): boolean {
  if (typeof v !== 'object' || v === null) return false
  if (max <= 0) return true
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i]
      if (typeof x === 'object' && x !== null && valueDeeper(x, max - 1)) return true
    }
    return false
  }
  const o = v as Record<string, unknown>
  for (const k in o) {
    const x = o[k]
    if (typeof x === 'object' && x !== null && valueDeeper(x, max - 1)) return true
  }
  return false
}

/** Bytes of an oversized line kept at each end (to recover its `id` and `method`). */
const KEEP = 4096
const NL = 0x0a

/**
 * Splits `input` into lines of at most `maxLineBytes` bytes (the newline and a trailing `\r`
 * excluded); empty lines are skipped. `onEvent` runs for every line in order; `onEnd` once,
 * when the stream ends or fails (a final line without a newline is delivered first).
 */
export function readLines(input: Readable, maxLineBytes: number, onEvent: (e: LineEvent) => void, onEnd: (err?: Error) => void): void {
  let parts: Buffer[] = []
  let size = 0
  // While skipping an oversized line: its first bytes, its length so far, and its last bytes.
  let over: { head: Buffer; bytes: number; tail: Buffer } | undefined
  let ended = false

  /** More bytes of the oversized line being skipped. */
  const skip = (o: { head: Buffer; bytes: number; tail: Buffer }, bytes: Buffer) => {
    o.bytes += bytes.length
    if (o.head.length < KEEP) o.head = Buffer.concat([o.head, bytes.subarray(0, KEEP - o.head.length)])
    const t = o.tail.length + bytes.length > KEEP ? Buffer.concat([o.tail, bytes.subarray(Math.max(0, bytes.length - KEEP))]) : Buffer.concat([o.tail, bytes])
    o.tail = t.subarray(Math.max(0, t.length - KEEP))
  }

  /** The line buffered so far ends here, with `rest` (the bytes of this chunk before the newline). */
  const finish = (rest: Buffer | undefined) => {
    if (over) {
      const o = over
      over = undefined
      if (rest) skip(o, rest)
      let { bytes, tail } = o
      if (tail.length > 0 && tail[tail.length - 1] === 0x0d) {
        tail = tail.subarray(0, tail.length - 1)
        bytes--
      }
      onEvent({ kind: 'oversized', bytes, head: o.head.subarray(0, Math.min(KEEP, bytes)).toString('utf8'), tail: tail.toString('utf8') })
      return
    }
    let buf = parts.length === 1 ? parts[0] : Buffer.concat(parts, size)
    if (rest) buf = buf.length === 0 ? rest : Buffer.concat([buf, rest])
    parts = []
    size = 0
    if (buf.length > 0 && buf[buf.length - 1] === 0x0d) buf = buf.subarray(0, buf.length - 1)
    if (buf.length > maxLineBytes) {
      onEvent({ kind: 'oversized', bytes: buf.length, head: buf.subarray(0, KEEP).toString('utf8'), tail: buf.subarray(Math.max(0, buf.length - KEEP)).toString('utf8') })
      return
    }
    const text = buf.toString('utf8')
    if (text.trim() !== '') onEvent({ kind: 'line', text })
  }

  /** Bytes of a line that goes on in a later chunk. */
  const take = (chunk: Buffer) => {
    if (over) {
      skip(over, chunk)
      return
    }
    parts.push(chunk)
    size += chunk.length
    if (size > maxLineBytes + 1) {
      const buf = Buffer.concat(parts, size)
      over = { head: buf.subarray(0, KEEP), bytes: buf.length, tail: buf.subarray(Math.max(0, buf.length - KEEP)) }
      parts = []
      size = 0
    }
  }

  // Whole lines of plain ASCII (the common case) are decoded once per chunk, as one string, and
  // split there: no Buffer and no decode per line, and a line's length in characters is its
  // length in bytes. The rest (a line begun in an earlier chunk, a byte over 0x7f) goes through
  // `finish`, byte by byte.
  const fast = (s: string) => {
    let i = 0
    for (;;) {
      let j = s.indexOf('\n', i)
      if (j < 0) j = s.length
      const e = j > i && s.charCodeAt(j - 1) === 0x0d ? j - 1 : j
      if (e - i > maxLineBytes) {
        onEvent({ kind: 'oversized', bytes: e - i, head: s.slice(i, Math.min(i + KEEP, e)), tail: s.slice(Math.max(i, e - KEEP), e) })
      } else if (e > i) {
        const text = s.slice(i, e)
        if (s.charCodeAt(i) === 0x7b || text.trim() !== '') onEvent({ kind: 'line', text })
      }
      if (j >= s.length) return
      i = j + 1
    }
  }

  input.on('data', (data: Buffer | string) => {
    let chunk = typeof data === 'string' ? Buffer.from(data, 'utf8') : data
    let i = chunk.indexOf(NL)
    if (i >= 0 && (size > 0 || over)) {
      // the newline ends a line begun in an earlier chunk
      finish(chunk.subarray(0, i))
      chunk = chunk.subarray(i + 1)
      i = chunk.indexOf(NL)
    }
    if (i >= 0) {
      const last = chunk.lastIndexOf(NL)
      const whole = chunk.subarray(0, last)
      if (isAscii(whole)) {
        fast(whole.toString('latin1'))
        chunk = chunk.subarray(last + 1)
      }
    }
    for (;;) {
      i = chunk.indexOf(NL)
      if (i < 0) break
      finish(chunk.subarray(0, i))
      chunk = chunk.subarray(i + 1)
    }
    if (chunk.length > 0) take(chunk)
  })
  const end = (err?: Error) => {
    if (ended) return
    ended = true
    if (!err && (size > 0 || over)) finish(undefined)
    onEnd(err)
  }
  input.on('end', () => end())
  input.on('close', () => end())
  input.on('error', (err) => end(err))
}

/** One message as its line's JSON text (no newline). */
export function messageLine(msg: unknown): string {
  return JSON.stringify(msg)
}

/**
 * Lines to one stream, gathered and written together: the first {@link add} of a turn schedules
 * a write of everything added until the microtasks run (one write, not one per message), and
 * {@link flush} writes at once. `written` runs after each write (for backpressure); `dropped`
 * when the stream is closed, with how many lines were lost. What waits is at most what one read
 * of the other side produced: the reads pause while the stream needs draining.
 */
export class LineBatch {
  #text = ''
  #lines = 0
  #scheduled = false
  readonly #out: Writable
  readonly #written: () => void
  readonly #dropped: (lines: number) => void
  readonly #flush = () => this.flush()

  constructor(out: Writable, written: () => void, dropped: (lines: number) => void) {
    this.#out = out
    this.#written = written
    this.#dropped = dropped
  }

  /** Adds one line (JSON text without its newline). */
  add(line: string): void {
    this.#text += `${line}\n`
    this.#lines++
    if (!this.#scheduled) {
      this.#scheduled = true
      queueMicrotask(this.#flush)
    }
  }

  /** Writes what is gathered now. */
  flush(): void {
    this.#scheduled = false
    if (this.#lines === 0) return
    const text = this.#text
    const lines = this.#lines
    this.#text = ''
    this.#lines = 0
    if (this.#out.destroyed || this.#out.writableEnded) {
      this.#dropped(lines)
      return
    }
    this.#out.write(text)
    this.#written()
  }
}

/** Writes one message as one line. Returns false when the stream cannot take it (closed). */
export function writeMessage(out: Writable, msg: unknown): boolean {
  if (out.destroyed || out.writableEnded) return false
  out.write(JSON.stringify(msg) + '\n')
  return true
}

/** A JSON-RPC id as it appears on the wire: a string or an integer (anything else is not an id). */
export type RpcId = string | number

/** What a message not read says of itself: its top-level `id` and `method`, and whether it is an answer. */
export interface MessageHead {
  id?: RpcId
  method?: string
  isResponse: boolean
}

/** {@link MessageHead} of a parsed message (a batch, or anything not an object, has none). */
export function messageHead(msg: unknown): MessageHead {
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) return { isResponse: false }
  const m = msg as Record<string, unknown>
  const id = typeof m.id === 'string' || (typeof m.id === 'number' && Number.isInteger(m.id)) ? m.id : undefined
  const method = typeof m.method === 'string' ? m.method : undefined
  return { id, method, isResponse: method === undefined && ('result' in m || 'error' in m) }
}

/** Reads the top-level `id` and `method` of a line too long to parse, from its two ends. */
export function sniffOversized(head: string, tail: string): MessageHead {
  const out: MessageHead = { isResponse: false }
  // Leading members of the outermost object whose values are scalars.
  const s = head
  let i = 0
  const ws = () => {
    while (i < s.length && /\s/.test(s[i])) i++
  }
  const str = (): string | undefined => {
    const m = /^"(?:[^"\\]|\\.)*"/.exec(s.slice(i, i + 8192))
    if (!m) return undefined
    i += m[0].length
    try {
      return JSON.parse(m[0]) as string
    } catch {
      return undefined
    }
  }
  const seen = (key: string, value: unknown) => {
    if (key === 'id' && (typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value)))) out.id = value
    if (key === 'method' && typeof value === 'string') out.method = value
  }
  ws()
  if (s[i] === '{') {
    i++
    for (;;) {
      ws()
      const key = str()
      if (key === undefined) break
      ws()
      if (s[i] !== ':') break
      i++
      ws()
      if (key === 'result' || key === 'error') out.isResponse = true
      if (s[i] === '"') {
        const v = str()
        if (v === undefined) break
        seen(key, v)
      } else {
        const m = /^(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(s.slice(i, i + 64))
        if (!m) break // an object or array value: the rest cannot be read from the head
        i += m[0].length
        seen(key, JSON.parse(m[0]))
      }
      ws()
      if (s[i] !== ',') break
      i++
    }
  }
  // The last member of the outermost object (the line ends with `"id": X }`).
  const t = /"(id|method)"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)\s*\}\s*$/.exec(tail)
  if (t) {
    try {
      seen(t[1], JSON.parse(t[2]))
    } catch {
      // not JSON after all: leave it
    }
  }
  return out
}
