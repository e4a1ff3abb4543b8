// Reading files the host names (configs, key files, proposed policies, logs) without trusting
// them: only a regular file is read — opened without blocking (a FIFO with no writer would hang
// the process), then checked with fstat on the open descriptor (so what is checked is what is
// read) — and never more than a bound (`/dev/zero` or a runaway file would exhaust memory).
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs'

import { ToolGateError } from './errors'

/** Default bound of a config file (and of a proposed policy): 16 MiB. */
export const DEFAULT_MAX_CONFIG_BYTES = 16 * 1024 * 1024

/** Bytes read at a time. */
const CHUNK = 64 * 1024

/** `O_NONBLOCK` where the platform has it: opening a FIFO for reading then returns at once. */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0)

/** What kind of file `st` is, in words, when it is not a regular file. */
export function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory'
  if (st.isFIFO()) return 'a FIFO (named pipe)'
  if (st.isCharacterDevice()) return 'a character device'
  if (st.isBlockDevice()) return 'a block device'
  if (st.isSocket()) return 'a socket'
  return 'not a regular file'
}

/**
 * Opens `path` for reading and checks that it is a regular file; returns the descriptor and its
 * size. Throws `ToolGateError` `E_CONFIG` `"<what> <path>: <why>"` when it cannot be opened, is
 * not a regular file (a directory, a FIFO, a device, a socket), or is larger than `maxBytes`
 * (when given). The caller closes the descriptor.
 */
export function openRegularFile(path: string, what: string, maxBytes?: number): { fd: number; size: number } {
  let fd: number
  try {
    fd = openSync(path, OPEN_FLAGS)
  } catch (err) {
    throw new ToolGateError('E_CONFIG', `${what} ${path}: cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { cause: err })
  }
  try {
    const st = fstatSync(fd)
    if (!st.isFile()) throw new ToolGateError('E_CONFIG', `${what} ${path}: is ${kindOf(st)}; expected a regular file`)
    if (maxBytes !== undefined && st.size > maxBytes) {
      throw new ToolGateError('E_CONFIG', `${what} ${path}: is ${st.size} bytes, over the limit of ${maxBytes} bytes`)
    }
    return { fd, size: st.size }
  } catch (err) {
    closeSync(fd)
    throw err
  }
}

/**
 * Reads a whole regular file of at most `maxBytes` bytes (see {@link openRegularFile}), to its
 * end: a file that grows past the bound while it is read is refused too. Errors are `E_CONFIG`
 * naming `what` and the path.
 */
export function readRegularFile(path: string, what: string, maxBytes: number): Buffer {
  const { fd } = openRegularFile(path, what, maxBytes)
  try {
    return readBounded(fd, `${what} ${path}`, maxBytes)
  } finally {
    closeSync(fd)
  }
}

/**
 * Reads an open descriptor (a file, or a pipe such as standard input) to its end, refusing more
 * than `maxBytes` bytes: `E_CONFIG` `"<where>: is over the limit of N bytes"`, or naming the
 * read error.
 */
export function readBounded(fd: number, where: string, maxBytes: number): Buffer {
  const chunks: Buffer[] = []
  let total = 0
  for (;;) {
    const buf = Buffer.allocUnsafe(CHUNK)
    let got: number
    try {
      got = readSync(fd, buf, 0, CHUNK, null)
    } catch (err) {
      throw new ToolGateError('E_CONFIG', `${where}: cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { cause: err })
    }
    if (got === 0) break
    total += got
    if (total > maxBytes) throw new ToolGateError('E_CONFIG', `${where}: is over the limit of ${maxBytes} bytes`)
    chunks.push(got === CHUNK ? buf : buf.subarray(0, got))
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total)
}

/** A byte bound from an environment variable (a positive whole number), or `fallback`. */
export function boundFromEnv(name: string, fallback: number): number {
  const v = process.env[name]
  if (v === undefined || v === '') return fallback
  const n = /^\d+$/.test(v) ? Number(v) : NaN
  if (!Number.isSafeInteger(n) || n <= 0) throw new ToolGateError('E_CONFIG', `${name}: expected a positive whole number of bytes, got \`${v}\``)
  return n
}
