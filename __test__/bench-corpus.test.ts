// The MCP corpus's config has one source: bench/corpus/mcp/config.json, generated from servers/
// and policy.json by corpus.ts (`npx tsx bench/corpus/mcp/corpus.ts --write`) and read as it is
// by every benchmark and test (TypeScript, the Rust example, Python). This fails when servers/ or
// policy.json was edited and the file not regenerated, or the file was edited by hand.
import { describe, expect, it } from 'vitest'
import { buildConfig, configText, loadCorpus, readConfigText, readTurnText, turnCompletion } from '../bench/corpus/mcp/corpus'

describe('bench/corpus/mcp/config.json', () => {
  it('is what corpus.ts builds from servers/ and policy.json now', () => {
    expect(readConfigText(), 'stale: run `npx tsx bench/corpus/mcp/corpus.ts --write`').toBe(configText(buildConfig()))
  })

  it('is the config loadCorpus gives: 64 tools, the destructive ones marked', () => {
    const { config, servers } = loadCorpus()
    expect(config).toEqual(JSON.parse(readConfigText()))
    expect(config.tools).toHaveLength(64)
    expect(config.tools.map((t) => t.name)).toEqual([...servers.values()].flat().map((t) => t.name))
    expect(config.tools.filter((t) => t.destructive).map((t) => t.name).sort()).toEqual(['delete_entities', 'delete_file', 'delete_observations', 'delete_relations'])
  })

  it('comes with turn.json, the benches\' OpenAI turn as text', () => {
    expect(readTurnText(), 'stale: run `npx tsx bench/corpus/mcp/corpus.ts --write`').toBe(turnCompletion())
  })
})
