// toolsFromLangChain: a gate's tool declarations read from LangChain.js tools, so a tool's schema
// is written once (as zod or JSON Schema on the tool) and the gate checks exactly the JSON Schema
// the model is shown (LangChain's own conversion, the one `bindTools` uses).
import { ToolGateError } from '../errors'
import type { ToolConfig } from '../types'
import { jsonSchemaModule } from './langchain-runtime'
import { ungated, type GateableTool } from './langchain-tool'

/** What {@link toolsFromLangChain} may add to, or override in, a tool's declaration (policy keys such as `writes`, `resource`, `args`). */
export type LangChainToolDeclaration = Omit<ToolConfig, 'name'>

const WHERE = 'toolsFromLangChain'

/**
 * The tools as `ToolConfig[]` for `new ToolGate({ tools })`, in order: each tool's `name`,
 * `description` and `inputSchema` — its `schema` (zod v3/v4 or JSON Schema) converted the way
 * LangChain converts it for `bindTools`, so the gate checks what the model is shown. `declare`
 * adds policy keys per tool name (`{ send_email: { writes: true } }`) and overrides converted
 * ones; a name no tool has is `E_CONFIG` (a typo never silently drops a `writes`), as are two
 * tools with one name and a value that is not a tool. Loads `@langchain/core` (`E_CONFIG` when it
 * is not installed).
 */
export function toolsFromLangChain(tools: readonly GateableTool[], declare: Record<string, LangChainToolDeclaration> = {}): ToolConfig[] {
  if (!Array.isArray(tools)) throw new ToolGateError('E_CONFIG', `${WHERE}: \`tools\` must be an array of LangChain tools`)
  if (declare === null || typeof declare !== 'object' || Array.isArray(declare)) {
    throw new ToolGateError('E_CONFIG', `${WHERE}: \`declare\` must be an object of tool name → declaration`)
  }
  const { toJsonSchema } = jsonSchemaModule(WHERE)
  const seen = new Set<string>()
  const configs = tools.map((t, i) => {
    const tool = ungated(t) as GateableTool & { description?: unknown; schema?: unknown }
    if (tool === null || typeof tool !== 'object' || typeof tool.name !== 'string') {
      throw new ToolGateError('E_CONFIG', `${WHERE}: tools[${i}] is not a LangChain tool (no string \`name\`)`)
    }
    if (seen.has(tool.name)) throw new ToolGateError('E_CONFIG', `${WHERE}: two tools are named \`${tool.name}\``)
    seen.add(tool.name)
    const config: ToolConfig = { name: tool.name }
    if (typeof tool.description === 'string') config.description = tool.description
    if (tool.schema !== undefined) config.inputSchema = toJsonSchema(tool.schema as Parameters<typeof toJsonSchema>[0]) as Record<string, unknown>
    const extra = Object.hasOwn(declare, tool.name) ? declare[tool.name] : undefined
    return extra === undefined ? config : { ...config, ...extra, name: tool.name }
  })
  const unknown = Object.keys(declare).filter((n) => !seen.has(n))
  if (unknown.length > 0) {
    throw new ToolGateError('E_CONFIG', `${WHERE}: declared ${unknown.map((n) => `\`${n}\``).join(', ')} but no tool has that name (the tools are ${[...seen].map((n) => `\`${n}\``).join(', ') || 'none'})`)
  }
  return configs
}
