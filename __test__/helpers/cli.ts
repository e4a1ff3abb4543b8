// The built CLI (dist/cli/main.js, from `npm run build:ts`) run as users run it: a child process
// whose stdout is a pipe (so no color), with extra environment variables.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'

/** The built CLI's entry point. */
export const CLI = join(__dirname, '..', '..', 'dist', 'cli', 'main.js')

/** What a CLI run answered. */
export interface CliRun {
  code: number | null
  /** Set when the child was ended by a signal (a hang past `timeoutMs`, an abort). */
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** Runs `toolgate <args>` in `cwd` with `env` added (FORCE_COLOR removed); ended after `timeoutMs`. */
export function runCli(args: string[], cwd: string, env: Record<string, string> = {}, timeoutMs = 60_000): CliRun {
  const e: NodeJS.ProcessEnv = { ...process.env, ...env }
  delete e.FORCE_COLOR
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', env: e, timeout: timeoutMs })
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr }
}
