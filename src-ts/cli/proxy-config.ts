// The config file as both proxies (`toolgate proxy`, `toolgate mcp-proxy`) read it: one reader,
// so a file means the same to each, at start and on every reload.
import { randomBytes } from 'node:crypto'
import { dirname, resolve } from 'node:path'

import { loadConfigFile } from '../config-file'
import { prepareConfig } from '../config-host'
import { ToolGateError } from '../errors'
import type { ToolGateConfig } from '../types'

/**
 * Loads a config file for the proxies: YAML or JSON (duplicate keys refused), paths made absolute
 * against the file's folder, the receipt key read from its variable or file — and, when
 * `receipts` names no key, one generated now, so every gate of the proxy signs with the same key.
 * Errors are `E_CONFIG` naming the file.
 */
export function loadProxyConfig(path: string, generatedKey?: string): ToolGateConfig {
  // the one config reader: a regular file within a bound, YAML aliases bounded, duplicate keys refused
  const parsed = loadConfigFile(path).config
  let config: ToolGateConfig
  try {
    config = JSON.parse(prepareConfig(parsed as Record<string, unknown>, dirname(resolve(path))).text) as ToolGateConfig
  } catch (err) {
    throw new ToolGateError('E_CONFIG', `config file ${path}: ${(err as Error).message}`)
  }
  const r = config.receipts
  if (r !== undefined && r !== null && typeof r === 'object' && r.privateKey === undefined && r.privateKeyEnv === undefined && r.privateKeyFile === undefined) {
    config.receipts = { ...r, privateKey: generatedKey ?? randomBytes(32).toString('base64url') }
  }
  return config
}
