// `toolgate check`: decides one recorded tool call — the raw arguments text a model sent —
// against a tool's JSON Schema (or a whole toolgate config) and prints the Verdict.
// Exit codes: 0 passed / repaired, 1 rejected / denied / confirm, 2 usage or config error.

import { ToolGate } from '../gate'
import type { CallContext } from '../types'
import { ToolGateError } from '../errors'
import { boundFromEnv, DEFAULT_MAX_CONFIG_BYTES, readBounded, readRegularFile } from '../regular-file'
import { formatFlag, parseOrHelp, UsageError, usageFailure, useColor } from './args'
import { renderVerdict } from './demo'
import { terminalJson, terminalLines, terminalSafe, terminalSafeDeep } from './escape'

const USAGE = 'toolgate check --schema schema.json --input call.json --tool-name NAME   decide one recorded call (or --config FILE)'

const HELP = `toolgate check — decide one recorded tool call and print the verdict

Usage:
  toolgate check --schema schema.json --tool-name NAME --input call.json [--format pretty|json]
  toolgate check --config toolgate.config.json --tool-name NAME --input call.json [--context CTX] [--format pretty|json]

Flags:
  --schema FILE      the tool's JSON Schema (a JSON file); the gate declares one tool, --tool-name
  --config FILE      a toolgate config (.json, .yaml or .yml) instead of --schema
  --tool-name NAME   the tool the model called
  --input FILE       the call's raw arguments text, exactly as the model sent it; - reads stdin
  --context CTX      who is calling: a CallContext as JSON text ('{"subject":"ana","roles":["analyst"]}')
                     or a file holding one; policy decides for this caller (default: no caller)
  --format FORMAT    pretty (default): outcome, flags, the arguments to run with, the message
                     json: the Verdict as one JSON object on one line (for CI)
  --help, -h         this text

Exit codes: 0 passed or repaired, 1 rejected, denied or confirm, 2 usage or config error.

Examples:
  echo '{"query":"acme","limit":"10"}' > call.json
  toolgate check --schema search_db.schema.json --tool-name search_db --input call.json
  echo '{"query":"acme","limit":"ten"}' | toolgate check --schema search_db.schema.json --tool-name search_db --input -
  toolgate check --config toolgate.config.yaml --tool-name read_file --input call.json --format json
  toolgate check --config toolgate.config.yaml --tool-name read_file --input call.json --context '{"subject":"ana","roles":["analyst"]}'
`

/** Reads a file a flag names (a regular file within the config bound); `-` is stdin. Errors name the flag. */
function readInput(flag: string, path: string): string {
  try {
    const max = boundFromEnv('TOOLGATE_MAX_CONFIG_BYTES', DEFAULT_MAX_CONFIG_BYTES)
    return (path === '-' ? readBounded(0, `--${flag} stdin`, max) : readRegularFile(path, `--${flag}`, max)).toString('utf8')
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
}

/** Builds the gate from --config or --schema; errors name the flag and carry the ToolGateError message. */
function buildGate(values: Record<string, string>, toolName: string): ToolGate {
  if (values.config !== undefined) {
    try {
      return ToolGate.fromFile(values.config)
    } catch (err) {
      throw new UsageError(`--config: ${err instanceof ToolGateError ? `${err.code}: ` : ''}${(err as Error).message}`)
    }
  }
  const path = values.schema
  const text = readInput('schema', path)
  let schema: unknown
  try {
    schema = JSON.parse(text)
  } catch (err) {
    throw new UsageError(`--schema ${path}: expected a JSON Schema as JSON text (${(err as Error).message})`)
  }
  if (typeof schema !== 'boolean' && (schema === null || typeof schema !== 'object' || Array.isArray(schema))) {
    throw new UsageError(`--schema ${path}: expected a JSON Schema (an object or a boolean), got ${Array.isArray(schema) ? 'an array' : JSON.stringify(schema)}`)
  }
  try {
    return new ToolGate({ version: 1, tools: [{ name: toolName, inputSchema: schema as Record<string, unknown> | boolean }] })
  } catch (err) {
    throw new UsageError(`--schema ${path}: ${err instanceof ToolGateError ? `${err.code}: ` : ''}${(err as Error).message}`)
  }
}

/** `--context`: JSON text (starting with `{`) or a file holding it. Errors name the flag. */
function readContext(value: string): CallContext {
  const text = value.trimStart().startsWith('{') ? value : readInput('context', value)
  let ctx: unknown
  try {
    ctx = JSON.parse(text)
  } catch (err) {
    throw new UsageError(`--context: expected a CallContext as JSON (${(err as Error).message})`)
  }
  if (ctx === null || typeof ctx !== 'object' || Array.isArray(ctx)) throw new UsageError('--context: expected a JSON object such as {"subject":"ana","roles":["analyst"]}')
  return ctx as CallContext
}

function run(argv: string[]): number {
  try {
    const flags = parseOrHelp(argv, {
      values: {
        schema: 'a JSON Schema file',
        config: 'a toolgate config file (.json, .yaml or .yml)',
        'tool-name': 'the name of the tool the model called',
        input: 'the file holding the call\'s raw arguments text, or - for stdin',
        format: '`pretty` or `json`',
        context: 'a CallContext as JSON text or a file holding one',
      },
      switches: ['help'],
      aliases: { h: 'help' },
    }, HELP)
    if (flags === undefined) return 0
    const { values } = flags
    const format = formatFlag(values)
    if (values.schema !== undefined && values.config !== undefined) {
      throw new UsageError('--schema and --config both given: give one (--schema for one tool\'s JSON Schema, --config for a toolgate config)')
    }
    if (values.schema === undefined && values.config === undefined) {
      throw new UsageError('missing --schema FILE (the tool\'s JSON Schema) or --config FILE (a toolgate config)')
    }
    const toolName = values['tool-name']
    if (toolName === undefined) throw new UsageError('missing --tool-name NAME (the tool the model called)')
    if (values.input === undefined) throw new UsageError('missing --input FILE (the call\'s raw arguments text; - for stdin)')
    const gate = buildGate(values, toolName)
    const args = readInput('input', values.input)
    const ctx = values.context === undefined ? undefined : readContext(values.context)
    let verdict: ReturnType<typeof gate.check>
    try {
      verdict = gate.check(toolName, args, ctx)
    } catch (err) {
      if (err instanceof ToolGateError) throw new UsageError(`--context: ${err.code}: ${err.message}`)
      throw err
    }
    // the arguments, the flags' values and the message carry the model's text: escaped for the terminal
    if (format === 'json') {
      process.stdout.write(terminalJson(verdict) + '\n')
    } else {
      const color = useColor()
      const bold = (s: string) => (color ? `\x1b[1m${s}\x1b[0m` : s)
      const source = values.input === '-' ? 'stdin' : values.input
      const shown = { ...terminalSafeDeep(verdict), message: verdict.message === undefined ? undefined : terminalLines(verdict.message) }
      process.stdout.write(`${bold(terminalSafe(toolName))} ← ${terminalSafe(source)}\n${renderVerdict(shown, color)}\n`)
    }
    return verdict.allowed ? 0 : 1
  } catch (err) {
    return usageFailure('toolgate check', err)
  }
}

/** `toolgate check`. */
export const command = { usage: USAGE, run }
