// Hand-written to match the Model Context Protocol schema (schema/2025-06-18/schema.ts and
// schema/2025-11-25/schema.ts; the types `@modelcontextprotocol/sdk` exports), field for field,
// for what toolgate reads and writes. No SDK import: the package has no runtime dependency on it.

/** A JSON-RPC request id (`RequestId`): toolgate answers with it exactly as sent (numbers stay numbers). */
export type McpRequestId = string | number

/** The params of a `tools/call` request (`CallToolRequestParams`). `arguments` absent means `{}`. */
export interface McpCallToolParams {
  /** The tool to call. */
  name: string
  /** The arguments; repaired in place when the gate repairs them (inserted when absent). */
  arguments?: { [key: string]: unknown }
  /** Request metadata (`progressToken` …); passed through untouched. */
  _meta?: { progressToken?: string | number; [key: string]: unknown }
  /** Task augmentation (2025-11-25); passed through untouched. */
  task?: { ttl?: number; [key: string]: unknown }
  [key: string]: unknown
}

/** A `tools/call` request (`CallToolRequest`): one call for `gate.guard(msg, { dialect: 'mcp' })`. */
export interface McpToolsCallRequest {
  jsonrpc: '2.0'
  id: McpRequestId
  method: 'tools/call'
  params: McpCallToolParams
}

/** Any other JSON-RPC request (`JSONRPCRequest`): read as no call. */
export interface McpJsonRpcRequest {
  jsonrpc: '2.0'
  id: McpRequestId
  method: string
  params?: { [key: string]: unknown }
}

/** A JSON-RPC notification (`JSONRPCNotification`, no id): read as no call (a `tools/call` without an id is `E_PAYLOAD`). */
export interface McpJsonRpcNotification {
  jsonrpc: '2.0'
  method: string
  params?: { [key: string]: unknown }
}

/** A text content block (`TextContent`); toolgate's refusal text travels in one. */
export interface McpTextContent {
  type: 'text'
  text: string
  annotations?: { [key: string]: unknown }
  _meta?: { [key: string]: unknown }
}

/** The result of a tool call (`CallToolResult`; a `Result`, so other members may appear). */
export interface McpCallToolResult {
  content: (McpTextContent | { type: string; [key: string]: unknown })[]
  structuredContent?: { [key: string]: unknown }
  isError?: boolean
  _meta?: { [key: string]: unknown }
  [key: string]: unknown
}

/** The `CallToolResult` toolgate writes for a refused call: the refusal message as one text block, `isError: true`. */
export interface McpToolErrorResult extends McpCallToolResult {
  content: [McpTextContent]
  isError: true
}

/** A successful JSON-RPC response carrying a `CallToolResult` (`JSONRPCResultResponse`). */
export interface McpCallToolResultResponse {
  jsonrpc: '2.0'
  id: McpRequestId
  result: McpCallToolResult
}

/** toolgate's feedback for a refused, well-formed call: the tool error as a result the model can read, with the request's id. */
export interface McpToolErrorResponse extends McpCallToolResultResponse {
  result: McpToolErrorResult
}

/** A JSON-RPC error response (`JSONRPCErrorResponse`): toolgate's feedback for a `tools/call` with malformed params, `code` `-32602` (`INVALID_PARAMS`). */
export interface McpErrorResponse {
  jsonrpc: '2.0'
  id: McpRequestId
  error: { code: number; message: string; data?: unknown }
}

/** A JSON-RPC response (`JSONRPCResponse`): read as no call. */
export type McpJsonRpcResponse = McpCallToolResultResponse | McpErrorResponse | { jsonrpc: '2.0'; id: McpRequestId; result: { [key: string]: unknown } }

/** Any JSON-RPC message (`JSONRPCMessage`). */
export type McpJsonRpcMessage = McpToolsCallRequest | McpJsonRpcRequest | McpJsonRpcNotification | McpJsonRpcResponse

/**
 * What `gate.guard` reads for `dialect: 'mcp'`: one message, or — only with
 * `protocolVersion: '2025-03-26'`, the one version that had JSON-RPC batches — an array of them.
 */
export type McpPayload = McpJsonRpcMessage | McpJsonRpcMessage[]

/** One item of `TurnReport.feedback` for `dialect: 'mcp'`: one response per refused call, id as sent. */
export type McpFeedback = McpToolErrorResponse | McpErrorResponse

/** A tool definition (`Tool`); `filterTools` keeps it by `name` and leaves every other field as it is. */
export interface McpTool {
  name: string
  title?: string
  description?: string
  inputSchema: { type: 'object'; properties?: { [key: string]: unknown }; required?: string[]; [key: string]: unknown }
  outputSchema?: { type: 'object'; [key: string]: unknown }
  annotations?: { [key: string]: unknown }
  _meta?: { [key: string]: unknown }
  [key: string]: unknown
}

/** A `tools/list` result (`ListToolsResult`). */
export interface McpListToolsResult {
  tools: McpTool[]
  nextCursor?: string
  _meta?: { [key: string]: unknown }
}

/** What `gate.filterTools` takes for `dialect: 'mcp'`: a `tools/list` result, its whole JSON-RPC response, or a bare array of tools. */
export type McpToolList = McpListToolsResult | { jsonrpc: '2.0'; id: McpRequestId; result: McpListToolsResult } | McpTool[]
