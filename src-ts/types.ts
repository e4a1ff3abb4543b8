import type { DialectFeedback } from './dialects/index'

/** The wire dialects toolgate speaks (README "Whole turns, every dialect"). */
export type Dialect =
  | 'openai'
  | 'openai-responses'
  | 'anthropic'
  | 'langchain'
  | 'pydantic-ai'
  | 'mcp'
  | 'ai-sdk'
  | 'gemini'
  | 'ai-sdk-ui'

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

/** What the gate decided. `passed` and `repaired` are the allowed outcomes. */
export type Outcome = 'passed' | 'repaired' | 'rejected' | 'denied' | 'confirm'

/** Why a call was refused (closed set, pipeline order; README "API", `reason`). */
export type Reason =
  | 'unknown_tool'
  | 'bad_arguments'
  | 'surface'
  | 'invalid'
  | 'unresolved_resource'
  | 'arg_glob'
  | 'no_subject'
  | 'deny_rule'
  | 'no_rule'
  | 'engine'
  | 'loop'
  | 'taint'
  | 'audit_unavailable'
  | 'confirm_required'
  | 'token_invalid'
  | 'state_unavailable'
  | 'rate_limited'

/** The kinds of repair (README "What gets repaired"). */
export type FlagCode =
  | 'StringToInteger'
  | 'StringToFloat'
  | 'StringToBoolean'
  | 'PrimitiveToString'
  | 'WrappedScalarInArray'
  | 'EnumCaseNormalized'
  | 'EnumFuzzyMatched'
  | 'PrunedUnknownProperty'
  | 'InjectedDefaultValue'
  | 'UnpackedStringifiedJson'
  | 'PinnedArgument'

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

/** One declared tool. MCP and OpenAI tool definitions can be pasted (`description`, `title`, `annotations` are informational). */
export interface ToolConfig {
  /** The exact name a model must call (no case folding, no normalization). */
  name: string
  description?: string
  title?: string
  annotations?: Record<string, unknown>
  /** JSON Schema (draft 2020-12 or draft-07) of the arguments. Absent: any object. */
  inputSchema?: Record<string, unknown> | boolean
  /** Strict mode: validate only, never repair (not even defaults). */
  destructive?: boolean
  /** Needs confirmation (`outcome: 'confirm'`, then `gate.confirm(token)`) unless a matching allow rule sets `confirm: false`. */
  writes?: boolean
  /** The policy action (default: the tool name). */
  action?: string
  /**
   * A resource template over the arguments: `{x}` one segment (no `/`, `\`, `..`, NUL or control
   * characters), `{x*}` a relative path (normalized, never above its start), `{a.b}` nested,
   * `{subject}` the caller. A placeholder that cannot be filled denies the call (`unresolved_resource`).
   */
  resource?: string
  /** Per-argument policy: `glob` the value must match (`arg_glob`); `pin` sets it from the caller (`'subject'` or `'identity.<fact>'`). */
  args?: Record<string, { glob?: string; pin?: 'subject' | `identity.${string}` }>
  /** This tool's mode (overrides the gate's `mode`). */
  mode?: 'enforce' | 'shadow'
  /** `'operator'`: never callable from the visitor surface (`surface`). Default `'visitor'`. */
  surface?: 'visitor' | 'operator'
  /** Loop guard for this tool (overrides the gate's). */
  loop?: LoopConfig
  /** The label an allowed call raises the session's taint to (one of `labels`). */
  output?: { label: string }
  /** Refused (`taint`) in a session tainted above `maxLabel`. */
  sink?: { maxLabel: string }
  /** Let case-twin keys (`{"path":…,"PATH":…}`) through for this tool (overrides the gate's `allowCaseTwinKeys`). */
  allowCaseTwinKeys?: boolean
  /** How this tool's resource is compared with rule `resources` globs (overrides the gate's `resources`). */
  resources?: ResourcesConfig
}

/** `resources`: how resolved resources are compared with rule `resources` globs. */
export interface ResourcesConfig {
  /**
   * Compare case-insensitively (Unicode simple case folding), for hosts whose files or store
   * ignore case: `file:reports/PRIVATE/x` is then covered by a deny on `file:reports/private/**`.
   */
  caseInsensitive?: boolean
}

/** Loop guard thresholds: the call past `maxIdentical` identical allowed calls within `windowSeconds` is refused (`loop`). */
export interface LoopConfig {
  maxIdentical: number
  windowSeconds: number
}

/** A persona: the first whose `when` holds names the caller's persona. */
export interface PersonaConfig {
  name: string
  /** A condition over the caller only (docs/conditions.md). */
  when: string
}

/** One policy rule: every present selector must match (absent matches anything). Any matching deny wins; else some allow must match. */
export interface PolicyRule {
  /** A name for records (default `rules[i]`). */
  id?: string
  description?: string
  effect: 'allow' | 'deny'
  /** The caller holds one of these roles. */
  roles?: string[]
  /** The caller's persona is one of these. */
  personas?: string[]
  /** The caller's subject matches one of these globs. */
  subjects?: string[]
  /** The tool name matches one of these globs (each must match some declared tool). */
  tools?: string[]
  /** The tool's action matches one of these globs. */
  actions?: string[]
  /** The resolved resource matches one of these globs; `{subject}` is the caller. */
  resources?: string[]
  /** A condition (docs/conditions.md). */
  when?: string
  /** Allow rules: `false` waives confirmation for `writes` tools; `true` asks for it on any tool. */
  confirm?: boolean
}

/** The `policy` block: present means deny by default. */
export interface PolicyConfig {
  personas?: PersonaConfig[]
  rules?: PolicyRule[]
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


/** `state`: where the gate's state lives (docs/state.md). */
export interface StateConfig {
  /** Sessions kept in memory (LRU, default 100000); a forgotten session counts as tainted at the top label. */
  maxSessions?: number
  /** Keep state in Redis, shared by every process using the same URL and key prefix. Sync `check`/`guard`/`confirm` then throw `E_ASYNC`: use the async methods. */
  redis?: RedisStateConfig
}

/** `state.redis`. */
export interface RedisStateConfig {
  /** `redis://[user:password@]host[:port][/db]`, `rediss://…` or `redis+unix:///path`. */
  url: string
  /** Prefix of every key (default `toolgate:`). */
  keyPrefix?: string
  /** Bound of each round trip (connect, write, read), ms (default 50); past it the call is denied `state_unavailable`. */
  timeoutMs?: number
}

/** One `rateLimits` entry: at most `max` allowed calls of the matching tools per caller in each window. */
export interface RateLimitConfig {
  /** Tool-name globs; one count is shared by every tool the entry covers. */
  tools: string[]
  /** `'subject'`: per user (a caller without a subject counts in its session); `'session'`: per loop/taint scope. */
  per: 'subject' | 'session'
  /** Allowed calls per window (at least 1). */
  max: number
  /** The window in seconds; windows are fixed, aligned on the Unix epoch. */
  windowSeconds: number
}

/** A gate config (README "Config"). Unknown keys are `E_CONFIG`. */
export interface ToolGateConfig {
  version?: 1
  tools: ToolConfig[]
  /** Bounds on arguments, applied before anything reads them. */
  limits?: {
    /** Deepest nesting of arrays and objects (default 64, at most 120). */
    maxDepth?: number
    /** Largest arguments text in UTF-8 bytes (default 1 MiB). */
    maxArgumentBytes?: number
    /** Largest whole turn `guard` reads, and tool list `filterTools` reads, in UTF-8 bytes (default 8 MiB). */
    maxPayloadBytes?: number
  }
  /** Let `__proto__` / `constructor.prototype` keys through as plain data (default false). */
  allowProtoKeys?: boolean
  /**
   * Let keys equal under Unicode case folding share one object (`{"path":…,"PATH":…}`). Default
   * false: such arguments are `bad_arguments`, since runtimes that bind JSON case-insensitively
   * (Go, .NET) may take the twin the gate did not check. A tool's own setting wins.
   */
  allowCaseTwinKeys?: boolean
  /** How resources are compared with rule globs, gate-wide (a tool's own `resources` wins). */
  resources?: ResourcesConfig
  /**
   * Offline JSON Schema documents by absolute URI (`{ "https://example.com/address.json": {…} }`):
   * a tool schema's `$ref` to one of these URIs (or `URI#/pointer`) resolves to it without the
   * network; any other remote `$ref` is `E_CONFIG` naming it (nothing is ever fetched). At most
   * 256 documents, 4 MiB together, 100 levels deep; a reference cycle that never descends into
   * the value is refused (docs/json-schema.md).
   */
  schemas?: Record<string, Record<string, unknown> | boolean>
  /** The taint lattice, lowest first. */
  labels?: string[]
  /** Rules and personas; absent: schema gate only (every declared tool allowed). */
  policy?: PolicyConfig
  /** The gate-wide loop guard (absent: none unless a tool sets its own). */
  loop?: LoopConfig
  /** Confirm-before-write: how long a token stays valid (default 300 s). */
  confirm?: { ttlSeconds?: number }
  /** Where loop counters, taint, rate counters and confirmation tokens live (docs/state.md): in memory (sessions kept, LRU, default 100000; a forgotten session counts as tainted at the top label), or in Redis shared by every process (`redis`). */
  state?: StateConfig
  /** Calls per caller per fixed window; a call over a limit is denied `rate_limited` with when to retry (docs/state.md). */
  rateLimits?: RateLimitConfig[]
  /** `'shadow'`: policy-level refusals (`deny_rule`, `no_rule`, `engine`, `loop`, `taint`) are recorded but let through (`shadow`, `wouldBe` on the verdict). Default `'enforce'`. */
  mode?: 'enforce' | 'shadow'
  /** Signed receipts for allowed calls (`verdict.receipt`, `gate.publicKey`): the ed25519 seed from an environment variable, a file (relative to the config file) or inline (base64url); none of them: a key generated at start. */
  receipts?: { privateKeyEnv?: string; privateKeyFile?: string; privateKey?: string; ttlSeconds?: number }
  /** The decision log (docs/audit.md). */
  audit?: AuditConfig
  /** Settings of the CLI proxies (`toolgate mcp-proxy`, `toolgate proxy`); the library ignores them. */
  proxy?: ProxyConfig
  /** Who is calling, from a verified bearer token (docs/identity.md): the servers require it on every request; `verifyCaller` reads it. */
  identity?: IdentityConfig
}

/** `identity`: callers are identified by a verified JWT bearer token. */
export interface IdentityConfig {
  jwt: JwtIdentityConfig
}

/** `identity.jwt`: what makes a token valid and how its claims become a {@link CallContext}. */
export interface JwtIdentityConfig {
  /** The `iss` every token must carry (also the authorization server the protected-resource metadata names). */
  issuer: string
  /** The `aud` a token must carry (one of these). */
  audience: string | string[]
  /** The issuer's JWKS URL (https; http only on loopback). Exactly one of `jwksUrl` and `publicKeys`. */
  jwksUrl?: string
  /** Verifying keys: JWK objects or PEM (SPKI) strings. */
  publicKeys?: (Record<string, unknown> | string)[]
  /** Accepted signature algorithms (default `['EdDSA', 'ES256', 'RS256']`); asymmetric only. */
  algorithms?: string[]
  /** Claim holding the subject (default `sub`); dotted paths reach nested claims. */
  subjectClaim?: string
  /** Claim holding the roles (default `roles`): an array, or a space/comma-separated string. */
  rolesClaim?: string
  /** `identity.<name>` facts taken from these claim paths. */
  identityClaims?: Record<string, string>
  /** Leeway for `exp` / `nbf` / `iat`, seconds (default 30, at most 300). */
  clockToleranceSeconds?: number
}

/** `proxy`: who the CLI proxies act for and how they reach their upstream. Command-line flags win. */
export interface ProxyConfig {
  /** A fixed caller subject (`--subject`). */
  subject?: string
  /** Fixed caller roles (`--role`). */
  roles?: string[]
  /** A fixed session for loop and taint state (`--session`). */
  session?: string
  /** HTTP proxy: request headers naming the caller, lower case (defaults `x-toolgate-subject`, `x-toolgate-roles` (comma-separated), `x-toolgate-session`). */
  identityHeaders?: { subject?: string; roles?: string; session?: string }
  /** MCP proxy: tools whose changed definition is accepted and pinned anew (`true`: all). Default: none, calls to a changed tool are refused. */
  acceptToolChanges?: boolean | string[]
  /** MCP proxy: file keeping pinned tool definitions across runs (relative to the config file). */
  pinsFile?: string
  /** HTTP proxy: the model API base URL; MCP proxy with `--listen`: an HTTP MCP server to front. */
  upstream?: string
  /** HTTP proxy: upstream time limit in ms before the client gets 504. */
  timeoutMs?: number
  /** HTTP proxy: largest request body in bytes (413 beyond). */
  maxBodyBytes?: number
  /** Listeners: `Origin` values accepted besides loopback ones. */
  allowedOrigins?: string[]
  /** Listeners: environment variable holding the bearer token clients must send. */
  bearerTokenEnv?: string
  /** Headers sent to the upstream (its own credentials); a `{ env }` value is read from that environment variable at start. */
  upstreamHeaders?: Record<string, string | { env: string }>
}

/** `audit`: where decision records go and what they hold. */
export interface AuditConfig {
  /** Append records to this JSONL file (relative to the config file with `fromFile`). */
  jsonl?: string
  /** Also write records to standard output. */
  stdout?: boolean
  /** Start a new file past this size, continuing the hash chain. */
  maxFileBytes?: number
  /** Records hold the arguments themselves (default false: only their hash). Needed by `toolgate replay`. */
  includeArguments?: boolean
  /** Argument keys whose values are replaced by `"[redacted]"` at any depth. */
  redact?: string[]
  /** `'deny'` (default): calls are refused (`audit_unavailable`) while records cannot be kept; `'allow'`: they run and every lost record is counted. */
  onFailure?: 'deny' | 'allow'
  /** Records held in memory before they are written (default 65536). */
  bufferRecords?: number
  /** Environment variable holding the chain's HMAC-SHA-256 key (at least 16 bytes): records are then chained with a key, so an edited, re-chained log fails `toolgate audit verify --key-env`. */
  chainKeyEnv?: string
  /** File holding the chain key (relative to the config file with `fromFile`). At most one of `chainKeyEnv` and `chainKeyFile`. */
  chainKeyFile?: string
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
 * The answer for a whole model turn (README "Whole turns, every dialect"). `D` narrows `feedback` to the
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
