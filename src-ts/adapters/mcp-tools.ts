// toolsFromMcpServer: a gate's tool declarations read from an MCP server's own `tools/list`
// answer, so tools are declared once (in the server) and the gate checks exactly the JSON Schema
// clients are shown (the SDK's own zod → JSON Schema conversion, for McpServer).
import type { McpListToolsResult, McpTool } from '../dialects/mcp'
import { ToolGateError } from '../errors'
import type { ToolConfig } from '../types'
import { lowLevelServer, originalHandler, type GateableMcpServer, type McpRequestExtra } from './mcp-handlers'

/** What {@link toolsFromMcpServer} may add to, or override in, a listed tool's declaration (policy keys such as `writes`, `resource`, `args`). */
export type McpToolDeclaration = Omit<ToolConfig, 'name'>

const WHERE = 'toolsFromMcpServer'
/** Pages read before giving up on a server whose cursors never end. */
const MAX_PAGES = 1000

/**
 * The server's tools as `ToolConfig[]` for `new ToolGate({ tools })`: each tool's `name`,
 * `title`, `description`, `annotations` (informational) and `inputSchema` exactly as the server
 * lists them to clients, in list order, every page read. `declare` adds policy keys per tool name
 * (`{ send_email: { writes: true } }`) and overrides listed ones; a name the server does not list
 * is `E_CONFIG` (a typo never silently drops a `writes`). The server's own `tools/list` handler is
 * asked without a caller (no `authInfo`), also when the server is already gated; a server with no
 * `tools/list` handler yet (no tool registered) is `E_CONFIG`. Annotations such as
 * `destructiveHint` are hints from the server, not policy: set `destructive` in `declare`.
 */
export async function toolsFromMcpServer(server: GateableMcpServer, declare: Record<string, McpToolDeclaration> = {}): Promise<ToolConfig[]> {
  if (declare === null || typeof declare !== 'object' || Array.isArray(declare)) {
    throw new ToolGateError('E_CONFIG', `${WHERE}: \`declare\` must be an object of tool name → declaration`)
  }
  const low = lowLevelServer(server, WHERE)
  const list = originalHandler(low, 'tools/list', WHERE)
  if (list === undefined) {
    throw new ToolGateError('E_CONFIG', `${WHERE}: the server has no tools/list handler yet; register its tools first`)
  }
  const listed: McpTool[] = []
  let cursor: string | undefined
  for (let page = 0; ; page++) {
    if (page === MAX_PAGES) throw new ToolGateError('E_CONFIG', `${WHERE}: the server's tools/list did not end after ${MAX_PAGES} pages`)
    const params = cursor === undefined ? {} : { cursor }
    const result = (await list({ jsonrpc: '2.0', id: `toolgate-list-${page}`, method: 'tools/list', params }, noClient(page))) as unknown as McpListToolsResult
    if (result === null || typeof result !== 'object' || !Array.isArray(result.tools)) {
      throw new ToolGateError('E_CONFIG', `${WHERE}: the server's tools/list answered ${JSON.stringify(result)}, not a tools/list result`)
    }
    listed.push(...result.tools)
    cursor = result.nextCursor
    if (typeof cursor !== 'string') break
  }
  const names = new Set(listed.map((t) => t.name))
  const unknown = Object.keys(declare).filter((n) => !names.has(n))
  if (unknown.length > 0) {
    throw new ToolGateError('E_CONFIG', `${WHERE}: declared ${unknown.map((n) => `\`${n}\``).join(', ')} but the server lists no such tool (it lists ${[...names].map((n) => `\`${n}\``).join(', ') || 'none'})`)
  }
  return listed.map((tool) => {
    const config: ToolConfig = { name: tool.name }
    if (typeof tool.title === 'string') config.title = tool.title
    if (typeof tool.description === 'string') config.description = tool.description
    if (tool.annotations !== undefined) config.annotations = tool.annotations
    config.inputSchema = tool.inputSchema
    const extra = Object.hasOwn(declare, tool.name) ? declare[tool.name] : undefined
    return extra === undefined ? config : { ...config, ...extra, name: tool.name }
  })
}

/** A request context for asking the server's own handler with no client on the line. */
function noClient(page: number): McpRequestExtra {
  return {
    signal: new AbortController().signal,
    requestId: `toolgate-list-${page}`,
    sendNotification: async () => {},
    sendRequest: async () => {
      throw new ToolGateError('E_CONFIG', `${WHERE}: the server's tools/list handler sent a request to the client, but tools are listed here without one`)
    },
  }
}
