// The host's half of a config (the core does no I/O): before the core compiles a config, the
// receipt key named by `receipts.privateKeyEnv` / `privateKeyFile` is read into
// `receipts.privateKey`, the audit chain key named by `audit.chainKeyEnv` / `chainKeyFile` is
// read for the trail, and file paths (`audit.jsonl`, `receipts.privateKeyFile`,
// `audit.chainKeyFile`) are resolved against the config file's folder. The audit sinks are
// returned for the trail to open.
import { isObj } from './json-object'
import { isAbsolute, resolve } from 'node:path'

import { MIN_CHAIN_KEY_BYTES } from './audit/chain'
import type { AuditSinks } from './audit/trail'
import { duplicateKeys } from './config-file'
import { ToolGateError } from './errors'
import { readRegularFile } from './regular-file'

type Json = Record<string, unknown>

/** What the host did with a config: the text the core compiles, and the audit sinks to open. */
export interface PreparedConfig {
  text: string
  audit?: AuditSinks
}

/**
 * Prepares `config` (parsed) for the core. `baseDir` is the config file's folder (paths inside
 * resolve against it; default: the working directory). `text`, when given, is the JSON text
 * `config` was parsed from: a key written twice in it is refused here, before anything is
 * re-serialized from the parse (which keeps one of the two silently). Errors are `E_CONFIG`
 * naming the key — never the key material.
 */
export function prepareConfig(config: Json, baseDir?: string, text?: string): PreparedConfig {
  if (text !== undefined) duplicateKeys(text, 'config')
  const at = (p: string) => (baseDir === undefined || isAbsolute(p) ? resolve(p) : resolve(baseDir, p))
  let changed = false
  const out: Json = { ...config }
  const receipts = config.receipts
  if (isObj(receipts) && receipts.privateKey === undefined) {
    let seed: string | undefined
    if (typeof receipts.privateKeyEnv === 'string') {
      seed = process.env[receipts.privateKeyEnv]
      if (seed === undefined || seed.trim() === '') {
        throw new ToolGateError('E_CONFIG', `config at \`receipts.privateKeyEnv\`: the environment variable ${receipts.privateKeyEnv} is not set`)
      }
    } else if (typeof receipts.privateKeyFile === 'string') {
      seed = readKeyFile(at(receipts.privateKeyFile), 'receipts.privateKeyFile').toString('utf8')
    }
    if (seed !== undefined) {
      out.receipts = { ...receipts, privateKey: seed.trim() }
      changed = true
    }
  }
  let audit: AuditSinks | undefined
  const a = config.audit
  if (isObj(a)) {
    audit = {}
    if (typeof a.jsonl === 'string') {
      audit.jsonl = at(a.jsonl)
      if (audit.jsonl !== a.jsonl) {
        out.audit = { ...a, jsonl: audit.jsonl }
        changed = true
      }
    }
    if (typeof a.chainKeyFile === 'string' && at(a.chainKeyFile) !== a.chainKeyFile) {
      // absolute, so a host that builds gates from this text (the proxies) reads the same file
      out.audit = { ...(out.audit as Json), chainKeyFile: at(a.chainKeyFile) }
      changed = true
    }
    if (typeof a.maxFileBytes === 'number') audit.maxFileBytes = a.maxFileBytes
    if (a.stdout === true) audit.stdout = true
    const key = chainKeyOf(a, at)
    if (key !== undefined) audit.chainKey = key
  }
  const final = changed || text === undefined ? JSON.stringify(out) : text
  return audit === undefined ? { text: final } : { text: final, audit }
}

/** Largest key file read (a key is a few dozen bytes; a bound keeps `/dev/zero` out). */
const MAX_KEY_FILE_BYTES = 64 * 1024

/** A key file's bytes: a regular file within {@link MAX_KEY_FILE_BYTES}; `E_CONFIG` naming the key, never its content. */
function readKeyFile(file: string, key: string): Buffer {
  try {
    return readRegularFile(file, `config at \`${key}\`:`, MAX_KEY_FILE_BYTES)
  } catch (err) {
    throw new ToolGateError('E_CONFIG', (err as Error).message)
  }
}

/**
 * The audit chain key `audit.chainKeyEnv` / `audit.chainKeyFile` names: the variable's or the
 * file's bytes as given (UTF-8 for a variable), one trailing newline (`\n` or `\r\n`) removed,
 * at least {@link MIN_CHAIN_KEY_BYTES} bytes. `E_CONFIG` naming the key (never its bytes) when
 * the variable is unset, the file cannot be read, or the key is too short.
 */
function chainKeyOf(a: Json, at: (p: string) => string): Buffer | undefined {
  let key: Buffer
  let where: string
  if (typeof a.chainKeyEnv === 'string') {
    where = 'audit.chainKeyEnv'
    const v = process.env[a.chainKeyEnv]
    if (v === undefined || v === '') throw new ToolGateError('E_CONFIG', `config at \`audit.chainKeyEnv\`: the environment variable ${a.chainKeyEnv} is not set`)
    key = Buffer.from(v, 'utf8')
  } else if (typeof a.chainKeyFile === 'string') {
    where = 'audit.chainKeyFile'
    key = readKeyFile(at(a.chainKeyFile), 'audit.chainKeyFile')
  } else {
    return undefined
  }
  key = trimNewline(key)
  if (key.length < MIN_CHAIN_KEY_BYTES) {
    throw new ToolGateError('E_CONFIG', `config at \`${where}\`: the chain key is ${key.length} bytes; at least ${MIN_CHAIN_KEY_BYTES} are needed (for example \`openssl rand -base64 32\`)`)
  }
  return key
}

/** `buf` without one trailing `\n` or `\r\n`. */
export function trimNewline(buf: Buffer): Buffer {
  if (buf.length > 0 && buf[buf.length - 1] === 0x0a) buf = buf.subarray(0, buf.length - (buf.length > 1 && buf[buf.length - 2] === 0x0d ? 2 : 1))
  return buf
}
