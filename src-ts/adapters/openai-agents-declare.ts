// toolsFromAgentTools: a gate's tool declarations read from OpenAI Agents SDK function tools, so
// a tool's schema is written once (zod or JSON Schema in `tool()`) and the gate checks exactly the
// JSON Schema the SDK sends the model (the tool's `parameters`, already converted by the SDK).
import { ToolGateError } from '../errors'
import type { ToolConfig } from '../types'
import { isFunctionTool, refuseUngateable } from './openai-agents-tool'

/** What {@link toolsFromAgentTools} may add to, or override in, a tool's declaration (policy keys such as `writes`, `resource`, `args`). */
export type AgentToolDeclaration = Omit<ToolConfig, 'name'>

const WHERE = 'toolsFromAgentTools'

/**
 * The function tools of `tools` as `ToolConfig[]` for `new ToolGate({ tools })`, in order: each
 * tool's `name`, `description` and `inputSchema` (its `parameters`, the JSON Schema the model is
 * sent). Tools the provider runs (hosted tools, a shell in a hosted container) are skipped: the
 * gate never sees their calls. A tool that runs in this process but is not a function tool (a
 * local shell, computer, apply_patch …) or an unknown tool is `E_CONFIG`, as in `gateAgent`: no
 * gate can decide its calls. `declare` adds policy keys per tool name (`{ send_email: {
 * writes: true } }`) and overrides read ones; a name no function tool has is `E_CONFIG` (a typo
 * never silently drops a `writes`), as are two function tools with one name. Never loads the SDK.
 */
export function toolsFromAgentTools(tools: readonly unknown[], declare: Record<string, AgentToolDeclaration> = {}): ToolConfig[] {
  if (!Array.isArray(tools)) throw new ToolGateError('E_CONFIG', `${WHERE}: \`tools\` must be an array of Agents SDK tools`)
  if (declare === null || typeof declare !== 'object' || Array.isArray(declare)) {
    throw new ToolGateError('E_CONFIG', `${WHERE}: \`declare\` must be an object of tool name → declaration`)
  }
  refuseUngateable(tools, WHERE, 'tools')
  const seen = new Set<string>()
  const configs: ToolConfig[] = []
  for (const tool of tools) {
    if (!isFunctionTool(tool)) continue
    if (seen.has(tool.name)) throw new ToolGateError('E_CONFIG', `${WHERE}: two function tools are named \`${tool.name}\``)
    seen.add(tool.name)
    const config: ToolConfig = { name: tool.name }
    if (typeof tool.description === 'string') config.description = tool.description
    if (tool.parameters !== undefined) config.inputSchema = tool.parameters as Record<string, unknown>
    const extra = Object.hasOwn(declare, tool.name) ? declare[tool.name] : undefined
    configs.push(extra === undefined ? config : { ...config, ...extra, name: tool.name })
  }
  const unknown = Object.keys(declare).filter((n) => !seen.has(n))
  if (unknown.length > 0) {
    throw new ToolGateError('E_CONFIG', `${WHERE}: declared ${unknown.map((n) => `\`${n}\``).join(', ')} but no function tool has that name (the tools are ${[...seen].map((n) => `\`${n}\``).join(', ') || 'none'})`)
  }
  return configs
}
