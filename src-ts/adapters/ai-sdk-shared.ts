// What toolgate/ai-sdk's pieces share: the caller's context, the options and `onVerdict`, the
// refusal a gated tool answers with, and the ledger through which a verdict decided once (by the
// middleware, or by the repair function) reaches the tool that runs the call, so no call is
// decided twice. Nothing here decides anything: every verdict is the gate's.
import { createHash } from 'node:crypto'

import { ToolGateError } from '../errors'
import type { ToolGate } from '../gate'
import { canonicalJson } from '../canonical-json'
import type { CallContext, Reason, Verdict } from '../types'

/** Who is calling: a `CallContext`, or a function asked once per request or call (e.g. from the host's auth). */
export type AiSdkContextSource = CallContext | (() => CallContext | PromiseLike<CallContext>)

/** Where a verdict was decided. */
export type AiSdkVerdictSource =
  /** The middleware, on a `doGenerate` result (the model's own argument text). */
  | 'generate'
  /** The middleware, on a `doStream` stream, the moment the call completed. */
  | 'stream'
  /** A {@link gateTools} tool, on the input the AI SDK parsed (no middleware decided the call). */
  | 'tool'
  /** {@link gateRepairToolCall}, on the model's own argument text the AI SDK could not parse. */
  | 'repair'
  /** {@link gateUIMessageStream}, on a UI message stream, the moment the call's input was available. */
  | 'ui-stream'
  /** {@link gateUIMessages}, on UI messages a client sent back. */
  | 'ui-messages'

/** What `onVerdict` is told besides the verdict. */
export interface AiSdkVerdictInfo {
  /** The call's `toolCallId`. */
  callId: string
  source: AiSdkVerdictSource
  /** The caller the gate decided for. */
  context: CallContext
}

/** Options of every toolgate/ai-sdk piece. Unknown keys are `E_CONFIG`. */
export interface AiSdkGateOptions {
  /**
   * Told every verdict once, where it was decided (for logs and metrics; a `confirm` verdict's
   * `confirmation.token` reaches the host only here). Awaited when it returns a promise; a throw
   * fails the request (in a tool's `execute`, that call, as its tool error).
   */
  onVerdict?: (verdict: Verdict, info: AiSdkVerdictInfo) => void | PromiseLike<void>
}

const OPTION_KEYS: ReadonlySet<string> = new Set(['onVerdict'])

/** Checks the arguments every piece takes; `E_CONFIG` naming the piece. */
export function checkArgs(gate: unknown, ctx: unknown, options: unknown, where: string): void {
  if (gate === null || typeof gate !== 'object' || typeof (gate as { checkAsync?: unknown }).checkAsync !== 'function') {
    throw new ToolGateError('E_CONFIG', `${where}: expected a ToolGate, got ${gate === null ? 'null' : typeof gate}`)
  }
  if (ctx !== undefined && typeof ctx !== 'function' && (ctx === null || typeof ctx !== 'object' || Array.isArray(ctx))) {
    throw new ToolGateError('E_CONFIG', `${where}: the context must be a CallContext object or a function returning one`)
  }
  if (options === undefined) return
  if (options === null || typeof options !== 'object') throw new ToolGateError('E_CONFIG', `${where}: options must be an object`)
  const unknown = Object.keys(options).filter((k) => !OPTION_KEYS.has(k))
  if (unknown.length > 0) {
    throw new ToolGateError('E_CONFIG', `${where}: unknown option ${unknown.map((k) => `\`${k}\``).join(', ')} (expected onVerdict)`)
  }
  const onVerdict = (options as AiSdkGateOptions).onVerdict
  if (onVerdict !== undefined && typeof onVerdict !== 'function') throw new ToolGateError('E_CONFIG', `${where}: onVerdict must be a function`)
}

/** The caller's context for this request (the function asked now); `E_CONFIG` when it is not an object. */
export async function contextOf(source: AiSdkContextSource | undefined, where: string): Promise<CallContext> {
  const ctx = typeof source === 'function' ? await source() : (source ?? {})
  if (ctx === null || typeof ctx !== 'object' || Array.isArray(ctx)) {
    throw new ToolGateError('E_CONFIG', `${where}: the context function must return a CallContext object, got ${ctx === null ? 'null' : Array.isArray(ctx) ? 'an array' : typeof ctx}`)
  }
  return ctx
}

/** Tells `onVerdict` (awaited). */
export async function tell(options: AiSdkGateOptions | undefined, verdict: Verdict, callId: string, source: AiSdkVerdictSource, context: CallContext): Promise<void> {
  if (options?.onVerdict !== undefined) await options.onVerdict(verdict, { callId, source, context })
}

/**
 * What a gated tool answers a refused call with: the AI SDK turns a tool's error into the call's
 * tool result `{ type: 'error-text', value: String(error) }`, and `String()` of this error is
 * exactly the gate's model-readable `message` (the same text as `guard`'s `ai-sdk` feedback). It
 * carries no confirmation token (the host gets that from `onVerdict`).
 */
export class ToolRefusedError extends Error {
  /** The refused tool's name. */
  readonly tool: string
  /** The call's `toolCallId`. */
  readonly callId: string
  /** `rejected`, `denied`, or `confirm` (a write awaiting `gate.confirm`: refused for this turn). */
  readonly outcome: 'rejected' | 'denied' | 'confirm'
  /** Why (README "API", `reason`). */
  readonly reason: Reason | undefined

  constructor(verdict: Verdict, callId: string) {
    super(verdict.message ?? `\`${verdict.tool}\` was refused`)
    this.name = 'ToolRefusedError'
    this.tool = verdict.tool
    this.callId = callId
    this.outcome = verdict.outcome as ToolRefusedError['outcome']
    this.reason = verdict.reason
  }

  /** The gate's message alone: what the model reads. */
  override toString(): string {
    return this.message
  }

  /** The refusal without anything the model must not read. */
  toJSON(): { name: string; message: string; tool: string; callId: string; outcome: string; reason?: Reason } {
    return { name: this.name, message: this.message, tool: this.tool, callId: this.callId, outcome: this.outcome, reason: this.reason }
  }
}

/** The marker {@link gateTools} sets on each tool's `providerOptions`, which the middleware checks and strips. */
export const GATED_KEY = 'toolgate'

/**
 * The `args` objects of the provider-defined tools (`type: 'provider'`) {@link gateTools} made:
 * the AI SDK hands a provider tool to the model as `{ type, name, id, args }` only (no
 * `providerOptions` to carry a marker), with `args` the tool's own object, so the copy's fresh
 * `args` object is how the middleware knows a provider tool went through the gate.
 */
const gatedProviderArgs = new WeakSet<object>()

/** A fresh `args` object for a gated provider tool, remembered as gated. */
export function gatedArgs(args: unknown): Record<string, unknown> {
  const fresh = { ...(args !== null && typeof args === 'object' ? (args as Record<string, unknown>) : {}) }
  gatedProviderArgs.add(fresh)
  return fresh
}

/** Whether a provider tool's `args` are those of a tool {@link gateTools} made. */
export function isGatedArgs(args: unknown): boolean {
  return args !== null && typeof args === 'object' && gatedProviderArgs.has(args)
}

// The ledger: verdicts decided before the AI SDK runs a call, waiting for the gated tool (or the
// repair function) to take them, once. Keyed by gate, then by call id, tool and session, so a
// verdict is only ever taken for the same call of the same caller; an allowed verdict is also
// bound to the exact arguments it allowed (a SHA-256 of their canonical JSON), so a tool invoked
// with any other input (a host's own `experimental_repairToolCall`, a call edited in the history a
// client sends back) never runs on it. Bounded: verdicts nobody takes (tools the host runs
// itself, calls the AI SDK answers on its own) are dropped oldest first.
const LEDGER_CAP = 10_000
const ledgers = new WeakMap<ToolGate, Map<string, Recorded>>()

interface Recorded {
  verdict: Verdict
  /** Allowed verdicts: the digest of the arguments allowed. */
  digest: string | undefined
}

function key(callId: string, tool: string, ctx: CallContext): string {
  return `${callId}\u0000${tool}\u0000${ctx.session ?? ctx.subject ?? ''}`
}

/** SHA-256 of the canonical JSON (keys sorted at every depth) of `value`; `undefined` when it has none (too deep, a cycle, a BigInt). */
export function argumentsDigest(value: unknown): string | undefined {
  try {
    return createHash('sha256').update(canonicalJson(value ?? {}), 'utf8').digest('base64url')
  } catch {
    return undefined
  }
}

/** Records a verdict for the call `callId` of `tool` by the caller `ctx` (an allowed one bound to its exact arguments). */
export function record(gate: ToolGate, callId: string, tool: string, ctx: CallContext, verdict: Verdict): void {
  let ledger = ledgers.get(gate)
  if (ledger === undefined) ledgers.set(gate, (ledger = new Map()))
  const k = key(callId, tool, ctx)
  ledger.delete(k)
  ledger.set(k, { verdict, digest: verdict.allowed ? argumentsDigest(verdict.arguments) : undefined })
  if (ledger.size > LEDGER_CAP) ledger.delete(ledger.keys().next().value as string)
}

/**
 * Takes (and forgets: a verdict is used once) the verdict recorded for this call, if any. A
 * refused verdict is returned whatever the input. An allowed verdict is returned only when
 * `input` is exactly the arguments it allowed (canonical JSON, key order ignored); for any other
 * input it is dropped and `undefined` comes back, so the caller decides that input again.
 */
export function take(gate: ToolGate, callId: string, tool: string, ctx: CallContext, input: unknown): Verdict | undefined {
  const ledger = ledgers.get(gate)
  if (ledger === undefined) return undefined
  const k = key(callId, tool, ctx)
  const r = ledger.get(k)
  if (r === undefined) return undefined
  ledger.delete(k)
  if (!r.verdict.allowed) return r.verdict
  return r.digest !== undefined && r.digest === argumentsDigest(input) ? r.verdict : undefined
}
