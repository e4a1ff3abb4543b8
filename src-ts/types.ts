import type { Dialect, FlagCode, Outcome, Reason } from './contract-types.generated'
import type { DialectFeedback } from './dialects/index'

// The config's types are generated from the Rust config types, the one source of the config's
// shape (docs/architecture.md, "Config: one source"; `npm run gen:config`). The generator names
// exactly the public ones (`ToolGateConfig`, `ToolConfig`, `PolicyRule`, …; smaller parts are
// inline), re-exported here; to change one, change the Rust type and regenerate.
export type * from './config-types.generated'

// The names the core answers with (`Outcome`, `Reason`, `FlagCode`, `Dialect`) are generated from
// the core's own enums by the same generator, so a name added in Rust reaches these types (and a
// name removed there fails the type check of every use here).
export type { Dialect, FlagCode, Outcome, Reason } from './contract-types.generated'

/** Who is calling and why. Roles and identity come only from here, never from model output. */
export interface CallContext {
  /** Who is acting (end user / agent id). */
  subject?: string
  /** `roles` in conditions and rules. */
  roles?: string[]
  /** `identity.*` in conditions (other identity facts). */
  identity?: Record<string, unknown>
  purpose?: string
  /** `context.*` in conditions. */
  context?: Record<string, string>
  /** Scope of loop and taint state (falls back to subject). */
  session?: string
  /** Default `'visitor'`. */
  surface?: 'visitor' | 'operator'
  /** For `check`; `guard` takes ids from the payload. */
  callId?: string
}

/** One change the gate made to the arguments. */
export interface Flag {
  code: FlagCode | (string & {})
  /** JSON Pointer of the changed value; `""` is the whole arguments object. */
  path: string
  from?: unknown
  to?: unknown
}

/** The answer for one tool call. */
export interface Verdict {
  outcome: Outcome
  /** True only for `passed` / `repaired`. */
  allowed: boolean
  tool: string
  /** Present iff allowed: the exact arguments to run with. */
  arguments?: Record<string, unknown>
  /** Present iff allowed: the caller's own string when nothing changed, else the repaired arguments serialized. */
  argumentsJson?: string
  flags: Flag[]
  /** Model-readable; for refusals. */
  message?: string
  /** Absent for passed / repaired. */
  reason?: Reason
  action?: string
  resource?: string
  confirmation?: { token: string; expiresAt: string; summary: string }
  /** Iff allowed and receipts are configured: a compact JWS (EdDSA) naming this call; see `verifyReceipt`. */
  receipt?: string
  /** Shadow mode: let through although enforcement would have refused it. */
  shadow?: boolean
  /** Shadow mode: the reason enforcement would have refused with. */
  wouldBe?: Reason
}

/** What a plugged engine answers. */
export type EngineAnswer = 'allow' | 'deny' | 'delegate'

/** What a plugged engine is asked, for a call the built-in pipeline did not refuse. */
export interface EngineRequest {
  tool: string
  action: string
  /** The resolved resource, when the tool declares one. */
  resource?: string
  /** The exact (repaired, pinned) arguments. */
  arguments: Record<string, unknown>
  /** The caller, as the host gave it. */
  context: CallContext
  /** What the built-in rules concluded: `'allow'`, or `'no_rule'` (an engine may still allow). */
  rules: 'allow' | 'no_rule'
}

/** A plugged policy engine (for example Cedar). Throwing, or answering late, denies. */
export type PolicyEngine = (request: EngineRequest) => EngineAnswer | Promise<EngineAnswer>

/** Options of `new ToolGate(config, options)`. */
export interface ToolGateOptions {
  /** Asked in order after the built-in rules; the first allow/deny decides. A built-in deny is final. */
  engines?: PolicyEngine[]
  /** How long one engine may take before it counts as a deny (default 50 ms; wall-clock, so a busy machine counts). */
  engineTimeoutMs?: number
  /**
   * Told why an engine's answer became a deny (`engine`): it threw (the error), answered
   * something other than the three words, or ran past `engineTimeoutMs`. For logs; what it
   * returns or throws changes nothing.
   */
  onEngineError?: (error: unknown, request: EngineRequest, engineIndex: number) => void
  /**
   * Also hands every audit record (one JSON line, without its newline, hash-chained) to this
   * function, besides the sinks the config's `audit` block names. Needs an `audit` block.
   */
  onAudit?: (line: string) => void
  /**
   * Keep loop counters, session taint and confirmation tokens in this shared store instead of
   * the gate's own, so gates of one process that serve the same callers (a gate rebuilt after a
   * tool-list change, one evicted from a cache) keep the callers' state. See {@link GateState}.
   */
  state?: import('./state').GateState
  /**
   * The host declares tools later (the MCP proxy learns the server's list after start): policy
   * rule `tools`/`actions` globs that match no declared tool are reported in `gate.warnings`
   * instead of being `E_CONFIG`. Default false: such a glob is a typo that would silently
   * disable a rule, and refused.
   */
  learnsTools?: boolean
}

/** Options of {@link ToolGate.guard}: the dialect to read (or `'auto'`), and who is calling. */
export type GuardOptions = {
  dialect: Dialect | 'auto'
  /** MCP: the negotiated protocol version (JSON-RPC batches exist only in `2025-03-26`). */
  protocolVersion?: string
} & CallContext

/** Options of {@link ToolGate.filterTools}. */
export type FilterToolsOptions = { dialect: Dialect } & CallContext

/** A call of a turn and its verdict; `callId` is the wire id, or `"${index}"` where there is none. */
export type TurnCall = Verdict & { callId: string }

/** A tool the provider ran itself (Anthropic `server_tool_use`, Responses `web_search_call`, AI SDK `providerExecuted`): reported, not gated. */
export interface ProviderExecutedCall {
  callId: string
  /** The tool name, or the item type where the wire has none. */
  tool: string
  /** The wire type (`server_tool_use`, `web_search_call`, …). */
  kind: string
}

/**
 * A refusal of a turn as a whole, not of one call: the model tried to call a tool but no call can be read (Gemini
 * `finishReason: "MALFORMED_FUNCTION_CALL"` or `"UNEXPECTED_TOOL_CALL"`). Nothing ran; its answer is in
 * `TurnReport.feedback` too, so sending the feedback back lets the model try again.
 */
export interface TurnRefusal {
  /** What the wire said, as sent (`'MALFORMED_FUNCTION_CALL'`, `'UNEXPECTED_TOOL_CALL'`). */
  kind: string
  /** Where in the payload (`'candidates[0]'`). */
  at: string
  /** Model-readable: what went wrong and what to send instead. */
  message: string
}

/**
 * The answer for a whole model turn (docs/turns.md "Whole turns"). `D` narrows `feedback` to the
 * dialect's own message type when the dialect is known (`guard(p, { dialect: 'anthropic' })`).
 */
export interface TurnReport<D extends Dialect = Dialect> {
  /** The dialect read (what `'auto'` recognized). */
  dialect: D
  /** Every call in payload order; `[]` for a text-only turn. */
  calls: TurnCall[]
  /** The calls to run, with their exact arguments, in payload order. */
  allowed: { callId: string; tool: string; arguments: Record<string, unknown> }[]
  /** The input turn with repaired arguments written back (for OpenAI, a re-serialized `arguments` string); refused calls stay. */
  payload: unknown
  /** The answers for refused calls, grouped as the dialect's API requires; send them back to the model. */
  feedback: DialectFeedback[D][]
  /** Tools the provider ran itself (not gated). */
  providerExecuted: ProviderExecutedCall[]
  /** Refusals of the turn as a whole (a call the model tried to make that cannot be read); `[]` for most turns. Their answers are in `feedback`. */
  turnRefusals: TurnRefusal[]
}
