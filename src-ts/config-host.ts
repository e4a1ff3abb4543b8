// The host's half of a config (the core does no I/O): before the core compiles a config, the
// receipt key named by `receipts.privateKeyEnv` / `privateKeyFile` is read into
// `receipts.privateKey`, and file paths (`audit.jsonl`, `receipts.privateKeyFile`) are resolved
// against the config file's folder. The audit sinks are returned for the trail to open.
import { readFileSync } from 'node:fs'
import { isAbsolute, resolve } from 'node:path'

import type { AuditSinks } from './audit/trail'
import { ToolGateError } from './errors'

type Json = Record<string, unknown>
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** What the host did with a config: the text the core compiles, and the audit sinks to open. */
export interface PreparedConfig {
  text: string
  audit?: AuditSinks
}

/**
 * Prepares `config` (parsed) for the core. `baseDir` is the config file's folder (paths inside
 * resolve against it; default: the working directory). Errors are `E_CONFIG` naming the key —
 * never the key material.
 */
export function prepareConfig(config: Json, baseDir?: string, text?: string): PreparedConfig {
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
      const file = at(receipts.privateKeyFile)
      try {
        seed = readFileSync(file, 'utf8')
      } catch (err) {
        throw new ToolGateError('E_CONFIG', `config at \`receipts.privateKeyFile\`: ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`)
      }
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
    if (typeof a.maxFileBytes === 'number') audit.maxFileBytes = a.maxFileBytes
    if (a.stdout === true) audit.stdout = true
  }
  const final = changed || text === undefined ? JSON.stringify(out) : text
  return audit === undefined ? { text: final } : { text: final, audit }
}
