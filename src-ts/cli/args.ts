// A small flag parser shared by the CLI subcommands: `--name value`, `--name=value`, and
// switches (`--help`). Every error names the flag and what was expected, so the caller can
// print it as it is and exit 2.

/** What a command accepts: flags that take a value (with a hint for errors), and switches. */
export interface FlagSpec {
  /** Flag name (without `--`) → what its value is, e.g. `{ input: 'a file path, or - for stdin' }`. */
  values: Record<string, string>
  /** Flag names (without `--`) that take no value. */
  switches?: string[]
  /** Short aliases, e.g. `{ h: 'help' }`. */
  aliases?: Record<string, string>
}

/** A usage error: the message names the flag; the command prints it and exits 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'UsageError'
  }
}

/** The parsed flags: values by name, and the switches that were given. */
export interface ParsedFlags {
  values: Record<string, string>
  switches: Set<string>
}

/** Parses `argv` against `spec`; throws {@link UsageError} on anything it does not accept. */
export function parseFlags(argv: string[], spec: FlagSpec): ParsedFlags {
  const values: Record<string, string> = {}
  const switches = new Set<string>()
  const switchNames = new Set(spec.switches ?? [])
  const known = () =>
    [...Object.keys(spec.values), ...switchNames].map((n) => `--${n}`).join(', ')
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    let name: string
    let inline: string | undefined
    if (arg.startsWith('--') && arg.length > 2) {
      const eq = arg.indexOf('=')
      name = eq === -1 ? arg.slice(2) : arg.slice(2, eq)
      inline = eq === -1 ? undefined : arg.slice(eq + 1)
    } else if (arg.startsWith('-') && arg.length === 2 && spec.aliases?.[arg[1]] !== undefined) {
      name = spec.aliases[arg[1]]
    } else if (arg.startsWith('-') && arg !== '-') {
      throw new UsageError(`unknown flag \`${arg}\` (expected one of ${known()})`)
    } else {
      throw new UsageError(`unexpected argument \`${arg}\`: every input is given by a flag (${known()})`)
    }
    if (switchNames.has(name)) {
      if (inline !== undefined) throw new UsageError(`--${name} takes no value, got \`${arg}\``)
      switches.add(name)
      continue
    }
    const hint = spec.values[name]
    if (hint === undefined || !Object.prototype.hasOwnProperty.call(spec.values, name)) {
      throw new UsageError(`unknown flag \`--${name}\` (expected one of ${known()})`)
    }
    let value = inline
    if (value === undefined) {
      const next = argv[i + 1]
      // `-` alone is a value (stdin); any other dash-word is the next flag, not a value
      if (next === undefined || (next.startsWith('-') && next !== '-')) {
        throw new UsageError(`--${name} needs a value: ${hint}`)
      }
      value = next
      i++
    }
    if (value === '') throw new UsageError(`--${name} needs a value: ${hint}`)
    if (Object.prototype.hasOwnProperty.call(values, name)) {
      throw new UsageError(`--${name} is given twice; give it once (${hint})`)
    }
    values[name] = value
  }
  return { values, switches }
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
