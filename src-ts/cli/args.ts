// The one flag parser of the CLI subcommands, over Node's own `util.parseArgs` (which splits
// `--name value`, `--name=value`, `-h` and `--`): this file adds what the commands promise on
// top — every error names the flag and what was expected (the caller prints it and exits 2), a
// dash-word is never taken as a flag's value, a flag is given once unless it repeats.
import { parseArgs } from 'node:util'
import { terminalLines } from './escape'

/** What a command accepts: flags that take a value (with a hint for errors), and switches. */
export interface FlagSpec {
  /** Flag name (without `--`) → what its value is, e.g. `{ input: 'a file path, or - for stdin' }`. */
  values: Record<string, string>
  /** Flag names (without `--`) that take no value. */
  switches?: string[]
  /** Short aliases, e.g. `{ h: 'help' }`. */
  aliases?: Record<string, string>
  /** Flag name → hint, for flags taking a value that may be given more than once (kept in order in `lists`). */
  repeatable?: Record<string, string>
  /** Flag name → hint, for flags whose value is optional: `--name` alone, or `--name=value` (a following word is never its value). */
  optional?: Record<string, string>
  /** Whether words after `--` are accepted (returned in `rest`); without it `--` is an error. */
  rest?: boolean
}

/** A usage error: the message names the flag; the command prints it and exits 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'UsageError'
  }
}

/**
 * What a command's `run` answers for an error it caught: a {@link UsageError} is printed as
 * `<command>: <message>` (control characters escaped) with the pointer to `<command> --help`, exit
 * code 2; any other error is thrown on.
 */
export function usageFailure(command: string, err: unknown): number {
  if (!(err instanceof UsageError)) throw err
  process.stderr.write(`${command}: ${terminalLines(err.message)}\nRun \`${command} --help\` for usage and examples.\n`)
  return 2
}

/** The parsed flags: values by name, and the switches that were given. */
export interface ParsedFlags {
  values: Record<string, string>
  switches: Set<string>
  /** The values of each repeatable flag given, in order. */
  lists: Record<string, string[]>
  /** Optional-value flags given: `true` alone, else each `=value` given, in order. */
  optional: Record<string, true | string[]>
  /** The words after `--` (with `rest: true`). */
  rest: string[]
}

const own = (o: Record<string, string> | undefined, k: string): boolean => o !== undefined && Object.hasOwn(o, k)

/** Parses `argv` against `spec`; throws {@link UsageError} on anything it does not accept. */
export function parseFlags(argv: string[], spec: FlagSpec): ParsedFlags {
  const out: ParsedFlags = { values: {}, switches: new Set(), lists: {}, optional: {}, rest: [] }
  const switchNames = new Set(spec.switches ?? [])
  const known = () => [...Object.keys(spec.values), ...Object.keys(spec.repeatable ?? {}), ...Object.keys(spec.optional ?? {}), ...switchNames].map((n) => `--${n}`).join(', ')
  type Opt = { type: 'string' | 'boolean'; short?: string; multiple?: boolean }
  const options: Record<string, Opt> = {}
  for (const n of Object.keys(spec.values)) options[n] = { type: 'string' }
  for (const n of Object.keys(spec.repeatable ?? {})) options[n] = { type: 'string', multiple: true }
  for (const n of [...switchNames, ...Object.keys(spec.optional ?? {})]) options[n] = { type: 'boolean' }
  for (const [short, long] of Object.entries(spec.aliases ?? {})) if (options[long] !== undefined) options[long].short = short
  const { tokens } = parseArgs({ args: argv, options, strict: false, allowPositionals: true, tokens: true })
  for (const t of tokens) {
    if (t.kind === 'option-terminator') {
      if (!spec.rest) throw new UsageError(`unexpected argument \`--\`: every input is given by a flag (${known()})`)
      out.rest = argv.slice(t.index + 1)
      break
    }
    if (t.kind === 'positional') {
      throw new UsageError(`unexpected argument \`${t.value}\`: every input is given by a flag (${known()})`)
    }
    const { name, rawName } = t
    if (!Object.hasOwn(options, name) || (rawName.startsWith('-') && !rawName.startsWith('--') && spec.aliases?.[rawName.slice(1)] !== name)) {
      throw new UsageError(`unknown flag \`${rawName}\` (expected one of ${known()})`)
    }
    if (switchNames.has(name)) {
      if (t.inlineValue) throw new UsageError(`--${name} takes no value, got \`${rawName}=${t.value}\``)
      out.switches.add(name)
      continue
    }
    if (own(spec.optional, name)) {
      if (!t.inlineValue) out.optional[name] = true
      else if (t.value === '') throw new UsageError(`--${name}= needs ${spec.optional![name]}`)
      else if (out.optional[name] !== true) out.optional[name] = [...((out.optional[name] as string[] | undefined) ?? []), t.value!]
      continue
    }
    const hint = own(spec.repeatable, name) ? spec.repeatable![name] : spec.values[name]
    // `-` alone is a value (stdin); any other dash-word is the next flag, not a value
    const value = t.value
    if (value === undefined || value === '' || (!t.inlineValue && value.startsWith('-') && value !== '-')) {
      throw new UsageError(`--${name} needs a value: ${hint}`)
    }
    if (own(spec.repeatable, name)) {
      ;(out.lists[name] ??= []).push(value)
      continue
    }
    if (Object.hasOwn(out.values, name)) {
      throw new UsageError(`--${name} is given twice; give it once (${hint})`)
    }
    out.values[name] = value
  }
  return out
}

/**
 * {@link parseFlags} for a command with `--help` (and `-h`) among `spec`'s switches: when help is
 * asked for, writes `help` to stdout and answers `undefined` (the command then exits 0).
 */
export function parseOrHelp(argv: string[], spec: FlagSpec, help: string): ParsedFlags | undefined {
  const flags = parseFlags(argv, spec)
  if (!flags.switches.has('help')) return flags
  process.stdout.write(help)
  return undefined
}

/** Reads a `--format` value: `pretty` (default) or `json`. */
export function formatFlag(values: Record<string, string>): 'pretty' | 'json' {
  const f = values.format ?? 'pretty'
  if (f !== 'pretty' && f !== 'json') throw new UsageError(`--format must be \`pretty\` or \`json\`, got \`${f}\``)
  return f
}

/** Whether to color stdout: only on a terminal, and never with NO_COLOR set. */
export function useColor(): boolean {
  return process.stdout.isTTY === true && !process.env.NO_COLOR
}
