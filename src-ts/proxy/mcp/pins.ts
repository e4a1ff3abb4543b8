// Tool-definition pinning for the MCP proxy: the first definition a server lists for a tool is
// approved (trust on first use); a later, different definition of that tool is not, until an
// operator accepts it. A definition is the tool's name, title, description, inputSchema,
// outputSchema and annotations as canonical JSON (object keys sorted), hashed with SHA-256 —
// whole and field by field, so a change can be named ("description", "inputSchema" …).
// One store may serve many proxies (the Streamable HTTP listener runs one per session).
import { isObj } from '../../json-object'
import { createHash } from 'node:crypto'
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { dirname, basename, join } from 'node:path'

import { canonicalJson } from '../../canonical-json'
import { ToolGateError } from '../../errors'

/** The parts of a tool definition that are pinned, in the order changes are reported. */
export const PINNED_FIELDS = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations'] as const
/** One of {@link PINNED_FIELDS}. */
export type PinnedField = (typeof PINNED_FIELDS)[number]

/** Most tools one store pins; further new tools are not approved (so calls to them are refused). */
export const MAX_PINS = 10_000
/** Largest pins file read at start, in bytes. */
export const MAX_PINS_FILE_BYTES = 16 * 1024 * 1024
/** A tool definition reduced to hashes: the whole and each present field (hex SHA-256). */
export interface ToolFingerprint {
  name: string
  sha256: string
  fields: Partial<Record<PinnedField, string>>
}

/**
 * The fingerprint of one entry of a `tools/list` result; `undefined` for an entry without a
 * string `name`. A definition too deeply nested to hash gets an empty hash, which never
 * matches a pin (so it is never approved).
 */
export function fingerprint(tool: unknown): ToolFingerprint | undefined {
  if (typeof tool !== 'object' || tool === null || Array.isArray(tool)) return undefined
  const t = tool as Record<string, unknown>
  if (typeof t.name !== 'string') return undefined
  const fields: ToolFingerprint['fields'] = {}
  const whole: Record<string, unknown> = {}
  try {
    for (const f of PINNED_FIELDS) {
      if (t[f] === undefined) continue
      whole[f] = t[f]
      fields[f] = sha256(canonicalJson(t[f], 0))
    }
    return { name: t.name, sha256: sha256(canonicalJson(whole, 0)), fields }
  } catch {
    return { name: t.name, sha256: '', fields: {} }
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex')
}

/** What {@link ToolPins.observe} found for one listed tool. */
export interface PinChange {
  tool: string
  /** `new`: pinned now; `accepted`: changed, and the change was accepted and pinned; `changed`: changed and refused until accepted; `unpinned`: the store is full, so not approved. */
  status: 'new' | 'accepted' | 'changed' | 'unpinned'
  /** The fields that differ from the pin (`accepted` and `changed`). */
  fields: PinnedField[]
}

/** Options of {@link ToolPins}. */
export interface ToolPinsOptions {
  /** Keep pins in this file (JSON), read now and rewritten atomically on every change. */
  file?: string
  /** Changed definitions that are accepted and pinned anew: `true` for every tool, or tool names. Default: none. */
  accept?: boolean | readonly string[]
}

/** The pins file: `{ "version": 1, "tools": { name: { sha256, fields } } }`. */
interface PinsFile {
  version: 1
  tools: Record<string, { sha256: string; fields: ToolFingerprint['fields'] }>
}

/**
 * The approved definition of every tool seen, by name. A tool's first definition is pinned;
 * {@link check} answers which fields of a later definition differ from the pin (a call to that
 * tool must then be refused). With `accept`, changes to the named tools (or all) are pinned
 * anew instead. With `file`, pins survive restarts (a server cannot swap a tool between runs):
 * the file is read by the constructor (a missing file is created, an unreadable or corrupt one
 * is `ToolGateError` `E_CONFIG` naming it) and rewritten atomically (temp file + rename) after
 * every change. Safe to share between proxies in one process.
 */
export class ToolPins {
  readonly #pins = new Map<string, { sha256: string; fields: ToolFingerprint['fields'] }>()
  readonly #file: string | undefined
  readonly #acceptAll: boolean
  readonly #accept: ReadonlySet<string>

  constructor(opts: ToolPinsOptions = {}) {
    this.#file = opts.file
    this.#acceptAll = opts.accept === true
    this.#accept = new Set(Array.isArray(opts.accept) ? opts.accept : [])
    if (this.#file === undefined) return
    if (existsSync(this.#file)) this.#read(this.#file)
    else this.#write() // fail now, not after the first listing, when the file cannot be written
  }

  /** The pins file, if any. */
  get file(): string | undefined {
    return this.#file
  }

  /** How many tools are pinned. */
  get size(): number {
    return this.#pins.size
  }

  /** Whether a changed definition of `tool` is accepted (pinned anew). */
  accepts(tool: string): boolean {
    return this.#acceptAll || this.#accept.has(tool)
  }

  /**
   * Records the definitions of one `tools/list` answer: new tools are pinned, accepted changes
   * pinned anew. Answers what happened to each tool that was not already pinned as it is
   * (pinned, unchanged tools are left out). The file is rewritten once if anything was pinned;
   * when that fails, the pins still hold in memory and `writeError` says why. Never throws.
   */
  observe(prints: readonly ToolFingerprint[]): { changes: PinChange[]; writeError?: ToolGateError } {
    const out: PinChange[] = []
    let dirty = false
    for (const fp of prints) {
      const pin = this.#pins.get(fp.name)
      if (pin?.sha256 === fp.sha256 && fp.sha256 !== '') continue
      if (fp.sha256 === '') {
        out.push({ tool: fp.name, status: 'unpinned', fields: [] })
        continue
      }
      if (pin === undefined) {
        if (this.#pins.size >= MAX_PINS) {
          out.push({ tool: fp.name, status: 'unpinned', fields: [] })
          continue
        }
        this.#pins.set(fp.name, { sha256: fp.sha256, fields: fp.fields })
        dirty = true
        out.push({ tool: fp.name, status: 'new', fields: [] })
        continue
      }
      const fields = diff(pin.fields, fp.fields)
      if (this.accepts(fp.name)) {
        this.#pins.set(fp.name, { sha256: fp.sha256, fields: fp.fields })
        dirty = true
        out.push({ tool: fp.name, status: 'accepted', fields })
      } else {
        out.push({ tool: fp.name, status: 'changed', fields })
      }
    }
    if (dirty && this.#file !== undefined) {
      try {
        this.#write()
      } catch (err) {
        return { changes: out, writeError: err as ToolGateError }
      }
    }
    return { changes: out }
  }

  /**
   * Whether a call to the tool of definition `fp` may go ahead: `undefined` when `fp` is the
   * pinned definition, else the fields that differ (`[]` when the tool was never pinned, or
   * its definition could not be hashed).
   */
  check(fp: ToolFingerprint): PinnedField[] | undefined {
    const pin = this.#pins.get(fp.name)
    if (pin !== undefined && fp.sha256 !== '' && pin.sha256 === fp.sha256) return undefined
    return pin === undefined ? [] : diff(pin.fields, fp.fields)
  }

  #read(file: string): void {
    const bad = (why: string) => new ToolGateError('E_CONFIG', `pins file ${file}: ${why} (delete it to pin every tool afresh, after checking the server)`)
    let data: unknown
    try {
      const size = statSync(file).size
      if (size > MAX_PINS_FILE_BYTES) throw bad(`${size} bytes, over the ${MAX_PINS_FILE_BYTES}-byte limit`)
      data = JSON.parse(readFileSync(file, 'utf8'))
    } catch (err) {
      if (err instanceof ToolGateError) throw err
      throw bad(`cannot be read as JSON (${(err as Error).message})`)
    }
    if (!isObj(data) || data.version !== 1 || !isObj(data.tools)) throw bad('expected {"version": 1, "tools": {…}}')
    const hex = (v: unknown) => typeof v === 'string' && /^[0-9a-f]{64}$/.test(v)
    for (const [name, pin] of Object.entries(data.tools)) {
      if (!isObj(pin) || !hex(pin.sha256) || !isObj(pin.fields)) throw bad(`tool \`${name}\`: expected {"sha256": <hex>, "fields": {…}}`)
      const fields: ToolFingerprint['fields'] = {}
      for (const [f, h] of Object.entries(pin.fields)) {
        if (!(PINNED_FIELDS as readonly string[]).includes(f) || !hex(h)) throw bad(`tool \`${name}\`: field \`${f}\` is not a pinned field with a hex SHA-256`)
        fields[f as PinnedField] = h as string
      }
      this.#pins.set(name, { sha256: pin.sha256 as string, fields })
    }
    if (this.#pins.size > MAX_PINS) throw bad(`${this.#pins.size} tools, over the limit of ${MAX_PINS}`)
  }

  /** Writes every pin to a temp file beside the pins file, then renames it over (atomic on one file system). */
  #write(): void {
    const file = this.#file!
    const body: PinsFile = { version: 1, tools: Object.fromEntries([...this.#pins].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) }
    const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`)
    try {
      const fd = openSync(tmp, 'w', 0o600)
      try {
        writeSync(fd, `${JSON.stringify(body, null, 1)}\n`)
        fsyncSync(fd)
      } finally {
        closeSync(fd)
      }
      renameSync(tmp, file)
    } catch (err) {
      try {
        unlinkSync(tmp)
      } catch {
        // nothing to clean up
      }
      throw new ToolGateError('E_CONFIG', `pins file ${file}: cannot be written (${(err as Error).message})`, { cause: err })
    }
  }
}

/** The fields whose hashes differ (a field present on one side only counts). */
function diff(a: ToolFingerprint['fields'], b: ToolFingerprint['fields']): PinnedField[] {
  return PINNED_FIELDS.filter((f) => a[f] !== b[f])
}

