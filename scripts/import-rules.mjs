// The import rules of src-ts (docs/architecture.md, "Layers"): no import circles between modules;
// the proxies (src-ts/proxy/) and the adapters (src-ts/adapters/) never import each other (both
// stand on the gate); the binding (native.ts) is imported only by the typed API at the top of
// src-ts, never from a folder (adapters, proxies, CLI, identity, audit go through gate.ts,
// receipt.ts, state.ts …). `node scripts/import-rules.mjs` prints every breach and exits 1 when
// there is one; __test__/import-rules.test.ts runs it. Every relative import counts, `import type`
// and `export … from` included: a circle of types is still two modules that cannot be read apart.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')

function tsFiles(dir) {
  const out = []
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...tsFiles(p))
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p)
  }
  return out
}

function resolveImport(from, spec) {
  const base = resolve(dirname(from), spec)
  for (const p of [base, `${base}.ts`, join(base, 'index.ts')]) {
    if (p.endsWith('.ts') && existsSync(p) && statSync(p).isFile()) return p
  }
  return undefined
}

/** The graph of relative imports between the .ts files under `dir`: file (relative to `dir`, `/`-separated) → files it imports. */
export function importGraph(dir = join(root, 'src-ts')) {
  const key = (p) => relative(dir, p).split(sep).join('/')
  const graph = new Map()
  for (const file of tsFiles(dir)) {
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true)
    const deps = new Set()
    for (const { fileName } of info.importedFiles) {
      if (!fileName.startsWith('.')) continue
      const target = resolveImport(file, fileName)
      if (target?.startsWith(dir + sep)) deps.add(key(target))
    }
    graph.set(key(file), [...deps].sort())
  }
  return graph
}

/** Every import circle, each once, as the list of its files (Tarjan's strongly connected components of more than one file, or a file importing itself). */
export function circles(graph) {
  let next = 0
  const index = new Map()
  const low = new Map()
  const stack = []
  const onStack = new Set()
  const found = []
  const visit = (v) => {
    index.set(v, next)
    low.set(v, next)
    next++
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v), low.get(w)))
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v), index.get(w)))
      }
    }
    if (low.get(v) === index.get(v)) {
      const scc = []
      let w
      do {
        w = stack.pop()
        onStack.delete(w)
        scc.push(w)
      } while (w !== v)
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(scc.sort())
    }
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  return found
}

/** The layer rules: [from-file predicate, to-file predicate, why]. */
const RULES = [
  [(f) => f.startsWith('proxy/'), (t) => t.startsWith('adapters/'), 'a proxy stands on the gate, never on an adapter'],
  [(f) => f.startsWith('adapters/'), (t) => t.startsWith('proxy/'), 'an adapter stands on the gate, never on a proxy'],
  [(f) => f.includes('/'), (t) => t === 'native.ts', 'only the typed API at the top of src-ts calls the binding'],
]

/** Every breach of the rules: import circles and forbidden imports, as readable lines. */
export function breaches(graph = importGraph()) {
  const out = []
  for (const c of circles(graph)) out.push(`import circle: ${c.join(' ↔ ')}`)
  for (const [from, deps] of graph) {
    for (const to of deps) {
      for (const [isFrom, isTo, why] of RULES) if (isFrom(from) && isTo(to)) out.push(`${from} imports ${to}: ${why}`)
    }
  }
  return out
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // `--dir DIR`: check another tree laid out like src-ts (the test's own fixtures).
  const at = process.argv.indexOf('--dir')
  const found = breaches(importGraph(at > 0 ? resolve(process.argv[at + 1]) : undefined))
  for (const line of found) console.error(line)
  if (found.length > 0) process.exit(1)
  console.log('src-ts imports: no circles, no layer breaches')
}
