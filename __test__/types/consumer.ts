// A strict consumer of every public export of 'toolgate', compiled by __test__/types.test.ts
// (`tsc -p __test__/types/tsconfig.json`) and never run. `toolgate` resolves through the
// package's `exports` map to dist/index.d.ts: the types users get. Lines marked
// `@ts-expect-error` are misuses that must keep failing to compile (an unused directive is an
// error too), and the `Equal` checks pin the closed sets docs/turns.md ("The verdict", "Errors") names.
import {
  ToolGate,
  ToolGateError,
  Caller,
  type CallerOption,
  PreparedTools,
  GateState,
  type GateStateOptions,
  type StateConfig,
  type RedisStateConfig,
  type RateLimitConfig,
  defineConfig,
  type CallContext,
  type Dialect,
  type Flag,
  type FlagCode,
  type Outcome,
  type Reason,
  type ToolConfig,
  type ToolGateConfig,
  type ToolGateErrorCode,
  type Verdict,
  ToolCallStream,
  STREAM_DIALECTS,
  type AnthropicToolResultMessage,
  type DialectFeedback,
  type FilterToolsOptions,
  type ProviderExecutedCall,
  type TurnRefusal,
  type GuardOptions,
  type McpFeedback,
  type OpenAiChatCompletion,
  type OpenAiToolMessage,
  type StreamOptions,
  type TurnCall,
  type TurnReport,
  type EngineAnswer,
  type EngineRequest,
  type LoopConfig,
  type PersonaConfig,
  type PolicyConfig,
  type PolicyEngine,
  type PolicyRule,
  type ToolGateOptions,
  verifyReceipt,
  normalizeToolSchemas,
  requireReceipt,
  RECEIPT_HEADER,
  RECEIPT_META,
  type AuditConfig,
  type ProxyConfig,
  type IdentityConfig,
  type JwtIdentityConfig,
  type ResourcesConfig,
  type ReceiptClaims,
  type ReceiptExpectation,
  type HttpRequestLike,
  type HttpResponseLike,
  type McpHandlerExtra,
  type RequireReceiptOptions,
  type ToolInputSchema,
  type ToolConfigInput,
  type ToolGateConfigInput,
  type ZodSchemaLike,
  type AiSdkSchemaLike,
  type StandardJsonSchemaLike,
  type AiSdkUIRefusalPart,
} from 'toolgate'
import * as toolgate from 'toolgate'

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
type Expect<T extends true> = T

// The closed sets of docs/turns.md ("The verdict", "Errors"), exactly: adding or renaming a member must be a visible change.
export type Checks = [
  Expect<Equal<Outcome, 'passed' | 'repaired' | 'rejected' | 'denied' | 'confirm'>>,
  Expect<Equal<Dialect, 'openai' | 'openai-responses' | 'anthropic' | 'langchain' | 'pydantic-ai' | 'mcp' | 'ai-sdk' | 'gemini' | 'ai-sdk-ui'>>,
  Expect<
    Equal<
      Reason,
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
    >
  >,
  Expect<Equal<ToolGateErrorCode, 'E_CONFIG' | 'E_PAYLOAD' | 'E_DIALECT' | 'E_RECEIPT' | 'E_ASYNC' | 'E_UNAUTHENTICATED' | 'E_STATE'>>,
  Expect<Equal<ReturnType<GateState['close']>, Promise<void>>>,
  Expect<Equal<GateStateOptions['redis'], RedisStateConfig | undefined>>,
  Expect<Equal<StateConfig['redis'], RedisStateConfig | undefined>>,
  Expect<Equal<RateLimitConfig['per'], 'subject' | 'session'>>,
  Expect<Equal<IdentityConfig['jwt'], JwtIdentityConfig>>,
  Expect<Equal<ResourcesConfig['caseInsensitive'], boolean | undefined>>,
  Expect<
    Equal<
      FlagCode,
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
    >
  >,
  Expect<Equal<ReturnType<ToolGate['check']>, Verdict>>,
  Expect<Equal<ReturnType<typeof defineConfig>, ToolGateConfig>>,
  Expect<Equal<typeof toolgate.ToolGate, typeof ToolGate>>,
  Expect<Equal<TurnReport<'anthropic'>['feedback'], AnthropicToolResultMessage[]>>,
  Expect<Equal<TurnReport<'mcp'>['feedback'], McpFeedback[]>>,
  Expect<Equal<DialectFeedback['openai'], OpenAiToolMessage>>,
  Expect<Equal<TurnReport<'ai-sdk-ui'>['feedback'], AiSdkUIRefusalPart[]>>,
  Expect<Equal<ReturnType<ToolGate['stream']>, ToolCallStream<Dialect>>>,
]

/** Never called: the body only has to type-check. */
export function usage(): string[] {
  const out: string[] = []

  const search: ToolConfig = {
    name: 'search',
    description: 'Search the index',
    title: 'Search',
    annotations: { readOnlyHint: true },
    inputSchema: {
      type: 'object',
      properties: { query: { type: 'string' }, limit: { type: 'integer', default: 10 } },
      required: ['query'],
      additionalProperties: false,
    },
    destructive: false,
  }
  const drop: ToolConfig = { name: 'drop_table', inputSchema: true, destructive: true }
  const config: ToolGateConfig = defineConfig({
    version: 1,
    tools: [search, drop],
    limits: { maxDepth: 32, maxArgumentBytes: 65_536 },
    allowProtoKeys: false,
  })

  const gate = new ToolGate(config)
  const fromText = new ToolGate(JSON.stringify(config))
  const fromFile: ToolGate = ToolGate.fromFile('toolgate.config.yaml')
  const names: readonly string[] = [...gate.tools, ...fromText.tools, ...fromFile.tools]
  out.push(...names)

  const ctx: CallContext = {
    subject: 'user-1',
    roles: ['analyst'],
    identity: { team: 'search' },
    purpose: 'audit',
    context: { ip: '10.0.0.1' },
    session: 'session-1',
    surface: 'visitor',
    callId: 'call-1',
  }
  // a caller prepared once, passed where a context goes
  const caller: Caller = gate.caller(ctx)
  const prepared: Readonly<CallContext> = caller.context
  const callerOpt: CallerOption = { caller }
  out.push(prepared.subject ?? '', String(callerOpt.caller === caller))
  out.push(gate.guard('{}', { dialect: 'openai', caller }).dialect)
  out.push(String(gate.filterTools([], { dialect: 'openai', caller }).length))
  // @ts-expect-error a Caller is made by gate.caller, not constructed
  out.push(String(new Caller()))
  // a tool list prepared once: the answer keeps the type it was prepared with
  const offered: PreparedTools<{ type: 'function'; function: { name: string } }[]> = gate.prepareTools([{ type: 'function' as const, function: { name: 'search' } }], { dialect: 'openai' })
  out.push(...offered.filter(caller).map((t) => t.function.name), ...offered.filter({ caller }).map((t) => t.type))
  const asText: string = gate.prepareTools('[]', { dialect: 'openai' }).filter(ctx)
  out.push(asText)
  // @ts-expect-error a prepared list needs its dialect
  gate.prepareTools([], {})
  const verdicts: Verdict[] = [
    gate.check('search', '{"query":"rust","limit":"10"}', caller),
    gate.check('search', '{"query":"rust","limit":"10"}', ctx),
    gate.check('search', { query: 'rust' }),
    gate.check('search', null),
    gate.check('search', undefined),
    gate.check('search', ''),
  ]

  for (const v of verdicts) {
    const outcome: Outcome = v.outcome
    const tool: string = v.tool
    switch (outcome) {
      case 'passed':
      case 'repaired': {
        const allowed: boolean = v.allowed
        const args: Record<string, unknown> | undefined = v.arguments
        const json: string | undefined = v.argumentsJson
        out.push(`${tool} ${allowed} ${JSON.stringify(args)} ${json ?? ''}`)
        break
      }
      case 'rejected':
      case 'denied':
      case 'confirm': {
        const reason: Reason | undefined = v.reason
        const message: string = v.message ?? ''
        const token: string | undefined = v.confirmation?.token
        out.push(`${tool} ${reason ?? ''} ${message} ${token ?? ''}`)
        break
      }
      default: {
        const exhaustive: never = outcome
        out.push(exhaustive)
      }
    }
    for (const f of v.flags) {
      const flag: Flag = f
      const code: FlagCode | (string & {}) = flag.code
      out.push(`${code} ${flag.path} ${String(flag.from)} -> ${String(flag.to)}`)
    }
    out.push(v.action ?? '', v.resource ?? '', v.receipt ?? '', v.wouldBe ?? '', String(v.shadow ?? false))
  }

  const dialects: Dialect[] = ['openai', 'openai-responses', 'anthropic', 'langchain', 'pydantic-ai', 'mcp', 'ai-sdk', 'gemini', 'ai-sdk-ui']
  out.push(...dialects)

  // whole turns, tool lists, streams
  const completion = {} as OpenAiChatCompletion
  const opts: GuardOptions = { dialect: 'auto', subject: 'user-1' }
  const any: TurnReport = gate.guard('{"object":"chat.completion","choices":[]}', opts)
  const openai: TurnReport<'openai'> = gate.guard(completion, { dialect: 'openai' })
  const answers: OpenAiToolMessage[] = openai.feedback
  const anthropic: AnthropicToolResultMessage[] = gate.guard('{}', { dialect: 'anthropic' }).feedback
  const mcp = gate.guard('{}', { dialect: 'mcp', protocolVersion: '2025-06-18' })
  for (const c of [...any.calls, ...openai.calls, ...mcp.calls]) {
    const call: TurnCall = c
    out.push(call.callId, call.outcome, call.tool)
  }
  for (const a of openai.allowed) out.push(a.callId, a.tool, JSON.stringify(a.arguments))
  out.push(String(answers.length + anthropic.length), any.dialect, JSON.stringify(any.payload))
  for (const p of any.providerExecuted) {
    const pe: ProviderExecutedCall = p
    out.push(pe.callId, pe.tool, pe.kind)
  }
  for (const t of any.turnRefusals) {
    const tr: TurnRefusal = t
    out.push(tr.kind, tr.at, tr.message)
  }
  const fopts: FilterToolsOptions = { dialect: 'openai', roles: ['analyst'] }
  const kept: { type: 'function'; function: { name: string } }[] = gate.filterTools([{ type: 'function' as const, function: { name: 'search' } }], fopts)
  out.push(...kept.map((t) => t.function.name))
  const sopts: StreamOptions = { dialect: 'anthropic' }
  const stream: ToolCallStream<'anthropic'> = gate.stream(sopts as StreamOptions & { dialect: 'anthropic' })
  const done: TurnCall[] = stream.push('data: {"type":"message_start"}')
  const events: unknown[] = stream.forward()
  const end: TurnReport<'anthropic'> = stream.end()
  out.push(String(done.length + events.length + end.calls.length), ...STREAM_DIALECTS)

  try {
    new ToolGate({ tools: [{ name: 'x', inputSchema: { type: 'nope' } }] })
  } catch (err) {
    if (err instanceof ToolGateError) {
      const code: ToolGateErrorCode = err.code
      const asError: Error = err
      out.push(code, asError.message, err.name)
    }
  }
  const made = new ToolGateError('E_CONFIG', 'config: unknown key `tols`', { cause: new Error('inner') })
  out.push(made.code)

  // deny by default: policy config, engines, confirmation, taint
  const loop: LoopConfig = { maxIdentical: 3, windowSeconds: 60 }
  const persona: PersonaConfig = { name: 'verifier', when: "roles has 'verifier'" }
  const rule: PolicyRule = { id: 'r1', effect: 'allow', roles: ['analyst'], tools: ['read_*'], resources: ['file:reports/**'], when: "purpose == 'audit'", confirm: false }
  const policy: PolicyConfig = { personas: [persona], rules: [rule] }
  const guarded = defineConfig({
    tools: [{ name: 'read_file', action: 'read', resource: 'file:{path*}', args: { path: { glob: 'reports/**' }, owner: { pin: 'subject' }, org: { pin: 'identity.org' } }, surface: 'visitor', writes: false, loop, output: { label: 'internal' }, sink: { maxLabel: 'public' } }],
    labels: ['public', 'internal'],
    policy,
    loop,
    confirm: { ttlSeconds: 60 },
    state: { maxSessions: 1000 },
  })
  const engine: PolicyEngine = (r: EngineRequest): EngineAnswer => (r.rules === 'allow' && r.resource !== undefined && r.context.subject ? 'delegate' : 'deny')
  const asyncEngine: PolicyEngine = async (r) => (r.arguments.x === 1 ? 'allow' : 'delegate')
  const options: ToolGateOptions = { engines: [engine, asyncEngine], engineTimeoutMs: 20, onEngineError: (e, r, i) => out.push(String(e), r.tool, String(i)) }
  const pg = new ToolGate(guarded, options)
  const asked = pg.check('read_file', { path: 'reports/a' }, ctx)
  if (asked.confirmation) {
    const confirmed: Verdict = pg.confirm(asked.confirmation.token, ctx)
    out.push(confirmed.outcome, asked.confirmation.expiresAt, asked.confirmation.summary)
  }
  const later: Promise<Verdict>[] = [pg.checkAsync('read_file', '{}', ctx), pg.confirmAsync('token', ctx)]
  const laterTurn: Promise<TurnReport<'openai'>> = pg.guardAsync(completion, { dialect: 'openai', ...ctx })
  pg.markSession('session-1', 'internal')
  out.push(String(later.length), String(laterTurn), String(ToolGate.fromFile('x.yaml', options).tools.length))

  // proof and record: receipts, the audit block, shadow mode, schemas written once
  const proxyConfig: ProxyConfig = { subject: 'ana', roles: ['analyst'], session: 's1', identityHeaders: { subject: 'x-user' }, acceptToolChanges: ['read_file'], pinsFile: 'pins.json', upstream: 'https://api.openai.com', timeoutMs: 60_000, maxBodyBytes: 1 << 20, allowedOrigins: [], bearerTokenEnv: 'TOKEN' }
  void proxyConfig
  const jwt: JwtIdentityConfig = { issuer: 'https://idp.example', audience: ['api'], jwksUrl: 'https://idp.example/jwks', rolesClaim: 'realm_access.roles', identityClaims: { tenant: 'tid' }, clockToleranceSeconds: 30 }
  const identity: IdentityConfig = { jwt }
  const resources: ResourcesConfig = { caseInsensitive: true }
  const hardened: ToolGateConfig = { tools: [{ name: 't', allowCaseTwinKeys: false, resources }], allowCaseTwinKeys: false, resources, identity, proxy: { upstreamHeaders: { authorization: { env: 'OPENAI_API_KEY' }, 'x-org': 'acme' } } }
  // @ts-expect-error: caseInsensitive is a boolean
  const badResources: ResourcesConfig = { caseInsensitive: 'yes' }
  void hardened
  void badResources
  const learning = new ToolGate({ tools: [] }, { learnsTools: true })
  out.push(...learning.warnings)
  const audit: AuditConfig = { jsonl: 'audit.jsonl', includeArguments: true, redact: ['password'], onFailure: 'deny', bufferRecords: 1024, maxFileBytes: 1 << 20, stdout: false }
  const proven = new ToolGate({ tools: [search], receipts: { privateKeyEnv: 'TOOLGATE_KEY', ttlSeconds: 60 }, audit, mode: 'shadow' }, { onAudit: (line: string) => out.push(line) })
  const v = proven.check('search', { query: 'x' })
  const expect: ReceiptExpectation = { tool: 'search', arguments: v.arguments, sub: 'user-1' }
  const claims: ReceiptClaims = verifyReceipt(v.receipt ?? '', proven.publicKey ?? '', expect)
  out.push(claims.tool, claims.jti, String(claims.exp), String(v.shadow), v.wouldBe ?? '', String(proven.auditDropped))
  const flushed: Promise<void> = proven.flush()
  const receiptOptions: RequireReceiptOptions = { publicKey: proven.publicKey ?? '', tool: 'search', maxReplayCache: 10 }
  const mcpHandler = requireReceipt(async (args: { query: string }, extra: McpHandlerExtra) => ({ content: [{ type: 'text' as const, text: `${args.query} ${String(extra._meta)}` }] }), receiptOptions)
  const httpHandler = requireReceipt.http((req: HttpRequestLike, res: HttpResponseLike, args: unknown) => res.end(`${String(req.headers[RECEIPT_HEADER])} ${JSON.stringify(args)}`), receiptOptions)
  out.push(RECEIPT_META, String(flushed), String(mcpHandler), String(httpHandler))
  const zodLike: ZodSchemaLike = { _zod: {} }
  const aiLike: AiSdkSchemaLike = { jsonSchema: { type: 'object' } }
  const standard: StandardJsonSchemaLike = { '~standard': { vendor: 'x', jsonSchema: { input: () => ({ type: 'object' }) } } }
  const inputs: ToolInputSchema[] = [zodLike, aiLike, standard, { type: 'object' }, true]
  const toolIn: ToolConfigInput = { name: 'z', inputSchema: zodLike }
  out.push(String(inputs.length))
  const configIn: ToolGateConfigInput = { tools: [toolIn] }
  out.push(String(normalizeToolSchemas({ tools: [{ name: 'plain', inputSchema: { type: 'object' } }] }).tools.length), String(configIn.tools.length))

  // Misuses that must not compile.
  // @ts-expect-error the tool name is a string
  gate.check(1, '{}')
  // @ts-expect-error arguments are JSON text or an object, not a number
  gate.check('search', 42)
  // @ts-expect-error unknown config keys are errors (E_CONFIG at runtime, excess property here)
  defineConfig({ tools: [], tols: [] })
  // @ts-expect-error a misspelled tool key
  defineConfig({ tools: [{ nmae: 'search' }] })
  // @ts-expect-error `tools` is required
  defineConfig({ version: 1 })
  // @ts-expect-error only config version 1 exists
  defineConfig({ version: 2, tools: [] })
  // @ts-expect-error not an outcome
  const wrongOutcome: Outcome = 'allowed'
  // @ts-expect-error not an error code
  new ToolGateError('E_NOPE', 'x')
  // @ts-expect-error surface is visitor or operator
  const wrongCtx: CallContext = { surface: 'admin' }
  // @ts-expect-error a misspelled policy key (writes)
  defineConfig({ tools: [{ name: 'x', writs: true }] })
  // @ts-expect-error a rule's effect is allow or deny
  defineConfig({ tools: [], policy: { rules: [{ effect: 'permit' }] } })
  // @ts-expect-error a pin is subject or identity.<fact>
  defineConfig({ tools: [{ name: 'x', args: { o: { pin: 'owner' } } }] })
  // @ts-expect-error an engine answers allow, deny or delegate
  new ToolGate(guarded, { engines: [() => 'yes'] })
  // @ts-expect-error the tool list is read-only
  gate.tools.push('x')
  // @ts-expect-error the error code is read-only
  made.code = 'E_PAYLOAD'
  // @ts-expect-error guard needs a dialect
  gate.guard('{}', {})
  // @ts-expect-error not a dialect
  gate.guard('{}', { dialect: 'cohere' })
  // @ts-expect-error 'auto' is for guard only: a stream or a tool list must name its dialect
  gate.stream({ dialect: 'auto' })
  out.push(String(wrongOutcome), String(wrongCtx))

  return out
}
