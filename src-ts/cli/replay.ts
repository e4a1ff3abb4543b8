// `toolgate replay`: re-decides every logged call that carries its arguments against a proposed
// config, in log order, and prints the drift — which calls would change outcome or reason.
// Exit codes: 0 no drift, 1 drift, 2 usage or config error, or a log without arguments.
import { sameJson } from '../canonical-json'
import { readLines } from '../audit/lines'
import { loadConfigFile } from '../config-file'
import { ToolGateError } from '../errors'
import { ToolGate } from '../gate'
import type { CallContext, Verdict } from '../types'
import { formatFlag, parseOrHelp, UsageError, usageFailure, useColor } from './args'
import { terminalJson, terminalSafe } from './escape'

const USAGE = 'toolgate replay --log audit.jsonl --config proposed.json   re-decide logged calls; print the drift'

const HELP = `toolgate replay — re-decide logged calls against a proposed config and print the drift

Usage:
  toolgate replay --log audit.jsonl --config proposed.json [--format pretty|json]

Every "decision" record of the log that carries its arguments is decided again by a gate built
from --config, in log order, for the caller the record names (sub → subject, roles, purpose,
session, surface, identity, context, callId). A call drifts when its outcome or reason would
change: allowed (passed or repaired) ↔ refused, another reason, another shadow "wouldBe", or an
allowed call whose arguments would be repaired differently. Records need the arguments: the
config that wrote the log must have "audit": { "includeArguments": true }.

How records replay:
  - each "open" record starts a fresh gate, as the process that wrote it did (loop and taint
    state, confirmation tokens); "rotate" records continue the same gate
  - a confirmation step (step: "confirm") replays as the confirmation of the most recent call
    before it (same subject, session and tool) that asked for one: it is confirmed with the new
    gate's token and compared. If that call no longer asks for confirmation under the proposed
    config, its drift is already reported and the step is skipped
  - calls from whole turns (guard, streams) replay one by one, as check would decide them
  - the proposed config's "audit" and "receipts" blocks are ignored: replay writes no log and
    needs no signing key

What replay cannot reproduce (counted, never compared):
  - records without "args" (written without includeArguments), and turn errors (no calls)
  - arguments holding "[redacted]" values (audit.redact): reported as not replayable
  - audit_unavailable refusals: a state of the writing host's disk, not of the config
Where drift can be an artefact (marked in the report):
  - time: conditions on now.*, loop windows (calls spread over minutes replay within
    milliseconds) and confirmation expiry are evaluated at replay time
  - engines: a CLI plugs in none, so calls a plugged engine decided replay on the rules alone
  - loop and taint state of a session where an earlier call was not replayed, and taint raised
    by gate.markSession (never logged)

Flags:
  --log FILE         the JSONL decision log (one file; replay rotated files one by one, oldest first)
  --config FILE      the proposed toolgate config (.json, .yaml or .yml)
  --format FORMAT    pretty (default): counts and each drifted call (the first 200)
                     json: one JSON object { replayed, same, drift, drifted: [...], skipped, … }
  --help, -h         this text

Exit codes: 0 no drift, 1 drift, 2 usage or config error, or no record carries its arguments.

Examples:
  toolgate replay --log toolgate-audit.jsonl --config toolgate.config.json
  toolgate replay --log toolgate-audit.jsonl --config proposed.yaml --format json | jq '.drifted[] | {tool, old, new}'
`

/** The decision of one record or one replayed verdict. */
export interface Decided {
  outcome: string
  reason?: string
  wouldBe?: string
}

/** One call whose decision would change. */
export interface Drift {
  /** Line of the record in the log (1-based). */
  line: number
  time?: string
  id?: string
  callId?: string
  tool: string
  sub?: string
  session?: string
  step?: 'confirm'
  old: Decided
  new: Decided & { message?: string }
  /** Allowed both times, with other arguments: the logged ones and the new ones. */
  arguments?: { old: unknown; new: unknown }
  /** Why this drift may be an artefact of replaying (time, engines, state). */
  caveat?: string
}

/** What replay did. */
export interface ReplayReport {
  log: string
  config: string
  /** Records decided again (checks and confirmation steps). */
  replayed: number
  same: number
  drift: number
  /** Drifted calls in log order (at most {@link MAX_DRIFT_LISTED}; `drift` counts them all). */
  drifted: Drift[]
  /** Records not compared, by why. */
  skipped: {
    withoutArguments: number
    redacted: number
    auditUnavailable: number
    turnErrors: number
    /** Confirmation steps whose first step no longer asks for confirmation (its drift is reported). */
    confirmAfterDrift: number
    /** Confirmation steps whose first step was not replayed (or is not in this log). */
    confirmWithoutCall: number
    /** Lines that are not JSON records (run `toolgate audit verify`). */
    unreadable: number
    /** Records that could not be replayed (a caller the gate refuses, a value nested too deeply …): listed in `badRecords`. */
    invalid: number
  }
  /** Unreadable lines and records that could not be replayed, with why (the first {@link MAX_BAD_LISTED}); replay goes on past each. */
  badRecords: { line: number; why: string }[]
  /** Lines of records with "[redacted]" arguments (the first 200). */
  redactedLines: number[]
  /** Fresh gates started (one per `open` record). */
  gates: number
  /** Decision records read, and how many of them carry `args`. */
  decisions: number
  withArguments: number
}

/** Drifted calls kept for the report; all are counted. */
export const MAX_DRIFT_LISTED = 10_000
/** Bad records listed in the report; all are counted. */
export const MAX_BAD_LISTED = 200
const MAX_PRETTY = 200

type Rec = Record<string, unknown>

const REDACTED = '[redacted]'

/** Whether `"[redacted]"` appears anywhere in `v` (iterative: a hostile record may nest deeply). */
function hasRedacted(v: unknown): boolean {
  const stack: unknown[] = [v]
  while (stack.length > 0) {
    const x = stack.pop()
    if (x === REDACTED) return true
    if (x !== null && typeof x === 'object') for (const y of Array.isArray(x) ? x : Object.values(x)) stack.push(y)
  }
  return false
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)

/** The caller a record names, as a CallContext. */
export function contextOf(r: Rec): CallContext {
  const ctx: CallContext = {}
  if (typeof r.sub === 'string') ctx.subject = r.sub
  if (Array.isArray(r.roles)) ctx.roles = r.roles.filter((x): x is string => typeof x === 'string')
  if (typeof r.purpose === 'string') ctx.purpose = r.purpose
  if (typeof r.session === 'string') ctx.session = r.session
  if (r.surface === 'operator' || r.surface === 'visitor') ctx.surface = r.surface
  if (r.identity !== null && typeof r.identity === 'object' && !Array.isArray(r.identity)) ctx.identity = r.identity as Record<string, unknown>
  if (r.context !== null && typeof r.context === 'object' && !Array.isArray(r.context)) ctx.context = r.context as Record<string, string>
  if (typeof r.callId === 'string') ctx.callId = r.callId
  return ctx
}

const allowedOutcome = (o: string | undefined) => o === 'passed' || o === 'repaired'

function decidedOf(r: Rec): Decided {
  const d: Decided = { outcome: String(r.outcome) }
  if (typeof r.reason === 'string') d.reason = r.reason
  if (typeof r.wouldBe === 'string') d.wouldBe = r.wouldBe
  return d
}

function decidedOfVerdict(v: Verdict): Decided & { message?: string } {
  const d: Decided & { message?: string } = { outcome: v.outcome }
  if (v.reason !== undefined) d.reason = v.reason
  if (v.wouldBe !== undefined) d.wouldBe = v.wouldBe
  if (v.message !== undefined) d.message = v.message
  return d
}

/** Builds the replay gate: the proposed config without its `audit` and `receipts` blocks. */
export function loadProposed(path: string): () => ToolGate {
  let config: Record<string, unknown>
  try {
    // a regular file within the config bound, YAML aliases bounded by size, duplicate keys refused
    config = loadConfigFile(path, { what: '--config' }).config
  } catch (err) {
    throw new UsageError(`${err instanceof ToolGateError ? `${err.code}: ` : ''}${(err as Error).message}`)
  }
  const { audit: _audit, receipts: _receipts, ...rest } = config
  const text = JSON.stringify(rest)
  const build = () => {
    try {
      return new ToolGate(text)
    } catch (err) {
      throw new UsageError(`--config ${path}: ${err instanceof ToolGateError ? `${err.code}: ` : ''}${(err as Error).message}`)
    }
  }
  build() // fail before reading the log
  return build
}

/** A confirmation the replay gate asked for, waiting for the log's confirmation step. */
interface Waiting {
  key: string
  /** The new gate's token, or undefined when the proposed config did not ask for confirmation. */
  token: string | undefined
}

/** Replays `log` against the gates `newGate` builds (one per `open` record). Throws only when the log cannot be read. */
export function replay(log: string, config: string, newGate: () => ToolGate): ReplayReport {
  const report: ReplayReport = {
    log, config, replayed: 0, same: 0, drift: 0, drifted: [],
    skipped: { withoutArguments: 0, redacted: 0, auditUnavailable: 0, turnErrors: 0, confirmAfterDrift: 0, confirmWithoutCall: 0, unreadable: 0, invalid: 0 },
    badRecords: [], redactedLines: [], gates: 0, decisions: 0, withArguments: 0,
  }
  let gate: ToolGate | undefined
  let waiting: Waiting[] = []
  /** State scopes (session, else subject) where a call was not replayed: their loop/taint state may differ. */
  let gaps = new Set<string>()
  const scopeOf = (r: Rec) => str(r.session) ?? str(r.sub) ?? ''
  const keyOf = (r: Rec) => JSON.stringify([str(r.sub) ?? null, str(r.session) ?? null, str(r.tool) ?? null])
  const bad = (line: number, why: string) => {
    if (report.badRecords.length < MAX_BAD_LISTED) report.badRecords.push({ line, why: why.length > 300 ? `${why.slice(0, 299)}…` : why })
  }
  let line = 0
  for (const raw of readLines(log)) {
    line++
    if (!raw.terminated) break // a torn last line: not a record
    let r: Rec
    try {
      if (raw.overlong !== undefined) throw new Error(`a line of ${raw.overlong} bytes, over the limit of a record`)
      const v = JSON.parse(raw.bytes.toString('utf8')) as unknown
      if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error('not a JSON object')
      r = v as Rec
    } catch (err) {
      report.skipped.unreadable++
      bad(line, `not a record: ${(err as Error).message}`)
      continue
    }
    // one hostile record (a caller the gate refuses, a value nested 200,000 deep) is reported
    // and skipped; the drift already found, and the records after it, are kept
    try {
      replayRecord(r, line)
    } catch (err) {
      report.skipped.invalid++
      const why = err instanceof RangeError && /call stack/i.test(err.message) ? 'nested too deeply to replay' : `${err instanceof ToolGateError ? `${err.code}: ` : ''}${(err as Error).message}`
      bad(line, why)
    }
  }
  return report

  function replayRecord(r: Rec, line: number): void {
    if (r.type === 'open' || gate === undefined) {
      gate = newGate()
      report.gates++
      waiting = []
      gaps = new Set()
      if (r.type === 'open') return
    }
    if (r.type === 'turn_error') {
      report.skipped.turnErrors++
      return
    }
    if (r.type !== 'decision' || typeof r.tool !== 'string') return
    report.decisions++
    if ('args' in r) report.withArguments++
    const old = decidedOf(r)
    if (old.reason === 'audit_unavailable') {
      report.skipped.auditUnavailable++
      return
    }
    const ctx = contextOf(r)
    let verdict: Verdict
    if (r.step === 'confirm') {
      const key = keyOf(r)
      let i = waiting.length - 1
      while (i >= 0 && waiting[i].key !== key) i--
      if (i < 0) {
        report.skipped.confirmWithoutCall++
        if (allowedOutcome(old.outcome)) gaps.add(scopeOf(r))
        return
      }
      const w = waiting.splice(i, 1)[0]
      if (w.token === undefined) {
        report.skipped.confirmAfterDrift++
        return
      }
      verdict = gate.confirm(w.token, ctx)
    } else {
      if (!('args' in r)) {
        report.skipped.withoutArguments++
        if (allowedOutcome(old.outcome) || old.outcome === 'confirm') gaps.add(scopeOf(r))
        return
      }
      if (hasRedacted(r.args)) {
        report.skipped.redacted++
        if (report.redactedLines.length < 200) report.redactedLines.push(line)
        if (allowedOutcome(old.outcome) || old.outcome === 'confirm') gaps.add(scopeOf(r))
        return
      }
      // a string is the text the model sent that was not JSON: replayed as that text
      verdict = gate.check(r.tool, r.args as string | object, ctx)
      if (old.outcome === 'confirm') waiting.push({ key: keyOf(r), token: verdict.confirmation?.token })
    }
    report.replayed++
    const now = decidedOfVerdict(verdict)
    const bothAllowed = allowedOutcome(old.outcome) && verdict.allowed
    const sameDecision = bothAllowed ? (old.wouldBe ?? null) === (now.wouldBe ?? null) : old.outcome === now.outcome && (old.reason ?? null) === (now.reason ?? null) && (old.wouldBe ?? null) === (now.wouldBe ?? null)
    const argsDiffer = bothAllowed && 'args' in r && !sameJson(r.args, verdict.arguments)
    if (sameDecision && !argsDiffer) {
      report.same++
      return
    }
    report.drift++
    if (report.drifted.length >= MAX_DRIFT_LISTED) return
    const d: Drift = { line, tool: r.tool, old, new: now }
    if (typeof r.time === 'string') d.time = r.time
    if (typeof r.id === 'string') d.id = r.id
    if (typeof r.callId === 'string') d.callId = r.callId
    if (typeof r.sub === 'string') d.sub = r.sub
    if (typeof r.session === 'string') d.session = r.session
    if (r.step === 'confirm') d.step = 'confirm'
    if (argsDiffer) d.arguments = { old: r.args, new: verdict.arguments }
    const caveat = caveatOf(old, now, gaps.has(scopeOf(r)))
    if (caveat !== undefined) d.caveat = caveat
    report.drifted.push(d)
  }
}

/** Why a drift may come from replaying rather than from the proposed config. */
function caveatOf(old: Decided, now: Decided, gap: boolean): string | undefined {
  const reasons = [old.reason, now.reason, old.wouldBe, now.wouldBe]
  const notes: string[] = []
  if (reasons.includes('engine')) notes.push('a plugged engine decided the logged call; replay has no engines')
  if (reasons.includes('loop')) notes.push('loop windows are measured at replay speed')
  if (reasons.includes('token_invalid')) notes.push('confirmation expiry is measured at replay time')
  if (gap && (reasons.includes('loop') || reasons.includes('taint'))) notes.push('an earlier call of this session was not replayed, so its loop and taint state may differ')
  return notes.length === 0 ? undefined : notes.join('; ')
}

function paint(on: boolean) {
  const c = (code: number) => (s: string) => (on ? `\x1b[${code}m${s}\x1b[0m` : s)
  return { green: c(32), yellow: c(33), red: c(31), dim: c(2), bold: c(1) }
}

const decidedText = (d: Decided) => terminalSafe(`${d.outcome}${d.reason ? ` (${d.reason})` : ''}${d.wouldBe ? ` [shadow: would be ${d.wouldBe}]` : ''}`)

/**
 * The report for a terminal. Every string that comes from the log or the proposed config (tool
 * names, ids, times, messages, arguments) is shown through {@link terminalSafe} / {@link terminalJson}.
 */
export function renderReplay(r: ReplayReport, color: boolean): string {
  const p = paint(color)
  const t = terminalSafe
  const out = [`${p.bold('toolgate replay')} ${p.dim(`— ${t(r.log)} against ${t(r.config)}`)}`]
  const verdict = r.drift === 0 ? p.green('no drift') : p.red(`${r.drift} would change`)
  out.push(`  replayed ${r.replayed} call${r.replayed === 1 ? '' : 's'}: ${r.same} the same, ${verdict}`)
  if (r.drifted.length > 0) out.push('', p.bold('drift'))
  for (const d of r.drifted.slice(0, MAX_PRETTY)) {
    const who = [d.callId !== undefined ? `call ${d.callId}` : undefined, d.sub !== undefined ? `sub ${d.sub}` : undefined, d.session !== undefined ? `session ${d.session}` : undefined]
      .filter(Boolean)
      .join(', ')
    out.push(`  ${p.dim(`line ${d.line}`)}  ${t(d.time ?? '')}  ${p.bold(t(d.tool))}${d.step ? ' (confirmation)' : ''}${who ? p.dim(`  ${t(who)}`) : ''}`)
    out.push(`    ${decidedText(d.old)} → ${(d.new.outcome === 'passed' || d.new.outcome === 'repaired' ? p.green : p.red)(decidedText(d.new))}`)
    if (d.arguments) out.push(`    ${p.dim('arguments')} ${terminalJson(d.arguments.old)} → ${terminalJson(d.arguments.new)}`)
    if (d.new.message && d.new.reason !== d.old.reason) out.push(`    ${p.dim('│')} ${t(d.new.message.split('\n')[0])}`)
    if (d.caveat) out.push(`    ${p.yellow('caveat')} ${d.caveat}`)
  }
  if (r.drift > Math.min(r.drifted.length, MAX_PRETTY)) out.push(`  … and ${r.drift - Math.min(r.drifted.length, MAX_PRETTY)} more (--format json lists up to ${MAX_DRIFT_LISTED})`)
  const s = r.skipped
  const notes: string[] = []
  if (s.redacted) notes.push(`${s.redacted} with "[redacted]" arguments (line${r.redactedLines.length === 1 ? '' : 's'} ${r.redactedLines.slice(0, 10).join(', ')}${r.redactedLines.length > 10 ? ', …' : ''}): not replayable`)
  if (s.withoutArguments) notes.push(`${s.withoutArguments} without arguments (written without includeArguments)`)
  if (s.auditUnavailable) notes.push(`${s.auditUnavailable} audit_unavailable (a state of the writing host, not of the config)`)
  if (s.turnErrors) notes.push(`${s.turnErrors} turn errors (no calls to replay)`)
  if (s.confirmAfterDrift) notes.push(`${s.confirmAfterDrift} confirmation steps whose call no longer asks for confirmation (its drift is listed)`)
  if (s.confirmWithoutCall) notes.push(`${s.confirmWithoutCall} confirmation steps whose call was not replayed or is not in this log`)
  if (s.unreadable) notes.push(`${s.unreadable} lines that are not JSON records (run toolgate audit verify)`)
  if (s.invalid) notes.push(`${s.invalid} record${s.invalid === 1 ? '' : 's'} that could not be replayed`)
  if (notes.length > 0) {
    out.push('', p.bold('not replayed'))
    for (const n of notes) out.push(`  ${n}`)
    for (const b of r.badRecords.slice(0, 20)) out.push(`    ${p.dim(`line ${b.line}`)}  ${t(b.why)}`)
    if (s.unreadable + s.invalid > Math.min(r.badRecords.length, 20)) out.push(`    … (--format json lists up to ${MAX_BAD_LISTED})`)
  }
  return out.join('\n') + '\n'
}

function run(argv: string[]): number {
  try {
    const flags = parseOrHelp(argv, {
      values: { log: 'the JSONL decision log', config: 'the proposed toolgate config file (.json, .yaml or .yml)', format: '`pretty` or `json`' },
      switches: ['help'],
      aliases: { h: 'help' },
    }, HELP)
    if (flags === undefined) return 0
    const { values } = flags
    const format = formatFlag(values)
    if (values.log === undefined) throw new UsageError('missing --log FILE (the JSONL decision log to replay)')
    if (values.config === undefined) throw new UsageError('missing --config FILE (the proposed config to decide the logged calls with)')
    const newGate = loadProposed(values.config)
    let report: ReplayReport
    try {
      report = replay(values.log, values.config, newGate)
    } catch (err) {
      if (err instanceof UsageError) throw err
      throw new UsageError(`--log: cannot read ${terminalSafe(values.log)} (${terminalSafe((err as Error).message)})`)
    }
    if (report.withArguments === 0) {
      const what = report.decisions === 0 ? `${values.log} holds no decision records` : `no decision record in ${values.log} carries its arguments (${report.decisions} decision records, none with "args")`
      process.stderr.write(`toolgate replay: ${what}, so there is nothing to replay. Replay needs a log written with "audit": { "includeArguments": true } in the config.\n`)
      return 2
    }
    process.stdout.write(format === 'json' ? terminalJson(report) + '\n' : renderReplay(report, useColor()))
    return report.drift > 0 ? 1 : 0
  } catch (err) {
    return usageFailure('toolgate replay', err)
  }
}

/** `toolgate replay`. */
export const command = { usage: USAGE, run }
