/**
 * The MCP corpus (see README.md beside this file): 64 tool schemas as real MCP servers publish
 * them, a four-role policy, four callers and realistic calls with known right answers. Loaded
 * the same way by every benchmark that uses it, so both sides of a comparison get one config.
 *
 * The config is built from `servers/` and `policy.json` by {@link buildConfig} and checked in as
 * `config.json`, the one source every reader (this file, the Rust and Python benchmarks and
 * tests) loads. Regenerate it after editing either:
 *
 *   npx tsx bench/corpus/mcp/corpus.ts --write
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

/** One tool as a server's `tools/list` declares it. */
export interface ServerTool {
  name: string
  description?: string
  inputSchema: Record<string, unknown>
}

/** A policy rule, as in a toolgate config (the subset this corpus uses). */
export interface CorpusRule {
  id: string
  effect: 'allow' | 'deny'
  roles: string[]
  tools: string[]
}

/** A caller (`CallContext`). */
export interface CorpusCaller {
  subject: string
  roles: string[]
  session: string
  purpose?: string
  context?: Record<string, string>
}

/** One call and the answer the gate must give (see README.md). */
export interface CorpusCase {
  id: string
  caller: string
  tool: string
  args: string
  expect: {
    outcome: 'passed' | 'repaired' | 'rejected' | 'denied'
    arguments?: Record<string, unknown>
    flags?: string[]
    reason?: string
  }
  note: string
}

/** The toolgate config the corpus gates with (what `config.json` holds). */
export interface CorpusConfig {
  version: 1
  tools: (ServerTool & { destructive?: boolean })[]
  policy: { rules: CorpusRule[] }
}

export interface Corpus {
  /** Server name → its tools, in file order. */
  servers: Map<string, ServerTool[]>
  /** The toolgate config (`config.json`): every tool (destructive ones marked), and the policy. */
  config: CorpusConfig
  callers: Record<string, CorpusCaller>
  cases: CorpusCase[]
}

// The package is CommonJS (tsx gives __dirname); under ESM fall back to the working directory.
const here = typeof __dirname === 'string' ? __dirname : resolve('bench/corpus/mcp')

const read = (name: string): unknown => JSON.parse(readFileSync(join(here, name), 'utf8'))

/** The generated config file, and the command that regenerates it. */
const CONFIG_FILE = 'config.json'
const WRITE = 'npx tsx bench/corpus/mcp/corpus.ts --write'

/** Server name → its tools (`name`, `description`, `inputSchema`; other keys dropped), files in name order. */
function readServers(): Map<string, ServerTool[]> {
  const servers = new Map<string, ServerTool[]>()
  for (const f of readdirSync(join(here, 'servers')).filter((n) => n.endsWith('.json')).sort()) {
    const s = read(join('servers', f)) as { tools: ServerTool[] }
    servers.set(f.replace(/\.json$/, ''), s.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })))
  }
  return servers
}

/**
 * Builds the config from `servers/` and `policy.json`: every server's tools (files in name
 * order), those `policy.json` lists as `destructive` marked so, and its policy. Throws on a tool
 * declared twice. `config.json` must hold exactly this ({@link configText}).
 */
export function buildConfig(servers: Map<string, ServerTool[]> = readServers()): CorpusConfig {
  const p = read('policy.json') as { destructive: string[]; policy: { rules: CorpusRule[] } }
  const destructive = new Set(p.destructive)
  const tools = [...servers.values()].flat().map((t) => (destructive.has(t.name) ? { ...t, destructive: true } : t))
  const seen = new Set<string>()
  for (const t of tools) {
    if (seen.has(t.name)) throw new Error(`corpus: tool ${t.name} is declared twice`)
    seen.add(t.name)
  }
  return { version: 1, tools, policy: p.policy }
}

/** A config as `config.json` is written. */
export function configText(config: CorpusConfig): string {
  return JSON.stringify(config, null, 2) + '\n'
}

/** The text of the checked-in `config.json`. */
export function readConfigText(): string {
  return readFileSync(join(here, CONFIG_FILE), 'utf8')
}

/** The turn file: {@link turnCompletion}'s text as it is, for the benches that are not TypeScript (Python, `mcp_timing --guard-spin`). */
const TURN_FILE = 'turn.json'

/** The text of the checked-in `turn.json`. */
export function readTurnText(): string {
  return readFileSync(join(here, TURN_FILE), 'utf8')
}

/** Writes {@link buildConfig}'s config to `config.json` and {@link turnCompletion} to `turn.json`; returns the config. */
function writeConfig(): CorpusConfig {
  const config = buildConfig()
  writeFileSync(join(here, CONFIG_FILE), configText(config))
  writeFileSync(join(here, TURN_FILE), turnCompletion())
  return config
}

/**
 * Loads the corpus from bench/corpus/mcp/, the config from `config.json`. Throws when that file
 * is not what {@link buildConfig} makes of `servers/` and `policy.json` now (one was edited and
 * the file not regenerated).
 */
export function loadCorpus(): Corpus {
  const servers = readServers()
  const text = readConfigText()
  if (text !== configText(buildConfig(servers))) throw new Error(`bench/corpus/mcp/${CONFIG_FILE} is stale: run \`${WRITE}\``)
  return {
    servers,
    config: JSON.parse(text) as CorpusConfig,
    callers: read('callers.json') as Record<string, CorpusCaller>,
    cases: read('cases.json') as CorpusCase[],
  }
}

/** A tool-name glob (`*` any run of characters) as a RegExp. */
function globRegExp(glob: string): RegExp {
  return new RegExp(`^${glob.split('*').map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`)
}

/**
 * The role → tool set a developer writes by hand for the same policy: each allow rule's globs
 * expanded over the declared tools, minus what a deny rule takes from that role.
 */
export function roleTools(config: CorpusConfig): Map<string, Set<string>> {
  return ruleTools(config, 'allow', (role, n, out) => out.get(role)?.delete(n))
}

/**
 * The role → tool set each effect's rules name (globs expanded over the declared tools): with
 * `'deny'`, what a careful hand-written filter takes from a caller holding any of those roles
 * (a deny wins over every allow, as in the gate).
 */
export function roleDenied(config: CorpusConfig): Map<string, Set<string>> {
  return ruleTools(config, 'deny')
}

function ruleTools(config: CorpusConfig, effect: 'allow' | 'deny', denied?: (role: string, name: string, out: Map<string, Set<string>>) => void): Map<string, Set<string>> {
  const names = config.tools.map((t) => t.name)
  const expand = (globs: string[]): string[] => names.filter((n) => globs.some((g) => globRegExp(g).test(n)))
  const out = new Map<string, Set<string>>()
  for (const r of config.policy.rules.filter((r) => r.effect === effect)) {
    for (const role of r.roles) {
      const set = out.get(role) ?? new Set<string>()
      for (const n of expand(r.tools)) set.add(n)
      out.set(role, set)
    }
  }
  if (denied !== undefined) {
    for (const r of config.policy.rules.filter((r) => r.effect === 'deny')) {
      for (const role of r.roles) for (const n of expand(r.tools)) denied(role, n, out)
    }
  }
  return out
}

/**
 * The tools every scaled gate holds, whatever its size: the scale bench's known tool, and the
 * three names its unknown tool `read_fil` is offered ("Did you mean `read_file` or
 * `read_file_1` or `read_file_2`?"). So every size answers both calls alike, and a time that
 * grows with the size is the size's doing, not a longer answer's.
 */
export const SCALE_KEPT: readonly string[] = ['read_text_file', 'read_file', 'read_file_1', 'read_file_2']

/**
 * A config of `n` tools for the scale figures: the corpus schemas cycled under new names
 * (`read_file_3` …), {@link SCALE_KEPT} first, and the corpus's allow rules given every tool (its
 * rules name tools a small gate lacks; its one deny rule so widened would leave a caller no
 * tool to see or be offered). Mirrored by `scaled` in crates/toolgate-core/examples/mcp_timing.rs.
 */
export function scaledConfig(corpus: Corpus, n: number): CorpusConfig {
  const base = corpus.config.tools
  const cycled: CorpusConfig['tools'] = []
  for (let i = 0; i < Math.max(n, 3 * base.length); i++) {
    const t = base[i % base.length]
    cycled.push({ ...t, name: i < base.length ? t.name : `${t.name}_${Math.floor(i / base.length)}` })
  }
  const kept = SCALE_KEPT.map((name) => cycled.find((t) => t.name === name)!)
  const tools = [...kept, ...cycled.filter((t) => !SCALE_KEPT.includes(t.name))].slice(0, n)
  const rules = corpus.config.policy.rules.filter((r) => r.effect === 'allow').map((r) => ({ ...r, tools: ['*'] }))
  return { ...corpus.config, tools, policy: { rules } }
}

/** The three calls of the benches' OpenAI turn: a pass, a repair and a call the developer may not make. */
export const TURN_CALLS: readonly { tool: string; args: string }[] = [
  { tool: 'get_file_contents', args: '{"owner":"octo-org","repo":"billing","path":"src/invoice/total.ts"}' },
  { tool: 'list_issues', args: '{"owner":"octo-org","repo":"billing","labels":"bug","perPage":"20"}' },
  { tool: 'merge_pull_request', args: '{"owner":"octo-org","repo":"billing","pullNumber":412}' },
]

/** {@link TURN_CALLS} as one OpenAI `chat.completion`, as an API answers it (text). */
export function turnCompletion(): string {
  return JSON.stringify({
    id: 'chatcmpl-bench', object: 'chat.completion', created: 1764633600, model: 'gpt-4.1-2025-04-14',
    choices: [{ index: 0, finish_reason: 'tool_calls', logprobs: null, message: { role: 'assistant', content: null, refusal: null, tool_calls: TURN_CALLS.map((c, i) => ({ id: `call_${i}Qm8dWv2`, type: 'function', function: { name: c.tool, arguments: c.args } })) } }],
    usage: { prompt_tokens: 2143, completion_tokens: 96, total_tokens: 2239 },
  })
}

// `npx tsx bench/corpus/mcp/corpus.ts --write`: regenerate config.json and turn.json (CommonJS under tsx).
if (typeof require !== 'undefined' && require.main === module) {
  if (process.argv.includes('--write')) {
    const config = writeConfig()
    console.log(`wrote bench/corpus/mcp/${CONFIG_FILE} (${config.tools.length} tools) and ${TURN_FILE}`)
  } else {
    console.error(`usage: ${WRITE}`)
    process.exitCode = 2
  }
}
