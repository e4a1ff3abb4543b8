// The audit trail's host half (docs/audit.md): the core builds one JSON record per decision into
// a bounded buffer; this drains it, links every line to the one before (`prev`: the SHA-256 of
// the previous line's bytes, base64url — a hash chain from the `open` record), and writes the
// lines to the configured sinks: an append-only JSONL file (one write per batch of whole lines,
// so a crash leaves at most a torn last line; rotation by size continues the chain), standard
// output, and a callback. Nothing is written on the hot path: records are drained every
// `FLUSH_MS`, every `FLUSH_EVERY` decisions, on `gate.flush()`, and when the process exits.
import { createHash } from 'node:crypto'
import { closeSync, existsSync, fstatSync, ftruncateSync, openSync, readSync, renameSync, writeSync } from 'node:fs'
import { resolve as resolvePath } from 'node:path'

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

/**
 * Where one hash chain goes: a JSONL file, shared by every trail of this process writing to that
 * path, so two gates on one file still write one unbroken chain; without a file, standard output
 * (one chain for the process too), or else a trail's own chain for `onAudit`.
 */
class Chain {
  readonly path: string | undefined
  fd: number | undefined
  bytes = 0
  prev: string | null = null
  /** Trails writing through this chain (the file is closed when the last one closes). */
  users = 0
  /** Bytes of a torn tail cut off when the file was opened (reported once, by the first `open`). */
  recovered = 0

  constructor(path: string | undefined) {
    this.path = path
    if (path === undefined) return
    try {
      this.fd = openSync(path, 'a+')
      this.bytes = -1
      this.resync()
    } catch (err) {
      if (this.fd !== undefined) closeSync(this.fd)
      throw new ToolGateError('E_CONFIG', `audit.jsonl ${path}: cannot be opened for appending (${(err as Error).message})`, { cause: err })
    }
  }

  /**
   * Continues from the file as it is when it changed behind this process's back (it is new to
   * the chain, or something else wrote to it): a torn tail is cut off, and the next line links
   * to the last whole one.
   */
  resync(): void {
    if (this.fd === undefined || fstatSync(this.fd).size === this.bytes) return
    const last = lastLine(this.fd)
    if (last.torn > 0) {
      ftruncateSync(this.fd, last.size - last.torn)
      this.recovered += last.torn
    }
    this.bytes = last.size - last.torn
    this.prev = last.line === null ? null : lineHash(last.line)
  }

  release(key: string | undefined): void {
    if (--this.users > 0) return
    if (key !== undefined) files.delete(key)
    if (this.fd !== undefined) closeSync(this.fd)
    this.fd = undefined
  }
}

/** The chains of the JSONL files open in this process by absolute path, and of stdout. */
const files = new Map<string, Chain>()
/** The key of the stdout chain (no file path starts with a NUL). */
const STDOUT_KEY = '\0stdout'

/** The key of the chain a trail with these sinks writes (undefined: a chain of its own). */
function chainKey(sinks: AuditSinks): string | undefined {
  return sinks.jsonl !== undefined ? resolvePath(sinks.jsonl) : sinks.stdout === true ? STDOUT_KEY : undefined
}

function chainFor(key: string | undefined): Chain {
  let chain = key === undefined ? undefined : files.get(key)
  if (chain === undefined) {
    chain = new Chain(key === STDOUT_KEY ? undefined : key)
    if (key !== undefined) files.set(key, chain)
  } else if (key !== undefined) {
    try {
      chain.resync()
    } catch (err) {
      throw new ToolGateError('E_CONFIG', `audit.jsonl ${key}: cannot be read (${(err as Error).message})`, { cause: err })
    }
  }
  chain.users++
  return chain
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
  #chain: Chain | undefined
  #since = 0
  #failed = false
  #lost = 0
  #timer: ReturnType<typeof setInterval>
  readonly #ref: WeakRef<AuditTrail>

  /**
   * Opens the sinks (the JSONL file continues its chain; a torn tail is cut off and reported in
   * the `open` record). Trails of this process on the same file share its chain: each writes
   * its own `open` record into it, and every line links to the one written before it.
   */
  constructor(source: AuditSource, sinks: AuditSinks) {
    this.#source = source
    this.#sinks = sinks
    this.#chain = chainFor(chainKey(sinks))
    const recovered = this.#chain.recovered
    this.#chain.recovered = 0
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
    this.#chain?.release(chainKey(this.#sinks))
    this.#chain = undefined
  }

  #openRecord(type: 'open' | 'rotate', recoveredBytes: number): string {
    const rec: Record<string, unknown> = { v: 1, type, time: new Date().toISOString(), pid: process.pid, configHash: this.#source.configHash }
    if (recoveredBytes > 0) rec.tornBytesRemoved = recoveredBytes
    return JSON.stringify(rec)
  }

  #write(lines: string[]): void {
    const chain = this.#chain
    if (chain === undefined) {
      // closed: nothing can take these any more
      this.#lost += lines.length
      return
    }
    try {
      if (chain.path !== undefined && chain.fd === undefined) {
        // a rotation failed half-way: the file is opened again before anything is chained
        chain.fd = openSync(chain.path, 'a+')
        chain.bytes = fstatSync(chain.fd).size
      }
      if (chain.fd !== undefined) {
        // rotate before chaining, so the batch follows the `rotate` record
        const max = this.#sinks.maxFileBytes
        const estimate = lines.reduce((n, l) => n + Buffer.byteLength(l) + 60, 0)
        if (max !== undefined && chain.bytes > 0 && chain.bytes + estimate > max) this.#rotate(chain)
      }
    } catch (err) {
      this.#fail(err, lines.length)
      return
    }
    let out = ''
    const written: string[] = []
    const start = chain.prev
    for (const raw of lines) {
      const line = chained(raw, chain.prev)
      chain.prev = lineHash(line)
      out += line + '\n'
      written.push(line)
    }
    if (chain.fd !== undefined) {
      try {
        chain.bytes += writeAll(chain.fd, out)
      } catch (err) {
        // nothing of this batch is the chain's: the next line follows the last one written
        chain.prev = start
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
      if (this.#chain?.fd !== undefined) fstatSync(this.#chain.fd)
      this.#failed = false
      this.#source.setFailed(false)
    } catch {
      // still failing
    }
  }

  /** Renames the full file to `<file>.<n>` and opens a fresh one whose first line is a `rotate` record chained to the old last line. */
  #rotate(chain: Chain): void {
    const path = chain.path!
    closeSync(chain.fd!)
    chain.fd = undefined
    let n = 1
    while (existsSync(`${path}.${n}`)) n++
    renameSync(path, `${path}.${n}`)
    chain.fd = openSync(path, 'a+')
    chain.bytes = 0
    const line = chained(this.#openRecord('rotate', 0), chain.prev)
    chain.bytes += writeAll(chain.fd, line + '\n')
    chain.prev = lineHash(line)
  }
}
