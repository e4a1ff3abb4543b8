// Hand-written to match the Vercel AI SDK's UI types (`ai` 7: `UIMessage`, `ToolUIPart`,
// `DynamicToolUIPart`, `UIMessageChunk`), field for field, for what the `ai-sdk-ui` dialect reads
// and writes. No SDK import: the package has no runtime dependency on it.

/** The state of a UI message's tool part (`UIToolInvocation['state']`): which states are calls is in docs/adapters/ai-sdk.md. */
export type AiSdkUIToolState =
  | 'input-streaming'
  | 'input-available'
  | 'approval-requested'
  | 'approval-responded'
  | 'output-available'
  | 'output-error'
  | 'output-denied'

/** A tool part's approval (`UIToolInvocation['approval']`, tool approval of ai 6+). */
export interface AiSdkUIToolApproval {
  id: string
  approved?: boolean
  reason?: string
  [key: string]: unknown
}

/**
 * A tool part of a `UIMessage` (`ToolUIPart`: `type: 'tool-<name>'`; `DynamicToolUIPart`:
 * `type: 'dynamic-tool'` with `toolName`), as far as toolgate reads it. Parts in
 * `input-available`, `approval-requested` or `approval-responded` (approved) are calls; repaired
 * input is written into `input`.
 */
export interface AiSdkUIToolPart {
  type: `tool-${string}` | 'dynamic-tool'
  /** Dynamic parts only (a static part's tool is in its `type`). */
  toolName?: string
  toolCallId: string
  state: AiSdkUIToolState
  input?: unknown
  output?: unknown
  errorText?: string
  providerExecuted?: boolean
  approval?: AiSdkUIToolApproval
  [key: string]: unknown
}

/** A UI message (`UIMessage` from `useChat`); parts other than tool parts pass through untouched. */
export interface AiSdkUIMessage {
  id?: string
  role: 'system' | 'user' | 'assistant'
  metadata?: unknown
  parts: (AiSdkUIToolPart | { type: string; [key: string]: unknown })[]
}

/** What the refusal of a UI message's call keeps of the part besides its state and error. */
interface AiSdkUIRefusalCommon {
  toolCallId: string
  state: 'output-error'
  /** The input as sent. */
  input: unknown
  /** The gate's message. */
  errorText: string
  title?: string
  providerExecuted?: boolean
  /** Kept only when it was granted (as the SDK's `output-error` state allows). */
  approval?: { id: string; approved: true; reason?: string }
}

/**
 * The feedback `gate.guard` returns for UI messages: per refused call, its own part in state
 * `output-error` with `errorText` = the gate's message (a `ToolUIPart` / `DynamicToolUIPart`).
 * Replace the part of the same `toolCallId` with it, or pass `{ tool, toolCallId, state,
 * errorText }` of it to `chat.addToolOutput`.
 */
export type AiSdkUIRefusalPart =
  | (AiSdkUIRefusalCommon & { type: `tool-${string}` })
  | (AiSdkUIRefusalCommon & { type: 'dynamic-tool'; toolName: string })

/**
 * What `gate.guard` reads for `dialect: 'ai-sdk-ui'`: a `UIMessage`, a list of them, or a
 * `useChat` request body (`{ id, messages, trigger, … }`).
 */
export type AiSdkUIPayload = AiSdkUIMessage | AiSdkUIMessage[] | { messages: AiSdkUIMessage[]; [key: string]: unknown }

/** What `gate.filterTools` takes for `dialect: 'ai-sdk-ui'`: the server's tool record (`ToolSet`), kept by key. */
export type AiSdkUIToolList = { [name: string]: unknown }

/**
 * A UI message stream chunk (`UIMessageChunk`) as `gate.stream({ dialect: 'ai-sdk-ui' })` forwards
 * it: every chunk the stream passes keeps its shape; a refused call arrives as one
 * `tool-input-error` chunk with the gate's message as `errorText`.
 */
export type AiSdkUIMessageChunk = { type: string; [key: string]: unknown }
