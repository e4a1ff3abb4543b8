// What every toolgate/langchain entry point shares: who the caller is for a run (a fixed
// CallContext, or one read from the run's config, where LangChain and LangGraph carry the host's
// per-request data), the verdict hook, and the checks on what the host passed. No decisions.
import type { InvalidToolCall, ToolCall } from '@langchain/core/messages'
import type { RunnableConfig } from '@langchain/core/runnables'

import { ToolGateError } from '../errors'
import { ToolGate } from '../gate'
import type { CallContext, Verdict } from '../types'

/**
 * Who is calling, per run: a fixed `CallContext`, or a function of the run's `RunnableConfig`
 * (for example `config.configurable.user` set by your server from its auth, or LangGraph's
 * `config.context`) returning one or a promise of one. Asked once per tool call (per turn for
 * {@link gatedToolNode}); `config` is undefined when a tool is invoked without one.
 */
export type LangChainContextSource = CallContext | ((config: RunnableConfig | undefined) => CallContext | Promise<CallContext>)

/** What `onVerdict` is told besides the verdict. */
export interface LangChainVerdictInfo {
  /**
   * The call as the model sent it, before any repair (an `InvalidToolCall` for one LangChain
   * could not parse, which the gate refuses); undefined when a tool was invoked with bare
   * arguments rather than a `ToolCall`.
   */
  toolCall: ToolCall | InvalidToolCall | undefined
  /** The caller the verdict was decided for. */
  context: CallContext
  /** The run's config, as the tool or node received it. */
  config: RunnableConfig | undefined
}

/** Options of {@link gateTool} and {@link gateTools}. Unknown keys are `E_CONFIG`. */
export interface GateToolOptions {
  /**
   * Told every verdict before anything runs: the host's log, and the only place a `confirm`
   * outcome's `verdict.confirmation.token` appears (the model gets `verdict.message` only).
   * Awaited when it returns a promise; a throw (or rejection) propagates and the call does not run.
   */
  onVerdict?: (verdict: Verdict, info: LangChainVerdictInfo) => void | Promise<void>
}

/** Options of {@link gatedToolNode}: `onVerdict`, and `ToolNode`'s own options. Unknown keys are `E_CONFIG`. */
export interface GatedToolNodeOptions extends GateToolOptions {
  /** The node's run name (ToolNode's `name`). */
  name?: string
  /** Tags for the node's runs (ToolNode's `tags`). */
  tags?: string[]
  /**
   * ToolNode's `handleToolErrors` (default true): an allowed tool that throws is answered with
   * an error ToolMessage instead of failing the graph. Refusals are answered either way.
   */
  handleToolErrors?: boolean
}

const KEYS: Record<string, readonly string[]> = {
  tool: ['onVerdict'],
  node: ['onVerdict', 'name', 'tags', 'handleToolErrors'],
}

/** Checks what the host passed to an entry point: `E_CONFIG` naming the mistake. */
export function checkArgs(where: string, gate: unknown, ctx: unknown, options: unknown, kind: 'tool' | 'node'): void {
  if (!(gate instanceof ToolGate)) throw new ToolGateError('E_CONFIG', `${where}: \`gate\` must be a ToolGate`)
  if (ctx !== undefined && typeof ctx !== 'function' && !isPlainObject(ctx)) {
    throw new ToolGateError('E_CONFIG', `${where}: \`ctx\` must be a CallContext or a function returning one`)
  }
  if (!isPlainObject(options)) throw new ToolGateError('E_CONFIG', `${where}: options must be an object`)
  const allowed = KEYS[kind]
  const unknown = Object.keys(options).filter((k) => !allowed.includes(k))
  if (unknown.length > 0) {
    throw new ToolGateError('E_CONFIG', `${where}: unknown option ${unknown.map((k) => `\`${k}\``).join(', ')} (expected ${allowed.join(', ')})`)
  }
  const onVerdict = (options as GateToolOptions).onVerdict
  if (onVerdict !== undefined && typeof onVerdict !== 'function') throw new ToolGateError('E_CONFIG', `${where}: onVerdict must be a function`)
}

/** The caller for one run: `source` itself, or what it answers for `config`. */
export async function contextFor(source: LangChainContextSource | undefined, config: RunnableConfig | undefined, where: string): Promise<CallContext> {
  const ctx = typeof source === 'function' ? await source(config) : (source ?? {})
  if (!isPlainObject(ctx)) {
    throw new ToolGateError('E_CONFIG', `${where}: ctx must give a CallContext object, got ${ctx === null ? 'null' : Array.isArray(ctx) ? 'an array' : typeof ctx}`)
  }
  return ctx
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}
