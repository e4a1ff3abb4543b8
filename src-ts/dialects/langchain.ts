// Hand-written to match @langchain/core's public message and tool types (messages/ai.ts,
// messages/tool.ts, messages/base.ts), field for field, for what toolgate reads and writes. No
// @langchain/core import: the package has no runtime dependency on it.

/** A parsed tool call of an AIMessage (`ToolCall`). */
export interface LangChainToolCall {
  /** The id the ToolMessage must answer; without one the call id is the call's index. */
  id?: string
  name: string
  /** Repairs are written back here. */
  args: Record<string, unknown>
  type?: 'tool_call'
}

/** A tool call whose arguments LangChain could not parse (`InvalidToolCall`); toolgate always refuses it `bad_arguments`. */
export interface LangChainInvalidToolCall {
  id?: string
  name?: string
  args?: string
  error?: string
  type?: 'invalid_tool_call'
}

/** A streamed piece of a call (`ToolCallChunk`); a call whose concatenated `args` is not complete JSON is refused. */
export interface LangChainToolCallChunk {
  id?: string
  name?: string
  args?: string
  index?: number
  type?: 'tool_call_chunk'
}

/** The fields of an `AIMessage` / `AIMessageChunk` (`AIMessageFields`) that toolgate reads. */
export interface LangChainAIMessageFields {
  content: string | { type: string }[]
  tool_calls?: LangChainToolCall[]
  invalid_tool_calls?: LangChainInvalidToolCall[]
  tool_call_chunks?: LangChainToolCallChunk[]
  id?: string
}

/** `JSON.stringify(message)`: the lc constructor form (`SerializedConstructor`). */
export interface LangChainSerializedMessage<K = LangChainAIMessageFields> {
  lc: 1
  type: 'constructor'
  /** The class path, e.g. `["langchain_core", "messages", "AIMessage"]`. */
  id: string[]
  kwargs: K
}

/** `mapChatMessagesToStoredMessages` / `message.toDict()` (`StoredMessage`). */
export interface LangChainStoredMessage<D = LangChainAIMessageFields> {
  type: 'ai' | 'human' | 'tool' | 'system' | 'generic' | 'developer' | 'function' | 'remove'
  data: D
}

/** What `guard` reads with `dialect: 'langchain'` besides message instances: one message in any form, or a list (its pending calls). */
export type LangChainPayload =
  | (LangChainAIMessageFields & { type?: 'ai' })
  | LangChainSerializedMessage
  | LangChainStoredMessage
  | (LangChainSerializedMessage<Record<string, unknown>> | LangChainStoredMessage<Record<string, unknown>> | Record<string, unknown>)[]

/** `TurnReport.feedback` item for a refused call: `new ToolMessage(fields)` accepts it (`ToolMessageFields`). */
export interface LangChainToolMessageFields {
  type: 'tool'
  /** The model-readable refusal. */
  content: string
  /** Only when the call had an id. */
  tool_call_id?: string
  name?: string
  status: 'error'
}

/** A JSON tool spec (`{ name, description, schema }`) or an OpenAI-format definition (`convertToOpenAITool`), filtered by name. */
export type LangChainToolSpec =
  | { name: string; description?: string; schema?: unknown }
  | { type: 'function'; function: { name: string; description?: string; parameters?: unknown } }
