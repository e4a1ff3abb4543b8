// Hand-written to match the `@anthropic-ai/sdk` public Messages types, field for field, for what
// toolgate reads and writes. No SDK import: the package has no runtime dependency on it.

/** A client tool call (`ToolUseBlock`): gated. */
export interface AnthropicToolUseBlock {
  type: 'tool_use'
  id: string
  name: string
  input: unknown
}

/** A call the server ran itself (`ServerToolUseBlock`, `mcp_tool_use`): reported in `providerExecuted`, never gated. */
export interface AnthropicServerToolUseBlock {
  type: 'server_tool_use' | 'mcp_tool_use'
  id: string
  name: string
  input: unknown
}

/** A text block (`TextBlock`). */
export interface AnthropicTextBlock {
  type: 'text'
  text: string
}

/** A tool result as toolgate writes it for a refused call (`ToolResultBlockParam` with `is_error: true` and the refusal message as `content`). */
export interface AnthropicToolResultBlock {
  type: 'tool_result'
  tool_use_id: string
  /** toolgate writes the refusal message here, as text. */
  content: string
  is_error: true
}

/** Any content block (thinking, images, search results … pass through untouched). */
export type AnthropicContentBlock =
  | AnthropicTextBlock
  | AnthropicToolUseBlock
  | AnthropicServerToolUseBlock
  | AnthropicToolResultBlock
  | { type: string }

/** A whole response (`Message`). */
export interface AnthropicMessage {
  id: string
  type: 'message'
  role: 'assistant'
  model: string
  content: AnthropicContentBlock[]
  stop_reason: string | null
  stop_sequence?: string | null
  usage?: object
}

/** A message of a conversation (`MessageParam`). */
export interface AnthropicMessageParam {
  /** Only `assistant` messages hold calls; others are read for the results that answer them. */
  role: 'user' | 'assistant' | 'system'
  content: string | AnthropicContentBlock[]
}

/**
 * toolgate's feedback for a turn: ONE user message whose content is the `tool_result` blocks of
 * the refused calls. The API wants every `tool_use` answered in the next user message, results
 * first: put your own results for the allowed calls in the same `content` array.
 */
export interface AnthropicToolResultMessage {
  role: 'user'
  content: AnthropicToolResultBlock[]
}

/** What `guard` reads with `dialect: 'anthropic'`: a response, a message, or a message list (its pending calls). */
export type AnthropicPayload = AnthropicMessage | AnthropicMessageParam | AnthropicMessageParam[]

/** A tool definition (`Tool`, or a server tool such as `{ type: 'web_search_20250305', name: 'web_search' }`). */
export interface AnthropicTool {
  name: string
  type?: string | null
  description?: string
  input_schema?: Record<string, unknown>
}

/** What `filterTools` reads with `dialect: 'anthropic'`: a `tools` list, or a request body holding one. */
export type AnthropicTools = AnthropicTool[] | { tools: AnthropicTool[]; [key: string]: unknown }
