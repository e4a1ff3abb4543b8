// Reading a decision log as users hand it over, untrusted: a regular file only (a FIFO, a device
// or a directory is refused before anything is read), line by line as bytes, in chunks, with
// every line bounded — a log with a gigabyte line takes a chunk of memory, not a gigabyte.
import { closeSync, readSync } from 'node:fs'

import { AUDIT_MAX_LINE_BYTES } from '../contract-types.generated'
import { openRegularFile } from '../regular-file'

/** One line of a file as read: its bytes without the newline, and whether a newline ended it. */
export interface RawLine {
  bytes: Buffer
  /** `false` only for the last bytes of a file that does not end in a newline (a torn line). */
  terminated: boolean
  /** The line was longer than the bound: its length in bytes (`bytes` is then empty: it was not kept). */
  overlong?: number
}

const CHUNK = 1 << 20

/** The longest log line kept, in bytes: the core cuts every record it builds to fit (docs/audit.md); longer lines are reported, not read into memory. */
export const MAX_LINE_BYTES = AUDIT_MAX_LINE_BYTES

/**
 * Reads `path` line by line, in chunks of 1 MiB (memory stays at one chunk plus the longest
 * line, at most {@link MAX_LINE_BYTES}: a longer line comes back empty with its length in
 * `overlong`). Only a regular file is read: a directory, FIFO or device throws `ToolGateError`
 * `E_CONFIG` naming it, before anything is read.
 */
export function* readLines(path: string, maxLineBytes = MAX_LINE_BYTES): Generator<RawLine> {
  const { fd } = openRegularFile(path, 'log')
  try {
    const buf = Buffer.allocUnsafe(CHUNK)
    let carry: Buffer[] = []
    let carried = 0
    /** Bytes of the current line when it is past the bound (its bytes are dropped, not kept). */
    let over = 0
    for (;;) {
      const n = readSync(fd, buf, 0, CHUNK, null)
      if (n === 0) break
      let start = 0
      for (;;) {
        const nl = buf.indexOf(10, start)
        if (nl < 0 || nl >= n) break
        const piece = buf.subarray(start, nl)
        start = nl + 1
        if (over > 0 || carried + piece.length > maxLineBytes) {
          const length = (over > 0 ? over : carried) + piece.length
          carry = []
          carried = 0
          over = 0
          yield { bytes: Buffer.alloc(0), terminated: true, overlong: length }
          continue
        }
        const bytes = carry.length === 0 ? Buffer.from(piece) : Buffer.concat([...carry, piece])
        carry = []
        carried = 0
        yield { bytes, terminated: true }
      }
      if (start < n) {
        const rest = n - start
        if (over > 0 || carried + rest > maxLineBytes) {
          over = (over > 0 ? over : carried) + rest
          carry = []
          carried = 0
        } else {
          carry.push(Buffer.from(buf.subarray(start, n)))
          carried += rest
        }
      }
    }
    if (over > 0) yield { bytes: Buffer.alloc(0), terminated: false, overlong: over }
    else if (carry.length > 0) yield { bytes: Buffer.concat(carry), terminated: false }
  } finally {
    closeSync(fd)
  }
}
