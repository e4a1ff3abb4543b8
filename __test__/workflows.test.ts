// The GitHub workflows cannot run here, so their structure is checked against the package they
// build: every `napi.targets` entry is built, uploaded and tested; every `npm run` names a real
// script; the release publishes with provenance after CI. The release packaging itself runs for
// real on dummy binaries (`napi artifacts` + `napi prepublish --skip-optional-publish`, nothing
// leaves the machine), and npm/ must be exactly what `napi create-npm-dirs` generates.
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { parseDocument } from 'yaml'

const root = join(__dirname, '..')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  name: string
  version: string
  scripts: Record<string, string>
  napi: { binaryName: string; targets: string[] }
  optionalDependencies?: Record<string, string>
}
const targets = pkg.napi.targets

/** napi-rs's platform name for a Rust target triple (the npm/<dir> and package suffix). */
function platformArchABI(triple: string): string {
  const [arch, , os, abi] = triple.split('-')
  const cpu = ({ x86_64: 'x64', aarch64: 'arm64', i686: 'ia32', armv7: 'arm' } as Record<string, string>)[arch] ?? arch
  if (os === 'darwin') return `darwin-${cpu}`
  return `${os === 'windows' ? 'win32' : os}-${cpu}-${abi}`
}

type Step = { name?: string; uses?: string; run?: string; with?: Record<string, unknown>; if?: string; env?: Record<string, string> }
type Job = {
  name?: string
  'runs-on'?: string
  needs?: string | string[]
  uses?: string
  permissions?: Record<string, string>
  strategy?: { matrix: Record<string, unknown> }
  steps?: Step[]
}
type Workflow = { name: string; on: Record<string, unknown>; jobs: Record<string, Job>; permissions?: Record<string, string> }

function load(file: string): Workflow {
  const doc = parseDocument(readFileSync(join(root, '.github', 'workflows', file), 'utf8'), { uniqueKeys: true, prettyErrors: true })
  expect(doc.errors.map(String)).toEqual([])
  expect(doc.warnings.map(String)).toEqual([])
  return doc.toJS() as Workflow
}

const ci = load('CI.yml')
const release = load('release.yml')
const allSteps = (wf: Workflow) => Object.values(wf.jobs).flatMap((j) => j.steps ?? [])
const runs = (wf: Workflow) => allSteps(wf).flatMap((s) => (s.run ? [s.run] : []))
const needs = (j: Job) => (j.needs === undefined ? [] : Array.isArray(j.needs) ? j.needs : [j.needs])

describe('CI.yml', () => {
  it('runs on pushes, pull requests, and as the first stage of a release', () => {
    expect(Object.keys(ci.on)).toEqual(expect.arrayContaining(['push', 'pull_request', 'workflow_call']))
    expect(Object.keys(ci.jobs)).toEqual(expect.arrayContaining(['lint', 'msrv', 'checkout', 'build', 'test-macos-windows', 'test-linux']))
    for (const [id, job] of Object.entries(ci.jobs)) {
      expect(job['runs-on'], id).toBeTruthy()
      expect(job.steps?.length, id).toBeGreaterThan(0)
      expect(job.steps![0].uses, `${id} starts with a checkout`).toMatch(/^actions\/checkout@v\d+$/)
    }
  })

  it('builds every napi target on a host of its OS and uploads its binary', () => {
    const build = ci.jobs.build
    const settings = build.strategy!.matrix.settings as { host: string; target: string; build: string }[]
    expect(settings.map((s) => s.target).sort()).toEqual([...targets].sort())
    for (const s of settings) {
      const host = s.target.includes('apple') ? /^macos-/ : s.target.includes('windows') ? /^windows-/ : /^ubuntu-/
      expect(s.host, s.target).toMatch(host)
      expect(s.build, s.target).toMatch(new RegExp(`^npm run build:native -- --target ${s.target}( |$)`))
      if (s.target.includes('musl')) expect(s.build).toMatch(/ -x$/) // cargo-zigbuild, as the template does
    }
    expect(build['runs-on']).toBe('${{ matrix.settings.host }}')
    const upload = build.steps!.find((s) => s.uses?.startsWith('actions/upload-artifact@'))!
    expect(upload.with).toMatchObject({
      name: 'bindings-${{ matrix.settings.target }}',
      path: 'binding/${{ env.APP_NAME }}.*.node',
      'if-no-files-found': 'error',
    })
    expect((ci as unknown as { env: Record<string, string> }).env.APP_NAME).toBe(pkg.napi.binaryName)
    // the build output dir of `build:native` is where the upload looks
    expect(pkg.scripts['build:native']).toMatch(/--platform\b.*--output-dir binding\b/)
    // zig and cargo-zigbuild only where the target needs them
    for (const s of build.steps!.filter((s) => /zig/.test(`${s.uses} ${s.name}`))) expect(s.if).toContain("'musl'")
  })

  it('tests every target on Node 20 and 22, with the binary its build job uploaded', () => {
    const mw = ci.jobs['test-macos-windows']
    const lx = ci.jobs['test-linux']
    const mwTargets = (mw.strategy!.matrix.settings as { target: string }[]).map((s) => s.target)
    const lxTargets = lx.strategy!.matrix.target as string[]
    expect([...mwTargets, ...lxTargets].sort()).toEqual([...targets].sort())
    for (const job of [mw, lx]) {
      expect(needs(job)).toContain('build')
      expect(job.strategy!.matrix.node).toEqual(['20', '22'])
      const download = job.steps!.find((s) => s.uses?.startsWith('actions/download-artifact@'))!
      expect(download.with?.name).toMatch(/^bindings-\$\{\{ matrix\.(settings\.)?target \}\}$/)
      expect(download.with?.path).toBe('binding') // where the generated loader looks in a checkout
      expect(job.steps!.some((s) => s.run?.includes('npm run test:js'))).toBe(true)
    }
    // node-version follows the matrix, and arm64 Linux runs on an arm64 runner
    expect(mw.steps!.find((s) => s.uses?.startsWith('actions/setup-node@'))!.with!['node-version']).toBe('${{ matrix.node }}')
    expect(lx['runs-on']).toContain('ubuntu-24.04-arm')
    expect(lx.steps!.map((s) => s.run ?? '').join('\n')).toMatch(/node:\$\{\{ matrix\.node \}\}-alpine/)
  })

  it('mirrors .ci/run: the linux-x64 checkout job runs it', () => {
    expect(ci.jobs.checkout.steps!.some((s) => s.run === '.ci/run')).toBe(true)
    expect(existsSync(join(root, '.ci', 'run'))).toBe(true)
  })

  it('checks the MSRV declared in Cargo.toml', () => {
    const cargo = readFileSync(join(root, 'Cargo.toml'), 'utf8')
    expect(cargo).toMatch(/^rust-version = "\d+\.\d+(\.\d+)?"$/m)
    const steps = ci.jobs.msrv.steps!
    expect(steps.some((s) => s.run?.includes('rust-version'))).toBe(true)
    expect(steps.some((s) => s.run?.startsWith('cargo check'))).toBe(true)
  })
})

describe('release.yml', () => {
  it('runs on version tags, reuses CI, and publishes after it with provenance', () => {
    expect(release.on).toEqual({ push: { tags: ['v*'] } })
    expect(release.jobs.ci.uses).toBe('./.github/workflows/CI.yml')
    const publish = release.jobs.publish
    expect(needs(publish)).toEqual(['ci'])
    expect(publish.permissions).toMatchObject({ 'id-token': 'write', contents: 'write' })
    const steps = publish.steps!
    const order = (pred: (s: Step) => boolean) => steps.findIndex(pred)
    const download = order((s) => !!s.uses?.startsWith('actions/download-artifact@'))
    const artifacts = order((s) => s.run === 'npm run artifacts')
    const build = order((s) => s.run === 'npm run build:ts')
    const pub = order((s) => /^\s*npm publish .*--provenance/m.test(s.run ?? ''))
    for (const i of [download, artifacts, build, pub]) expect(i).toBeGreaterThanOrEqual(0)
    expect(download).toBeLessThan(artifacts)
    expect(artifacts).toBeLessThan(pub)
    expect(build).toBeLessThan(pub)
    expect(steps[download].with).toMatchObject({ path: 'artifacts', pattern: 'bindings-*' })
    expect(steps[pub].env?.NODE_AUTH_TOKEN).toBe('${{ secrets.NPM_TOKEN }}')
    // the platform packages are published and wired in by napi prepublish, run by `npm publish`
    expect(pkg.scripts.prepublishOnly).toBe('napi prepublish -t npm')
    expect(pkg.scripts.artifacts).toMatch(/^napi artifacts --output-dir artifacts --npm-dir npm$/)
  })
})

describe('both workflows', () => {
  it('use only npm scripts that exist and installed CLIs', () => {
    for (const wf of [ci, release]) {
      for (const run of runs(wf)) {
        for (const m of run.matchAll(/npm run ([\w:.-]+)/g)) expect(Object.keys(pkg.scripts), run).toContain(m[1])
        for (const m of run.matchAll(/\bnpx ([\w@/.-]+)/g)) expect(existsSync(join(root, 'node_modules', '.bin', m[1])), run).toBe(true)
      }
    }
  })

  it('install with npm ci and never run the package `prepare` build by accident', () => {
    for (const wf of [ci, release]) {
      for (const run of runs(wf)) {
        if (/\bnpm (ci|install)\b/.test(run)) expect(run, 'use --ignore-scripts (the build is its own step)').toMatch(/npm ci --ignore-scripts/)
      }
    }
  })

  it('pin every action to a major version', () => {
    for (const s of [...allSteps(ci), ...allSteps(release)]) {
      if (s.uses) expect(s.uses).toMatch(/^[\w.-]+\/[\w.-]+@(v\d+(\.\d+)*|stable|master)$/)
    }
  })
})

// ---------------------------------------------------------------------------------------------
// npm/<platform>: generated by napi, in step with the package and with the generated loader

const napiBin = join(root, 'node_modules', '.bin', process.platform === 'win32' ? 'napi.cmd' : 'napi')
const scratch: string[] = []
afterAll(() => {
  for (const d of scratch) rmSync(d, { recursive: true, force: true })
})
function tempCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-release-'))
  scratch.push(dir)
  cpSync(join(root, 'package.json'), join(dir, 'package.json'))
  return dir
}
function napi(args: string[], cwd: string) {
  const env: NodeJS.ProcessEnv = { ...process.env }
  // nothing may leave the machine: no GitHub release, and a registry that does not answer
  delete env.GITHUB_REPOSITORY
  delete env.GITHUB_TOKEN
  env.npm_config_registry = 'http://127.0.0.1:9/'
  const r = spawnSync(napiBin, args, { cwd, env, encoding: 'utf8', shell: process.platform === 'win32', timeout: 120_000 })
  if (r.status !== 0) throw new Error(`napi ${args.join(' ')} exited ${r.status}\n${r.stdout}\n${r.stderr}`)
  return r
}
// CRLF-normalized: a Windows checkout may have converted line endings
const read = (p: string) => readFileSync(p, 'utf8').replace(/\r\n/g, '\n')

describe('npm/<platform> packages', () => {
  it('exist for exactly the napi targets, named as the generated loader requires them', () => {
    const dirs = readdirSync(join(root, 'npm')).sort()
    expect(dirs).toEqual(targets.map(platformArchABI).sort())
    const loader = read(join(root, 'binding', 'index.js'))
    for (const dir of dirs) {
      const p = JSON.parse(read(join(root, 'npm', dir, 'package.json')))
      expect(p.name).toBe(`${pkg.name}-${dir}`)
      expect(p.version).toBe(pkg.version)
      expect(p.main).toBe(`${pkg.napi.binaryName}.${dir}.node`)
      expect(p.files).toEqual([p.main])
      expect(p.os).toEqual([dir.split('-')[0]])
      expect(p.cpu).toEqual([dir.split('-')[1]])
      if (dir.startsWith('linux-')) expect(p.libc).toEqual([dir.endsWith('-musl') ? 'musl' : 'glibc'])
      expect(p.scripts).toBeUndefined()
      expect(loader).toContain(`require('${p.name}')`)
      expect(loader).toContain(`require('./${p.main}')`) // the checkout fallback: binding/<file>
      expect(existsSync(join(root, 'npm', dir, 'README.md'))).toBe(true)
    }
    // the loader's version check expects this package version (regenerate it with `napi build`)
    const expected = new Set([...loader.matchAll(/bindingPackageVersion !== '([^']+)'/g)].map((m) => m[1]))
    expect([...expected]).toEqual([pkg.version])
  })

  it('are exactly what `napi create-npm-dirs` generates from package.json (never hand-edited)', () => {
    const dir = tempCopy()
    napi(['create-npm-dirs'], dir)
    const generated = readdirSync(join(dir, 'npm')).sort()
    expect(generated).toEqual(readdirSync(join(root, 'npm')).sort())
    for (const platform of generated) {
      for (const file of readdirSync(join(dir, 'npm', platform))) {
        expect(read(join(root, 'npm', platform, file)), `npm/${platform}/${file} differs: run \`npx napi create-npm-dirs\``).toBe(
          read(join(dir, 'npm', platform, file)),
        )
      }
    }
  })

  it('survive the release path: napi artifacts, then napi prepublish wires them as optionalDependencies', () => {
    // what release.yml does after downloading every `bindings-<target>` artifact, on dummy binaries
    const dir = tempCopy()
    cpSync(join(root, 'npm'), join(dir, 'npm'), { recursive: true })
    for (const t of targets) {
      const p = platformArchABI(t)
      mkdirSync(join(dir, 'artifacts', `bindings-${t}`), { recursive: true })
      writeFileSync(join(dir, 'artifacts', `bindings-${t}`, `${pkg.napi.binaryName}.${p}.node`), `dummy ${t}`)
    }
    napi(pkg.scripts.artifacts.split(' ').slice(1), dir)
    for (const t of targets) {
      const p = platformArchABI(t)
      expect(read(join(dir, 'npm', p, `${pkg.napi.binaryName}.${p}.node`))).toBe(`dummy ${t}`)
    }
    // --skip-optional-publish: validate, stage and rewrite package.json, publish nothing
    napi(['prepublish', '-t', 'npm', '--skip-optional-publish', '--no-gh-release'], dir)
    const published = JSON.parse(read(join(dir, 'package.json')))
    expect(published.optionalDependencies).toEqual(Object.fromEntries(targets.map((t) => [`${pkg.name}-${platformArchABI(t)}`, pkg.version])))
    // the checkout itself declares none: they are written at publish time only
    expect(pkg.optionalDependencies).toBeUndefined()
  })
})
