// Runs on `npm install` in a checkout: builds the native addon (cargo) and the TypeScript.
// In an installed package (no Rust sources) it does nothing: the published package never
// builds or downloads anything at install.
import { existsSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
if (!existsSync(join(root, 'crates', 'toolgate-node', 'Cargo.toml'))) process.exit(0)

function run(script) {
  console.log(`toolgate: npm run ${script}`)
  const r = spawnSync('npm', ['run', '--silent', script], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' })
  if (r.status !== 0) {
    console.error(`toolgate: \`npm run ${script}\` failed (exit ${r.status}). The native addon needs Rust (https://rustup.rs) in a checkout.`)
    process.exit(r.status ?? 1)
  }
}
run('build:native')
run('build:ts')
