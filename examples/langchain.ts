// A LangGraph.js agent whose tools are guarded by toolgate.
//   npx tsx examples/langchain.ts        (offline: a scripted model stands in for ChatOpenAI)
// The model asks for the weather with days as a string ("3": LangChain's zod check alone would
// refuse it; the gate repairs it) and to read a report, which no rule lets this caller do. The
// allowed call runs with repaired arguments; the refused one is answered with an error
// ToolMessage, and the model's next request carries an answer for every call.
import { BaseChatModel, type BindToolsInput } from '@langchain/core/language_models/chat_models'
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages'
import type { ChatResult } from '@langchain/core/outputs'
import type { RunnableConfig } from '@langchain/core/runnables'
import { tool } from '@langchain/core/tools'
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph'
import { z } from 'zod'

import { gatedToolNode, toolsFromLangChain } from '../src-ts/adapters/langchain' // in your app: 'toolgate/langchain'
import { ToolGate, type CallContext } from '../src-ts/index' // in your app: 'toolgate'

const getWeather = tool(async ({ city, days }) => `${city}: sunny for ${days} days`, {
  name: 'get_weather',
  description: 'Weather forecast for a city',
  schema: z.object({ city: z.string(), days: z.number().int().min(1).max(14) }),
})
const readFile = tool(async ({ path }) => `contents of ${path}`, {
  name: 'read_file',
  description: 'Read a file',
  schema: z.object({ path: z.string() }),
})
const tools = [getWeather, readFile]

// The gate's tool declarations come from the tools' own schemas; policy is deny by default.
const gate = new ToolGate({
  tools: toolsFromLangChain(tools, { read_file: { action: 'read', resource: 'file:{path*}' } }),
  policy: {
    rules: [
      { effect: 'allow', tools: ['get_weather'] },
      { effect: 'allow', roles: ['analyst'], tools: ['read_file'], resources: ['file:reports/**'] },
    ],
  },
})

// Who is calling: your server puts the authenticated user into the run's config.
const caller = (config: RunnableConfig | undefined): CallContext => ({
  subject: config?.configurable?.userId as string | undefined,
  roles: (config?.configurable?.roles as string[] | undefined) ?? [],
})

/** Stands in for ChatOpenAI: first asks for two tools, then answers with text. */
class ScriptedModel extends BaseChatModel {
  turn = 0
  _llmType(): string {
    return 'scripted'
  }
  override bindTools(_tools: BindToolsInput[]) {
    return this
  }
  async _generate(_messages: BaseMessage[]): Promise<ChatResult> {
    const message =
      this.turn++ === 0
        ? new AIMessage({
            content: '',
            tool_calls: [
              { id: 'call_1', name: 'get_weather', args: { city: 'Oslo', days: '3' }, type: 'tool_call' },
              { id: 'call_2', name: 'read_file', args: { path: 'reports/q3.csv' }, type: 'tool_call' },
            ],
          })
        : new AIMessage('Oslo looks sunny; I may not read that report for you.')
    return { generations: [{ text: '', message }] }
  }
}
const model = new ScriptedModel({})

const graph = new StateGraph(MessagesAnnotation)
  .addNode('agent', async (state, config) => {
    // the model is offered only the tools this caller may call
    const offered = gate.filterTools(tools, { dialect: 'langchain', ...caller(config) })
    return { messages: [await model.bindTools(offered).invoke(state.messages, config)] }
  })
  .addNode(
    'tools',
    gatedToolNode(tools, gate, caller, {
      onVerdict: (v, { toolCall }) => console.log(`gate: ${toolCall?.id} ${v.tool} ${v.outcome}${v.reason === undefined ? '' : ` (${v.reason})`}`),
    }),
  )
  .addEdge(START, 'agent')
  .addConditionalEdges('agent', (s) => ((s.messages[s.messages.length - 1] as AIMessage).tool_calls?.length ? 'tools' : END), ['tools', END])
  .addEdge('tools', 'agent')
  .compile()

async function main(): Promise<void> {
  const { messages } = await graph.invoke({ messages: [new HumanMessage('Weather in Oslo for 3 days, and the Q3 report?')] }, { configurable: { userId: 'sam' } })
  for (const m of messages) {
    if (m.getType() === 'tool') {
      const t = m as BaseMessage & { tool_call_id: string; status?: string }
      console.log(`tool ${t.tool_call_id} (${t.status}): ${String(t.content)}`)
    }
  }
  console.log(`model: ${String(messages[messages.length - 1].content)}`)
}

main().catch((err: unknown) => {
  console.error(err)
  process.exit(1)
})
