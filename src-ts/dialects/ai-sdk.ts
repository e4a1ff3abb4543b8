// Hand-written to match the Vercel AI SDK's public types (`ai` 7, `@ai-sdk/provider-utils` 5,
// `@ai-sdk/provider` 4), field for field, for what toolgate reads and writes. No SDK import: the
// package has no runtime dependency on it.

/** A JSON value (`JSONValue`). */
export type AiSdkJsonValue = null | string | number | boolean | Readonly<AiSdkJsonObject> | readonly AiSdkJsonValue[]

/** A JSON object (`JSONObject`). */
export type AiSdkJsonObject = { [key: string]: AiSdkJsonValue | undefined }

/** Provider-specific options or metadata (`ProviderOptions` / `ProviderMetadata`): passed through untouched. */
export type AiSdkProviderOptions = Record<string, AiSdkJsonObject>

/**
 * A tool call part (`ToolCallPart` in a `ModelMessage`; `TypedToolCall` in `generateText` results,
 * `result.toolCalls`, `result.content`, a step's `content`). `input` is the arguments object,
 * repaired in place when the gate repairs it. `providerExecuted: true`: reported, not gated.
 */
export interface AiSdkToolCallPart {
  type: 'tool-call'
  toolCallId: string
  toolName: string
  input: unknown
  providerExecuted?: boolean
  /** Result level only: a tool defined at runtime, or an invalid call (`invalid: true`, with its `error`). */
  dynamic?: boolean
  invalid?: boolean
  error?: unknown
  title?: string
  providerOptions?: AiSdkProviderOptions
  providerMetadata?: AiSdkProviderOptions
}

/** A provider-level tool call (`LanguageModelV4ToolCall` / `V3`): `input` is JSON text, repaired in place as JSON text. */
export interface AiSdkProviderToolCall {
  type: 'tool-call'
  toolCallId: string
  toolName: string
  /** JSON-encoded tool input. */
  input: string
  providerExecuted?: boolean
  dynamic?: boolean
  providerMetadata?: AiSdkProviderOptions
}

/** A tool result's output (`ToolResultOutput`); toolgate's feedback uses `{ type: 'error-text', value }`. */
export type AiSdkToolResultOutput =
  | { type: 'text'; value: string }
  | { type: 'json'; value: AiSdkJsonValue }
  | { type: 'execution-denied'; reason?: string }
  | { type: 'error-text'; value: string }
  | { type: 'error-json'; value: AiSdkJsonValue }
  | { type: 'content'; value: { type: string }[] }

/** A tool result part (`ToolResultPart`): answers the call with the same `toolCallId`. */
export interface AiSdkToolResultPart {
  type: 'tool-result'
  toolCallId: string
  toolName: string
  output: AiSdkToolResultOutput
  providerOptions?: AiSdkProviderOptions
}

/** The `tool-result` part toolgate writes for a refused call: the refusal message as `error-text`. */
export interface AiSdkRefusalToolResultPart extends AiSdkToolResultPart {
  output: { type: 'error-text'; value: string }
}

/** A text part (`TextPart`). */
export interface AiSdkTextPart {
  type: 'text'
  text: string
  providerOptions?: AiSdkProviderOptions
}

/** An assistant message (`AssistantModelMessage`); other parts (reasoning, files, approvals) pass through untouched. */
export interface AiSdkAssistantModelMessage {
  role: 'assistant'
  content: string | (AiSdkTextPart | AiSdkToolCallPart | AiSdkToolResultPart | { type: string })[]
  providerOptions?: AiSdkProviderOptions
}

/** A tool message (`ToolModelMessage`): toolgate's feedback is one of these, with one `tool-result` part per refused call. */
export interface AiSdkToolModelMessage {
  role: 'tool'
  content: (AiSdkToolResultPart | { type: 'tool-approval-response'; approvalId: string; approved: boolean; reason?: string })[]
  providerOptions?: AiSdkProviderOptions
}

/** Any message of a prompt (`ModelMessage`). */
export type AiSdkModelMessage =
  | { role: 'system'; content: string; providerOptions?: AiSdkProviderOptions }
  | { role: 'user'; content: string | { type: string }[]; providerOptions?: AiSdkProviderOptions }
  | AiSdkAssistantModelMessage
  | AiSdkToolModelMessage

/** A provider-level `doGenerate` result (`LanguageModelV4GenerateResult`), as far as toolgate reads it. */
export interface AiSdkProviderGenerateResult {
  content: (AiSdkProviderToolCall | { type: string })[]
  finishReason: { unified: string; raw?: string } | string
  usage?: unknown
  [key: string]: unknown
}

/**
 * What `gate.guard` reads for `dialect: 'ai-sdk'`: a `generateText` result (or its JSON, with
 * `steps`), a step or `{ content }`, `{ toolCalls }`, a part array, a `ModelMessage`, a message
 * list (pending calls only) or `{ messages }`, or a provider-level `doGenerate` result. (UI
 * messages from `useChat` are the `ai-sdk-ui` dialect: `AiSdkUIPayload`.)
 */
export type AiSdkPayload =
  | { steps: { content: unknown[]; [key: string]: unknown }[]; [key: string]: unknown }
  | { content: unknown[]; [key: string]: unknown }
  | { toolCalls: AiSdkToolCallPart[]; toolResults?: unknown[]; [key: string]: unknown }
  | { messages: AiSdkModelMessage[]; [key: string]: unknown }
  | AiSdkProviderGenerateResult
  | AiSdkModelMessage
  | AiSdkModelMessage[]
  | { type: string }[]

/** The feedback `gate.guard` returns for `dialect: 'ai-sdk'`: one tool message answering every refused call (append it to the message history). */
export interface AiSdkFeedback extends AiSdkToolModelMessage {
  content: AiSdkRefusalToolResultPart[]
}

/** A provider-level function tool (`LanguageModelV4FunctionTool`), kept by `name`. */
export interface AiSdkProviderFunctionTool {
  type: 'function'
  name: string
  description?: string
  inputSchema: { [key: string]: unknown }
  [key: string]: unknown
}

/** A provider tool (`LanguageModelV4ProviderTool`), kept by `name` like any other tool. */
export interface AiSdkProviderTool {
  type: 'provider'
  id: `${string}.${string}`
  name: string
  args: { [key: string]: unknown }
}

/** What `gate.filterTools` takes for `dialect: 'ai-sdk'`: a tool record (`ToolSet`, kept by key, live objects kept) or provider-level tools. */
export type AiSdkToolList = { [name: string]: unknown } | (AiSdkProviderFunctionTool | AiSdkProviderTool)[]
