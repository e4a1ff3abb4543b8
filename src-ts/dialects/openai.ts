// Hand-written to match the `openai` SDK's public Chat Completions types, field for field, for
// what toolgate reads and writes. No SDK import: the package has no runtime dependency on it.

/** A function tool call in an assistant message (`ChatCompletionMessageFunctionToolCall`). */
export interface OpenAiFunctionToolCall {
  id: string
  type: 'function'
  function: {
    name: string
    /** JSON text of the arguments, as the model wrote it; toolgate parses it strictly. */
    arguments: string
  }
}

/** A custom (free-text) tool call (`ChatCompletionMessageCustomToolCall`); its `input` is not JSON, so toolgate refuses it unless it happens to hold a JSON object. */
export interface OpenAiCustomToolCall {
  id: string
  type: 'custom'
  custom: { name: string; input: string }
}

/** Any tool call of an assistant message. */
export type OpenAiToolCall = OpenAiFunctionToolCall | OpenAiCustomToolCall

/** An assistant message (`ChatCompletionMessage` / `ChatCompletionAssistantMessageParam`). */
export interface OpenAiAssistantMessage {
  role: 'assistant'
  content?: string | null | { type: 'text' | 'refusal'; text?: string; refusal?: string }[]
  refusal?: string | null
  tool_calls?: OpenAiToolCall[]
  /** Deprecated single call (no id: its call id is its index). */
  function_call?: { name: string; arguments: string } | null
}

/** A tool message answering one call (`ChatCompletionToolMessageParam`); toolgate's feedback for a refused call. */
export interface OpenAiToolMessage {
  role: 'tool'
  tool_call_id: string
  content: string
}

/** Any Chat Completions message of a conversation. */
export type OpenAiMessage =
  | OpenAiAssistantMessage
  | OpenAiToolMessage
  | { role: 'system' | 'developer' | 'user'; content: unknown }

/** A whole response (`ChatCompletion`). */
export interface OpenAiChatCompletion {
  id: string
  object: 'chat.completion'
  created: number
  model: string
  choices: { index: number; message: OpenAiAssistantMessage; finish_reason: string | null; logprobs?: unknown }[]
  usage?: object
}

/** What `guard` reads with `dialect: 'openai'`: a completion, one choice, one message, or a message list (its pending calls). */
export type OpenAiPayload = OpenAiChatCompletion | { index: number; message: OpenAiAssistantMessage } | OpenAiAssistantMessage | OpenAiMessage[]

/** A tool definition of a Chat Completions request (`ChatCompletionFunctionTool`). */
export interface OpenAiFunctionTool {
  type: 'function'
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean | null }
}

/** A custom tool definition (`ChatCompletionCustomTool`). */
export interface OpenAiCustomTool {
  type: 'custom'
  custom: { name: string; description?: string; format?: unknown }
}

/** What `filterTools` reads with `dialect: 'openai'`: a `tools` list, or a request body holding one. */
export type OpenAiTools = (OpenAiFunctionTool | OpenAiCustomTool)[] | { tools: (OpenAiFunctionTool | OpenAiCustomTool)[]; [key: string]: unknown }
