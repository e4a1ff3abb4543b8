// The proxies' stderr log, off the hot path. `process.stderr.write` on a pipe or a file is
// synchronous: a line written while a request or a tools/call is in flight costs that request a
// system call. Lines are queued instead and written together once the current turn of the event
// loop is over (`setImmediate`), after the answer that caused them went out; a flood is bounded
// (past the bound lines are dropped and counted, the count written with the next batch); the
// queue is written out, synchronously, when the process exits, so no line is lost on a normal
// exit, a signal the CLI handles, or an uncaught error. Every line has URL credentials
// (`user:password@`, `api_key=` / `token=` … values) scrubbed before it is queued.

import { redactSecrets } from '../proxy/redact-url'

/** The queue bound: this many bytes of lines waiting for the next write. */
export const DEFAULT_MAX_QUEUED_BYTES = 1024 * 1024

/** A line logger (see {@link deferredLog}). */
export interface DeferredLog {
  /** Queues `prefix + line + "\n"`; the write happens after the current event-loop turn. */
  (line: string): void
  /** Writes every queued line now (synchronously for stderr on a pipe, a file or a terminal). */
  flush(): void
  /** Lines dropped so far because the queue was full. */
  readonly dropped: number
}

/** Options of {@link deferredLog}. */
export interface DeferredLogOptions {
  /** Where lines go (default `process.stderr`). */
  write?: (text: string) => void
  /** The queue bound in bytes (UTF-16 code units, close enough); default {@link DEFAULT_MAX_QUEUED_BYTES}. */
  maxQueuedBytes?: number
}

/**
 * A logger writing `prefix + line` lines to stderr in batches, once per event-loop turn.
 * Guarantees: URL credentials never appear (`redactSecrets`); lines come out in the order they were logged; nothing is written while the caller's
 * code runs (the write is in a `setImmediate`); at most `maxQueuedBytes` wait at any time — lines
 * past that are dropped and a `prefix + "N log lines dropped …"` line says how many, in their
 * place; every queued line is written before the process exits (an `exit` listener flushes).
 */
export function deferredLog(prefix: string, opts: DeferredLogOptions = {}): DeferredLog {
  const write = opts.write ?? ((text: string) => void process.stderr.write(text))
  const max = opts.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES
  let queue: string[] = []
  let size = 0
  let droppedNow = 0
  let droppedAll = 0
  let scheduled: NodeJS.Immediate | undefined

  const flush = (): void => {
    if (scheduled !== undefined) {
      clearImmediate(scheduled)
      scheduled = undefined
    }
    if (droppedNow > 0) {
      queue.push(`${prefix}${droppedNow} log line${droppedNow === 1 ? '' : 's'} dropped (more than ${max} bytes of log in one turn)\n`)
      droppedNow = 0
    }
    if (queue.length === 0) return
    const text = queue.length === 1 ? queue[0] : queue.join('')
    queue = []
    size = 0
    try {
      write(text)
    } catch {
      // stderr gone (EPIPE …): nothing more can be told
    }
  }

  const log = ((line: string): void => {
    const text = `${prefix}${redactSecrets(line)}\n`
    if (size + text.length > max) {
      droppedNow++
      droppedAll++
    } else {
      queue.push(text)
      size += text.length
    }
    scheduled ??= setImmediate(flush)
  }) as DeferredLog
  log.flush = flush
  Object.defineProperty(log, 'dropped', { get: () => droppedAll })
  process.on('exit', flush)
  return log
}
