// Compile-time agreement between toolgate's hand-written dialect types and the official SDKs'
// own types (devDependencies only; toolgate has no SDK at runtime). Type-checked by
// `npm run typecheck`, never run: each function states "an SDK value is what guard reads" or
// "what toolgate writes is an SDK value", and fails to compile when the two drift apart.
import type { Message, MessageParam, Tool as AnthropicSdkTool } from '@anthropic-ai/sdk/resources/messages'
import type { DynamicToolUIPart, ModelMessage, ToolUIPart, UIMessage, UIMessageChunk, UIMessagePart, UIDataTypes, UITools } from 'ai'
import type {
  ChatCompletion,
  ChatCompletionMessage,
  ChatCompletionMessageParam,
  ChatCompletionTool,
  ChatCompletionToolMessageParam,
} from 'openai/resources/chat/completions'
import type { Response, ResponseFunctionToolCall, ResponseInputItem } from 'openai/resources/responses/responses'

import type {
  AiSdkFeedback,
  AiSdkPayload,
  AiSdkUIMessageChunk,
  AiSdkUIPayload,
  AiSdkUIRefusalPart,
  AiSdkUIToolPart,
  AnthropicPayload,
  AnthropicToolResultMessage,
  AnthropicTools,
  DialectFeedback,
  OpenAiPayload,
  OpenAiToolMessage,
  OpenAiTools,
  ResponsesFunctionCall,
  ResponsesFunctionCallOutput,
  ResponsesPayload,
} from '../src-ts/index'

// OpenAI Chat Completions
export const openAiCompletionIsRead = (c: ChatCompletion): OpenAiPayload => c
export const openAiMessageIsRead = (m: ChatCompletionMessage): OpenAiPayload => m
export const openAiFeedbackIsAMessage = (f: OpenAiToolMessage): ChatCompletionToolMessageParam => f
export const openAiFeedbackJoinsTheList = (f: DialectFeedback['openai']): ChatCompletionMessageParam => f
export const openAiToolsAreRead = (t: ChatCompletionTool[]): OpenAiTools => t

// OpenAI Responses
export const responsesResponseIsRead = (r: Response): ResponsesPayload => r
export const responsesCallIsRead = (c: ResponseFunctionToolCall): ResponsesFunctionCall => c
export const responsesFeedbackIsAnInputItem = (f: ResponsesFunctionCallOutput): ResponseInputItem => f

// Anthropic Messages
export const anthropicMessageIsRead = (m: Message): AnthropicPayload => m
export const anthropicConversationIsRead = (m: MessageParam[]): AnthropicPayload => m
export const anthropicFeedbackIsAMessageParam = (f: AnthropicToolResultMessage): MessageParam => f
export const anthropicToolsAreRead = (t: AnthropicSdkTool[]): AnthropicTools => t

// Vercel AI SDK
export const aiSdkMessagesAreRead = (m: ModelMessage[]): AiSdkPayload => m
export const aiSdkFeedbackIsAModelMessage = (f: AiSdkFeedback): ModelMessage => f
// Vercel AI SDK UI messages (useChat) and the UI message stream
export const aiSdkUIMessageIsRead = (m: UIMessage): AiSdkUIPayload => m
export const aiSdkUIMessagesAreRead = (m: UIMessage[]): AiSdkUIPayload => m
export const aiSdkChatRequestIsRead = (body: { id: string; messages: UIMessage[]; trigger: 'submit-message' }): AiSdkUIPayload => body
export const aiSdkUIFeedbackIsAPart = (f: DialectFeedback['ai-sdk-ui']): UIMessagePart<UIDataTypes, UITools> => f
export const aiSdkUIToolPartIsRead = (p: ToolUIPart | DynamicToolUIPart): AiSdkUIToolPart => p
export const aiSdkUIRefusalIsAPart = (f: AiSdkUIRefusalPart): UIMessagePart<UIDataTypes, UITools> => f
export const aiSdkUIRefusalIsAToolPart = (f: AiSdkUIRefusalPart): ToolUIPart | DynamicToolUIPart => f
export const aiSdkUIChunkIsRead = (c: UIMessageChunk): AiSdkUIMessageChunk => c
export const aiSdkUIRefusalChunkIsAChunk = (f: AiSdkUIRefusalPart): UIMessageChunk => ({ type: 'tool-input-error', toolCallId: f.toolCallId, toolName: f.type === 'dynamic-tool' ? f.toolName : f.type.slice(5), input: f.input, errorText: f.errorText })
