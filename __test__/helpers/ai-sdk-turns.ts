// Model turns for the AI SDK's own MockLanguageModelV4, shared by the ai-sdk adapter tests.
import { simulateReadableStream } from 'ai'

/** The token usage every mock turn reports. */
export const usage = { inputTokens: { total: 5, noCache: 5, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 5, text: 5, reasoning: undefined } }

/** A provider stream of one model turn, cut the way the AI SDK's providers cut it (each call's input in two deltas). */
export function streamTurn(text: string, calls: { id: string; name: string; input: string }[]) {
  const chunks: unknown[] = [{ type: 'stream-start', warnings: [] }, { type: 'response-metadata', id: 'resp-1', modelId: 'mock' }]
  if (text !== '') chunks.push({ type: 'text-start', id: 't0' }, { type: 'text-delta', id: 't0', delta: text.slice(0, 4) }, { type: 'text-delta', id: 't0', delta: text.slice(4) }, { type: 'text-end', id: 't0' })
  for (const c of calls) {
    const half = Math.floor(c.input.length / 2)
    chunks.push(
      { type: 'tool-input-start', id: c.id, toolName: c.name },
      { type: 'tool-input-delta', id: c.id, delta: c.input.slice(0, half) },
      { type: 'tool-input-delta', id: c.id, delta: c.input.slice(half) },
      { type: 'tool-input-end', id: c.id },
      { type: 'tool-call', toolCallId: c.id, toolName: c.name, input: c.input },
    )
  }
  chunks.push({ type: 'finish', finishReason: { unified: calls.length > 0 ? 'tool-calls' : 'stop', raw: 'x' }, usage })
  return { stream: simulateReadableStream({ chunks: chunks as never[] }) }
}
