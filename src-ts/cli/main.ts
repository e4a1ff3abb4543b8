#!/usr/bin/env node
// The `toolgate` command line.
import * as audit from './audit'
import * as bench from './bench'
import * as check from './check'
import { runDemo } from './demo'
import * as keygen from './keygen'
import * as mcpProxy from './mcp-proxy'
import * as proxy from './proxy'
import * as replay from './replay'

/** A subcommand: its one-line usage for the help text, and its runner (the exit code). */
interface Command {
  usage: string
  run(argv: string[]): number | Promise<number>
}

const COMMANDS: Record<string, Command> = {
  check: check.command,
  bench: bench.command,
  'mcp-proxy': mcpProxy.command,
  proxy: proxy.command,
  audit: audit.command,
  replay: replay.command,
  keygen: keygen.command,
}

const HELP = `toolgate — the gate between an LLM agent and its tools

Usage:
  toolgate demo          run recorded tool calls through a default gate and show each verdict
${Object.values(COMMANDS).map((c) => `  ${c.usage}\n`).join('')}  toolgate <command> --help   examples and every flag of one command
  toolgate --help        this text
  toolgate --version     the package version

Examples:
  npx toolgate demo
  NO_COLOR=1 npx toolgate demo > demo.txt
`

/** Runs the CLI with `argv` (without node and script); returns the exit code. */
export function main(argv: string[]): number | Promise<number> {
  const [cmd, ...rest] = argv
  if (cmd === undefined || cmd === '--help' || cmd === '-h' || cmd === 'help') {
    process.stdout.write(HELP)
    return cmd === undefined ? 2 : 0
  }
  if (cmd === '--version' || cmd === '-v') {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    process.stdout.write(`${require('../../package.json').version}\n`)
    return 0
  }
  if (cmd === 'demo') {
    if (rest.length === 1 && (rest[0] === '--help' || rest[0] === '-h')) {
      process.stdout.write('Usage: toolgate demo\n\nRuns a short tour: one gate deciding sloppy, hostile and refused tool calls, printed as it goes.\n')
      return 0
    }
    if (rest.length > 0) {
      process.stderr.write(`toolgate demo: takes no arguments, got ${rest.join(' ')}\n`)
      return 2
    }
    const color = process.stdout.isTTY === true && !process.env.NO_COLOR
    runDemo((s) => process.stdout.write(s + '\n'), color)
    return 0
  }
  const command = COMMANDS[cmd]
  if (command) return command.run(rest)
  process.stderr.write(`toolgate: unknown command \`${cmd}\`. Run \`toolgate --help\` for the commands.\n`)
  return 2
}

if (require.main === module) {
  const fail = (err: unknown) => {
    process.stderr.write(`toolgate: ${err instanceof Error ? err.message : String(err)}\n`)
    process.exitCode = 2
  }
  try {
    Promise.resolve(main(process.argv.slice(2))).then((code) => {
      process.exitCode = code
    }, fail)
  } catch (err) {
    fail(err)
  }
}
