// The one reader of toolgate config files (`ToolGate.fromFile`, every CLI, the proxies, a proposed
// policy for replay): a regular file within a size bound (src-ts/regular-file.ts), JSON or YAML
// by extension, YAML aliases bounded by the size they expand to (not only by their count: 99
// aliases of one 2 MB anchor are 200 MB of config), a key written twice refused in both (on the
// raw text, before anything parses and re-serializes it), and YAML kept to what means the same
// to every reader: JSON's types, no tags beyond !!str/!!map/!!seq, no plain scalar that YAML 1.1
// (PyYAML, the Python package's reader) and YAML 1.2 (this reader) read differently.
// python/toolgate/_config.py applies the same rules.
import { dirname, extname, resolve } from 'node:path'
import { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, Scalar, type Document, type Node } from 'yaml'

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
  if (!isYaml(path)) {
    duplicateKeys(raw, `${what} ${path}`)
    return { text: raw, dir }
  }
  const parsed = parseYamlBounded(raw, max, `${what} ${path}`)
  return { text: JSON.stringify(parsed) ?? 'null', dir, parsed }
}

/**
 * Reads and parses a config file (see {@link readConfigText}, which refuses a key written twice)
 * into an object, for hosts that build gates from the parsed config (the proxies, replay).
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
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new ToolGateError('E_CONFIG', `${what} ${path}: expected a config object`)
  return { ...read, config: value as Record<string, unknown> }
}

/**
 * Refuses JSON text with a key written twice in one object, anywhere (JSON.parse keeps the last
 * of two quietly, so a config re-serialized from it would say something its text does not).
 * Keys compare as JSON.parse decodes them (`"a"` and `"\u0061"` are one key). One pass over the
 * text, a Set per object: linear. Text that is not JSON is left to its parser, which names the
 * error. `E_CONFIG` naming `where`, the line and the key's place. The one check of JSON config
 * text: {@link readConfigText} (every file) and `prepareConfig` (a config given as text).
 */
export function duplicateKeys(text: string, where: string): void {
  // per open object or array: the keys seen (null for an array), and the current key or index
  const keys: (Set<string> | null)[] = []
  const at: (string | number)[] = []
  let expectKey = false
  const n = text.length
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      const start = i
      let escaped = false
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i)
        if (d === 0x5c) {
          escaped = true
          i++
        } else if (d === 0x22) break
      }
      if (!expectKey) continue
      expectKey = false
      let key = text.slice(start + 1, i)
      if (escaped) {
        try {
          key = JSON.parse(text.slice(start, i + 1)) as string
        } catch {
          return // not JSON: its parser names the error
        }
      }
      const seen = keys[keys.length - 1]
      if (seen === undefined || seen === null) return // not JSON
      if (seen.has(key)) {
        const line = text.slice(0, start).split('\n').length
        const place = at.slice(0, -1).reduce<string>((p, k) => (typeof k === 'number' ? `${p}[${k}]` : p === '' ? k : `${p}.${k}`), '')
        throw new ToolGateError('E_CONFIG', `${where}: line ${line}: duplicate key ${JSON.stringify(key)}${place === '' ? '' : ` in \`${place}\``} (a reader keeps one of the two silently); write it once`)
      }
      seen.add(key)
      at[at.length - 1] = key
    } else if (c === 0x7b) {
      keys.push(new Set())
      at.push('')
      expectKey = true
    } else if (c === 0x5b) {
      keys.push(null)
      at.push(0)
    } else if (c === 0x7d || c === 0x5d) {
      keys.pop()
      at.pop()
      expectKey = false
    } else if (c === 0x2c) {
      const top = keys.length - 1
      if (top < 0) return
      if (keys[top] !== null) expectKey = true
      else at[top] = (at[top] as number) + 1
    }
  }
}

/**
 * Parses YAML text with its alias expansion bounded: before any value is built, the size the
 * document would have as JSON (each alias counted as a full copy of what it names) is measured,
 * in time linear in the document, and a document over `maxBytes` is refused; the yaml package's
 * own alias count bound (100) holds too. In the same pass (see {@link yamlNodeProblem}): a key
 * written twice in one mapping (a Set per mapping, linear; the yaml package's own check compares
 * each key with every earlier one), a key that is not a string, a tag beyond `!!str`, `!!map` and
 * `!!seq`, a plain scalar YAML 1.1 and 1.2 read differently, a number JSON or Python would read
 * otherwise, and aliases that name a node containing them are refused; so are the parser's
 * warnings and characters YAML 1.1 does not allow. `E_CONFIG` naming `where` (and the line).
 */
export function parseYamlBounded(raw: string, maxBytes: number, where: string): unknown {
  const bad = YAML_NON_PRINTABLE.exec(raw)
  if (bad !== null) {
    const cp = bad[0].codePointAt(0) ?? 0
    throw new ToolGateError('E_CONFIG', `${where}: line ${raw.slice(0, bad.index).split('\n').length}: character U+${cp.toString(16).toUpperCase().padStart(4, '0')} is not allowed in YAML (escape it inside a double-quoted string)`)
  }
  let doc: Document
  const lines = new LineCounter()
  try {
    doc = parseDocument(raw, { uniqueKeys: false, prettyErrors: true, lineCounter: lines })
  } catch (err) {
    throw new ToolGateError('E_CONFIG', `${where}: ${(err as Error).message}`, { cause: err })
  }
  if (doc.errors.length > 0) throw new ToolGateError('E_CONFIG', `${where}: ${doc.errors[0].message}`)
  if (doc.warnings.length > 0) throw new ToolGateError('E_CONFIG', `${where}: ${doc.warnings[0].message}`)
  try {
    checkedSize(doc, maxBytes, lines)
    // and by count, as the yaml package bounds it (its count weighs nested aliases)
    return doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT })
  } catch (err) {
    if (err instanceof ToolGateError) throw new ToolGateError('E_CONFIG', `${where}: ${err.message}`)
    const deep = err instanceof RangeError && /call stack/i.test(err.message)
    throw new ToolGateError('E_CONFIG', `${where}: ${deep ? 'nested too deeply' : (err as Error).message}`, { cause: err })
  }
}

/** Characters YAML 1.1 (PyYAML) refuses anywhere in a stream; the yaml package takes some of them. */
const YAML_NON_PRINTABLE = /[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/u

const STR_TAG = 'tag:yaml.org,2002:str'
const MAP_TAG = 'tag:yaml.org,2002:map'
const SEQ_TAG = 'tag:yaml.org,2002:seq'

// Plain (unquoted, untagged) scalars. Read alike by YAML 1.2's core schema and YAML 1.1
// (PyYAML's resolvers): these four forms. Kept in step with python/toolgate/_config.py.
const PLAIN_NULL = /^(?:~|null|Null|NULL|)$/
const PLAIN_BOOL = /^(?:true|True|TRUE|false|False|FALSE)$/
const PLAIN_INT = /^[-+]?(?:0|[1-9][0-9]*)$/
const PLAIN_FLOAT = /^[-+]?(?:0|[1-9][0-9]*)\.[0-9]*(?:[eE][-+][0-9]+)?$/
/**
 * Any other plain scalar either version reads as something other than a string: YAML 1.1's
 * booleans (yes/no/on/off; PyYAML, like YAML 1.2, reads y and n as strings), octal (0755, 0o17), hex, binary, `_` digit separators,
 * sexagesimal (1:30), timestamps, merge (`<<`) and value (`=`) keys, .inf/.nan, floats without
 * a sign on the exponent or digits before the point, and YAML 1.2's core numbers and nulls.
 */
const PLAIN_SPECIAL = new RegExp(
  [
    '^(?:yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF)$',
    '^[-+]?(?:0b[0-1_]+|0o?[0-7_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\\.[0-9_]*)?)$',
    '^[-+]?(?:[0-9][0-9_]*(?:\\.[0-9_]*)?|\\.[0-9_]+)(?:[eE][-+]?[0-9]+)?$',
    '^[-+]?\\.(?:inf|Inf|INF|nan|NaN|NAN)$',
    '^[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:(?:[Tt]|[ \\t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\\.[0-9]*)?(?:[ \\t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)?$',
    '^(?:<<|=)$',
  ].join('|'),
)

/** The largest integer both JavaScript and the core read exactly from a YAML number. */
const MAX_EXACT = Number.MAX_SAFE_INTEGER

/**
 * What is wrong with a plain scalar's text for a config that must mean one thing to every
 * reader (undefined: nothing). The same rules as `_plain_scalar` in python/toolgate/_config.py.
 */
export function plainScalarProblem(s: string): string | undefined {
  if (PLAIN_NULL.test(s) || PLAIN_BOOL.test(s)) return undefined
  if (PLAIN_INT.test(s)) return Math.abs(Number(s)) > MAX_EXACT ? `the integer ${s} is past 2^53-1, where readers round it differently; quote it (or write it in a JSON config)` : undefined
  if (PLAIN_FLOAT.test(s)) return Number.isFinite(Number(s)) ? undefined : `the number ${s} is not finite (JSON has no such number)`
  if (PLAIN_SPECIAL.test(s)) {
    const what = /^[0-9]{4}-/.test(s) ? 'a date or time' : /^[-+]?[.0-9]/.test(s) ? 'a number' : s === '<<' ? 'a merge key' : 'a boolean or special value'
    const fix = what === 'a number' ? ', or write the number in decimal without a leading zero or _' : s === '<<' ? ', or write the merged keys out' : ''
    return `${JSON.stringify(s)} is ${what} to one YAML version and not to another (YAML 1.1 and 1.2 read it differently): quote it ("${s}") for the string${fix}`
  }
  return undefined
}

/** The line of `node`'s start (1-based), for messages. */
function lineOf(node: unknown, lines: LineCounter): number {
  const range = (node as { range?: [number, number, number] } | null)?.range
  return range === undefined ? 0 : lines.linePos(range[0]).line
}

/**
 * The size `doc` would have as JSON text, aliases expanded (throws once it passes `max`), each
 * node checked once on the way (see {@link parseYamlBounded}).
 */
function checkedSize(doc: Document, max: number, lines: LineCounter): number {
  const sizes = new Map<unknown, number>()
  const open = new Set<unknown>()
  const over = () => new ToolGateError('E_CONFIG', `its aliases expand it past ${max} bytes (the limit of a config); write the repeated parts out, or raise TOOLGATE_MAX_CONFIG_BYTES`)
  const refuse = (node: unknown, why: string) => new ToolGateError('E_CONFIG', `line ${lineOf(node, lines)}: ${why}`)
  const keyOf = (key: unknown, owner: unknown): string => {
    const k = isAlias(key) ? key.resolve(doc) : key
    if (isScalar(k) && typeof k.value === 'string') return k.value
    throw refuse(key ?? owner, `a key must be a string (quote it: a YAML key such as 1, true or null is a different key to each reader)`)
  }
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
      if (node.tag !== undefined && node.tag !== STR_TAG) throw refuse(node, `the tag ${node.tag} is not allowed (a config holds JSON values: only !!str, !!map and !!seq)`)
      if (node.tag === undefined && node.type === Scalar.PLAIN) {
        const problem = plainScalarProblem(String(node.source))
        if (problem !== undefined) throw refuse(node, problem)
      }
      if (!(v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)))) {
        throw refuse(node, `${Object.prototype.toString.call(v)} is not a JSON value`)
      }
      n = typeof v === 'string' ? v.length + 2 : (JSON.stringify(v) ?? 'null').length
    } else if (isMap(node) || isSeq(node)) {
      const want = isMap(node) ? MAP_TAG : SEQ_TAG
      if (node.tag !== undefined && node.tag !== want) throw refuse(node, `the tag ${node.tag} is not allowed (a config holds JSON values: only !!str, !!map and !!seq)`)
      const seen = isMap(node) ? new Set<string>() : undefined
      n = 2
      for (const item of node.items as unknown[]) {
        if (isPair(item)) {
          const key = keyOf(item.key, node)
          if (seen !== undefined) {
            if (seen.has(key)) throw refuse(item.key ?? node, `duplicate key ${JSON.stringify(key)} (a reader keeps one of the two silently); write it once`)
            seen.add(key)
          }
          n += 1 + size(item.key) + 1 + size(item.value)
        } else {
          n += 1 + size(item)
        }
        if (n > max) throw over()
      }
    } else {
      throw refuse(node, 'not a JSON value')
    }
    open.delete(node)
    if (n > max) throw over()
    sizes.set(node, n)
    return n
  }
  return size(doc.contents as Node | null)
}
