// `toolgate audit verify`: checks a decision log's hash chain (src-ts/audit/verify.ts) and prints
// the first broken, removed or reordered line, or a summary of what the log holds.
// Exit codes: 0 the chain holds (a torn last line is a warning), 1 a broken line, 2 usage or an
// unreadable file.
import { existsSync } from 'node:fs'

import { verifyFiles, type VerifyReport } from '../audit/verify'
import { formatFlag, parseFlags, UsageError, useColor } from './args'

const USAGE = 'toolgate audit verify FILE…   check a decision log\'s hash chain; print the first broken line'

const HELP = `toolgate audit verify — check a decision log's hash chain

Usage:
  toolgate audit verify FILE… [--format pretty|json]

Reads the JSONL log a gate writes (config "audit": { "jsonl": FILE }) line by line, as bytes,
and checks that every line is a JSON object with "v": 1, that the file starts with an "open"
(or, after a rotation, "rotate") record, and that every later line's "prev" is the SHA-256
(base64url) of the exact line before it. The first line that breaks the chain is reported
with its number, what was expected and what was found, and whether the line was changed,
removed, inserted or reordered. A torn last line (no newline: a crash cut the write short) is
a warning, not a failure: verify accepts the log up to its last whole line.

Rotated files: give them oldest first, then the live file, and the links between files are
checked too (toolgate audit verify audit.jsonl.1 audit.jsonl.2 audit.jsonl). Given alone, a
file that starts with a rotate record is checked from there (a warning says so).

A hash chain cannot show lines removed from the END of a log: keep the summary's "head" (the
last line's hash) somewhere else and compare it later. Format: docs/audit.md.

Flags:
  --format FORMAT    pretty (default): the verdict, warnings and a summary (lines, decisions by
                     outcome, first and last time, config hashes, opens and rotations, head)
                     json: one JSON object { ok, files, break?, warnings, summary }
  --help, -h         this text

Exit codes: 0 the chain holds (warnings allowed), 1 a broken line, 2 usage error or a file that
cannot be read.

Examples:
  toolgate audit verify toolgate-audit.jsonl
  toolgate audit verify toolgate-audit.jsonl.1 toolgate-audit.jsonl --format json
  toolgate audit verify audit.jsonl --format json | jq .summary.head
`

const GROUP_HELP = `toolgate audit — the decision log

Usage:
  toolgate audit verify FILE… [--format pretty|json]   check the hash chain (toolgate audit verify --help)
`

function paint(on: boolean) {
  const c = (code: number) => (s: string) => (on ? `\x1b[${code}m${s}\x1b[0m` : s)
  return { green: c(32), yellow: c(33), red: c(31), dim: c(2), bold: c(1) }
}

/** Splits `argv` into file operands and flags (`--format` takes a value; `--` ends the flags). */
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
      if (a === '--format' && i + 1 < argv.length) flags.push(argv[++i])
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

/** The report for a terminal. */
export function renderReport(r: VerifyReport, color: boolean): string {
  const p = paint(color)
  const s = r.summary
  const out: string[] = [`${p.bold('toolgate audit verify')} ${p.dim('— ' + r.files.map((f) => f.path).join(', '))}`]
  if (r.ok) {
    const where = r.files.length === 1 ? `lines 1–${s.lines}` : r.files.map((f) => `${f.path} 1–${f.lines}`).join(', ')
    out.push(`  ${p.green('OK')} the hash chain holds: ${s.lines} line${s.lines === 1 ? '' : 's'} (${where})`)
  } else {
    const b = r.break!
    out.push(`  ${p.red('BROKEN')} ${b.file} line ${b.line}: ${b.kind.replace(/_/g, ' ')}`)
    if (b.failedAt !== b.line) out.push(`    ${p.dim('checked at line')} ${b.failedAt}`)
    out.push(`    ${p.dim('expected')} ${b.expected}`)
    out.push(`    ${p.dim('found   ')} ${b.found}`)
    out.push(`    ${p.dim('hint    ')} ${b.hint}`)
    out.push(`    ${p.dim(`verification stopped there; the summary covers the lines before line ${b.failedAt}${r.files.length > 1 ? ` of ${b.file}` : ''}`)}`)
  }
  for (const w of r.warnings) out.push(`  ${p.yellow('warning')} ${w}`)
  out.push('', p.bold('summary'))
  const row = (k: string, v: string) => out.push(`  ${p.dim(k.padEnd(12))} ${v}`)
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
  if (s.head !== undefined) row('head', `${s.head}  ${p.dim('(hash of the last verified line)')}`)
  return out.join('\n') + '\n'
}

function runVerify(argv: string[]): number {
  const { files, flags } = operands(argv)
  const { values, switches } = parseFlags(flags, { values: { format: '`pretty` or `json`' }, switches: ['help'], aliases: { h: 'help' } })
  if (switches.has('help')) {
    process.stdout.write(HELP)
    return 0
  }
  const format = formatFlag(values)
  if (files.length === 0) throw new UsageError('missing FILE: the JSONL log to verify (rotated files oldest first, then the live one)')
  for (const f of files) if (!existsSync(f)) throw new UsageError(`${f}: no such file`)
  let report: VerifyReport
  try {
    report = verifyFiles(files)
  } catch (err) {
    throw new UsageError(`cannot read the log (${(err as Error).message})`)
  }
  process.stdout.write(format === 'json' ? JSON.stringify(report) + '\n' : renderReport(report, useColor()))
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
    if (err instanceof UsageError) {
      const which = sub === 'verify' ? 'toolgate audit verify' : 'toolgate audit'
      process.stderr.write(`${which}: ${err.message}\nRun \`${which} --help\` for usage and examples.\n`)
      return 2
    }
    throw err
  }
}

/** `toolgate audit verify`. */
export const command = { usage: USAGE, run }
