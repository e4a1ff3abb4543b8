/**
 * The package as users load it: `dist/` (tsc's output, what `require('toolgate')` runs), not
 * `src-ts/` through tsx. tsx compiles each module to CommonJS whose exports are getters, so every
 * call from one module into another (`gate.check` reaching `callerHandle`, `jsonText`, …) goes
 * through a megamorphic property getter that the published build does not have: timed through
 * tsx, `check` on the MCP corpus cost ~130 ns a call more (1,783 vs 1,657 ns, one run).
 *
 * `loadPackage()` returns `dist/index.js`'s exports and a note to print beside the figures: a
 * warning when a file under `src-ts/` is newer than `dist/index.js` (the bench would time stale
 * code; `npm run build:ts` rebuilds it). Throws, naming the command, when `dist/` is not built.
 */
import { readdirSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'

/** The repository root (this file's folder's parent). */
const root = resolve(typeof __dirname === 'string' ? __dirname : 'bench', '..')

/** The newest modification time of a `.ts` file under `dir` (recursively), in ms. */
function newestSource(dir: string): number {
  let newest = 0
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) newest = Math.max(newest, newestSource(p))
    else if (e.name.endsWith('.ts')) newest = Math.max(newest, statSync(p).mtimeMs)
  }
  return newest
}

/** `dist/index.js` as the package's users load it, and a one-line note on its freshness. */
export function loadPackage(): { toolgate: typeof import('../src-ts/index'); note: string } {
  const entry = join(root, 'dist', 'index.js')
  let built: number
  try {
    built = statSync(entry).mtimeMs
  } catch {
    throw new Error(`${entry} is not built: run \`npm run build:ts\` (or \`npm install\`) first`)
  }
  const stale = newestSource(join(root, 'src-ts')) > built
  const note = stale
    ? 'WARNING: src-ts/ has files newer than dist/ — these figures time stale code; run `npm run build:ts`'
    : 'timing dist/ (the published build), newer than every file under src-ts/'
  return { toolgate: require(entry) as typeof import('../src-ts/index'), note }
}
