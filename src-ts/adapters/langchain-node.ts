// gatedToolNode: LangGraph's own ToolNode, with the whole turn guarded first. The last AIMessage
// (with the ToolMessages after it) goes through `gate.guardAsync(…, { dialect: 'langchain' })`;
// ToolNode then runs only the allowed calls, with the gate's repaired arguments (so its error
// handling, Commands, Send inputs and tool runtime all work as they do in LangGraph), and each
// refused call is answered with the ToolMessage the gate's feedback describes (`status: 'error'`).
// Every call id of the turn is answered exactly once, in the order the model sent the calls —
// also calls LangChain could not parse (`invalid_tool_calls`), which ToolNode alone leaves
// unanswered. Nothing is decided here.
import type { AIMessage, BaseMessage, InvalidToolCall, ToolCall, ToolMessage } from '@langchain/core/messages'
import type { RunnableConfig } from '@langchain/core/runnables'

import { ToolGateError } from '../errors'
import type { ToolGate } from '../gate'
import type { TurnCall, TurnReport } from '../types'
import { contextFor, type GatedToolNodeOptions, type LangChainContextSource } from './langchain-context'
import { messagesModule, prebuiltModule, type ToolNodeBase, type ToolNodeClass } from './langchain-runtime'
import { toolMessage, ungated, type GateableTool } from './langchain-tool'

type State = { messages: BaseMessage[] } & Record<string, unknown>
type SendInput = { lg_tool_call: ToolCall } & Record<string, unknown>

/** The settings one gated node runs with. */
interface Settings {
  gate: ToolGate
  ctx: LangChainContextSource | undefined
  options: GatedToolNodeOptions
  where: string
}

const classes = new WeakMap<ToolNodeClass, new (tools: unknown[], settings: Settings) => ToolNodeBase>()

/** A gated ToolNode over `tools` (gated tools are unwrapped: the node gates the turn itself). */
export function makeGatedToolNode(tools: readonly GateableTool[], settings: Settings): ToolNodeBase {
  if (!Array.isArray(tools)) throw new ToolGateError('E_CONFIG', `${settings.where}: \`tools\` must be an array of LangChain tools`)
  const { ToolNode } = prebuiltModule(settings.where)
  let Gated = classes.get(ToolNode)
  if (Gated === undefined) {
    Gated = gatedClass(ToolNode)
    classes.set(ToolNode, Gated)
  }
  return new Gated(tools.map((t) => ungated(t)), settings)
}

function gatedClass(Base: ToolNodeClass): new (tools: unknown[], settings: Settings) => ToolNodeBase {
  return class GatedToolNode extends Base {
    readonly #settings: Settings

    constructor(tools: unknown[], settings: Settings) {
      const { name, tags, handleToolErrors } = settings.options
      super(tools, { name, tags, handleToolErrors })
      this.#settings = settings
    }

    override async run(input: unknown, config: RunnableConfig): Promise<unknown> {
      if (isSendInput(input)) return this.#runSend(input, config)
      const messages = Array.isArray(input) ? (input as BaseMessage[]) : isState(input) ? input.messages : undefined
      const { isAIMessage, AIMessage: AIMessageClass } = messagesModule(this.#settings.where)
      const at = messages === undefined ? -1 : findLastIndex(messages, (m) => isAIMessage(m))
      // Not a turn ToolNode can read: let ToolNode say so, in its own words.
      if (messages === undefined || at < 0) return super.run(input, config)
      const ai = messages[at] as AIMessage
      const report = await this.#guard(messages.slice(at), config, ai)
      const allowed: ToolCall[] = report.allowed.map((a) => ({ id: idOf(a.callId, ai), name: a.tool, args: a.arguments, type: 'tool_call' }))
      const refusals = report.calls.filter((c) => !c.allowed).map((c, i) => toolMessage(feedbackFor(report, c, i), c, this.#settings.where))
      const wrap = (out: ToolMessage[]): unknown => (Array.isArray(input) ? out : { messages: out })
      if (allowed.length === 0) return wrap(refusals)
      const turn = new AIMessageClass({ content: ai.content, id: ai.id, name: ai.name, tool_calls: allowed })
      const inner = [...messages.slice(0, at), turn, ...messages.slice(at + 1)]
      const ran = await super.run(Array.isArray(input) ? inner : { ...(input as State), messages: inner }, config)
      const outs = Array.isArray(input) ? ran : isState(ran) ? ran.messages : undefined
      if (!Array.isArray(outs) || !outs.every(isMessage)) {
        // A tool returned a LangGraph Command: ToolNode answers a list of updates; add ours to it.
        if (!Array.isArray(ran)) throw new ToolGateError('E_PAYLOAD', `${this.#settings.where}: ToolNode answered neither messages nor a list of updates`)
        return refusals.length === 0 ? ran : [...ran, wrap(refusals)]
      }
      if (outs.length !== allowed.length) {
        throw new ToolGateError('E_PAYLOAD', `${this.#settings.where}: ToolNode answered ${outs.length} messages for ${allowed.length} allowed calls`)
      }
      let k = 0
      let j = 0
      return wrap(report.calls.map((c) => (c.allowed ? (outs[k++] as ToolMessage) : refusals[j++])))
    }

    /** A single call sent with LangGraph's Send API (`createReactAgent` v2). */
    async #runSend(input: SendInput, config: RunnableConfig): Promise<unknown> {
      const call = input.lg_tool_call
      const report = await this.#guard({ content: '', tool_calls: [call] }, config, undefined, call)
      const verdict = report.calls[0]
      if (report.calls.length !== 1 || verdict === undefined) throw new ToolGateError('E_PAYLOAD', `${this.#settings.where}: one tool call read as ${report.calls.length}`)
      if (!verdict.allowed) return { messages: [toolMessage(report.feedback[0], verdict, this.#settings.where)] }
      return super.run({ ...input, lg_tool_call: { ...call, args: report.allowed[0].arguments } }, config)
    }

    /** Guards one turn for the run's caller and tells `onVerdict` about each call, before anything runs. */
    async #guard(payload: object, config: RunnableConfig, ai: AIMessage | undefined, single?: ToolCall): Promise<TurnReport<'langchain'>> {
      const { gate, ctx, options, where } = this.#settings
      const context = await contextFor(ctx, config, where)
      const report = await gate.guardAsync(payload, { ...context, dialect: 'langchain' })
      if (options.onVerdict !== undefined) {
        for (const [i, verdict] of report.calls.entries()) {
          await options.onVerdict(verdict, { toolCall: single ?? callOf(verdict, i, ai), context, config })
        }
      }
      return report
    }
  }
}

/** The call of `ai` a verdict is about: by wire id, else (no ids) by position. */
function callOf(verdict: TurnCall, index: number, ai: AIMessage | undefined): ToolCall | InvalidToolCall | undefined {
  if (ai === undefined) return undefined
  const calls: (ToolCall | InvalidToolCall)[] = [...(ai.tool_calls ?? []), ...(ai.invalid_tool_calls ?? [])]
  return calls.find((c) => c.id !== undefined && c.id === verdict.callId) ?? (calls.some((c) => c.id !== undefined) ? undefined : calls[index])
}

/** The gate's answer for the `i`-th refused call: by call id, else (no ids) by position. */
function feedbackFor(report: TurnReport<'langchain'>, call: TurnCall, i: number): TurnReport<'langchain'>['feedback'][number] | undefined {
  return report.feedback.find((f) => f.tool_call_id !== undefined && f.tool_call_id === call.callId) ?? report.feedback[i]
}

/** The wire id to answer: the call's own, or none for a call without one (`callId` is then its index). */
function idOf(callId: string, ai: AIMessage): string | undefined {
  return (ai.tool_calls ?? []).some((c) => c.id === callId) ? callId : undefined
}

function isSendInput(input: unknown): input is SendInput {
  return input !== null && typeof input === 'object' && !Array.isArray(input) && 'lg_tool_call' in input
}

function isState(value: unknown): value is State {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && Array.isArray((value as { messages?: unknown }).messages)
}

function isMessage(value: unknown): boolean {
  return value !== null && typeof value === 'object' && typeof (value as { getType?: unknown }).getType === 'function'
}

function findLastIndex<T>(list: readonly T[], test: (item: T) => boolean): number {
  for (let i = list.length - 1; i >= 0; i--) if (test(list[i])) return i
  return -1
}
