/**
 * What the decision benches (check, guard, policy, state) share around their measurements: where
 * bench/ is, `--quick`, sizes read from the environment, the columns they print, the results file
 * they write, and how a failure ends the run.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

/** bench/ itself. The package is CommonJS (tsx gives __dirname); under ESM, the working directory's bench/. */
export const here = typeof __dirname === 'string' ? __dirname : resolve('bench')

/** `--quick` was given: the smaller sizes, for a look rather than a figure. */
export const QUICK = process.argv.slice(2).includes('--quick')

/** The positive integer in environment variable `name`; unset or empty: `dflt` (`quick` with `--quick`). Throws on anything else. */
export function num(name: string, dflt: number, quick: number): number {
  const v = process.env[name]
  if (v !== undefined && v !== '') {
    const n = Number(v)
    if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got ${v}`)
    return n
  }
  return QUICK ? quick : dflt
}

/** `s` left-aligned in `n` columns, cut to `n`. */
export const pad = (s: string, n: number): string => (s.length >= n ? s.slice(0, n) : s + ' '.repeat(n - s.length))
/** `s` right-aligned in `n` columns (never cut). */
export const lpad = (s: string, n: number): string => (s.length >= n ? s : ' '.repeat(n - s.length) + s)
/** `n` with `digits` decimals; `n/a` for NaN or an infinity. */
export const fmt = (n: number, digits = 0): string => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a')

/**
 * Writes `result` as bench/results/`<name>`.json (pretty, one trailing newline) and prints where,
 * with the sink: a value the timed code fed, printed so the work is not optimised away.
 */
export function writeResult(name: string, result: unknown, sink: number): void {
  mkdirSync(join(here, 'results'), { recursive: true })
  const file = join(here, 'results', `${name}.json`)
  writeFileSync(file, JSON.stringify(result, null, 2) + '\n')
  console.log('')
  console.log(`wrote ${file}  (sink ${sink % 1000})`)
}

/** Runs a bench's `main`; an error is printed and the process exits 1. */
export function run(main: () => Promise<void>): void {
  main().catch((e: unknown) => {
    console.error(e)
    process.exit(1)
  })
}
