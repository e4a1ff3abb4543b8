// Hand-written to match `@google/genai`'s public types (src/types.ts), field for field, for what
// toolgate reads and writes. No SDK import: the package has no runtime dependency on it.

/** A function call the model made (`FunctionCall`). */
export interface GeminiFunctionCall {
  /** Present when the API sends one; the answer must echo it. Without it the call id is the call's index. */
  id?: string
  name: string
  /** The arguments as an object; absent or null mean `{}`. Repairs are written back here. */
  args?: Record<string, unknown> | null
}

/** The answer to a call (`FunctionResponse`); toolgate's refusals put the message under `response.error`. */
export interface GeminiFunctionResponse {
  /** Only when the call had an id. */
  id?: string
  name: string
  response: { error: string } | Record<string, unknown>
}

/** Code the model ran with the code-execution tool (`ExecutableCode`): provider-executed, reported. */
export interface GeminiExecutableCode {
  code?: string
  language?: string
  id?: string
}

/** A server-side tool invocation (`toolCall` part, with `include_server_side_tool_invocations`): provider-executed, reported under its `toolType`. */
export interface GeminiToolCall {
  id?: string
  toolType?: string
  args?: Record<string, unknown>
}

/** One part of a content (`Part`); exactly one data member is set. */
export interface GeminiPart {
  text?: string
  thought?: boolean
  thoughtSignature?: string
  functionCall?: GeminiFunctionCall
  functionResponse?: GeminiFunctionResponse
  executableCode?: GeminiExecutableCode
  codeExecutionResult?: { outcome?: string; output?: string }
  toolCall?: GeminiToolCall
  toolResponse?: { id?: string; toolType?: string; response?: Record<string, unknown> }
  inlineData?: { data?: string; mimeType?: string }
  fileData?: { fileUri?: string; mimeType?: string }
}

/** A message (`Content`): `role` is `'user'` or `'model'`. */
export interface GeminiContent {
  role?: 'user' | 'model' | string
  parts?: GeminiPart[]
}

/** One candidate of a response (`Candidate`); a blocked candidate has no content. */
export interface GeminiCandidate {
  content?: GeminiContent
  finishReason?: string
  index?: number
}

/** A whole response (`GenerateContentResponse`). */
export interface GeminiGenerateContentResponse {
  candidates?: GeminiCandidate[]
  usageMetadata?: Record<string, unknown>
  modelVersion?: string
}

/** What `guard` reads with `dialect: 'gemini'`: a response, one content, or a contents list (its pending calls). */
export type GeminiPayload = GeminiGenerateContentResponse | GeminiContent | GeminiContent[]

/** `TurnReport.feedback` for this dialect: ONE user content of `functionResponse` parts, one per refused call. */
export interface GeminiFeedbackContent {
  role: 'user'
  parts: { functionResponse: GeminiFunctionResponse & { response: { error: string } } }[]
}

/** A function the model may call (`FunctionDeclaration`). */
export interface GeminiFunctionDeclaration {
  name: string
  description?: string
  parameters?: Record<string, unknown>
  parametersJsonSchema?: unknown
}

/** One entry of `tools` (`Tool`): function declarations, and provider capabilities (`googleSearch`, `codeExecution` …) that filterTools keeps only when a tool of that name is declared. */
export interface GeminiTool {
  functionDeclarations?: GeminiFunctionDeclaration[]
  googleSearch?: Record<string, unknown>
  googleSearchRetrieval?: Record<string, unknown>
  codeExecution?: Record<string, unknown>
  urlContext?: Record<string, unknown>
  googleMaps?: Record<string, unknown>
  computerUse?: Record<string, unknown>
}
