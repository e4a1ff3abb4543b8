// `toolgate audit verify`, the logic (docs/audit.md): a decision log is read as bytes, one line at
// a time (never the whole file; lines bounded), and every line is checked — a JSON object with
// `v: 1`, the first line an `open` or `rotate` record, and every later line's `prev` the link of
// the exact line before it: its SHA-256, or, in a keyed chain (an `open` record with
// `"chain": "hmac-sha256"`), its HMAC-SHA-256 under the chain key, which the verifier must be
// given. The first line that breaks the chain is diagnosed (changed, removed, inserted or
// reordered) from the lines around it. A torn last line (no newline: a crash mid-write, or an
// edit) fails unless the caller allows it. No printing here: the CLI renders the report.
import { chainKeyId, KEYED_CHAIN, lineHash, lineMac, provenSeal, sealIn } from './chain'
import { MAX_LINE_BYTES, readLines, type RawLine } from './lines'


/** What kind of break the first failing line is. */
export type BreakKind =
  /** Not UTF-8, empty, not JSON, not an object, or without a `prev` member. */
  | 'malformed'
  /** `v` is not 1. */
  | 'version'
  /** The file does not start with an `open`/`rotate` record, or its `open` continues a chain nothing precedes. */
  | 'start'
  /** This line's content was changed. */
  | 'changed'
  /** One or more lines before this one were removed. */
  | 'removed'
  /** This line and the ones after it until the chain resumes do not belong here (inserted or moved here). */
  | 'inserted'
  /** This line is out of order: it belongs after a later line. */
  | 'reordered'
  /** The chain breaks here; the lines around it do not tell whether a line was changed or removed. */
  | 'changed_or_removed'
  /** A later file does not continue the file before it. */
  | 'files'
  /** The last line has no newline: a write cut short by a crash, or an edit (accepted only with `allowTornTail`). */
  | 'torn'
  /** A keyed chain that cannot be checked: no key given, another key, or an unkeyed part where the key is required. */
  | 'key'
  /** A keyed line a gate opening the log could not prove (its `open` record says `unprovenTail`): changed before the gate opened the file, or written before lines carried a mac (accepted only with `allowUnprovenTail`). */
  | 'unproven'

/** The first line that breaks the log. */
export interface ChainBreak {
  kind: BreakKind
  /** The file (as given). */
  file: string
  /** The line (1-based, in `file`) that is changed, missing before, inserted, or out of order. */
  line: number
  /** The line whose check failed (its `prev`, its JSON …); often `line` itself, `line + 1` for a changed line. */
  failedAt: number
  expected: string
  found: string
  /** A short explanation for people. */
  hint: string
}

/** One file's share of the log. */
export interface FileSummary {
  path: string
  /** Whole lines verified in this file. */
  lines: number
  bytes: number
  /** A torn last line: its line number and length in bytes (not verified, not counted). */
  torn?: { line: number; bytes: number }
}

/** What the verified lines hold (up to the first break, if any). */
export interface VerifySummary {
  /** Whole lines verified, all files. */
  lines: number
  /** Records by `type` (`open`, `rotate`, `decision`, `turn_error`). */
  types: Record<string, number>
  /** Decision records by `outcome`. */
  outcomes: Record<string, number>
  /** Decision records by `reason` (refusals and confirmations). */
  reasons: Record<string, number>
  /** Decision records let through by shadow mode (`shadow: true`). */
  shadow: number
  /** Confirmation steps (`step: "confirm"`) among the decisions. */
  confirmSteps: number
  /** Earliest and latest `time` of any record. */
  firstTime?: string
  lastTime?: string
  /** Every `configHash` seen, in order of first appearance, with its record count. */
  configHashes: { hash: string; records: number }[]
  /** `open` records: gates that opened the file (each a process start or a new gate). */
  opens: number
  /** `rotate` records: size rotations continued in these files. */
  rotations: number
  /** Bytes of torn lines the gate cut off when it reopened the file (`tornBytesRemoved` of `open` records). */
  tornBytesRemoved: number
  /** The hash of the last verified line: the `prev` the next line must carry. Keep it elsewhere to detect lines removed from the end. */
  head?: string
  /** The first file starts with a `rotate` record: the hash of the earlier file's last line (not checked unless that file is given first). */
  continuesFrom?: string
}

/** The verdict on a log. */
export interface VerifyReport {
  /** Whether every line checked out (a torn last line only with `allowTornTail`, then as a warning). */
  ok: boolean
  /** Whether the chain was checked with the chain key (HMAC-SHA-256 links). */
  keyed: boolean
  files: FileSummary[]
  /** The first broken line, when `ok` is false. */
  break?: ChainBreak
  warnings: string[]
  summary: VerifySummary
}

/** Lines remembered behind the current one, and read ahead past a break, to diagnose it. */
const WINDOW = 4096

type Rec = Record<string, unknown>

/**
 * The kind of a part of the chain (from one `open`/`rotate` record to the next): `plain` (SHA-256
 * links), `hmac` (keyed, each `prev` the HMAC of the whole line before: logs written before lines
 * carried their own `mac`), or `sealed` (keyed, each line ends in its own `mac` and the next
 * line's `prev` is that `mac`).
 */
type Part = 'plain' | 'hmac' | 'sealed'

interface Seen {
  line: number
  file: string
  /** SHA-256 of the line. */
  hash: string
  /** HMAC-SHA-256 of the line under the key, when a key was given. */
  mac: string | undefined
  /** The line's own `mac` member (checked when the line is in a sealed part). */
  seal: string | undefined
  part: Part
  rec: Rec | undefined
}

/** Options of {@link verifyFiles} and {@link ChainVerifier}. */
export interface VerifyOptions {
  /** The chain key (`audit.chainKeyEnv` / `chainKeyFile`): needed to check a keyed log, and then every part of it after the first keyed `open` must be keyed. */
  key?: Buffer
  /** Accept a torn last line (no newline) with a warning instead of failing. */
  allowTornTail?: boolean
  /** Accept, with a warning, a keyed line that a gate opening the log could not prove (an `open` record with `unprovenTail`), instead of failing. */
  allowUnprovenTail?: boolean
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

function short(text: string, max = 80): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`
}

function show(v: unknown): string {
  return v === undefined ? '(none)' : JSON.stringify(v)
}

/** `prefix-seq` of a decision id, when the record has one. */
function idParts(rec: Rec | undefined): { prefix: string; seq: number } | undefined {
  const id = rec?.id
  if (typeof id !== 'string') return undefined
  const dash = id.lastIndexOf('-')
  const seq = Number(id.slice(dash + 1))
  return dash < 0 || !Number.isSafeInteger(seq) ? undefined : { prefix: id.slice(0, dash), seq }
}

function bump(m: Record<string, number>, key: string): void {
  m[key] = (m[key] ?? 0) + 1
}

/** A chain break waiting for lines read ahead to diagnose it. */
interface Pending {
  file: string
  line: number
  found: string
  expected: string
  hash: string
  mac: string | undefined
  seal: string | undefined
  rec: Rec
  before: Seen
  /** Whether the line after it links to it (undefined: not read yet). */
  nextLinks?: boolean
  ahead: number
}

/**
 * Verifies a log given as one or more files in chain order (`audit.jsonl.1 audit.jsonl.2
 * audit.jsonl`): later files must continue the earlier ones. Reads every file line by line.
 * Throws only when a file cannot be read (the error names it).
 */
export function verifyFiles(paths: string[], options: VerifyOptions = {}): VerifyReport {
  const v = new ChainVerifier(options)
  for (const path of paths) {
    v.startFile(path)
    for (const l of readLines(path)) {
      if (!v.push(l)) break
    }
    if (v.done) break
  }
  return v.finish()
}

/** The incremental checker behind {@link verifyFiles}: feed it files' lines in order. */
export class ChainVerifier {
  readonly #files: FileSummary[] = []
  readonly #warnings: string[] = []
  readonly #summary: VerifySummary = {
    lines: 0, types: {}, outcomes: {}, reasons: {}, shadow: 0, confirmSteps: 0,
    configHashes: [], opens: 0, rotations: 0, tornBytesRemoved: 0,
  }
  readonly #configs = new Map<string, { hash: string; records: number }>()
  #file: FileSummary | undefined
  #line = 0
  /** The last whole line verified (across files). */
  #last: Seen | undefined
  /** Recent lines by hash (for a break whose `prev` names an earlier line). */
  readonly #recent = new Map<string, number>()
  readonly #order: string[] = []
  #pending: Pending | undefined
  #break: ChainBreak | undefined
  #firstMs = Infinity
  #crlf = false
  #lastMs = -Infinity
  readonly #key: Buffer | undefined
  readonly #keyId: string | undefined
  readonly #allowTorn: boolean
  /** The kind of the current part of the chain (since the last `open`/`rotate`). */
  #part: Part = 'plain'
  /** The line where the first sealed part began (0: none yet). */
  #firstSealed = 0
  readonly #allowUnproven: boolean
  /** The line where the first keyed part began (0: none yet). */
  #firstKeyed = 0

  constructor(options: VerifyOptions = {}) {
    this.#key = options.key
    this.#keyId = options.key === undefined ? undefined : chainKeyId(options.key)
    this.#allowTorn = options.allowTornTail === true
    this.#allowUnproven = options.allowUnprovenTail === true
  }

  /** Whether verification has stopped (a break is diagnosed). */
  get done(): boolean {
    return this.#break !== undefined
  }

  /** Starts the next file of the log. */
  startFile(path: string): void {
    this.#settle()
    this.#file = { path, lines: 0, bytes: 0 }
    this.#files.push(this.#file)
    this.#line = 0
  }

  /** Takes the next line of the current file; `false` once verification has stopped. */
  push(raw: RawLine): boolean {
    if (this.#break !== undefined) return false
    const file = this.#file!
    this.#line++
    const line = this.#line
    if (!raw.terminated) {
      if (this.#pending === undefined) {
        const bytes = raw.overlong ?? raw.bytes.length
        file.torn = { line, bytes }
        if (!this.#allowTorn) {
          this.#break = {
            kind: 'torn', file: file.path, line, failedAt: line, expected: 'a line ending in a newline', found: `${bytes} bytes without a newline`,
            hint: `the last line is torn: a write cut short by a crash, or an edit. --allow-torn-tail accepts the log up to its last whole line (${line - 1}); the gate cuts a torn line off when it next opens the file`,
          }
          return false
        }
        this.#warnings.push(
          `${file.path}: line ${line} is torn (${bytes} bytes without a newline): a write was cut short, as by a crash, or the line was edited. ` +
            `Accepted up to its last whole line (${line - 1}) as --allow-torn-tail asks; the gate cuts the torn line off when it next opens the file.`,
        )
      }
      return true
    }
    if (this.#pending !== undefined) return this.#ahead(raw.bytes, line)

    const fail = (kind: BreakKind, expected: string, found: string, hint: string, at = line): false => {
      this.#break = { kind, file: file.path, line: at, failedAt: line, expected, found, hint }
      return false
    }
    if (raw.overlong !== undefined) {
      return fail('malformed', `a line of at most ${MAX_LINE_BYTES} bytes`, `a line of ${raw.overlong} bytes`, 'the line was changed or inserted (a gate writes far shorter records)')
    }
    let text: string
    try {
      text = utf8.decode(raw.bytes)
    } catch {
      return fail('malformed', 'UTF-8 text', `${raw.bytes.length} bytes that are not UTF-8`, 'the line was changed (or the file is not a toolgate log)')
    }
    if (text === '') return fail('malformed', 'a JSON record', 'an empty line', 'a line was changed or inserted')
    let rec: unknown
    try {
      rec = JSON.parse(text)
    } catch (err) {
      const crlf = text.endsWith('\r') ? ' (it ends in \\r: the file was converted to CRLF line endings)' : ''
      return fail('malformed', 'a JSON object', `${short(JSON.stringify(text))} — ${(err as Error).message}`, `the line was changed${crlf}`)
    }
    if (rec === null || typeof rec !== 'object' || Array.isArray(rec)) {
      return fail('malformed', 'a JSON object', short(text), 'the line was changed')
    }
    const r = rec as Rec
    if (r.v !== 1) return fail('version', '"v": 1', `"v": ${show(r.v)}`, r.v === undefined ? 'not a toolgate audit record' : 'a format version this toolgate does not know')
    if (!('prev' in r) || (r.prev !== null && typeof r.prev !== 'string')) {
      return fail('malformed', '"prev": the hash of the line before (or null)', `"prev": ${show(r.prev)}`, 'the line was changed')
    }
    const prev = r.prev as string | null
    const hash = lineHash(raw.bytes)
    const mac = this.#key === undefined ? undefined : lineMac(this.#key, raw.bytes)
    const seal = sealIn(raw.bytes)
    // the part of the chain this line belongs to: an open/rotate record starts one (keyed when it
    // says so; sealed when it carries its own `mac`); any other line continues the current one
    const starts = r.type === 'open' || r.type === 'rotate'
    if (starts && r.chain !== undefined && r.chain !== KEYED_CHAIN) {
      return fail('malformed', `"chain": "${KEYED_CHAIN}" or no "chain"`, `"chain": ${show(r.chain)}`, 'a chain kind this toolgate does not know, or the line was changed')
    }
    const part: Part = starts ? (r.chain !== KEYED_CHAIN ? 'plain' : 'mac' in r ? 'sealed' : 'hmac') : this.#part
    const keyed = part !== 'plain'
    /** An open/rotate record whose writer could not prove the line before it: its `prev` is that line's SHA-256, vouched for by nobody. */
    const unproven = starts && r.unprovenTail === true
    if (keyed && this.#key === undefined) {
      return fail(
        'key', 'the chain key (--key-env VAR or --key-file FILE)', `a keyed chain (HMAC-SHA-256${typeof r.chainKeyId === 'string' ? `, key id ${r.chainKeyId}` : ''})`,
        `from line ${line} on the log is chained with a key (audit.chainKeyEnv / chainKeyFile), which a hash alone cannot check: verify cannot say whether it was forged. Pass the key`,
      )
    }
    if (keyed && starts && r.chainKeyId !== this.#keyId) {
      return fail('key', `"chainKeyId": ${show(this.#keyId)} (the id of the key given)`, `"chainKeyId": ${show(r.chainKeyId)}`, 'this part of the log was written with another chain key (or the line was changed): give that key')
    }
    if (!keyed && this.#key !== undefined && this.#firstKeyed > 0) {
      return fail(
        'key', 'a keyed line (every part of the log after the first keyed open record is keyed)', starts ? 'an open or rotate record without "chain"' : 'an unkeyed line',
        `line ${line} continues the log without the key after line ${this.#firstKeyed} began the keyed chain: lines re-chained by someone without the key, or a gate started without the key`,
      )
    }
    if (part === 'hmac' && this.#firstSealed > 0) {
      return fail(
        'key', 'an open or rotate record with its own "mac" (every keyed part after the first one whose lines carry a mac does too)', 'a keyed record without "mac"',
        `line ${line} begins a keyed part whose lines carry no mac of their own after line ${this.#firstSealed} began one whose lines do: written by an older toolgate, which vouched for the line before it unchecked, or forged`,
      )
    }
    /** What this line's `prev` must be, given the line before: the link its part uses. */
    const expect = (seen: Seen): string | undefined => (unproven || part === 'plain' ? seen.hash : part === 'sealed' ? seen.seal : seen.mac)
    const linkName = unproven || part === 'plain' ? 'hash' : part === 'sealed' ? 'mac' : 'HMAC'
    if (text.endsWith('\r') && !this.#crlf) {
      this.#crlf = true
      this.#warnings.push(`${file.path}: line ${line} ends in \\r (CRLF line endings?); the hashes cover every byte, so a converted file does not verify`)
    }

    if (line === 1) {
      const type = r.type
      if (type !== 'open' && type !== 'rotate') {
        return fail('start', 'an "open" or "rotate" record (every file starts with one)', `a ${show(type)} record`, 'lines were removed from the start of the file')
      }
      if (this.#last === undefined) {
        if (type === 'open' && prev !== null) {
          return fail('start', '"prev": null (an open record that starts a file begins a new chain)', `"prev": ${show(prev)}`, 'lines were removed from the start of the file (the open record continues a chain nothing precedes)')
        }
        if (type === 'rotate') {
          this.#summary.continuesFrom = prev ?? undefined
          this.#warnings.push(
            `${file.path}: line 1 is a rotate record continuing an earlier file (prev ${prev}); give the earlier files first (oldest first) to check that link too`,
          )
        }
      } else if (prev !== expect(this.#last)) {
        const before = this.#files[this.#files.length - 2]
        return fail(
          'files',
          `"prev": ${show(expect(this.#last))} (the ${linkName} of the last line of ${before.path})`,
          `"prev": ${show(prev)}`,
          `${file.path} does not continue ${before.path}: the files are out of order, or lines were removed from the end of ${before.path}`,
        )
      }
    } else if (prev !== expect(this.#last!)) {
      if (keyed && !unproven && prev === this.#last!.hash) {
        return fail(
          'key', `"prev": ${show(expect(this.#last!))} (the ${linkName} of line ${line - 1} under the key)`, `"prev": ${show(prev)} (the plain SHA-256 of line ${line - 1})`,
          `line ${line} links to line ${line - 1} with a plain hash where the chain is keyed: re-chained by someone without the key`,
        )
      }
      this.#pending = { file: file.path, line, found: String(prev), expected: String(expect(this.#last!)), hash, mac, seal, rec: r, before: this.#last!, ahead: 0 }
      const j = this.#recent.get(String(prev))
      if (j !== undefined && j < line - 1) {
        this.#pending = undefined
        const span = j + 1 === line - 1 ? `line ${j + 1} does` : `lines ${j + 1}–${line - 1} do`
        return fail(
          'inserted',
          `"prev": ${show(expect(this.#last!))} (the ${linkName} of line ${line - 1})`,
          `"prev": ${show(prev)} (the hash of line ${j})`,
          `line ${line} continues line ${j}, so ${span} not belong between them: inserted, or moved here (changed, removed or reordered)`,
          j + 1,
        )
      }
      return true
    }
    if (part === 'sealed') {
      // the line's own mac: every line of a sealed part, the last one too, is proven by the key
      if (seal === undefined) {
        return fail(
          'changed', `a "mac" member last: the HMAC of line ${line}'s content under the key`, `"mac": ${show(r.mac)}`,
          `line ${line} carries no mac where the keyed chain requires one: it was changed, or not written by a gate holding the key`,
        )
      }
      if (provenSeal(this.#key!, raw.bytes) === undefined) {
        return fail(
          'changed', `"mac": the HMAC of line ${line}'s content under the key`, `"mac": ${show(seal)}, which is not`,
          `line ${line} was changed: its mac is not the HMAC of its content under the key (it was changed, or written without this key)`,
        )
      }
    }
    if (unproven && this.#last !== undefined && this.#last.part !== 'plain') {
      // the writer found the line before it with no mac it could check: it never vouched for that line
      const at = this.#last.file === file.path ? this.#last.line : line
      const why = this.#last.part === 'hmac'
        ? 'it carries no mac of its own (written before toolgate recorded one per line), so nothing proves it was not changed before this gate opened the file'
        : 'its mac did not prove it under the key when this gate opened the file: it was changed (or written with another key) before then'
      if (!this.#allowUnproven) {
        return fail(
          'unproven', `a line the gate that opened the file at line ${line} could prove (its mac under the key)`, `${this.#last.file === file.path ? `line ${at}` : `the last line of ${this.#last.file}`}, unproven`,
          `line ${line} opened the log without vouching for ${this.#last.file === file.path ? `line ${at}` : 'the line before it'}: ${why}. --allow-unproven-tail accepts it with a warning`,
          at,
        )
      }
      this.#warnings.push(
        `${file.path}: line ${line} opened the log over an unproven last line (${this.#last.file === file.path ? `line ${at}` : `the last line of ${this.#last.file}`}): ${why}. Accepted as --allow-unproven-tail asks; its content is not authenticated by the key.`,
      )
    }
    if (starts) {
      this.#part = part
      if (keyed && this.#firstKeyed === 0) {
        this.#firstKeyed = line
        if (this.#summary.lines > 0) {
          this.#warnings.push(`${file.path}: lines before line ${line} are not keyed (written before the chain key was set); the keyed link of line ${line} fixes them as they were then, but nothing proves who wrote them`)
        }
      }
      if (part === 'sealed' && this.#firstSealed === 0) this.#firstSealed = line
    }
    this.#accept({ line, file: file.path, hash, mac, seal, part, rec: r }, raw.bytes.length)
    return true
  }

  /** Reads a line past a break, looking for the line the broken one names as its `prev`. */
  #ahead(bytes: Buffer, line: number): boolean {
    const p = this.#pending!
    const hash = lineHash(bytes)
    const mac = this.#key === undefined ? undefined : lineMac(this.#key, bytes)
    const seal = sealIn(bytes)
    if (p.nextLinks === undefined) {
      let prev: unknown
      try {
        prev = (JSON.parse(bytes.toString('utf8')) as Rec).prev
      } catch {
        prev = undefined
      }
      p.nextLinks = prev === p.hash || (p.mac !== undefined && prev === p.mac) || (p.seal !== undefined && prev === p.seal)
    }
    if (hash === p.found || (mac !== undefined && mac === p.found) || (seal !== undefined && seal === p.found)) {
      this.#pending = undefined
      this.#break = {
        kind: 'reordered',
        file: p.file,
        line: p.line,
        failedAt: p.line,
        expected: `"prev": ${show(p.expected)} (the hash of line ${p.line - 1})`,
        found: `"prev": ${show(p.found)} (the hash of line ${line})`,
        hint: line === p.line + 1 ? `lines ${p.line} and ${line} are in the wrong order (reordered)` : `line ${p.line} belongs after line ${line} (reordered)`,
      }
      return false
    }
    p.ahead++
    if (p.ahead >= WINDOW) this.#settle()
    return this.#break === undefined
  }

  /** Diagnoses a pending break from what was read ahead (called at the end of a file or of the look-ahead). */
  #settle(): void {
    const p = this.#pending
    if (p === undefined) return
    this.#pending = undefined
    const expected = `"prev": ${show(p.expected)} (the hash of line ${p.line - 1})`
    const found = `"prev": ${show(p.found)}`
    const b = { file: p.file, failedAt: p.line, expected, found }
    if (p.nextLinks === false) {
      this.#break = { ...b, kind: 'changed', line: p.line, hint: `line ${p.line} was changed: neither its link to line ${p.line - 1} nor line ${p.line + 1}'s link to it holds` }
      return
    }
    const a = idParts(p.before.rec)
    const c = idParts(p.rec)
    if (a !== undefined && c !== undefined && a.prefix === c.prefix) {
      if (c.seq === a.seq + 1) {
        this.#break = {
          ...b,
          kind: 'changed',
          line: p.line - 1,
          hint: `line ${p.line - 1} was changed: line ${p.line}'s prev is not its hash, and their decision ids (${p.before.rec!.id}, ${p.rec.id}) are consecutive, so nothing between them is missing`,
        }
        return
      }
      if (c.seq > a.seq + 1) {
        const n = c.seq - a.seq - 1
        this.#break = {
          ...b,
          kind: 'removed',
          line: p.line,
          hint:
            n === 1
              ? `a line was removed before line ${p.line} (decision id ${a.prefix}-${a.seq + 1} is missing)`
              : `${n} lines were removed before line ${p.line} (decision ids ${a.prefix}-${a.seq + 1}…${a.prefix}-${c.seq - 1} are missing)`,
        }
        return
      }
    }
    if (p.before.rec?.type === 'open' && c !== undefined && c.seq > 0) {
      this.#break = { ...b, kind: 'removed', line: p.line, hint: `lines were removed before line ${p.line} (the gate that opened the file at line ${p.line - 1} numbers its first record ${c.prefix}-0)` }
      return
    }
    this.#break = { ...b, kind: 'changed_or_removed', line: p.line, hint: `line ${p.line - 1} was changed, or lines between lines ${p.line - 1} and ${p.line} were removed` }
  }

  #accept(seen: Seen, bytes: number): void {
    const { line, hash, mac, seal, part } = seen
    const r = seen.rec!
    const file = this.#file!
    file.lines++
    file.bytes += bytes + 1
    const s = this.#summary
    s.lines++
    const type = typeof r.type === 'string' ? r.type : '(none)'
    bump(s.types, type)
    if (type === 'decision') {
      if (typeof r.outcome === 'string') bump(s.outcomes, r.outcome)
      if (typeof r.reason === 'string') bump(s.reasons, r.reason)
      if (r.shadow === true) s.shadow++
      if (r.step === 'confirm') s.confirmSteps++
    } else if (type === 'open') {
      s.opens++
      if (typeof r.tornBytesRemoved === 'number') s.tornBytesRemoved += r.tornBytesRemoved
    } else if (type === 'rotate') {
      s.rotations++
    }
    if (typeof r.time === 'string') {
      const ms = Date.parse(r.time)
      if (ms < this.#firstMs) {
        this.#firstMs = ms
        s.firstTime = r.time
      }
      if (ms > this.#lastMs) {
        this.#lastMs = ms
        s.lastTime = r.time
      }
    }
    if (typeof r.configHash === 'string') {
      let c = this.#configs.get(r.configHash)
      if (c === undefined) {
        c = { hash: r.configHash, records: 0 }
        this.#configs.set(r.configHash, c)
        s.configHashes.push(c)
      }
      c.records++
    }
    s.head = part === 'sealed' ? seal : part === 'hmac' ? mac : hash
    this.#last = seen
    for (const link of [hash, mac, seal]) {
      if (link === undefined) continue
      this.#recent.set(link, line)
      this.#order.push(link)
    }
    while (this.#order.length > 3 * WINDOW) this.#recent.delete(this.#order.shift()!)
  }

  /** The report (diagnosing a break still pending). */
  finish(): VerifyReport {
    this.#settle()
    if (this.#break === undefined && this.#summary.lines === 0) {
      const path = this.#files[0]?.path ?? '(no file)'
      this.#break = { kind: 'start', file: path, line: 1, failedAt: 1, expected: 'an "open" record', found: 'no whole line', hint: 'the log is empty: every log starts with the open record its gate writes' }
    }
    if (this.#break === undefined && this.#key !== undefined && this.#firstKeyed === 0) {
      const f = this.#files[this.#files.length - 1]
      this.#break = {
        kind: 'key', file: f?.path ?? '(no file)', line: 1, failedAt: 1, expected: 'a keyed chain (an open record with "chain": "hmac-sha256")', found: 'no keyed line',
        hint: 'a chain key was given but no part of the log is keyed: it was written without audit.chainKeyEnv / chainKeyFile, or re-chained by someone without the key',
      }
    }
    const report: VerifyReport = { ok: this.#break === undefined, keyed: this.#key !== undefined && this.#firstKeyed > 0, files: this.#files, warnings: this.#warnings, summary: this.#summary }
    if (this.#break !== undefined) report.break = this.#break
    return report
  }
}
