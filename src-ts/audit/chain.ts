// The hash chains of the audit trail (docs/audit.md): where a chain's lines go and the link to
// the last one. Plain: each line's `prev` is the SHA-256 of the line before. Keyed
// (`audit.chainKeyEnv` / `chainKeyFile`): each line ends in its own `mac`, the HMAC-SHA-256 under
// the key of its content (its `prev` included), and the next line's `prev` is that `mac` — so every
// line, the last one too, is authenticated by the key, and nobody without it can change or
// re-chain one. A gate opening a keyed log links to its last line only when that line's `mac`
// proves it; otherwise its `open` record says the tail is unproven (`unprovenTail`), which verify
// reports. A JSONL file has one chain per process, shared by every trail writing to it (so two
// gates on one file still write one unbroken chain); standard output has one too; a trail with
// neither keeps a chain of its own for `onAudit`.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { closeSync, constants, fstatSync, ftruncateSync, lstatSync, openSync, readSync, writeSync } from 'node:fs'
import { resolve as resolvePath } from 'node:path'

import { ToolGateError } from '../errors'
import { kindOf } from '../regular-file'
import { MAX_LINE_BYTES } from './lines'

/** SHA-256 of `text` (UTF-8), base64url without padding: the `prev` of the line after it. */
export function lineHash(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('base64url')
}

/** HMAC-SHA-256 of `text` (UTF-8) under `key`, base64url without padding: the `prev` of the line after it in a keyed chain. */
export function lineMac(key: Buffer, text: string | Buffer): string {
  return createHmac('sha256', key).update(text).digest('base64url')
}

/** The smallest chain key accepted, in bytes. */
export const MIN_CHAIN_KEY_BYTES = 16

/** What an `open`/`rotate` record says of a keyed chain (`chain`), and the key's public id (`chainKeyId`). */
export const KEYED_CHAIN = 'hmac-sha256'

/**
 * A key's id: HMAC-SHA-256 of a fixed label under the key, base64url, 16 characters. It names
 * the key in `open` records (so `verify` can say "another key" rather than "changed") and tells
 * nothing about the key itself.
 */
export function chainKeyId(key: Buffer): string {
  return lineMac(key, 'toolgate audit chain key id').slice(0, 16)
}

const sameKey = (a: Buffer | undefined, b: Buffer | undefined) => (a === undefined || b === undefined ? a === b : a.length === b.length && timingSafeEqual(a, b))

/** Bytes read at a time when scanning a file backwards for a newline. */
const BACK_CHUNK = 1 << 16

/**
 * The position of the last newline in bytes `[lo, to)` of an open file, or -1: read backwards a
 * chunk at a time, so a long line costs one chunk of memory.
 */
function newlineBefore(fd: number, to: number, lo: number): number {
  const buf = Buffer.allocUnsafe(BACK_CHUNK)
  let end = to
  while (end > lo) {
    const start = Math.max(lo, end - BACK_CHUNK)
    const n = readSync(fd, buf, 0, end - start, start)
    const at = buf.subarray(0, n).lastIndexOf(0x0a)
    if (at >= 0) return start + at
    end = start
  }
  return -1
}

/** The end of an open file as a gate finds it when it opens the file. */
interface FileTail {
  /** The last whole line's bytes (without its newline); `undefined` when the file holds no whole line, `null` when that line is longer than {@link MAX_LINE_BYTES} (never read in part). */
  line: Buffer | null | undefined
  /** Bytes after the last newline (a torn line), to be cut off. */
  torn: number
  size: number
}

/**
 * The last whole line of an open file, and the length of any torn tail after it. The line is read
 * back to the newline before it, however far that is, up to {@link MAX_LINE_BYTES} (the longest
 * line `verify` reads and the longest a trail writes): a longer line comes back `null`, never in
 * part. The torn tail is found whatever its length.
 */
function lastLine(fd: number, maxLineBytes = MAX_LINE_BYTES): FileTail {
  const size = fstatSync(fd).size
  if (size === 0) return { line: undefined, torn: 0, size }
  // bytes, not decoded text: a tail cut inside a multi-byte character must not move the cut
  const end = newlineBefore(fd, size, 0)
  const torn = size - end - 1
  if (end < 0) return { line: undefined, torn, size }
  const lo = Math.max(0, end - maxLineBytes - 1)
  const start = newlineBefore(fd, end, lo)
  if (start < 0 && lo > 0) return { line: null, torn, size }
  const line = Buffer.allocUnsafe(end - start - 1)
  let done = 0
  while (done < line.length) done += readSync(fd, line, done, line.length - done, start + 1 + done)
  return { line, torn, size }
}

/**
 * A keyed line's own MAC (`"mac"`, the last member): the HMAC-SHA-256 under the key of the line as
 * it reads without that member — its bytes up to `,"mac":"…"` followed by `}`. A keyed line's
 * successor links to it by this value (its `prev`), so one HMAC per line both authenticates the
 * line and chains it.
 */
const SEAL_PREFIX = Buffer.from(',"mac":"')
/** `,"mac":"` + 43 base64url characters + `"}`. */
const SEAL_BYTES = SEAL_PREFIX.length + 43 + 2
const B64URL = /^[A-Za-z0-9_-]{43}$/

/** The `mac` member a line ends in (not checked), or undefined when it ends in none. */
export function sealIn(line: Buffer): string | undefined {
  if (line.length <= SEAL_BYTES || line[line.length - 1] !== 0x7d || line[line.length - 2] !== 0x22) return undefined
  const at = line.length - SEAL_BYTES
  if (!line.subarray(at, at + SEAL_PREFIX.length).equals(SEAL_PREFIX)) return undefined
  const mac = line.toString('latin1', at + SEAL_PREFIX.length, line.length - 2)
  return B64URL.test(mac) ? mac : undefined
}

/** The HMAC-SHA-256 under `key` of a line's content (`body`: the line without its `mac` member). */
function sealOf(key: Buffer, body: string | Buffer, close = false): string {
  const h = createHmac('sha256', key).update(body)
  if (close) h.update('}')
  return h.digest('base64url')
}

/** The line's `mac` member when it is the HMAC of the line's content under `key` (the line is proven), else undefined. */
export function provenSeal(key: Buffer, line: Buffer): string | undefined {
  const mac = sealIn(line)
  if (mac === undefined) return undefined
  const want = Buffer.from(sealOf(key, line.subarray(0, line.length - SEAL_BYTES), true))
  return timingSafeEqual(want, Buffer.from(mac)) ? mac : undefined
}

/**
 * The bytes every line a toolgate writer writes starts with — the core's records, the `open` and
 * `rotate` records of the Node and Python writers, records cut to size — up to the comma after
 * its `type` (the known types: `open`, `rotate`, `decision`, `turn_error`).
 */
const RECORD_START = /^\{"v":1,"type":"(?:open|rotate|decision|turn_error)"[,}]/
/** Bytes of a file's start read to check it is a toolgate audit log (more than {@link RECORD_START} needs). */
const START_BYTES = 64

/** Opening a log: append to it (created when missing), or a fresh file that must not exist (rotation). */
const LOG_FLAGS = constants.O_RDWR | constants.O_APPEND | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0)

/**
 * Opens the audit log `path` for appending (created when missing; `fresh`: created here, never an
 * existing file — rotation) and returns its descriptor. The writer modifies no file that is not a
 * toolgate audit log, since `audit.jsonl` may come from a config nobody vouches for: `E_CONFIG`,
 * before any byte is cut or written, when `path` is a symbolic link (never followed: a link
 * swapped in later is not either), not a regular file (a FIFO, a device, a directory), or a
 * non-empty file whose first line does not start as every toolgate record does (`{"v":1,"type":`
 * and a known type) — a torn tail is then cut only from a file that passed this check.
 */
export function openLog(path: string, fresh = false): number {
  const where = `audit.jsonl ${path}`
  const link = `${where}: is a symbolic link; name the file itself (the audit log is never opened through a link)`
  if (!fresh) {
    // refused before it is opened: opening a device or FIFO can itself do something
    const st = lstatSync(path, { throwIfNoEntry: false })
    if (st?.isSymbolicLink()) throw new ToolGateError('E_CONFIG', link)
    if (st !== undefined && !st.isFile()) throw new ToolGateError('E_CONFIG', `${where}: is ${kindOf(st)}; expected a regular file`)
  }
  let fd: number
  try {
    fd = openSync(path, LOG_FLAGS | constants.O_CREAT | (fresh ? constants.O_EXCL : 0), 0o666)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ELOOP') throw new ToolGateError('E_CONFIG', link, { cause: err })
    throw new ToolGateError('E_CONFIG', `${where}: cannot be opened for appending (${(err as Error).message})`, { cause: err })
  }
  try {
    // what is checked is what was opened
    const st = fstatSync(fd)
    if (!st.isFile()) throw new ToolGateError('E_CONFIG', `${where}: is ${kindOf(st)}; expected a regular file`)
    if (st.size > 0) {
      const head = Buffer.alloc(Math.min(START_BYTES, st.size))
      const n = readSync(fd, head, 0, head.length, 0)
      if (!RECORD_START.test(head.toString('latin1', 0, n))) {
        throw new ToolGateError('E_CONFIG', `${where}: is not a toolgate audit log (its first line is not a toolgate record); it is left as it is — name a new file, an empty one, or a log a gate wrote`)
      }
    }
    return fd
  } catch (err) {
    closeSync(fd)
    if (err instanceof ToolGateError) throw err
    throw new ToolGateError('E_CONFIG', `${where}: cannot be read (${(err as Error).message})`, { cause: err })
  }
}

/** Writes all of `text` (a short write is continued). */
export function writeAll(fd: number, text: string): number {
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
export class Chain {
  readonly path: string | undefined
  /** The chain key (HMAC-SHA-256 links, and every line carries its own `mac`), or undefined (SHA-256 links). */
  readonly key: Buffer | undefined
  fd: number | undefined
  bytes = 0
  /** What the next line's `prev` holds: the SHA-256 of the last line, or, keyed, its `mac`. */
  prev: string | null = null
  /** Trails writing through this chain (the file is closed when the last one closes). */
  users = 0
  /** Bytes of a torn tail cut off when the file was opened (reported once, by the first `open`). */
  recovered = 0
  /**
   * The file's last line could not be proven when the file was (re)opened — keyed, it carries no
   * `mac` of this key over its content; or it is longer than a log line — so `prev` is not a link
   * the writer vouches for (the line's SHA-256, or null): the next line written must be an `open`
   * (or `rotate`) record that says so (`unprovenTail`), and `verify` reports that line.
   */
  unproven = false

  constructor(path: string | undefined, key: Buffer | undefined) {
    this.path = path
    this.key = key
    if (path === undefined) return
    // a file that is not a toolgate audit log is refused before anything is cut or written
    this.fd = openLog(path)
    try {
      this.bytes = -1
      this.resync()
    } catch (err) {
      closeSync(this.fd)
      this.fd = undefined
      throw new ToolGateError('E_CONFIG', `audit.jsonl ${path}: cannot be opened for appending (${(err as Error).message})`, { cause: err })
    }
  }

  /**
   * Chains one record (a JSON object line without `prev`): adds `prev` (and, keyed, `mac`) as the
   * last members and moves the chain on to it. One hash (or HMAC) per line.
   */
  append(record: string): string {
    // the record without its closing brace, with `prev` added: the line is this and `}`, or, keyed,
    // this, its mac and `}` (the mac is the HMAC of this and `}`)
    const head = `${record.slice(0, -1)},"prev":${this.prev === null ? 'null' : `"${this.prev}"`}`
    if (this.key === undefined) {
      const line = `${head}}`
      this.prev = lineHash(line)
      return line
    }
    const mac = sealOf(this.key, head, true)
    this.prev = mac
    return `${head},"mac":"${mac}"}`
  }

  /**
   * Continues from the file as it is when it changed behind this process's back (it is new to
   * the chain, or something else wrote to it): a torn tail is cut off, and the next line links to
   * the last whole one — keyed, only when that line's own `mac` proves a holder of the key wrote
   * it; otherwise the tail is unproven (see {@link unproven}) and never vouched for with an HMAC.
   */
  resync(): void {
    if (this.fd === undefined || fstatSync(this.fd).size === this.bytes) return
    const last = lastLine(this.fd)
    if (last.torn > 0) {
      ftruncateSync(this.fd, last.size - last.torn)
      this.recovered += last.torn
    }
    this.bytes = last.size - last.torn
    const line = last.line
    if (line === undefined) {
      this.prev = null
      this.unproven = false
    } else if (line === null) {
      // longer than any line a gate writes or verify reads: not hashed in part, not linked
      this.prev = null
      this.unproven = true
    } else {
      const mac = this.key === undefined ? undefined : provenSeal(this.key, line)
      this.prev = mac ?? lineHash(line)
      this.unproven = this.key !== undefined && mac === undefined
    }
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
export function chainKey(sinks: { jsonl?: string; stdout?: boolean }): string | undefined {
  return sinks.jsonl !== undefined ? resolvePath(sinks.jsonl) : sinks.stdout === true ? STDOUT_KEY : undefined
}

/**
 * The chain a trail writes (`key` from {@link chainKey}; `chainKey` the HMAC key, if any). Two
 * gates of one process writing one file must agree on its chain key: `E_CONFIG` otherwise.
 */
export function chainFor(key: string | undefined, secret?: Buffer): Chain {
  let chain = key === undefined ? undefined : files.get(key)
  if (chain === undefined) {
    chain = new Chain(key === STDOUT_KEY ? undefined : key, secret)
    if (key !== undefined) files.set(key, chain)
  } else if (key !== undefined) {
    if (!sameKey(chain.key, secret)) {
      const where = key === STDOUT_KEY ? 'audit.stdout' : `audit.jsonl ${key}`
      throw new ToolGateError('E_CONFIG', `${where}: another gate of this process writes it with ${chain.key === undefined ? 'no chain key' : 'another chain key'}; gates sharing a log must share its audit.chainKeyEnv / chainKeyFile`)
    }
    try {
      chain.resync()
    } catch (err) {
      throw new ToolGateError('E_CONFIG', `audit.jsonl ${key}: cannot be read (${(err as Error).message})`, { cause: err })
    }
  }
  chain.users++
  return chain
}
