// The payload, feedback and tool-list types of every dialect, and maps from a dialect name to
// them, so a host can type what it passes to `guard` / `filterTools` and what it sends back.
import type { AiSdkFeedback, AiSdkPayload, AiSdkToolList } from './ai-sdk'
import type { AiSdkUIPayload, AiSdkUIRefusalPart, AiSdkUIToolList } from './ai-sdk-ui'
import type { AnthropicPayload, AnthropicToolResultMessage, AnthropicTools } from './anthropic'
import type { GeminiFeedback, GeminiPayload, GeminiTool } from './gemini'
import type { LangChainPayload, LangChainToolMessageFields, LangChainToolSpec } from './langchain'
import type { McpFeedback, McpPayload, McpToolList } from './mcp'
import type { OpenAiPayload, OpenAiToolMessage, OpenAiTools } from './openai'
import type { ResponsesFeedbackItem, ResponsesPayload, ResponsesTool } from './openai-responses'
import type { PydanticFeedbackRequest, PydanticPayload, PydanticToolDefinition } from './pydantic-ai'

export type * from './ai-sdk'
export type * from './ai-sdk-ui'
export type * from './anthropic'
export type * from './gemini'
export type * from './langchain'
export type * from './mcp'
export type * from './openai'
export type * from './openai-responses'
export type * from './pydantic-ai'

/** What `guard` reads, per dialect. */
export interface DialectPayloads {
  openai: OpenAiPayload
  'openai-responses': ResponsesPayload
  anthropic: AnthropicPayload
  langchain: LangChainPayload
  'pydantic-ai': PydanticPayload
  mcp: McpPayload
  'ai-sdk': AiSdkPayload
  gemini: GeminiPayload
  'ai-sdk-ui': AiSdkUIPayload
}

/** One item of `TurnReport.feedback`, per dialect. */
export interface DialectFeedback {
  openai: OpenAiToolMessage
  'openai-responses': ResponsesFeedbackItem
  anthropic: AnthropicToolResultMessage
  langchain: LangChainToolMessageFields
  'pydantic-ai': PydanticFeedbackRequest
  mcp: McpFeedback
  'ai-sdk': AiSdkFeedback
  gemini: GeminiFeedback
  /** The refused tool parts themselves, in state `output-error`. */
  'ai-sdk-ui': AiSdkUIRefusalPart
}

/** What `filterTools` reads (and answers), per dialect. */
export interface DialectToolLists {
  openai: OpenAiTools
  'openai-responses': ResponsesTool[] | { tools: ResponsesTool[]; [key: string]: unknown }
  anthropic: AnthropicTools
  langchain: LangChainToolSpec[] | { name: string; [key: string]: unknown }[]
  'pydantic-ai': PydanticToolDefinition[]
  mcp: McpToolList
  'ai-sdk': AiSdkToolList
  gemini: GeminiTool[] | { tools: GeminiTool[]; [key: string]: unknown }
  'ai-sdk-ui': AiSdkUIToolList
}
