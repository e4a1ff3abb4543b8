// Server-sent events, read from bytes as the HTML standard's event-stream parser reads them:
// lines end with `\n`, `\r\n` or `\r` (also when a chunk boundary falls between `\r` and `\n`),
// `data:` lines of one event are joined by `\n`, `event:` names the event, `:` lines are comments,
// other fields are ignored, and a blank line dispatches the event. Lines are split on bytes
// (CR and LF never occur inside a multi-byte UTF-8 sequence) and decoded whole, so a character
// cut by a chunk boundary arrives intact; invalid UTF-8 becomes U+FFFD, as the standard decodes
// it. One event is bounded: past `maxEventBytes` the reader throws instead of buffering more.
//
// Why not `eventsource-parser` (the well-kept parser the AI SDK uses): it takes decoded text and
// buffers an event without limit, so an upstream could make the proxy hold an endless event; a
// byte bound on top of it would be per chunk, not per event. Reading bytes here keeps the bound
// exact (one event, counted in its own bytes) and the UTF-8 decoding whole-line; the reader is
// checked with CRLF/CR line ends, comments, multi-line data and every chunk boundary (a split
// between `\r` and `\n` included) in __test__/http-proxy-stream.test.ts.
import { ToolGateError } from '../../errors'

/** One dispatched event. */
export interface SseMessage {
  /** The `event:` field, or `''` when the event had none (a browser would call it `message`). */
  event: string
  /** The `data:` lines joined by `\n`. */
  data: string
}

const LF = 0x0a
const CR = 0x0d

/**
 * An incremental event-stream reader. Feed it the body's chunks in order with
 * {@link SseReader.push}; each call answers the events those bytes completed. At the end of the
 * body call {@link SseReader.end}: an event never closed by a blank line is discarded (as the
 * standard and the official SDKs do), and its size is answered so the caller can say so.
 */
export class SseReader {
  readonly #max: number
  readonly #where: string
  /** Pieces of the line being read, and their length. */
  #line: Buffer[] = []
  #lineBytes = 0
  /** Bytes of the event being read (its complete lines, terminators included). */
  #eventBytes = 0
  #event = ''
  #data: string[] = []
  #hasData = false
  /** The last chunk ended with `\r`: a `\n` starting the next one ends the same line. */
  #pendingCR = false
  #first = true

  /**
   * @param maxEventBytes The largest event accepted, in bytes of its lines.
   * @param where Names the stream in error messages (e.g. `anthropic upstream stream`).
   */
  constructor(maxEventBytes: number, where: string) {
    this.#max = maxEventBytes
    this.#where = where
  }

  /**
   * Reads one chunk; answers the events it completed, in order. Throws `ToolGateError`
   * `E_PAYLOAD` naming the limit when an event grows past `maxEventBytes` (the reader is then
   * unusable: the stream cannot be resynchronized).
   */
  push(chunk: Uint8Array): SseMessage[] {
    let buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    const out: SseMessage[] = []
    if (this.#pendingCR) {
      this.#pendingCR = false
      if (buf.length > 0 && buf[0] === LF) buf = buf.subarray(1)
    }
    const len = buf.length
    let start = 0
    // next LF / CR at or after `start`: -2 not searched yet, -1 none left in this chunk
    let nl = -2
    let cr = -2
    while (start < len) {
      if (nl !== -1 && nl < start) nl = buf.indexOf(LF, start)
      if (cr !== -1 && cr < start) cr = buf.indexOf(CR, start)
      const end = nl === -1 ? cr : cr === -1 ? nl : Math.min(nl, cr)
      if (end === -1) break
      this.#piece(buf.subarray(start, end), false)
      this.#lineDone(out)
      start = end + 1
      if (buf[end] === CR) {
        if (start === len) this.#pendingCR = true
        else if (buf[start] === LF) start++
      }
    }
    if (start < len) this.#piece(buf.subarray(start), true)
    return out
  }

  /**
   * Ends the body. Answers the bytes of the event left unfinished (0 when the body ended on an
   * event boundary); that event is discarded.
   */
  end(): number {
    const left = this.#eventBytes + this.#lineBytes
    this.#line = []
    this.#lineBytes = 0
    this.#reset()
    return left
  }

  #piece(bytes: Buffer, copy: boolean): void {
    if (bytes.length === 0) return
    if (this.#eventBytes + this.#lineBytes + bytes.length > this.#max) {
      throw new ToolGateError('E_PAYLOAD', `${this.#where}: one server-sent event is over ${this.#max} bytes; the stream was stopped there`)
    }
    // a partial line outlives this chunk, whose buffer the caller may reuse
    this.#line.push(copy ? Buffer.from(bytes) : bytes)
    this.#lineBytes += bytes.length
  }

  #lineDone(out: SseMessage[]): void {
    const parts = this.#line
    let line = parts.length === 0 ? '' : parts.length === 1 ? parts[0].toString('utf8') : Buffer.concat(parts, this.#lineBytes).toString('utf8')
    this.#eventBytes += this.#lineBytes + 1
    this.#line = []
    this.#lineBytes = 0
    if (this.#first) {
      this.#first = false
      if (line.charCodeAt(0) === 0xfeff) line = line.slice(1)
    }
    if (line === '') {
      if (this.#hasData) out.push({ event: this.#event, data: this.#data.join('\n') })
      this.#reset()
      return
    }
    if (line.charCodeAt(0) === 0x3a) return // `:` comment
    const colon = line.indexOf(':')
    const field = colon < 0 ? line : line.slice(0, colon)
    let value = colon < 0 ? '' : line.slice(colon + 1)
    if (value.charCodeAt(0) === 0x20) value = value.slice(1)
    if (field === 'data') {
      this.#data.push(value)
      this.#hasData = true
    } else if (field === 'event') {
      this.#event = value
    }
    // `id`, `retry` and unknown fields carry nothing the gate reads
  }

  #reset(): void {
    this.#event = ''
    this.#data = []
    this.#hasData = false
    this.#eventBytes = 0
  }
}
