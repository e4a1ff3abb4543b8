// Hand-written to match the `openai` SDK's public Responses API types (resources/responses),
// field for field, for what toolgate reads and writes. No SDK import: the package has no runtime
// dependency on it.

/** A function call the model made (`ResponseFunctionToolCall`); gated under `name`, or `namespace.name` when a namespace is set. */
export interface ResponsesFunctionCall {
  type: 'function_call'
  /** The id the answer (`function_call_output`) must carry. */
  call_id: string
  name: string
  /** JSON text of the arguments, as the model wrote it; toolgate parses it strictly and writes repairs back here as text. */
  arguments: string
  id?: string
  /** The `NamespaceTool` the function belongs to. */
  namespace?: string
  status?: 'in_progress' | 'completed' | 'incomplete'
}

/** A custom (free-text) tool call (`ResponseCustomToolCall`); its `input` is not JSON, so toolgate refuses it unless it happens to hold a JSON object. */
export interface ResponsesCustomToolCall {
  type: 'custom_tool_call'
  call_id: string
  name: string
  input: string
  id?: string
  namespace?: string
}

/** Built-in items the host runs itself; toolgate gates them under their item type (undeclared: refused `unknown_tool`). */
export type ResponsesClientBuiltinType = 'computer_call' | 'local_shell_call' | 'shell_call' | 'apply_patch_call' | 'tool_search_call'

/** A client-executed built-in call (`ResponseComputerToolCall`, `ResponseFunctionShellToolCall`, `ResponseApplyPatchToolCall` …); its `action` / `operation` / `arguments` are the arguments. */
export interface ResponsesClientBuiltinCall {
  type: ResponsesClientBuiltinType
  call_id: string | null
  id?: string
  action?: unknown
  operation?: unknown
  arguments?: unknown
}

/** Item types the server runs itself: reported in `providerExecuted`, never gated. */
export type ResponsesServerItemType =
  | 'web_search_call'
  | 'file_search_call'
  | 'code_interpreter_call'
  | 'image_generation_call'
  | 'mcp_call'
  | 'mcp_approval_request'
  | 'program'
  | 'tool_search_call'

/** Any output or input item (`ResponseOutputItem` / `ResponseInputItem`); an easy input message has `role` and no `type`. */
export type ResponsesItem =
  | ResponsesFunctionCall
  | ResponsesCustomToolCall
  | ResponsesClientBuiltinCall
  | { type: string }
  | { role: string; content: unknown; type?: 'message' }

/** A whole response (`Response`). */
export interface ResponsesResponse {
  object: 'response'
  id: string
  output: ResponsesItem[]
  status?: string
}

/** What `guard` reads with `dialect: 'openai-responses'`: a Response, its output items, or an input-item list (its pending calls). */
export type ResponsesPayload = ResponsesResponse | ResponsesItem[]

/** The answer to a refused function call (`ResponseInputItem.FunctionCallOutput`). */
export interface ResponsesFunctionCallOutput {
  type: 'function_call_output'
  call_id: string
  /** The model-readable refusal. */
  output: string
}

/** The answer to a refused custom tool call (`ResponseCustomToolCallOutput`). */
export interface ResponsesCustomToolCallOutput {
  type: 'custom_tool_call_output'
  call_id: string
  output: string
}

/** The answer to a refused `apply_patch_call` (`ResponseInputItem.ApplyPatchCallOutput`). */
export interface ResponsesApplyPatchCallOutput {
  type: 'apply_patch_call_output'
  call_id: string
  status: 'failed'
  output: string
}

/** The answer to a refused `shell_call` (`ResponseInputItem.ShellCallOutput`): the refusal on `stderr`, exit code 1. */
export interface ResponsesShellCallOutput {
  type: 'shell_call_output'
  call_id: string
  output: { stdout: string; stderr: string; outcome: { type: 'exit'; exit_code: number } }[]
}

/** The answer to a refused `local_shell_call` (`ResponseInputItem.LocalShellCallOutput`: answers by `id`). */
export interface ResponsesLocalShellCallOutput {
  type: 'local_shell_call_output'
  id: string
  output: string
}

/** The answer to a refused `computer_call` (`ResponseInputItem.ComputerCallOutput`): no image (nothing ran); the host attaches its current screenshot. Followed by a {@link ResponsesUserNote}. */
export interface ResponsesComputerCallOutput {
  type: 'computer_call_output'
  call_id: string
  output: { type: 'computer_screenshot'; image_url?: string; file_id?: string }
}

/** The answer to a refused client `tool_search_call` (`ResponseToolSearchOutputItemParam`): no tools. Followed by a {@link ResponsesUserNote}. */
export interface ResponsesToolSearchOutput {
  type: 'tool_search_output'
  call_id?: string
  execution: 'client'
  status: 'completed'
  tools: []
}

/** A user message carrying the refusal text where the answer item has no room for it (`EasyInputMessage` with `input_text`). */
export interface ResponsesUserNote {
  type: 'message'
  role: 'user'
  content: { type: 'input_text'; text: string }[]
}

/** One item of `TurnReport.feedback` for this dialect; send them as `input` items. */
export type ResponsesFeedbackItem =
  | ResponsesFunctionCallOutput
  | ResponsesCustomToolCallOutput
  | ResponsesApplyPatchCallOutput
  | ResponsesShellCallOutput
  | ResponsesLocalShellCallOutput
  | ResponsesComputerCallOutput
  | ResponsesToolSearchOutput
  | ResponsesUserNote

/** A tool definition of a request's `tools` (`Tool`): function and custom tools by `name`, namespaces by `namespace.name`, built-ins by `type`. */
export type ResponsesTool =
  | { type: 'function'; name: string; parameters?: unknown; strict?: boolean | null; description?: string | null }
  | { type: 'custom'; name: string; description?: string }
  | { type: 'namespace'; name: string; description: string; tools: ({ type: 'function' | 'custom'; name: string })[] }
  | { type: string }
