/**
 * What the two proxy benches (mcp-proxy.bench.ts, http-proxy.bench.ts) print with: the lines
 * kept for the results file, number formatting, nearest-rank percentiles, and notes on the
 * addon and dist/ being timed.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { arch, platform } from 'node:os'
import { join } from 'node:path'

/** Every line printed, for bench/results/. */
export const out: string[] = []
/** Prints a line and keeps it. */
export const say = (line = ''): void => {
  out.push(line)
  console.log(line)
}
export const fmt = (n: number, d = 1): string => (Number.isFinite(n) ? n.toFixed(d) : 'n/a')
export const pad = (s: string, n: number): string => (s.length >= n ? s : s + ' '.repeat(n - s.length))
export const lpad = (s: string, n: number): string => (s.length >= n ? s : ' '.repeat(n - s.length) + s)

/** Nearest-rank percentile of sorted values. */
export function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]
}
export const sortNum = (xs: number[]): number[] => [...xs].sort((a, b) => a - b)
export const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length

/**
 * CPU time a process has used, µs (Linux; NaN elsewhere): the sum over its threads of the time
 * each spent on a CPU, from /proc/<pid>/task/<tid>/schedstat (nanoseconds; the clock-tick figures
 * of /proc/<pid>/stat move in 10 ms steps, 10 µs a call over a pass of 1,000). A thread that
 * exited is no longer counted: the proxies' threads (V8's and libuv's) live as long as they do.
 */
export function cpuUs(pid: number | undefined): number {
  try {
    let ns = 0
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0])
      } catch {
        // the thread exited between the listing and the read
      }
    }
    return ns / 1e3
  } catch {
    return NaN
  }
}

/** The size of the native addon under `root`, with a warning when it looks like a debug build. */
export function addonNote(root: string): string {
  const addon = join(root, 'binding', `toolgate.${platform()}-${arch()}${platform() === 'linux' ? '-gnu' : ''}.node`)
  try {
    const mb = statSync(addon).size / 1e6
    return `${mb.toFixed(1)} MB${mb > 30 ? ' — LOOKS LIKE A DEBUG BUILD: run `npm run build:native` first' : ''}`
  } catch {
    return 'not found at the usual path'
  }
}

/** A warning when the built `cli` is older than any of the proxy's `sources` (the bench would time stale code). */
export function distNote(root: string, cli: string, sources: string[]): string {
  const stale = sources.filter((f) => {
    try {
      return statSync(join(root, f)).mtimeMs > statSync(cli).mtimeMs
    } catch {
      return false
    }
  })
  return stale.length === 0 ? 'dist/ is newer than the proxy sources' : `WARNING: ${stale.join(', ')} newer than dist/ — run \`npm run build:ts\``
}
