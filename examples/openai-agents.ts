// An OpenAI Agents SDK agent whose tools are guarded by toolgate.
//   npx tsx examples/openai-agents.ts     (offline: the SDK's ScriptedModel stands in for the model)
// The model asks for the weather with days as a string ("3": the tool's zod parse alone would
// refuse it; the gate repairs it) and to read a file outside the reports this analyst may read. The
// allowed call runs with repaired arguments; the refused one never runs, and the model reads the
// gate's message as that call's output.
import { Agent, run, setTracingDisabled, tool, type RunContext } from '@openai/agents'
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents/testing'
import { z } from 'zod'

import { gateAgent, toolsFromAgentTools } from '../src-ts/adapters/openai-agents' // in your app: 'toolgate/openai-agents'
import { ToolGate, type CallContext } from '../src-ts/index' // in your app: 'toolgate'

setTracingDisabled(true) // offline: no trace export

interface AppContext {
  userId: string
  roles: string[]
}

const weatherParams = z.object({ city: z.string(), days: z.number().int().min(1).max(14) })
const getWeather = tool<typeof weatherParams, AppContext>({
  name: 'get_weather',
  description: 'Weather forecast for a city',
  parameters: weatherParams,
  execute: async ({ city, days }) => `${city}: sunny for ${days} days`,
})
const fileParams = z.object({ path: z.string() })
const readFile = tool<typeof fileParams, AppContext>({
  name: 'read_file',
  description: 'Read a file',
  parameters: fileParams,
  execute: async ({ path }) => `contents of ${path}`,
})

// The gate's tool declarations come from the tools' own JSON Schemas; policy is deny by default.
const gate = new ToolGate({
  tools: toolsFromAgentTools([getWeather, readFile], { read_file: { action: 'read', resource: 'file:{path*}' } }),
  policy: {
    rules: [
      { effect: 'allow', tools: ['get_weather'] },
      { effect: 'allow', roles: ['analyst'], tools: ['read_file'], resources: ['file:reports/**'] },
    ],
  },
})

// Who is calling: what your server passes as run(…, { context }).
const caller = (rc: RunContext<AppContext>): CallContext => ({ subject: rc.context.userId, roles: rc.context.roles })

const model = new ScriptedModel([
  [
    functionCall('get_weather', { city: 'Oslo', days: '3' }, { callId: 'call_1' }),
    functionCall('read_file', { path: 'secrets/keys.txt' }, { callId: 'call_2' }),
  ],
  [assistantMessage('Oslo looks sunny; I may not read that file for you.')],
])

const agent = new Agent<AppContext>({ name: 'assistant', instructions: 'Help with weather and reports.', model, tools: [getWeather, readFile] })
const guarded = gateAgent(agent, gate, caller, {
  onVerdict: (v, { toolCall }) => console.log(`gate: ${toolCall.callId} ${v.tool} ${v.outcome}${v.reason === undefined ? '' : ` (${v.reason})`}`),
})

async function main(): Promise<void> {
  const result = await run(guarded, 'Weather in Oslo for 3 days, and the keys file?', { context: { userId: 'ana', roles: ['analyst'] } })
  for (const item of result.newItems) {
    if (item.type === 'tool_call_output_item') console.log(`tool ${(item.rawItem as { callId: string }).callId}: ${String(item.output)}`)
  }
  console.log(`model: ${String(result.finalOutput)}`)
}

main().catch((err: unknown) => {
  console.error(err)
  process.exit(1)
})
