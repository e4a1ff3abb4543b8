/**
 * Dumps the tool schemas real MCP servers publish (`tools/list`) into `servers/<name>.json`,
 * through the official SDK client over stdio — exactly what an MCP host receives.
 *
 *   npx tsx bench/corpus/mcp/dump-tools.ts [dir-with-node_modules …]
 *
 * Servers are looked up in this checkout's node_modules and in each extra folder given (for
 * servers the tests do not install: `npm i @modelcontextprotocol/server-everything
 * @modelcontextprotocol/server-memory @modelcontextprotocol/server-sequential-thinking` in a
 * scratch folder). A server that is not found is skipped and said so; the committed files are
 * what `corpus.ts` reads, so the benchmark never needs the servers themselves.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'

// The package is CommonJS (tsx gives __dirname); under ESM fall back to the working directory.
const here = typeof __dirname === 'string' ? __dirname : resolve('bench/corpus/mcp')
const roots = [process.cwd(), ...process.argv.slice(2)]
const sandbox = mkdtempSync(join(tmpdir(), 'toolgate-dump-'))

/** Server package → the arguments its binary needs to start. */
const SERVERS: { name: string; pkg: string; args: string[] }[] = [
  { name: 'filesystem', pkg: '@modelcontextprotocol/server-filesystem', args: [sandbox] },
  { name: 'everything', pkg: '@modelcontextprotocol/server-everything', args: ['stdio'] },
  { name: 'memory', pkg: '@modelcontextprotocol/server-memory', args: [] },
  { name: 'sequential-thinking', pkg: '@modelcontextprotocol/server-sequential-thinking', args: [] },
]

function binOf(pkg: string): { bin: string; version: string } | undefined {
  for (const root of roots) {
    try {
      const req = createRequire(join(root, 'package.json'))
      const manifest = req.resolve(`${pkg}/package.json`)
      const json = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string; bin: string | Record<string, string> }
      const rel = typeof json.bin === 'string' ? json.bin : Object.values(json.bin)[0]
      return { bin: join(dirname(manifest), rel), version: json.version }
    } catch {
      // not in this root
    }
  }
  return undefined
}

async function main(): Promise<void> {
  mkdirSync(join(here, 'servers'), { recursive: true })
  for (const s of SERVERS) await dump(s)
}

async function dump(s: (typeof SERVERS)[number]): Promise<void> {
  const found = binOf(s.pkg)
  if (found === undefined) {
    console.log(`skip ${s.pkg}: not installed in ${roots.join(', ')}`)
    return
  }
  const client = new Client({ name: 'toolgate-bench-dump', version: '0' })
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [found.bin, ...s.args], stderr: 'ignore', env: { ...process.env, MEMORY_FILE_PATH: join(sandbox, 'memory.json') } }))
  const { tools } = await client.listTools()
  await client.close()
  const out = { server: s.pkg, version: found.version, dumped: 'tools/list over stdio (bench/corpus/mcp/dump-tools.ts)', tools: tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema, ...(t.annotations ? { annotations: t.annotations } : {}) })) }
  writeFileSync(join(here, 'servers', `${s.name}.json`), JSON.stringify(out, null, 2) + '\n')
  console.log(`${s.pkg}@${found.version}: ${tools.length} tools`)
}

main().catch((e: unknown) => {
  console.error(e)
  process.exit(1)
})
