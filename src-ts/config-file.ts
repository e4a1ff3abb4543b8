// The one reader of toolgate config files (`ToolGate.fromFile`, every CLI, the proxies, a proposed
// policy for replay): a regular file within a size bound (src-ts/regular-file.ts), JSON or YAML
// by extension, YAML aliases bounded by the size they expand to (not only by their count: 99
// aliases of one 2 MB anchor are 200 MB of config), duplicate keys refused in both.
import { dirname, extname, resolve } from 'node:path'
import { isAlias, isMap, isPair, isScalar, isSeq, parseDocument, type Document, type Node } from 'yaml'

import { ToolGateError } from './errors'
import { boundFromEnv, DEFAULT_MAX_CONFIG_BYTES, readRegularFile } from './regular-file'

/** Options of {@link readConfigText} and {@link loadConfigFile}. */
export interface ConfigFileOptions {
  /**
   * Largest file read, and largest size its YAML may expand to through aliases, in bytes.
   * Default: `TOOLGATE_MAX_CONFIG_BYTES` from the environment, else 16 MiB.
   */
  maxBytes?: number
  /** How the file is named in errors (default `config file`). */
  what?: string
}

/** A config file as read: the text the core compiles, and the folder paths inside it resolve against. */
export interface ConfigText {
  /** The file's own text for JSON (the core parses it strictly and names its errors), the YAML as JSON text otherwise. */
  text: string
  /** The file's folder (absolute). */
  dir: string
  /** The YAML's value, already parsed (undefined for a JSON file). */
  parsed?: unknown
}

/** A config file as loaded: {@link ConfigText} and the parsed object. */
export interface LoadedConfig extends ConfigText {
  config: Record<string, unknown>
}

/** The yaml package's alias bound, kept beside the size bound. */
const MAX_ALIAS_COUNT = 100

const isYaml = (path: string) => {
  const ext = extname(path).toLowerCase()
  return ext === '.yaml' || ext === '.yml'
}

/** The bound in force: the option, else the environment's, else 16 MiB. */
function boundOf(options: ConfigFileOptions | undefined): number {
  return options?.maxBytes ?? boundFromEnv('TOOLGATE_MAX_CONFIG_BYTES', DEFAULT_MAX_CONFIG_BYTES)
}

/**
 * Reads a config file (`.yaml`/`.yml` as YAML, anything else as JSON) for the core. Errors are
 * `ToolGateError` `E_CONFIG` naming the file and why: it cannot be read, is not a regular file
 * (a directory, a FIFO, a device), is over the bound, or is YAML that does not parse, has a
 * duplicate key, or expands past the bound through aliases. JSON is left to the core's strict
 * parser (which names the line and column of a syntax error).
 */
export function readConfigText(path: string, options?: ConfigFileOptions): ConfigText {
  const what = options?.what ?? 'config file'
  const max = boundOf(options)
  const raw = readRegularFile(path, what, max).toString('utf8')
  const dir = dirname(resolve(path))
  if (!isYaml(path)) return { text: raw, dir }
  const parsed = parseYamlBounded(raw, max, `${what} ${path}`)
  return { text: JSON.stringify(parsed) ?? 'null', dir, parsed }
}

/**
 * Reads and parses a config file (see {@link readConfigText}) into an object, for hosts that
 * build gates from the parsed config (the proxies, replay). A JSON file is parsed here, and its
 * duplicate keys are refused (JSON.parse keeps the last of two, the core refuses them).
 * `E_CONFIG` for anything that is not a config object.
 */
export function loadConfigFile(path: string, options?: ConfigFileOptions): LoadedConfig {
  const what = options?.what ?? 'config file'
  const read = readConfigText(path, options)
  let value = read.parsed
  if (!isYaml(path)) {
    try {
      value = JSON.parse(read.text)
    } catch (err) {
      throw new ToolGateError('E_CONFIG', `${what} ${path}: ${(err as Error).message}`, { cause: err })
    }
    duplicateKeys(read.text, `${what} ${path}`)
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new ToolGateError('E_CONFIG', `${what} ${path}: expected a config object`)
  return { ...read, config: value as Record<string, unknown> }
}

/** JSON text is YAML: the YAML parser finds the duplicate keys JSON.parse keeps quietly. */
function duplicateKeys(text: string, where: string): void {
  let doc: Document
  try {
    doc = parseDocument(text, { uniqueKeys: true })
  } catch {
    return // the JSON parsed; only duplicates matter here
  }
  const dup = doc.errors.find((e) => e.code === 'DUPLICATE_KEY')
  if (dup !== undefined) throw new ToolGateError('E_CONFIG', `${where}: ${dup.message}`)
}

/**
 * Parses YAML text with its alias expansion bounded: before any value is built, the size the
 * document would have as JSON (each alias counted as a full copy of what it names) is measured,
 * in time linear in the document, and a document over `maxBytes` is refused; the yaml package's
 * own alias count bound (100) holds too. Duplicate keys and aliases that name a node containing
 * them are refused. `E_CONFIG` naming `where`.
 */
export function parseYamlBounded(raw: string, maxBytes: number, where: string): unknown {
  let doc: Document
  try {
    doc = parseDocument(raw, { uniqueKeys: true, prettyErrors: true })
  } catch (err) {
    throw new ToolGateError('E_CONFIG', `${where}: ${(err as Error).message}`, { cause: err })
  }
  if (doc.errors.length > 0) throw new ToolGateError('E_CONFIG', `${where}: ${doc.errors[0].message}`)
  try {
    expandedSize(doc, maxBytes)
    // and by count, as the yaml package bounds it (its count weighs nested aliases)
    return doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT })
  } catch (err) {
    if (err instanceof ToolGateError) throw new ToolGateError('E_CONFIG', `${where}: ${err.message}`)
    const deep = err instanceof RangeError && /call stack/i.test(err.message)
    throw new ToolGateError('E_CONFIG', `${where}: ${deep ? 'nested too deeply' : (err as Error).message}`, { cause: err })
  }
}

/** The size `doc` would have as JSON text, aliases expanded; throws once it passes `max`. */
function expandedSize(doc: Document, max: number): number {
  const sizes = new Map<unknown, number>()
  const open = new Set<unknown>()
  const over = () => new ToolGateError('E_CONFIG', `its aliases expand it past ${max} bytes (the limit of a config); write the repeated parts out, or raise TOOLGATE_MAX_CONFIG_BYTES`)
  const size = (node: unknown): number => {
    if (node === null || node === undefined) return 4
    const known = sizes.get(node)
    if (known !== undefined) return known
    if (open.has(node)) throw new ToolGateError('E_CONFIG', 'an alias names a node that contains it (a cycle has no JSON form)')
    open.add(node)
    let n: number
    if (isAlias(node)) {
      n = size(node.resolve(doc))
    } else if (isScalar(node)) {
      const v = node.value
      n = typeof v === 'string' ? v.length + 2 : (JSON.stringify(v) ?? 'null').length
    } else if (isMap(node) || isSeq(node)) {
      n = 2
      for (const item of node.items as unknown[]) {
        n += 1 + (isPair(item) ? size(item.key) + 1 + size(item.value) : size(item))
        if (n > max) throw over()
      }
    } else if (isPair(node)) {
      n = size(node.key) + 1 + size(node.value)
    } else {
      n = 4
    }
    open.delete(node)
    if (n > max) throw over()
    sizes.set(node, n)
    return n
  }
  return size(doc.contents as Node | null)
}
