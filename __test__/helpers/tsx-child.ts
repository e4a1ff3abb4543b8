// A fresh Node process running TypeScript through tsx from the checkout's root, as a reader runs
// the files under examples/ (`node --import tsx examples/<file>`), and as the adapter tests check
// what a bare `require` of an entry loads.
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'

const ROOT = join(__dirname, '..', '..')

/** The standard output of `examples/<file>`; throws when it exits non-zero. */
export function runExample(file: string): string {
  return execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'examples', file)], { cwd: ROOT, encoding: 'utf8' })
}

/** The standard output of a CommonJS `script` (`node --import tsx -e`), whose relative `require`s
 * start at the checkout's root (`require('./src-ts/index.ts')`); throws when it exits non-zero. */
export function runScript(script: string): string {
  return execFileSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: ROOT, encoding: 'utf8' })
}
