// The gate in a Vercel AI SDK agent: one middleware on the model, one wrapper on the tools.
//   npx tsx examples/ai-sdk.ts        (no network: the model is the AI SDK's own test model)
// The model asks for the weather with days as the string "2" (the gate repairs it to 2 before
// the AI SDK's zod schema sees it) and to delete a file (no rule lets this caller delete: the
// tool never runs, and the model reads the gate's refusal as that call's tool result).
import { generateText, stepCountIs, tool, wrapLanguageModel } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'
import { z } from 'zod'

import { gateTools, toolgateMiddleware } from '../src-ts/adapters/ai-sdk'
import { ToolGate, type CallContext } from '../src-ts/index'
import { normalizeToolSchemas } from '../src-ts/schema-input'

// One tool set, declared once: the same zod schemas for the AI SDK and for the gate.
const weather = z.object({ city: z.string(), days: z.number().int().optional() })
const deletion = z.object({ path: z.string() })

const gate = new ToolGate(
  normalizeToolSchemas({
    tools: [
      { name: 'get_weather', inputSchema: weather },
      { name: 'delete_file', inputSchema: deletion, destructive: true },
    ],
    policy: { rules: [{ effect: 'allow', tools: ['get_weather'] }] },
  }),
)

const tools = {
  get_weather: tool({
    inputSchema: weather,
    execute: async (input) => {
      console.log(`ran get_weather ${JSON.stringify(input)}`)
      return { ...input, forecast: 'sunny' }
    },
  }),
  delete_file: tool({
    inputSchema: deletion,
    execute: async ({ path }): Promise<string> => {
      throw new Error(`never reached: the gate refused deleting ${path}`)
    },
  }),
}

// A scripted model: a turn of two tool calls, then a final answer.
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } }
const mock = new MockLanguageModelV4({
  doGenerate: [
    {
      content: [
        { type: 'tool-call', toolCallId: 'c1', toolName: 'get_weather', input: '{"city":"Paris","days":"2"}' },
        { type: 'tool-call', toolCallId: 'c2', toolName: 'delete_file', input: '{"path":"/etc/passwd"}' },
      ],
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage,
      warnings: [],
    },
    { content: [{ type: 'text', text: 'Paris: sunny for 2 days. I may not delete files.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] },
  ],
})

async function main(): Promise<void> {
  const user: CallContext = { subject: 'ana' } // from your auth, per request
  const model = wrapLanguageModel({
    model: mock,
    middleware: toolgateMiddleware(gate, user, {
      onVerdict: (v, { callId }) => console.log(`verdict ${callId} ${v.tool} ${v.outcome}${v.reason === undefined ? '' : ` (${v.reason})`}`),
    }),
  })
  const result = await generateText({ model, tools: gateTools(tools, gate, user), stopWhen: stepCountIs(3), prompt: 'Weather in Paris for 2 days, then delete /etc/passwd.' })

  // what the model read back for each call, in its second request
  for (const m of mock.doGenerateCalls[1].prompt) {
    if (m.role !== 'tool') continue
    for (const p of m.content) if (p.type === 'tool-result') console.log(`${p.toolCallId} answered: ${JSON.stringify(p.output)}`)
  }
  console.log(`answer: ${result.text}`)
}

void main()
