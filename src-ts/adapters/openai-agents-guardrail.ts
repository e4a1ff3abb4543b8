// The gate as an OpenAI Agents SDK (`@openai/agents` 0.20) tool input guardrail. The SDK runs a
// function tool's `inputGuardrails` right before the tool (after its approval step, if any) with
// the model's `FunctionCallItem`; a guardrail may `allow`, `rejectContent` (the tool does not run
// and the message becomes the call's `function_call_output`, so the model reads it and the call
// id is answered once) or `throwException` (the run fails). It cannot change the arguments: a
// repaired verdict is an `allow`, and the tool runs with what the model sent unless it is wrapped
// (gateAgentTool). Nothing is decided here; the guardrail objects are plain data the SDK reads, so
// the SDK is never loaded at runtime.
import type { FunctionCallItem, RunContext, ToolGuardrailFunctionOutput, ToolInputGuardrailDefinition } from '@openai/agents'

import { ToolGateError } from '../errors'
import { ToolGate } from '../gate'
import type { CallContext, Verdict } from '../types'

/**
 * Who is calling, per run: a fixed `CallContext`, or a function of the SDK's `RunContext` (its
 * `context` is what you passed to `run(agent, input, { context })`, for example the user from
 * your auth) and the call being decided (undefined when asked whether to show a tool) returning
 * one, or a promise of one.
 */
export type AgentContextSource<TContext = unknown> =
  | CallContext
  | ((runContext: RunContext<TContext>, toolCall: FunctionCallItem | undefined) => CallContext | Promise<CallContext>)

/** What `onVerdict` is told besides the verdict. */
export interface AgentVerdictInfo<TContext = unknown> {
  /** The call as the model sent it (`callId`, `name`, `arguments` text before any repair). */
  toolCall: FunctionCallItem
  /** The caller the verdict was decided for. */
  context: CallContext
  /** The SDK's run context. */
  runContext: RunContext<TContext>
}

/** Options of {@link toolgateGuardrail}, {@link gateAgentTool} and friends. Unknown keys are `E_CONFIG`. */
export interface AgentGateOptions<TContext = unknown> {
  /**
   * Told every verdict before the tool runs or the refusal is sent: the host's log, and the only
   * place a `confirm` outcome's `verdict.confirmation.token` appears (the model gets
   * `verdict.message` only). Awaited when it returns a promise; a throw (or rejection) fails the
   * guardrail, which fails the run (the SDK's rule for a guardrail that throws); the tool does not run.
   */
  onVerdict?: (verdict: Verdict, info: AgentVerdictInfo<TContext>) => void | Promise<void>
  /** The guardrail's name in the SDK's results and traces (default `'toolgate'`). */
  name?: string
}

/** What the guardrail records as its `outputInfo` (in `result.toolInputGuardrailResults` and traces); never the confirmation token. */
export interface ToolgateGuardrailInfo {
  outcome: Verdict['outcome']
  reason?: Verdict['reason']
  flags: Verdict['flags']
  action?: string
  resource?: string
}

const OPTION_KEYS: readonly string[] = ['onVerdict', 'name']

/** Checks what the host passed to an entry point: `E_CONFIG` naming the mistake. */
export function checkArgs(where: string, gate: unknown, ctx: unknown, options: unknown): void {
  if (!(gate instanceof ToolGate)) throw new ToolGateError('E_CONFIG', `${where}: \`gate\` must be a ToolGate`)
  if (ctx !== undefined && typeof ctx !== 'function' && !isPlainObject(ctx)) {
    throw new ToolGateError('E_CONFIG', `${where}: \`ctx\` must be a CallContext or a function returning one`)
  }
  if (!isPlainObject(options)) throw new ToolGateError('E_CONFIG', `${where}: options must be an object`)
  const unknown = Object.keys(options).filter((k) => !OPTION_KEYS.includes(k))
  if (unknown.length > 0) {
    throw new ToolGateError('E_CONFIG', `${where}: unknown option ${unknown.map((k) => `\`${k}\``).join(', ')} (expected ${OPTION_KEYS.join(', ')})`)
  }
  const { onVerdict, name } = options as AgentGateOptions
  if (onVerdict !== undefined && typeof onVerdict !== 'function') throw new ToolGateError('E_CONFIG', `${where}: onVerdict must be a function`)
  if (name !== undefined && (typeof name !== 'string' || name === '')) throw new ToolGateError('E_CONFIG', `${where}: name must be a non-empty string`)
}

/** The caller for one run (and call): `source` itself, or what it answers. */
export async function contextFor<TContext>(
  source: AgentContextSource<TContext> | undefined,
  runContext: RunContext<TContext>,
  toolCall: FunctionCallItem | undefined,
  where: string,
): Promise<CallContext> {
  const ctx = typeof source === 'function' ? await source(runContext, toolCall) : (source ?? {})
  if (!isPlainObject(ctx)) {
    throw new ToolGateError('E_CONFIG', `${where}: ctx must give a CallContext object, got ${ctx === null ? 'null' : Array.isArray(ctx) ? 'an array' : typeof ctx}`)
  }
  return ctx
}

/**
 * Decides one function call for the tool named `tool`: `gate.checkAsync` on the model's own
 * arguments text, with the call id, for the run's caller; then `onVerdict`.
 */
export async function decide<TContext>(
  gate: ToolGate,
  tool: string,
  toolCall: FunctionCallItem,
  runContext: RunContext<TContext>,
  ctx: AgentContextSource<TContext> | undefined,
  options: AgentGateOptions<TContext>,
  where: string,
): Promise<Verdict> {
  const context = await contextFor(ctx, runContext, toolCall, where)
  const verdict = await gate.checkAsync(tool, toolCall.arguments, { ...context, callId: toolCall.callId })
  if (options.onVerdict !== undefined) await options.onVerdict(verdict, { toolCall, context, runContext })
  return verdict
}

/** The guardrail's answer for a verdict: `allow`, or `rejectContent` with the gate's message. */
export function guardrailOutput(verdict: Verdict, where: string): ToolGuardrailFunctionOutput {
  const info: ToolgateGuardrailInfo = { outcome: verdict.outcome, flags: verdict.flags }
  if (verdict.reason !== undefined) info.reason = verdict.reason
  if (verdict.action !== undefined) info.action = verdict.action
  if (verdict.resource !== undefined) info.resource = verdict.resource
  if (verdict.allowed) return { behavior: { type: 'allow' }, outputInfo: info }
  if (verdict.message === undefined) {
    throw new ToolGateError('E_PAYLOAD', `${where}: the gate refused \`${verdict.tool}\` (${verdict.reason ?? verdict.outcome}) without a message`)
  }
  return { behavior: { type: 'rejectContent', message: verdict.message }, outputInfo: info }
}

/**
 * The guardrail object. `onAllowed` (gateAgentTool) hears each allowed verdict with its call, so
 * the tool can run with the repaired arguments without asking the gate twice.
 */
export function makeGuardrail<TContext>(
  gate: ToolGate,
  ctx: AgentContextSource<TContext> | undefined,
  options: AgentGateOptions<TContext>,
  where: string,
  tool?: string,
  onAllowed?: (toolCall: FunctionCallItem, verdict: Verdict) => void,
): ToolInputGuardrailDefinition<TContext> {
  return {
    type: 'tool_input',
    name: options.name ?? 'toolgate',
    run: async ({ context: runContext, toolCall }) => {
      const verdict = await decide(gate, tool ?? toolCall.name, toolCall, runContext, ctx, options, where)
      if (verdict.allowed) onAllowed?.(toolCall, verdict)
      return guardrailOutput(verdict, where)
    },
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}
