// The audit trail's host half (docs/audit.md): the core builds one JSON record per decision into
// a bounded buffer; this drains it, links every line to the one before (`prev`: the SHA-256 of
// the previous line's bytes, or, with a chain key, the previous line's own `mac` — the
// HMAC-SHA-256 under the key of that line's content — a chain from the `open` record), and writes
// the lines to the configured sinks (the core cuts each record to fit what `verify` reads back): an append-only JSONL file (one write per batch of whole lines,
// so a crash leaves at most a torn last line; rotation by size continues the chain), standard
// output, and a callback. Nothing is written on the hot path: records are drained every
// `FLUSH_MS`, every `FLUSH_EVERY` decisions, on `gate.flush()`, and when the process exits.
import { closeSync, existsSync, fstatSync, renameSync } from 'node:fs'

import { type Chain, chainFor, chainKey, chainKeyId, KEYED_CHAIN, openLog, writeAll } from './chain'

export { lineHash } from './chain'

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
  /** The chain key: every `prev` is the HMAC-SHA-256 of the line before under it (at least 16 bytes). */
  chainKey?: Buffer
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

/**
 * The trails in use, each with its writer. Only the trail is held weakly: a gate nobody holds any
 * more is collected with its trail, and the next background tick finds that out, writes the
 * writer's last records and closes it (so a process that drops gates — the HTTP proxy's evicted
 * ones — does not keep them alive). At exit every writer still here is flushed.
 */
const live = new Set<{ trail: WeakRef<AuditTrail>; writer: TrailWriter; timer: ReturnType<typeof setInterval> }>()
let exitHooked = false

function hookExit(): void {
  if (exitHooked) return
  exitHooked = true
  process.on('exit', () => {
    for (const e of live) e.writer.flush()
  })
}

/**
 * One gate's audit trail: drained every {@link FLUSH_MS} in the background, every
 * {@link FLUSH_EVERY} decisions, on `flush()`, at `close()`, at exit, and once more after the
 * gate holding it has been collected.
 */
export class AuditTrail {
  readonly #writer: TrailWriter
  readonly #entry: { trail: WeakRef<AuditTrail>; writer: TrailWriter; timer: ReturnType<typeof setInterval> }

  /**
   * Opens the sinks (the JSONL file continues its chain; a torn tail is cut off and reported in
   * the `open` record). Trails of this process on the same file share its chain: each writes
   * its own `open` record into it, and every line links to the one written before it.
   */
  constructor(source: AuditSource, sinks: AuditSinks) {
    const writer = new TrailWriter(source, sinks)
    this.#writer = writer
    this.#entry = background(new WeakRef(this), writer)
    hookExit()
  }

  /** Counts decisions made; drains synchronously every {@link FLUSH_EVERY}. */
  decided(n: number): void {
    this.#writer.decided(n)
  }

  /** Drains the core's buffer and writes every record out now. A failing sink is reported to the core (and retried on the next flush). */
  flush(): void {
    this.#writer.flush()
  }

  /** Records drained from the core that no sink could take (a failed write, or after `close`): lost, and counted. */
  get lost(): number {
    return this.#writer.lost
  }

  /** Stops the background drain after a last flush, and lets go of the file. */
  close(): void {
    clearInterval(this.#entry.timer)
    live.delete(this.#entry)
    this.#writer.close()
  }
}

/** The background drain of one trail; its closure holds the writer, never the trail. */
function background(trail: WeakRef<AuditTrail>, writer: TrailWriter): { trail: WeakRef<AuditTrail>; writer: TrailWriter; timer: ReturnType<typeof setInterval> } {
  const entry = {
    trail,
    writer,
    timer: setInterval(() => {
      if (entry.trail.deref() !== undefined) {
        writer.flush()
        return
      }
      // the gate and its trail were collected: the last records, then the file
      clearInterval(entry.timer)
      live.delete(entry)
      writer.close()
    }, FLUSH_MS),
  }
  entry.timer.unref()
  live.add(entry)
  return entry
}

/** Drains a gate's records and writes them, chained, to its sinks. */
class TrailWriter {
  readonly #source: AuditSource
  readonly #sinks: AuditSinks
  #chain: Chain | undefined
  #since = 0
  #failed = false
  #lost = 0

  constructor(source: AuditSource, sinks: AuditSinks) {
    this.#source = source
    this.#sinks = sinks
    this.#chain = chainFor(chainKey(sinks), sinks.chainKey)
    this.#write([], true)
  }

  decided(n: number): void {
    this.#since += n
    if (this.#since >= FLUSH_EVERY) this.flush()
  }

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

  get lost(): number {
    return this.#lost
  }

  /** A last flush, then lets go of the chain (the file is closed when no other trail writes it). */
  close(): void {
    if (this.#chain === undefined) return
    this.flush()
    this.#chain.release(chainKey(this.#sinks))
    this.#chain = undefined
  }

  /**
   * An `open` or `rotate` record for `chain`: it takes the torn bytes the chain cut off (reported
   * once) and, when the chain's last line is unproven, says so (`unprovenTail`).
   */
  #openRecord(type: 'open' | 'rotate', chain: Chain): string {
    const rec: Record<string, unknown> = { v: 1, type, time: new Date().toISOString(), pid: process.pid, configHash: this.#source.configHash }
    if (type === 'open' && chain.recovered > 0) rec.tornBytesRemoved = chain.recovered
    if (chain.unproven) rec.unprovenTail = true
    const key = this.#sinks.chainKey
    if (key !== undefined) {
      // this record's own `prev`, and every line's after it, is an HMAC under the key
      rec.chain = KEYED_CHAIN
      rec.chainKeyId = chainKeyId(key)
    }
    return JSON.stringify(rec)
  }

  /**
   * Chains `lines` and writes them to every sink; `opening`: this trail's `open` record first.
   * While the chain's last line is unproven, a batch always starts with an `open` record saying so.
   */
  #write(records: string[], opening = false): void {
    const chain = this.#chain
    let lines = records
    if (chain === undefined) {
      // closed: nothing can take these any more
      this.#lost += records.length
      return
    }
    try {
      if (chain.path !== undefined && chain.fd === undefined) {
        // a rotation failed half-way: the file is opened again before anything is chained (only
        // a toolgate audit log, or a new or empty file: whatever is at the path now)
        chain.fd = openLog(chain.path)
        chain.bytes = fstatSync(chain.fd).size
      }
      const max = this.#sinks.maxFileBytes
      if (chain.fd !== undefined && max !== undefined && chain.bytes > 0) {
        // rotate before chaining, so the batch follows the `rotate` record
        const estimate = lines.reduce((n, l) => n + Buffer.byteLength(l) + 60, opening || chain.unproven ? 400 : 0)
        if (chain.bytes + estimate > max) this.#rotate(chain)
      }
    } catch (err) {
      this.#fail(err, records.length)
      return
    }
    const recovered = chain.recovered
    const unproven = chain.unproven
    if (opening || unproven) {
      lines = [this.#openRecord('open', chain), ...lines]
      chain.recovered = 0
    }
    let out = ''
    const written: string[] = []
    const start = chain.prev
    for (const raw of lines) {
      const line = chain.append(raw)
      out += line + '\n'
      written.push(line)
    }
    chain.unproven = false
    if (chain.fd !== undefined) {
      try {
        chain.bytes += writeAll(chain.fd, out)
      } catch (err) {
        // nothing of this batch is the chain's: the next line follows the last one written
        chain.prev = start
        chain.recovered = recovered
        chain.unproven = unproven
        this.#fail(err, records.length)
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
    // created here (O_EXCL, no link followed): whatever took the name since the rename is not written to
    chain.fd = openLog(path, true)
    chain.bytes = 0
    const start = chain.prev
    const line = chain.append(this.#openRecord('rotate', chain))
    try {
      chain.bytes += writeAll(chain.fd, line + '\n')
    } catch (err) {
      chain.prev = start
      throw err
    }
    chain.unproven = false
  }
}
