// The audit trail's host half (docs/audit.md): the core builds one JSON record per decision into
// a bounded buffer; this drains it, links every line to the one before (`prev`: the SHA-256 of
// the previous line's bytes, base64url — a hash chain from the `open` record), and writes the
// lines to the configured sinks: an append-only JSONL file (one write per batch of whole lines,
// so a crash leaves at most a torn last line; rotation by size continues the chain), standard
// output, and a callback. Nothing is written on the hot path: records are drained every
// `FLUSH_MS`, every `FLUSH_EVERY` decisions, on `gate.flush()`, and when the process exits.
import { createHash } from 'node:crypto'
import { closeSync, existsSync, fstatSync, ftruncateSync, openSync, readSync, renameSync, writeSync } from 'node:fs'

import { ToolGateError } from '../errors'

/** Decisions between two synchronous drains (so a long synchronous burst never fills the buffer). */
export const FLUSH_EVERY = 1024
/** Milliseconds between background drains. */
export const FLUSH_MS = 100

/** Where records go. */
export interface AuditSinks {
  /** Append to this JSONL file (absolute, or relative to the working directory). */
  jsonl?: string
  /** Start a new file past this many bytes (the old one is renamed `<file>.<n>`). */
  maxFileBytes?: number
  /** Also write every line to standard output. */
  stdout?: boolean
  /** Also hand every line (without its newline) to this function. */
  onAudit?: (line: string) => void
}

/** The binding calls the trail needs. */
export interface AuditSource {
  /** Takes the buffered records, each line ending in `\n`. */
  drain(): string
  /** Tells the core its sink failed (`true`) or recovered (`false`). */
  setFailed(failed: boolean): void
  /** The config's hash, for the `open` record. */
  configHash: string
}

/** SHA-256 of `text` (UTF-8), base64url without padding: the `prev` of the line after it. */
export function lineHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('base64url')
}

/** Inserts `"prev":…` as the last member of a record line (the core's lines end in `}`). */
function chained(line: string, prev: string | null): string {
  return `${line.slice(0, -1)},"prev":${prev === null ? 'null' : `"${prev}"`}}`
}

/** The last whole line of an open file (and the length in bytes of any torn tail after it). */
function lastLine(fd: number): { line: string | null; torn: number; size: number } {
  const size = fstatSync(fd).size
  if (size === 0) return { line: null, torn: 0, size }
  const chunk = Math.min(size, 1 << 20)
  const buf = Buffer.alloc(chunk)
  readSync(fd, buf, 0, chunk, size - chunk)
  // bytes, not decoded text: a tail cut inside a multi-byte character must not move the cut
  const end = buf.lastIndexOf(0x0a)
  const torn = end < 0 ? (chunk === size ? size : 0) : chunk - end - 1
  if (end < 0) return { line: null, torn, size }
  const start = buf.lastIndexOf(0x0a, end - 1)
  return { line: buf.subarray(start + 1, end).toString('utf8') || null, torn, size }
}

/** Writes all of `text` (a short write is continued). */
function writeAll(fd: number, text: string): number {
  const buf = Buffer.from(text, 'utf8')
  let done = 0
  while (done < buf.length) done += writeSync(fd, buf, done, buf.length - done)
  return done
}

const live = new Set<WeakRef<AuditTrail>>()
let exitHooked = false

function hookExit(): void {
  if (exitHooked) return
  exitHooked = true
  process.on('exit', () => {
    for (const ref of live) ref.deref()?.flush()
  })
}

/** One gate's audit trail. */
export class AuditTrail {
  readonly #source: AuditSource
  readonly #sinks: AuditSinks
  #fd: number | undefined
  #bytes = 0
  #prev: string | null = null
  #since = 0
  #failed = false
  #lost = 0
  #timer: ReturnType<typeof setInterval>
  readonly #ref: WeakRef<AuditTrail>

  /** Opens the sinks (the JSONL file continues its chain; a torn tail is cut off and reported in the `open` record). */
  constructor(source: AuditSource, sinks: AuditSinks) {
    this.#source = source
    this.#sinks = sinks
    let recovered = 0
    if (sinks.jsonl !== undefined) {
      try {
        this.#fd = openSync(sinks.jsonl, 'a+')
        const last = lastLine(this.#fd)
        if (last.torn > 0) {
          ftruncateSync(this.#fd, last.size - last.torn)
          recovered = last.torn
        }
        this.#bytes = last.size - last.torn
        this.#prev = last.line === null ? null : lineHash(last.line)
      } catch (err) {
        throw new ToolGateError('E_CONFIG', `audit.jsonl ${sinks.jsonl}: cannot be opened for appending (${(err as Error).message})`, { cause: err })
      }
    }
    this.#write([this.#openRecord('open', recovered)])
    this.#ref = new WeakRef(this)
    live.add(this.#ref)
    hookExit()
    this.#timer = setInterval(() => this.flush(), FLUSH_MS)
    this.#timer.unref()
  }

  /** Counts decisions made; drains synchronously every {@link FLUSH_EVERY}. */
  decided(n: number): void {
    this.#since += n
    if (this.#since >= FLUSH_EVERY) this.flush()
  }

  /** Drains the core's buffer and writes every record out now. A failing sink is reported to the core (and retried on the next flush). */
  flush(): void {
    this.#since = 0
    const text = this.#source.drain()
    if (text === '') {
      if (this.#failed) this.#retry()
      return
    }
    const lines = text.split('\n')
    lines.pop()
    this.#write(lines)
  }

  /** Records drained from the core that no sink could take (a failed write): lost, and counted. */
  get lost(): number {
    return this.#lost
  }

  /** Stops the background drain after a last flush. */
  close(): void {
    this.flush()
    clearInterval(this.#timer)
    live.delete(this.#ref)
    if (this.#fd !== undefined) closeSync(this.#fd)
    this.#fd = undefined
  }

  #openRecord(type: 'open' | 'rotate', recoveredBytes: number): string {
    const rec: Record<string, unknown> = { v: 1, type, time: new Date().toISOString(), pid: process.pid, configHash: this.#source.configHash }
    if (recoveredBytes > 0) rec.tornBytesRemoved = recoveredBytes
    return JSON.stringify(rec)
  }

  #write(lines: string[]): void {
    try {
      if (this.#fd !== undefined) {
        // rotate before chaining, so the batch follows the `rotate` record
        const max = this.#sinks.maxFileBytes
        const estimate = lines.reduce((n, l) => n + Buffer.byteLength(l) + 60, 0)
        if (max !== undefined && this.#bytes > 0 && this.#bytes + estimate > max) this.#rotate()
      }
    } catch (err) {
      this.#fail(err, lines.length)
      return
    }
    let out = ''
    const written: string[] = []
    const start = this.#prev
    for (const raw of lines) {
      const line = chained(raw, this.#prev)
      this.#prev = lineHash(line)
      out += line + '\n'
      written.push(line)
    }
    if (this.#fd !== undefined) {
      try {
        this.#bytes += writeAll(this.#fd, out)
      } catch (err) {
        // nothing of this batch is the chain's: the next line follows the last one written
        this.#prev = start
        this.#fail(err, lines.length)
        return
      }
    }
    try {
      if (this.#sinks.stdout) writeAll(1, out)
      if (this.#sinks.onAudit) for (const l of written) this.#sinks.onAudit(l)
    } catch (err) {
      this.#fail(err, 0)
      return
    }
    if (this.#failed) {
      this.#failed = false
      this.#source.setFailed(false)
    }
  }

  #fail(err: unknown, lost: number): void {
    this.#lost += lost
    this.#failed = true
    this.#source.setFailed(true)
    process.emitWarning(`toolgate audit: the sink failed (${(err as Error).message}); ${lost > 0 ? `${lost} records lost and counted; ` : ''}calls are refused (audit_unavailable) until it recovers, unless audit.onFailure is "allow"`)
  }

  #retry(): void {
    try {
      if (this.#fd !== undefined) fstatSync(this.#fd)
      this.#failed = false
      this.#source.setFailed(false)
    } catch {
      // still failing
    }
  }

  /** Renames the full file to `<file>.<n>` and opens a fresh one whose first line is a `rotate` record chained to the old last line. */
  #rotate(): void {
    const path = this.#sinks.jsonl!
    closeSync(this.#fd!)
    let n = 1
    while (existsSync(`${path}.${n}`)) n++
    renameSync(path, `${path}.${n}`)
    this.#fd = openSync(path, 'a+')
    this.#bytes = 0
    const line = chained(this.#openRecord('rotate', 0), this.#prev)
    this.#bytes += writeAll(this.#fd, line + '\n')
    this.#prev = lineHash(line)
  }
}
