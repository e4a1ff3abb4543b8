// `toolgate audit verify`: checks a decision log's hash chain (src-ts/audit/verify.ts) and prints
// the first broken, removed or reordered line, or a summary of what the log holds.
// Exit codes: 0 the chain holds, 1 a broken line (a torn last line without --allow-torn-tail, a
// keyed log without its key), 2 usage or an unreadable file.
import { existsSync } from 'node:fs'

import { MIN_CHAIN_KEY_BYTES } from '../audit/chain'
import { verifyFiles, type VerifyReport } from '../audit/verify'
import { trimNewline } from '../config-host'
import { readRegularFile } from '../regular-file'
import { formatFlag, parseOrHelp, UsageError, usageFailure, useColor } from './args'
import { terminalJson, terminalSafe } from './escape'

const USAGE = 'toolgate audit verify FILE…   check a decision log\'s hash chain; print the first broken line'

const HELP = `toolgate audit verify — check a decision log's hash chain

Usage:
  toolgate audit verify FILE… [--key-env VAR | --key-file FILE] [--allow-torn-tail] [--allow-unproven-tail] [--format pretty|json]

Reads the JSONL log a gate writes (config "audit": { "jsonl": FILE }) line by line, as bytes,
and checks that every line is a JSON object with "v": 1, that the file starts with an "open"
(or, after a rotation, "rotate") record, and that every later line's "prev" is the SHA-256
(base64url) of the exact line before it — or, in a keyed chain (config "audit.chainKeyEnv" /
"chainKeyFile"), an HMAC-SHA-256 under the chain key: each keyed line ends in its own "mac" (the
HMAC of its content), which must hold, and the next line's "prev" is that mac. The first line
that breaks the chain is
reported with its number, what was expected and what was found, and whether the line was
changed, removed, inserted or reordered. A torn last line (no newline: a crash cut the write
short, or the line was edited) fails unless --allow-torn-tail.

A plain hash chain shows accidents and careless edits; anyone who can write the file can also
recompute every hash after a forged line. A keyed chain cannot be recomputed without the key:
give verify the key and a re-chained forgery fails, and so does a changed line anywhere, the
last one included. Without the key, verify fails on a keyed log (it cannot check it); with the
key, every part of the log after the first keyed open record must be keyed.

A gate opening a keyed log whose last line it cannot prove (its mac does not hold: it was
changed while no gate was writing; or it was written before lines carried a mac) does not vouch
for it: its open record says "unprovenTail", and verify fails at that line (unproven) unless
--allow-unproven-tail.

Rotated files: give them oldest first, then the live file, and the links between files are
checked too (toolgate audit verify audit.jsonl.1 audit.jsonl.2 audit.jsonl). Given alone, a
file that starts with a rotate record is checked from there (a warning says so).

A hash chain cannot show lines removed from the END of a log: keep the summary's "head" (the
last line's hash) somewhere else and compare it later. Format: docs/audit.md.

Flags:
  --key-env VAR      the chain key, from this environment variable (as audit.chainKeyEnv)
  --key-file FILE    the chain key, from this file (as audit.chainKeyFile; one trailing
                     newline is ignored)
  --allow-torn-tail  accept a torn last line (a crash mid-write) with a warning
  --allow-unproven-tail
                     accept, with a warning, a keyed line a gate reopening the log could not
                     prove (the last line of a log written before lines carried a mac)
  --format FORMAT    pretty (default): the verdict, warnings and a summary (lines, decisions by
                     outcome, first and last time, config hashes, opens and rotations, head)
                     json: one JSON object { ok, keyed, files, break?, warnings, summary }
  --help, -h         this text

Text from the log is shown with control characters, escape sequences and bidi marks written as
\\u001b-style escapes.

Exit codes: 0 the chain holds (warnings allowed), 1 a broken line (or a keyed log without its
key, or a torn last line), 2 usage error or a file that cannot be read (or is not a regular
file).

Examples:
  toolgate audit verify toolgate-audit.jsonl
  toolgate audit verify toolgate-audit.jsonl.1 toolgate-audit.jsonl --format json
  toolgate audit verify audit.jsonl --format json | jq .summary.head
  TOOLGATE_AUDIT_KEY=… toolgate audit verify audit.jsonl --key-env TOOLGATE_AUDIT_KEY
`

const GROUP_HELP = `toolgate audit — the decision log

Usage:
  toolgate audit verify FILE… [--key-env VAR | --key-file FILE] [--allow-torn-tail] [--allow-unproven-tail] [--format pretty|json]
                                                      check the hash chain (toolgate audit verify --help)
`

function paint(on: boolean) {
  const c = (code: number) => (s: string) => (on ? `\x1b[${code}m${s}\x1b[0m` : s)
  return { green: c(32), yellow: c(33), red: c(31), dim: c(2), bold: c(1) }
}

/** Flags that take a value. */
const VALUE_FLAGS: ReadonlySet<string> = new Set(['--format', '--key-env', '--key-file'])

/** Splits `argv` into file operands and flags (`--format`, `--key-env`, `--key-file` take a value; `--` ends the flags). */
function operands(argv: string[]): { files: string[]; flags: string[] } {
  const files: string[] = []
  const flags: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--') {
      files.push(...argv.slice(i + 1))
      break
    }
    if (a.startsWith('-') && a !== '-') {
      flags.push(a)
      if (VALUE_FLAGS.has(a) && i + 1 < argv.length) flags.push(argv[++i])
    } else {
      files.push(a)
    }
  }
  return { files, flags }
}

const counts = (m: Record<string, number>) =>
  Object.entries(m)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${n}`)
    .join(' · ')

/**
 * The report for a terminal. Every string that comes from the log (or a file name) is shown
 * through {@link terminalSafe}: a tampered line cannot repaint the report with escape sequences.
 */
export function renderReport(r: VerifyReport, color: boolean): string {
  const p = paint(color)
  const t = terminalSafe
  const s = r.summary
  const out: string[] = [`${p.bold('toolgate audit verify')} ${p.dim('— ' + t(r.files.map((f) => f.path).join(', ')))}`]
  if (r.ok) {
    const where = r.files.length === 1 ? `lines 1–${s.lines}` : r.files.map((f) => `${t(f.path)} 1–${f.lines}`).join(', ')
    out.push(`  ${p.green('OK')} the ${r.keyed ? 'keyed (HMAC-SHA-256) ' : ''}hash chain holds: ${s.lines} line${s.lines === 1 ? '' : 's'} (${where})`)
  } else {
    const b = r.break!
    out.push(`  ${p.red('BROKEN')} ${t(b.file)} line ${b.line}: ${b.kind.replace(/_/g, ' ')}`)
    if (b.failedAt !== b.line) out.push(`    ${p.dim('checked at line')} ${b.failedAt}`)
    out.push(`    ${p.dim('expected')} ${t(b.expected)}`)
    out.push(`    ${p.dim('found   ')} ${t(b.found)}`)
    out.push(`    ${p.dim('hint    ')} ${t(b.hint)}`)
    out.push(`    ${p.dim(`verification stopped there; the summary covers the lines before line ${b.failedAt}${r.files.length > 1 ? ` of ${t(b.file)}` : ''}`)}`)
  }
  for (const w of r.warnings) out.push(`  ${p.yellow('warning')} ${t(w)}`)
  out.push('', p.bold('summary'))
  const row = (k: string, v: string) => out.push(`  ${p.dim(k.padEnd(12))} ${t(v)}`)
  row('lines', `${s.lines}${Object.keys(s.types).length > 0 ? ` (${counts(s.types)})` : ''}`)
  const decisions = s.types.decision ?? 0
  row('decisions', decisions === 0 ? '0' : `${decisions}: ${counts(s.outcomes)}`)
  if (Object.keys(s.reasons).length > 0) row('reasons', counts(s.reasons))
  if (s.shadow > 0) row('shadow', `${s.shadow} let through by shadow mode (wouldBe in each record)`)
  if (s.confirmSteps > 0) row('confirmed', `${s.confirmSteps} confirmation step${s.confirmSteps === 1 ? '' : 's'}`)
  if (s.firstTime !== undefined) row('time', `${s.firstTime} → ${s.lastTime}`)
  row('configs', s.configHashes.length === 0 ? '(none)' : s.configHashes.map((c) => `${c.hash} (${c.records})`).join(', '))
  row('opens', `${s.opens}${s.tornBytesRemoved > 0 ? ` (torn bytes cut off on reopen: ${s.tornBytesRemoved})` : ''}`)
  row('rotations', String(s.rotations))
  if (s.head !== undefined) out.push(`  ${p.dim('head'.padEnd(12))} ${t(s.head)}  ${p.dim(`(${r.keyed ? 'HMAC' : 'hash'} of the last verified line)`)}`)
  return out.join('\n') + '\n'
}

/** The chain key `--key-env` / `--key-file` name (as the gate reads `audit.chainKeyEnv` / `chainKeyFile`), if any. */
function keyOf(values: Record<string, string>): Buffer | undefined {
  if (values['key-env'] !== undefined && values['key-file'] !== undefined) throw new UsageError('give --key-env or --key-file, not both')
  let key: Buffer
  if (values['key-env'] !== undefined) {
    const v = process.env[values['key-env']]
    if (v === undefined || v === '') throw new UsageError(`--key-env: the environment variable ${values['key-env']} is not set`)
    key = Buffer.from(v, 'utf8')
  } else if (values['key-file'] !== undefined) {
    try {
      key = readRegularFile(values['key-file'], '--key-file', 64 * 1024)
    } catch (err) {
      throw new UsageError((err as Error).message)
    }
  } else {
    return undefined
  }
  key = trimNewline(key)
  if (key.length < MIN_CHAIN_KEY_BYTES) throw new UsageError(`the chain key is ${key.length} bytes; a chain key has at least ${MIN_CHAIN_KEY_BYTES}`)
  return key
}

function runVerify(argv: string[]): number {
  const { files, flags: words } = operands(argv)
  const flags = parseOrHelp(words, {
    values: { format: '`pretty` or `json`', 'key-env': 'the environment variable holding the chain key', 'key-file': 'the file holding the chain key' },
    switches: ['help', 'allow-torn-tail', 'allow-unproven-tail'],
    aliases: { h: 'help' },
  }, HELP)
  if (flags === undefined) return 0
  const { values, switches } = flags
  const format = formatFlag(values)
  const key = keyOf(values)
  if (files.length === 0) throw new UsageError('missing FILE: the JSONL log to verify (rotated files oldest first, then the live one)')
  for (const f of files) if (!existsSync(f)) throw new UsageError(`${terminalSafe(f)}: no such file`)
  let report: VerifyReport
  try {
    report = verifyFiles(files, { key, allowTornTail: switches.has('allow-torn-tail'), allowUnprovenTail: switches.has('allow-unproven-tail') })
  } catch (err) {
    throw new UsageError(`cannot read the log (${terminalSafe((err as Error).message)})`)
  }
  process.stdout.write(format === 'json' ? terminalJson(report) + '\n' : renderReport(report, useColor()))
  return report.ok ? 0 : 1
}

function run(argv: string[]): number {
  const [sub, ...rest] = argv
  try {
    if (sub === 'verify') return runVerify(rest)
    if (sub === '--help' || sub === '-h' || sub === 'help') {
      process.stdout.write(GROUP_HELP)
      return 0
    }
    throw new UsageError(sub === undefined ? 'missing the subcommand: verify' : `unknown subcommand \`${sub}\` (expected verify)`)
  } catch (err) {
    return usageFailure(sub === 'verify' ? 'toolgate audit verify' : 'toolgate audit', err)
  }
}

/** `toolgate audit verify`. */
export const command = { usage: USAGE, run }
