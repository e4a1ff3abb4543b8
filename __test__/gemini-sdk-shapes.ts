// The Gemini fixtures' payloads and feedback written as values of `@google/genai`'s own types
// (a devDependency only). `npm run typecheck` proves each is an SDK value;
// __test__/gemini-sdk.test.ts proves each equals its fixture under __test__/fixtures/, so the
// fixtures are shapes the SDK really produces and accepts.
import { FinishReason } from '@google/genai'
import type { Content, GenerateContentResponse, LiveClientMessage, LiveServerMessage } from '@google/genai'

import type { GeminiFeedbackContent, GeminiFeedbackText, GeminiLiveClientContent, GeminiLiveToolResponse } from '../src-ts/index'

/** A response as the SDK hands it over, without its convenience getters. */
type Response = Pick<GenerateContentResponse, 'candidates' | 'usageMetadata' | 'modelVersion'>
/** A Live server message as `session.receive` / `onmessage` hands it over, without its getters. */
type ServerMessage = Omit<LiveServerMessage, 'text' | 'data'>

/** Stands for a refusal's message, as the fixtures write it. */
const M = '<message>'

/** Fixture payloads by fixture name (under __test__/fixtures/), each typed by the SDK. */
export const payloads: Record<string, Response | ServerMessage | Content> = {
  'dialects/gemini/live-tool-call-auto.json': {
    toolCall: {
      functionCalls: [
        { id: 'function-call-1', name: 'get_weather', args: { city: 'Paris', days: '2' } },
        { id: 'function-call-2', name: 'send_email', args: { to: 'a@b.c' } },
        { id: 'function-call-3', name: 'ping' },
      ],
    },
  } satisfies ServerMessage,
  'dialects/gemini/live-server-content.json': {
    serverContent: { modelTurn: { role: 'model', parts: [{ text: 'It is sunny in Paris.' }] }, turnComplete: true },
    usageMetadata: { totalTokenCount: 42 },
  } satisfies ServerMessage,
  'dialects/gemini/malformed-function-call.json': {
    candidates: [
      {
        finishReason: FinishReason.MALFORMED_FUNCTION_CALL,
        finishMessage: "Malformed function call: print(default_api.get_weather(city='Paris', days=two))",
        index: 0,
      },
    ],
    usageMetadata: { promptTokenCount: 50, totalTokenCount: 50 },
    modelVersion: 'gemini-2.5-flash',
  } satisfies Response,
  'dialects/gemini/unexpected-tool-call.json': {
    candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason: FinishReason.UNEXPECTED_TOOL_CALL, index: 0 }],
  } satisfies Response,
  'dialects/gemini/malformed-and-refused-candidates.json': {
    candidates: [
      { content: { role: 'model', parts: [] }, finishReason: FinishReason.MALFORMED_FUNCTION_CALL, index: 0 },
      { content: { role: 'model', parts: [{ functionCall: { id: 'c1', name: 'send_email', args: {} } }] }, finishReason: FinishReason.STOP, index: 1 },
    ],
  } satisfies Response,
}

/** Fixture feedback by fixture name: what toolgate writes, typed by the SDK (and by toolgate's own types). */
export const feedback: Record<string, (Content | LiveClientMessage)[]> = {
  'dialects/gemini/live-tool-call-auto.json': [
    { toolResponse: { functionResponses: [{ id: 'function-call-2', name: 'send_email', response: { error: M } }] } } satisfies LiveClientMessage &
      GeminiLiveToolResponse,
  ],
  'dialects/gemini/live-tool-call-null-entry.json': [
    { toolResponse: { functionResponses: [{ id: 'fc-2', name: 'delete_file', response: { error: M } }] } } satisfies LiveClientMessage &
      GeminiLiveToolResponse,
    { clientContent: { turns: [{ role: 'user', parts: [{ text: M }] }], turnComplete: true } } satisfies LiveClientMessage & GeminiLiveClientContent,
  ],
  'dialects/gemini/malformed-function-call.json': [{ role: 'user', parts: [{ text: M }] } satisfies Content & GeminiFeedbackText],
  'dialects/gemini/malformed-and-refused-candidates.json': [
    { role: 'user', parts: [{ functionResponse: { id: 'c1', name: 'send_email', response: { error: M } } }] } satisfies Content &
      GeminiFeedbackContent,
    { role: 'user', parts: [{ text: M }] } satisfies Content & GeminiFeedbackText,
  ],
  'streams/gemini/null-function-call-part.json': [{ role: 'user', parts: [{ text: M }] } satisfies Content & GeminiFeedbackText],
}

// toolgate's feedback types are SDK values wherever the SDK is the receiver
export const feedbackContentIsAContent = (f: GeminiFeedbackContent): Content => f
export const feedbackTextIsAContent = (f: GeminiFeedbackText): Content => f
export const liveToolResponseIsAClientMessage = (f: GeminiLiveToolResponse): LiveClientMessage => f
export const liveClientContentIsAClientMessage = (f: GeminiLiveClientContent): LiveClientMessage => f
