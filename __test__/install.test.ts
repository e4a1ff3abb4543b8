// The install path users get: `npm pack` the main package and this platform's binary package,
// install both tarballs into an empty project with no Rust toolchain on PATH, then load the
// package through `require`, `import` and its `toolgate` bin. Also asserts what the main tarball
// holds (`files` in package.json): the built JS and types, the generated loader, the config
// schema; never Rust sources, tests, benchmarks, fuzz targets, build output or a `.node` binary.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const root = join(__dirname, '..')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  name: string
  version: string
  napi: { binaryName: string }
  scripts?: Record<string, string>
}

/** The napi-rs platform name of this host (`linux-x64-gnu`, `darwin-arm64`, `win32-x64-msvc` …). */
function hostPlatform(): string {
  const { platform, arch } = process
  if (platform === 'linux') {
    const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header
    return `linux-${arch}-${header?.glibcVersionRuntime ? 'gnu' : 'musl'}`
  }
  if (platform === 'win32') return `win32-${arch}-msvc`
  return `${platform}-${arch}`
}

const platform = hostPlatform()
const platformDir = join(root, 'npm', platform)
const binaryFile = `${pkg.napi.binaryName}.${platform}.node`
const builtBinary = join(root, 'binding', binaryFile)
const distBuilt = existsSync(join(root, 'dist', 'index.js')) && existsSync(join(root, 'dist', 'index.mjs'))
const canInstall = existsSync(platformDir) && existsSync(builtBinary) && distBuilt

// npm itself, run by this very node: no shell, and no dependence on PATH for npm or npx.
const npmBin = (name: 'npm' | 'npx') => {
  const nodeDir = dirname(process.execPath)
  const candidates = [
    join(nodeDir, 'node_modules', 'npm', 'bin', `${name}-cli.js`), // Windows layout
    join(nodeDir, '..', 'lib', 'node_modules', 'npm', 'bin', `${name}-cli.js`), // POSIX layout
  ]
  const found = candidates.find((p) => existsSync(p))
  if (!found) throw new Error(`cannot find ${name}-cli.js next to ${process.execPath}`)
  return found
}

const RUST_TOOLS = ['cargo', 'rustc', 'cargo.exe', 'rustc.exe']
const holdsRust = (dir: string) => RUST_TOOLS.some((t) => existsSync(join(dir, t)))

/** The environment of a user without Rust: PATH minus every directory holding cargo or rustc. */
function rustlessEnv(scratch: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (/^path$/i.test(k)) continue
    // the outer `npm test` exports its own package and lifecycle; the consumer must not see them
    if (/^npm_/i.test(k) && !/^npm_config_(cache|registry|userconfig)$/i.test(k)) continue
    if (k === 'NAPI_RS_NATIVE_LIBRARY_PATH') continue // would bypass the platform package
    env[k] = v
  }
  const dirs = (process.env.PATH ?? process.env.Path ?? '').split(delimiter).filter((d) => d && !holdsRust(d))
  let nodeDir = dirname(process.execPath)
  if (holdsRust(nodeDir)) {
    // node shares a directory with cargo: expose node alone through a shim directory
    nodeDir = join(scratch, 'node-only-bin')
    mkdirSync(nodeDir, { recursive: true })
    symlinkSync(process.execPath, join(nodeDir, process.platform === 'win32' ? 'node.exe' : 'node'))
  }
  env.PATH = [nodeDir, ...dirs.filter((d) => d !== nodeDir)].join(delimiter)
  return env
}

function run(args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): SpawnSyncReturns<string> {
  const r = spawnSync(process.execPath, args, { cwd, env, encoding: 'utf8', timeout: 180_000, maxBuffer: 64 * 1024 * 1024 })
  if (r.error) throw r.error
  return r
}

function ok(r: SpawnSyncReturns<string>, what: string): string {
  if (r.status !== 0) throw new Error(`${what} exited ${r.status}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`)
  return r.stdout
}

type PackResult = { filename: string; files: { path: string; mode: number }[] }[]

function pack(dir: string, dest: string | null): PackResult {
  const args = [npmBin('npm'), 'pack', '--json', '--ignore-scripts', dest === null ? '--dry-run' : `--pack-destination=${dest}`]
  return JSON.parse(ok(run(args, dir), `npm pack in ${dir}`)) as PackResult
}

describe('the published main package', () => {
  it('holds only built JS and types, the generated loader, the schema and docs', () => {
    const [result] = pack(root, null)
    const files = result.files.map((f) => f.path).sort()
    // the corpus `toolgate bench` runs by default (the one bench/ measures with)
    // (npm adds the README.md of every folder it packs from)
    const corpus = ['bench/corpus/tools.json', 'bench/corpus/cases.json', 'bench/corpus/README.md', 'bench/README.md']
    const allowed = (p: string) =>
      p.startsWith('dist/') ||
      p.startsWith('schema/') ||
      corpus.includes(p) ||
      ['binding/index.js', 'binding/index.d.ts', 'package.json', 'README.md', 'LICENSE', 'CHANGELOG.md'].includes(p)
    expect(files.filter((p) => !allowed(p))).toEqual([])
    // spelled out, so a widened `files` list cannot slip anything in
    for (const p of files) {
      expect(p).not.toMatch(/\.(rs|node|tgz|test\.ts)$/)
      if (!corpus.includes(p)) expect(p).not.toMatch(/^(crates|src-ts|__test__|bench|fuzz|target|npm|scripts|node_modules)\//)
      expect(p).not.toMatch(/(^|\/)(Cargo\.(toml|lock)|tsconfig.*\.json|vitest\.config\.\w+)$/)
    }
    // what users load must be there
    for (const p of ['bench/corpus/tools.json', 'bench/corpus/cases.json', 'dist/index.js', 'dist/index.mjs', 'dist/index.d.ts', 'dist/cli/main.js', 'binding/index.js', 'binding/index.d.ts', 'schema/toolgate.config.schema.json']) {
      expect(files).toContain(p)
    }
  })

  it('runs no install scripts and ships entry points that exist', () => {
    for (const s of ['preinstall', 'install', 'postinstall']) expect(pkg.scripts?.[s]).toBeUndefined()
    const main = readFileSync(join(root, 'dist', 'cli', 'main.js'), 'utf8')
    expect(main.split('\n')[0]).toBe('#!/usr/bin/env node')
  })
})

if (!canInstall) {
  console.warn(`install test skipped: needs npm/${platform}, binding/${binaryFile} and dist/ (run \`npm run build\`)`)
}

describe.runIf(canInstall)(`npm install of toolgate + toolgate-${platform} with no Rust on PATH`, () => {
  let scratch = ''
  let project = ''
  let env: NodeJS.ProcessEnv = {}

  beforeAll(() => {
    // real path: require.resolve answers with it (macOS /var → /private/var, Windows short names)
    scratch = realpathSync.native(mkdtempSync(join(tmpdir(), 'toolgate-install-')))
    const tarballs = join(scratch, 'tarballs')
    mkdirSync(tarballs)

    // the platform package as CI assembles it: npm/<platform> plus the binary built for it
    const platformPkg = join(scratch, `platform-${platform}`)
    cpSync(platformDir, platformPkg, { recursive: true })
    cpSync(builtBinary, join(platformPkg, binaryFile))
    const [platformTar] = pack(platformPkg, tarballs)
    expect(platformTar.files.map((f) => f.path).sort()).toEqual(['README.md', binaryFile, 'package.json'].sort())

    // `--ignore-scripts`: `prepare` would rebuild the addon; the tarball takes dist/ as built
    const [mainTar] = pack(root, tarballs)

    project = join(scratch, 'project')
    mkdirSync(project)
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }, null, 2))
    env = rustlessEnv(scratch)

    // No `--ignore-scripts` here: the install must succeed with lifecycle scripts enabled and no
    // cargo, so a build-at-install step could not hide. `yaml` comes from the npm cache if it can.
    ok(
      run(
        [npmBin('npm'), 'install', '--no-audit', '--no-fund', '--prefer-offline', '--no-package-lock', join(tarballs, mainTar.filename), join(tarballs, platformTar.filename)],
        project,
        env,
      ),
      'npm install of the tarballs',
    )
  }, 240_000)

  afterAll(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true })
  })

  it('has no cargo or rustc on the PATH it installs and runs with', () => {
    for (const tool of ['cargo', 'rustc']) {
      const r = spawnSync(tool, ['--version'], { env, encoding: 'utf8' })
      expect(r.error, `${tool} should not be found`).toBeDefined()
    }
  })

  it('installs the main package without any .node file, and the binary from its own package', () => {
    const installed = join(project, 'node_modules', pkg.name)
    expect(readdirSync(join(installed, 'binding')).sort()).toEqual(['index.d.ts', 'index.js'])
    expect(existsSync(join(project, 'node_modules', `${pkg.name}-${platform}`, binaryFile))).toBe(true)
    expect(existsSync(join(installed, 'crates'))).toBe(false)
    // the manifest as published: nothing runs at install
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'))
    for (const s of ['preinstall', 'install', 'postinstall']) expect(manifest.scripts?.[s]).toBeUndefined()
    expect(manifest.version).toBe(pkg.version)
  })

  const config = JSON.stringify({
    tools: [{ name: 'search', inputSchema: { type: 'object', properties: { limit: { type: 'integer' } }, required: ['limit'] } }],
  })

  it('require("toolgate") loads the prebuilt binary and checks a call', () => {
    writeFileSync(
      join(project, 'cjs.cjs'),
      `const { ToolGate, ToolGateError } = require('toolgate')
const gate = new ToolGate(${config})
const v = gate.check('search', '{"limit":"10"}')
console.log(JSON.stringify({ outcome: v.outcome, arguments: v.arguments, from: require.resolve('toolgate'),
  binary: require.resolve('toolgate-${platform}'), error: typeof ToolGateError }))
`,
    )
    const out = JSON.parse(ok(run(['cjs.cjs'], project, env), 'require'))
    expect(out.outcome).toBe('repaired')
    expect(out.arguments).toEqual({ limit: 10 })
    expect(out.error).toBe('function')
    expect(out.from.startsWith(join(project, 'node_modules'))).toBe(true)
    expect(out.binary.startsWith(join(project, 'node_modules'))).toBe(true)
  })

  it('import("toolgate") gives the same API from ESM', () => {
    writeFileSync(
      join(project, 'esm.mjs'),
      `const { ToolGate, defineConfig, default: cjs } = await import('toolgate')
const gate = new ToolGate(defineConfig(${config}))
const v = gate.check('search', { limit: 3 })
console.log(JSON.stringify({ outcome: v.outcome, arguments: v.arguments, same: cjs.ToolGate === ToolGate }))
`,
    )
    const out = JSON.parse(ok(run(['esm.mjs'], project, env), 'import'))
    expect(out).toEqual({ outcome: 'passed', arguments: { limit: 3 }, same: true })
  })

  it('the Cedar engine subpath resolves without cedar-wasm installed, and says what is missing', () => {
    writeFileSync(
      join(project, 'cedar.cjs'),
      `const { cedarEngine } = require('toolgate/engines/cedar')
let code
try { cedarEngine({ policies: 'permit(principal, action, resource);' }) } catch (e) { code = e.code + ' ' + e.message }
console.log(JSON.stringify({ type: typeof cedarEngine, code }))
`,
    )
    const out = JSON.parse(ok(run(['cedar.cjs'], project, env), 'require toolgate/engines/cedar'))
    expect(out.type).toBe('function')
    expect(out.code).toMatch(/^E_CONFIG .*@cedar-policy\/cedar-wasm/)
  })

  it('npx toolgate --help runs the installed bin', () => {
    const bin = join(project, 'node_modules', pkg.name, 'dist', 'cli', 'main.js')
    if (process.platform !== 'win32') expect(statSync(bin).mode & 0o111).not.toBe(0)
    const help = ok(run([npmBin('npx'), '--no', '--', 'toolgate', '--help'], project, env), 'npx toolgate --help')
    expect(help).toContain('Usage:')
    expect(help).toContain('toolgate demo')
    const version = ok(run([npmBin('npx'), '--no', '--', 'toolgate', '--version'], project, env), 'npx toolgate --version')
    expect(version.trim()).toBe(pkg.version)
  })

  it('npx toolgate bench runs the shipped corpus in the installed package', () => {
    const out = ok(run([npmBin('npx'), '--no', '--', 'toolgate', 'bench', '--iterations', '3'], project, env), 'npx toolgate bench')
    expect(out).toContain('49/49')
  })

  it('the installed .d.ts files are complete: a strict consumer compiles against them', () => {
    // the type-test consumer, now against the tarball's types (skipLibCheck off: every .d.ts
    // the public types reach is checked, so one the `files` list left out would show up here)
    const tsconfig = readFileSync(join(root, '__test__', 'types', 'tsconfig.json'), 'utf8').replace(/^\s*\/\/.*$/gm, '')
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions: JSON.parse(tsconfig).compilerOptions, files: ['consumer.ts'] }))
    cpSync(join(root, '__test__', 'types', 'consumer.ts'), join(project, 'consumer.ts'))
    const r = run([join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json', '--listFiles'], project, env)
    expect(r.stderr).toBe('')
    const listed = ok(r, 'tsc on the installed package').split('\n').filter((l) => l.includes('node_modules/toolgate/'))
    expect(listed.some((l) => l.endsWith('node_modules/toolgate/dist/index.d.ts'))).toBe(true)
  })

  // last: it removes the platform package
  it('without the platform package, says which platform, which package, and how to build', () => {
    rmSync(join(project, 'node_modules', `${pkg.name}-${platform}`), { recursive: true, force: true })
    writeFileSync(
      join(project, 'missing.cjs'),
      `const { ToolGate } = require('toolgate')
try { new ToolGate({ tools: [] }); console.log(JSON.stringify({ loaded: true })) }
catch (e) { console.log(JSON.stringify({ name: e.name, code: e.code, message: e.message })) }
`,
    )
    const out = JSON.parse(ok(run(['missing.cjs'], project, env), 'require without binary'))
    expect(out.loaded).toBeUndefined()
    expect(out.code).toBe('E_CONFIG')
    expect(out.message).toContain(`${process.platform}-${process.arch}`)
    expect(out.message).toContain(`looked for the package ${pkg.name}-${platform} `)
    expect(out.message).toMatch(/build from source/)
    console.log(`toolgate without its binary says:\n  ${out.message.slice(0, 600)}`)
  })
})
