#!/usr/bin/env node
// The official MCP conformance suite (@modelcontextprotocol/conformance, server scenarios)
// against the conformance repo's reference server, in three set-ups:
//   direct    the reference server over Streamable HTTP, nothing between
//   stdio     `toolgate mcp-proxy --listen` in front of the reference server spawned over stdio
//   upstream  `toolgate mcp-proxy --listen --upstream-url` in front of the HTTP reference server
// Each run gets fresh processes. Exits 1 when any scenario of any run fails (or cannot run).
//
//   node scripts/mcp-conformance.mjs [--mode direct|stdio|upstream|all] [--runs N] [--retries N]
//
// --retries N (default 0) runs a failed run again, up to N times, and says so: for `direct`
// only, where the reference pair races by itself (the server sends its elicitation and sampling
// requests on the session's GET stream, which the SDK client opens without waiting for it, so
// a call made at once can find it not yet open); through the proxy there is no such race.
//
// The reference server comes from ../shared/conformance/mcp-reference-server beside the
// repository (or $TOOLGATE_CONFORMANCE_DIR); without it the run is skipped (exit 0), except
// under CI=true (exit 1). It is copied under node_modules/.cache so its imports (the MCP SDK,
// express, cors, zod: devDependencies) resolve. The suite needs Node >= 22: this Node when it
// is one, else $TOOLGATE_NODE22, else a Node 22 binary from npm (`npx node@NODE22`, the `node`
// package, installed once into npm's cache). The proxy is the built CLI (dist/cli/main.js).
import { spawn, spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The Node 22 taken from npm when this Node is older. */
const NODE22 = '22.23.3'
/** How long one conformance run may take before it counts as failed. */
const RUN_TIMEOUT_MS = 180_000
/** How long a server or proxy may take to start listening. */
const START_TIMEOUT_MS = 30_000

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(join(root, 'package.json'))

function args() {
  const out = { mode: 'all', runs: 1, retries: 0 }
  const argv = process.argv.slice(2)
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--mode') out.mode = argv[++i]
    else if (argv[i] === '--runs') out.runs = Number(argv[++i])
    else if (argv[i] === '--retries') out.retries = Number(argv[++i])
    else fail(`unknown argument ${argv[i]}`)
  }
  if (!Number.isInteger(out.retries) || out.retries < 0 || out.retries > 5) fail('--retries: 0 to 5')
  if (!['direct', 'stdio', 'upstream', 'all'].includes(out.mode)) fail(`--mode: direct, stdio, upstream or all, got ${out.mode}`)
  if (!Number.isInteger(out.runs) || out.runs < 1 || out.runs > 100) fail('--runs: 1 to 100')
  return out
}

function fail(why) {
  console.error(`mcp-conformance: ${why}`)
  process.exit(1)
}

/** The reference server's folder, or undefined when absent. */
function referenceDir() {
  const base = process.env.TOOLGATE_CONFORMANCE_DIR ?? join(root, '..', 'shared', 'conformance')
  const dir = join(base, 'mcp-reference-server')
  return existsSync(join(dir, 'everything-server-http.mjs')) ? dir : undefined
}

/** The reference server's two variants, copied where their imports resolve from the repository's node_modules. */
function stageServers(dir) {
  const cache = join(root, 'node_modules', '.cache', 'mcp-conformance')
  mkdirSync(cache, { recursive: true })
  for (const f of ['everything-server-http.mjs', 'everything-server-stdio.mjs']) copyFileSync(join(dir, f), join(cache, f))
  return { http: join(cache, 'everything-server-http.mjs'), stdio: join(cache, 'everything-server-stdio.mjs') }
}

/** A Node >= 22 to run the suite with. */
function node22() {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath
  if (process.env.TOOLGATE_NODE22) return process.env.TOOLGATE_NODE22
  const r = spawnSync('npx', ['--yes', `node@${NODE22}`, '-p', 'process.execPath'], { cwd: root, encoding: 'utf8', timeout: 300_000 })
  const path = r.stdout?.trim().split('\n').pop()
  if (r.status !== 0 || !path || !existsSync(path)) fail(`could not get Node ${NODE22} from npm (npx node@${NODE22}): ${r.stderr ?? r.error?.message}`)
  return path
}

function freePort() {
  return new Promise((resolvePort, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolvePort(port))
    })
  })
}

/** Spawns a process and waits for `pattern` on its stdout or stderr; resolves with the match and the child. */
function start(cmd, argv, env, pattern) {
  return new Promise((resolveStart, reject) => {
    const child = spawn(cmd, argv, { cwd: root, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] })
    let seen = ''
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${argv.join(' ')} did not start in ${START_TIMEOUT_MS} ms:\n${seen}`))
    }, START_TIMEOUT_MS)
    const onData = (d) => {
      seen += d.toString()
      if (seen.length > 1 << 20) seen = seen.slice(-65536)
      const m = pattern.exec(seen)
      if (m) {
        clearTimeout(timer)
        child.stdout.removeAllListeners('data').resume()
        child.stderr.removeAllListeners('data').resume()
        resolveStart({ child, match: m })
      }
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${argv.join(' ')} exited (${code}) before listening:\n${seen}`))
    })
  })
}

function stop(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((done) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 5000)
    child.once('exit', () => {
      clearTimeout(kill)
      done()
    })
    child.kill('SIGTERM')
  })
}

/** Starts the set-up of `mode`; resolves with the URL to test and the processes to stop. */
async function setUp(mode, servers) {
  const cli = join(root, 'dist', 'cli', 'main.js')
  const httpServer = async () => {
    const port = await freePort()
    const { child } = await start(process.execPath, [servers.http], { PORT: String(port) }, /MCP endpoint: http:\/\/localhost:\d+\/mcp/)
    return { child, url: `http://127.0.0.1:${port}/mcp` }
  }
  const listening = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/
  if (mode === 'direct') {
    const s = await httpServer()
    return { url: s.url, children: [s.child] }
  }
  if (mode === 'stdio') {
    const { child, match } = await start(process.execPath, [cli, 'mcp-proxy', '--listen', '127.0.0.1:0', '--', process.execPath, servers.stdio], {}, listening)
    return { url: match[1], children: [child] }
  }
  const s = await httpServer()
  try {
    const { child, match } = await start(process.execPath, [cli, 'mcp-proxy', '--listen', '127.0.0.1:0', '--upstream-url', s.url], {}, listening)
    return { url: match[1], children: [child, s.child] }
  } catch (err) {
    await stop(s.child)
    throw err
  }
}

/** The failed checks' scenario and message, from the results the suite wrote under `dir`. */
function failedChecks(dir) {
  const out = []
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.name === 'checks.json') {
        try {
          for (const c of JSON.parse(readFileSync(p, 'utf8'))) if (c.status === 'FAILURE') out.push(`  ${c.id}: ${c.errorMessage ?? '(no message)'}`)
        } catch {}
      }
    }
  }
  if (existsSync(dir)) walk(dir)
  return out
}

/** One run of the suite against `url`: its summary lines, and the counts. */
function runSuite(node, url) {
  const pkg = require.resolve('@modelcontextprotocol/conformance/package.json')
  const bin = join(dirname(pkg), require(pkg).bin.conformance)
  const results = mkdtempSync(join(tmpdir(), 'toolgate-mcp-conformance-'))
  return new Promise((done) => {
    const child = spawn(node, [bin, 'server', '--url', url, '-o', results], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d) => (out += d.toString()))
    child.stderr.on('data', (d) => (out += d.toString()))
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS)
    child.once('exit', (code) => {
      clearTimeout(timer)
      const total = /Total: (\d+) passed, (\d+) failed/.exec(out)
      const failedScenarios = [...out.split('\n').filter((l) => l.startsWith('✗')), ...failedChecks(results)]
      rmSync(results, { recursive: true, force: true })
      done({ code, passed: total ? Number(total[1]) : 0, failed: total ? Number(total[2]) : -1, failedScenarios, out })
    })
  })
}

async function main() {
  const { mode, runs, retries } = args()
  const dir = referenceDir()
  if (dir === undefined) {
    const msg = 'the MCP conformance reference server was not found (../shared/conformance/mcp-reference-server beside the repository, or $TOOLGATE_CONFORMANCE_DIR)'
    if (process.env.CI === 'true') fail(`${msg}: CI must run it`)
    console.log(`SKIPPED: ${msg}`)
    return
  }
  if (mode !== 'direct' && !existsSync(join(root, 'dist', 'cli', 'main.js'))) fail('dist/cli/main.js is missing: run `npm run build:ts` first')
  const servers = stageServers(dir)
  const node = node22()
  const modes = mode === 'all' ? ['direct', 'stdio', 'upstream'] : [mode]
  let clean = 0
  let firstTry = 0
  let total = 0
  for (const m of modes) {
    for (let i = 1; i <= runs; i++) {
      total++
      for (let attempt = 0; attempt <= retries; attempt++) {
        const ok = await oneRun(m, servers, node, attempt === 0 ? `run ${i}` : `run ${i}, retry ${attempt}`)
        if (ok) {
          clean++
          if (attempt === 0) firstTry++
          break
        }
      }
    }
  }
  console.log(`mcp conformance: ${clean} of ${total} runs passed every check${retries > 0 ? ` (${firstTry} at the first try)` : ''}`)
  if (clean !== total) process.exit(1)
}

/** Sets up `mode` afresh, runs the suite once, prints the outcome; whether every check passed. */
async function oneRun(mode, servers, node, label) {
  let setup
  try {
    setup = await setUp(mode, servers)
    const r = await runSuite(node, setup.url)
    const ok = r.code === 0 && r.failed === 0 && r.passed > 0
    console.log(`mcp conformance ${mode} ${label}: ${r.passed} passed, ${r.failed} failed${ok ? '' : ` (exit ${r.code})`}`)
    if (!ok) console.log(r.failedScenarios.length > 0 ? r.failedScenarios.join('\n') : r.out.slice(-4000))
    return ok
  } catch (err) {
    console.log(`mcp conformance ${mode} ${label}: could not run (${err.message})`)
    return false
  } finally {
    for (const c of setup?.children ?? []) await stop(c)
  }
}

main().catch((err) => fail(err.stack ?? String(err)))
