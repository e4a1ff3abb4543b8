// toolgate/ai-sdk: one line to guard an agent built on the Vercel AI SDK (`ai` 7).
//
//   const model = wrapLanguageModel({ model: openai('gpt-5'), middleware: toolgateMiddleware(gate, ctx) })
//   await generateText({ model, tools: gateTools(tools, gate, ctx), stopWhen: stepCountIs(5), prompt })
//
// The middleware filters the tools offered to the model and decides every tool call on the
// model's own argument text (repairs written in before the AI SDK parses them); the gated tools
// run what the gate allowed and answer what it refused with the gate's message as the call's
// tool result, so every call id is answered exactly once and a refused tool never runs. Without
// the middleware, gated tools decide each call themselves, and gateRepairToolCall hands the
// calls the tool schemas reject to the gate. Nothing here decides anything: allowed or not, the
// arguments and the refusal all come from the gate. The SDK is an optional peer dependency,
// imported for its types only.
export { toolgateMiddleware } from './ai-sdk-middleware'
export { gateRepairToolCall, gateTools } from './ai-sdk-tools'
export { ToolRefusedError } from './ai-sdk-shared'
export type { AiSdkContextSource, AiSdkGateOptions, AiSdkVerdictInfo, AiSdkVerdictSource } from './ai-sdk-shared'
export { gateUIMessages, gateUIMessageStream, type GatedUIMessages } from './ai-sdk-ui'
export { answer, type AiSdkToolResult } from './ai-sdk-answer'
export type { ToolResults } from './answer-plan'
