// Hand-written to match Pydantic AI's serialized messages (pydantic_ai/messages.py, as
// ModelMessagesTypeAdapter dumps them with mode='json') and ToolDefinition (pydantic_ai/tools.py),
// field for field, for what toolgate reads and writes.

/** A tool call the model made (`ToolCallPart`). */
export interface PydanticToolCallPart {
  part_kind: 'tool-call'
  tool_name: string
  /** A dict, a JSON string, or null (meaning `{}`); repairs are written back in the same form. */
  args?: Record<string, unknown> | string | null
  tool_call_id: string
  id?: string | null
  provider_name?: string | null
  provider_details?: Record<string, unknown> | null
}

/** A call to a provider's built-in tool (`BuiltinToolCallPart`): provider-executed, reported. */
export interface PydanticBuiltinToolCallPart {
  part_kind: 'builtin-tool-call'
  tool_name: string
  args?: Record<string, unknown> | string | null
  tool_call_id: string
  provider_name?: string | null
}

/** Any part of a model response (`ModelResponsePart`); the ones toolgate does not read are kept as they are. */
export type PydanticResponsePart =
  | PydanticToolCallPart
  | PydanticBuiltinToolCallPart
  | { part_kind: 'text' | 'thinking' | 'builtin-tool-return' | 'file' | 'compaction' }

/** A response from the model (`ModelResponse`). */
export interface PydanticModelResponse {
  kind: 'response'
  parts: PydanticResponsePart[]
  model_name?: string | null
  timestamp?: string
  provider_name?: string | null
  finish_reason?: string | null
}

/** Feedback for a refused call (`RetryPromptPart`); `timestamp` is left out (pydantic-ai fills it when it validates the part). */
export interface PydanticRetryPromptPart {
  part_kind: 'retry-prompt'
  /** The model-readable refusal. */
  content: string
  tool_name: string
  /** Only when the call had one. */
  tool_call_id?: string
}

/** A tool result (`ToolReturnPart`); a later one answers its call. */
export interface PydanticToolReturnPart {
  part_kind: 'tool-return'
  tool_name: string
  content: unknown
  tool_call_id: string
}

/** A request to the model (`ModelRequest`); toolgate's feedback is one of these holding retry-prompt parts. */
export interface PydanticModelRequest {
  kind: 'request'
  parts: (PydanticRetryPromptPart | PydanticToolReturnPart | { part_kind: string })[]
}

/** Any message (`ModelMessage`). */
export type PydanticModelMessage = PydanticModelRequest | PydanticModelResponse

/** What `guard` reads with `dialect: 'pydantic-ai'`: a response, or a message list (its pending calls). */
export type PydanticPayload = PydanticModelResponse | PydanticModelMessage[]

/** `TurnReport.feedback` for this dialect: ONE request of retry-prompt parts. */
export interface PydanticFeedbackRequest {
  kind: 'request'
  parts: PydanticRetryPromptPart[]
}

/** A tool the model may call (`ToolDefinition`), filtered by `name`. */
export interface PydanticToolDefinition {
  name: string
  parameters_json_schema: Record<string, unknown>
  description?: string | null
  strict?: boolean | null
  kind?: 'function' | 'output' | 'external' | 'unapproved'
}
