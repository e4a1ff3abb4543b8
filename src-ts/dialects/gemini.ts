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
  /** `null` with nothing else in the part is a call that arrived empty: refused, answered by a text part. */
  functionCall?: GeminiFunctionCall | null
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
  /** `MALFORMED_FUNCTION_CALL` / `UNEXPECTED_TOOL_CALL`: no call to read, a turn refusal (`TurnReport.turnRefusals`). */
  finishReason?: string
  /** The API's note on the finish (for a malformed call, the model's unparsed text); quoted, cut to 200 characters, in the refusal. */
  finishMessage?: string
  index?: number
}

/** A whole response (`GenerateContentResponse`). */
export interface GeminiGenerateContentResponse {
  candidates?: GeminiCandidate[]
  usageMetadata?: Record<string, unknown>
  modelVersion?: string
}

/** A Live API server message (`LiveServerMessage`, one WebSocket message of `ai.live.connect`): `toolCall.functionCalls` are the calls. */
export interface GeminiLiveServerMessage {
  /** `LiveServerToolCall`: the calls to run and answer by `id`; a `null` entry is a call that arrived empty (refused). */
  toolCall?: { functionCalls?: (GeminiFunctionCall | null)[] }
  /** `LiveServerContent`: `modelTurn` is read as a content. */
  serverContent?: { modelTurn?: GeminiContent; turnComplete?: boolean; [key: string]: unknown }
  /** `LiveServerToolCallCancellation`: holds no call. */
  toolCallCancellation?: { ids?: string[] }
  setupComplete?: Record<string, unknown>
  usageMetadata?: Record<string, unknown>
  goAway?: Record<string, unknown>
}

/** What `guard` reads with `dialect: 'gemini'`: a response, one content, a contents list (its pending calls), or a Live server message. */
export type GeminiPayload = GeminiGenerateContentResponse | GeminiContent | GeminiContent[] | GeminiLiveServerMessage

/** `TurnReport.feedback` for a response or contents: ONE user content of `functionResponse` parts, one per refused call. */
export interface GeminiFeedbackContent {
  role: 'user'
  parts: { functionResponse: GeminiFunctionResponse & { response: { error: string } } }[]
}

/**
 * After it, for what has no call name to answer: ONE user content of text parts, one per call that arrived empty
 * (`functionCall: null`) and one per turn refusal (`MALFORMED_FUNCTION_CALL`, `TurnReport.turnRefusals`).
 */
export interface GeminiFeedbackText {
  role: 'user'
  parts: { text: string }[]
}

/** `TurnReport.feedback` for a Live server message: ONE `LiveClientMessage` with a `toolResponse` (send it with `session.sendToolResponse`). */
export interface GeminiLiveToolResponse {
  toolResponse: { functionResponses: (GeminiFunctionResponse & { response: { error: string } })[] }
}

/** For a Live server message whose refused calls include one that arrived empty (no name to answer): its message as a user turn (`session.sendClientContent`). */
export interface GeminiLiveClientContent {
  clientContent: { turns: { role: 'user'; parts: { text: string }[] }[]; turnComplete: boolean }
}

/** One entry of `TurnReport.feedback` for this dialect. */
export type GeminiFeedback = GeminiFeedbackContent | GeminiFeedbackText | GeminiLiveToolResponse | GeminiLiveClientContent

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
