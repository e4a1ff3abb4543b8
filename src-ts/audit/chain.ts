// The hash chains of the audit trail (docs/audit.md): where a chain's lines go and the link to
// the last one — the SHA-256 of its bytes, or, with a chain key (`audit.chainKeyEnv` /
// `chainKeyFile`), their HMAC-SHA-256, which nobody without the key can compute, so a forged and
// re-chained log does not verify. A JSONL file has one chain per process, shared by every trail
// writing to it (so two gates on one file still write one unbroken chain); standard output has
// one too; a trail with neither keeps a chain of its own for `onAudit`.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { closeSync, fstatSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs'
import { resolve as resolvePath } from 'node:path'

import { ToolGateError } from '../errors'

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

/** The link function of a chain: keyed (HMAC) with a key, SHA-256 without. */
export function linkFor(key: Buffer | undefined): (text: string | Buffer) => string {
  return key === undefined ? lineHash : (text) => lineMac(key, text)
}

const sameKey = (a: Buffer | undefined, b: Buffer | undefined) => (a === undefined || b === undefined ? a === b : a.length === b.length && timingSafeEqual(a, b))

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
  /** The chain key (HMAC-SHA-256 links), or undefined (SHA-256 links). */
  readonly key: Buffer | undefined
  /** The link of a line: what the next line's `prev` holds. */
  readonly link: (text: string | Buffer) => string
  fd: number | undefined
  bytes = 0
  prev: string | null = null
  /** Trails writing through this chain (the file is closed when the last one closes). */
  users = 0
  /** Bytes of a torn tail cut off when the file was opened (reported once, by the first `open`). */
  recovered = 0

  constructor(path: string | undefined, key: Buffer | undefined) {
    this.path = path
    this.key = key
    this.link = linkFor(key)
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
    this.prev = last.line === null ? null : this.link(last.line)
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
