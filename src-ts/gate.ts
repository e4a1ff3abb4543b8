import { AuditTrail, type AuditSinks, type AuditSource } from './audit/trail'
import { readConfigText } from './config-file'
import { prepareConfig } from './config-host'
import { normalizeToolSchemas, type ToolGateConfigInput } from './schema-input'
import { bareContextText, Caller, callerHandle, callerOption, contextText, knownCallerHandle, plainContext, prepareCaller, type CallerOption } from './context'
import { knownCallerHandleOf, rememberedCallerHandle } from './context-memo'
import { askEngines, askEnginesSync, DEFAULT_ENGINE_TIMEOUT_MS, engineRequest, isThenable } from './engines'
import { toToolGateError, ToolGateError, type ToolGateErrorCode } from './errors'
import { native, type BindingGate } from './native'
import { GateState } from './state'
import { makePreparedTools, type PreparedTools } from './prepared-tools'
import { filterToolList, liveTools } from './tools'
import { toolListMemo } from './tool-list-memo'
import { addFacts, type Facts, jsonText, payloadText, readQuestionsWire, readTurnWire } from './turn'
import { readSingleCallWire, type SingleCallDecision } from './single-call'
import { ToolCallStream, type StreamOptions } from './stream'
import type {
  CallContext,
  Dialect,
  EngineAnswer,
  EngineRequest,
  FilterToolsOptions,
  Flag,
  GuardOptions,
  Outcome,
  PolicyEngine,
  Reason,
  ToolGateConfig,
  ToolGateOptions,
  TurnReport,
  Verdict,
} from './types'

/** Set by ToolGate's static block: {@link guardSingleCall} reaches the private method through it. */
let guardSingleOf: (gate: ToolGate, text: string, opts: GuardOptions & CallerOption & { dialect: Dialect }) => SingleCallDecision | undefined

/** Gates made in this process so far (each gate's `#serial`). */
let gateSerials = 0

/** The config file's folder while `fromFile` constructs its gate (paths in the config resolve against it). */
let fromFileDir: string | undefined

/** Answers the engines for one request (sync or async flavour of the same rules). */
type Ask = (request: EngineRequest) => EngineAnswer | Promise<EngineAnswer>
/**
 * A turn's answers for the second step, by call index: an engine's answer, or `unasked` for a
 * call the first step did not put to the engines (it keeps its refusal; see
 * crates/toolgate-core/src/pending_turn.rs).
 */
type StageAnswer = EngineAnswer | 'unasked'

/**
 * The gate between an agent and its tools. Construct once (every schema is compiled here),
 * then call {@link ToolGate.check} for every tool call; it never throws on bad model output.
 *
 * @example
 * const gate = new ToolGate({ tools: [{ name: 'search', inputSchema: { type: 'object',
 *   properties: { limit: { type: 'integer' } }, required: ['limit'] } }] })
 * gate.check('search', '{"limit":"10"}').arguments // { limit: 10 }
 */
export class ToolGate {
  // The binding object owns the compiled gate (released when this ToolGate is collected);
  // the hot path calls the free `check` function with its handle.
  readonly #binding: BindingGate
  readonly #handle: number
  /** This gate's number in the process, never given to another gate (names it in the tool-list memo). */
  readonly #serial = ++gateSerials
  readonly #check: (handle: number, tool: string, args: string, caller?: number) => string
  readonly #tools: readonly string[]
  readonly #native: ReturnType<typeof native>
  readonly #engines: readonly PolicyEngine[] | undefined
  readonly #engineTimeoutMs: number
  readonly #onEngineError: ToolGateOptions['onEngineError']
  readonly #audit: AuditTrail | undefined
  /** The state store is remote (Redis): decisions run off the event loop, sync ones are refused. */
  readonly #remote: boolean

  /**
   * Compiles `config` (an object, or its JSON text). Throws `ToolGateError` `E_CONFIG`
   * naming the key or the tool and schema location when the config is wrong. `options.engines`
   * plugs policy engines in (asked in order after the built-in rules; see {@link ToolGateOptions}).
   */
  constructor(config: ToolGateConfig | ToolGateConfigInput | string, options?: ToolGateOptions) {
    const baseDir = fromFileDir
    fromFileDir = undefined
    const engines = options?.engines
    if (engines !== undefined && (!Array.isArray(engines) || engines.some((e) => typeof e !== 'function'))) {
      throw new ToolGateError('E_CONFIG', 'options.engines: expected an array of functions')
    }
    const timeout = options?.engineTimeoutMs ?? DEFAULT_ENGINE_TIMEOUT_MS
    if (typeof timeout !== 'number' || !(timeout > 0) || !Number.isFinite(timeout)) {
      throw new ToolGateError('E_CONFIG', `options.engineTimeoutMs: expected a positive number of milliseconds, got ${String(timeout)}`)
    }
    this.#engines = engines !== undefined && engines.length > 0 ? Object.freeze([...engines]) : undefined
    this.#engineTimeoutMs = timeout
    if (options?.onEngineError !== undefined && typeof options.onEngineError !== 'function') {
      throw new ToolGateError('E_CONFIG', 'options.onEngineError: expected a function')
    }
    this.#onEngineError = options?.onEngineError
    let text: string
    let parsed: unknown
    if (typeof config === 'string') {
      text = config
      try {
        parsed = JSON.parse(config)
      } catch {
        parsed = undefined // the core names the syntax error
      }
    } else {
      if (config === null || typeof config !== 'object') {
        throw new ToolGateError('E_CONFIG', `config: expected an object or JSON text, got ${config === null ? 'null' : typeof config}`)
      }
      // zod / AI SDK / Standard Schema tool schemas become JSON Schema here, once
      config = normalizeToolSchemas(config as ToolGateConfigInput)
      try {
        text = JSON.stringify(config)
      } catch (err) {
        throw new ToolGateError('E_CONFIG', `config: cannot be serialized to JSON (${(err as Error).message})`, { cause: err })
      }
      parsed = config
    }
    let sinks: AuditSinks | undefined
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
      const prepared = prepareConfig(parsed as Record<string, unknown>, baseDir, text)
      text = prepared.text
      sinks = prepared.audit
    }
    if (options?.state !== undefined && !(options.state instanceof GateState)) {
      throw new ToolGateError('E_CONFIG', 'options.state: expected a GateState (new GateState())')
    }
    if (options?.onAudit !== undefined) {
      if (typeof options.onAudit !== 'function') throw new ToolGateError('E_CONFIG', 'options.onAudit: expected a function')
      sinks = { ...sinks, onAudit: options.onAudit }
    }
    this.#native = native()
    const { BindingGate: Binding, check } = this.#native
    try {
      this.#binding = new Binding(text, options?.state?.binding, options?.learnsTools === true)
    } catch (err) {
      throw toToolGateError(err, 'E_CONFIG')
    }
    const configHash = this.#binding.auditConfigHash
    if (configHash != null) {
      this.#audit = new AuditTrail(auditSource(this.#binding, configHash), sinks ?? {})
    } else if (sinks?.onAudit !== undefined) {
      throw new ToolGateError('E_CONFIG', 'options.onAudit: the config has no `audit` block (add `"audit": {}` to record decisions)')
    }
    this.#handle = this.#binding.handle
    this.#check = check
    this.#remote = this.#binding.remoteState
    this.#tools = Object.freeze(this.#binding.toolNames())
  }

  /**
   * Loads a config file (`.json`, `.yaml` or `.yml`) and compiles it. Only a regular file is
   * read (a directory, FIFO or device is refused before reading), of at most 16 MiB (or
   * `TOOLGATE_MAX_CONFIG_BYTES`), and YAML aliases may not expand it past that size. Errors are
   * `ToolGateError` `E_CONFIG` naming the file and why.
   */
  static fromFile(path: string, options?: ToolGateOptions): ToolGate {
    // a regular file within a bound (TOOLGATE_MAX_CONFIG_BYTES, default 16 MiB), YAML aliases bounded by size
    const { text, dir } = readConfigText(path)
    try {
      fromFileDir = dir
      return new ToolGate(text, options)
    } catch (err) {
      const e = toToolGateError(err, 'E_CONFIG')
      throw new ToolGateError(e.code, `config file ${path}: ${e.message}`, { cause: err })
    }
  }

  /** The receipts' verifying key (base64url, 32 bytes); `undefined` unless receipts are configured. */
  get publicKey(): string | undefined {
    return this.#binding.publicKey ?? undefined
  }

  /** Audit records lost since the gate was built (only with `audit.onFailure: "allow"` can calls run without one). */
  get auditDropped(): number {
    return this.#binding.auditDropped + (this.#audit?.lost ?? 0)
  }

  /** Writes every buffered audit record out now (a no-op without an `audit` block). */
  async flush(): Promise<void> {
    this.#audit?.flush()
  }

  /**
   * What the config let through because of `options.learnsTools`: one message per policy rule
   * `tools`/`actions` glob that matches no declared tool yet (empty otherwise). Such a rule
   * applies as soon as a matching tool is declared; a host learning tools logs these.
   */
  get warnings(): readonly string[] {
    return this.#binding.warnings
  }

  /** The declared tool names, in config order. */
  get tools(): readonly string[] {
    return this.#tools
  }

  /**
   * Prepares a caller once: `ctx` is read and checked now (`E_CONFIG` for a key that is not a
   * `CallContext` field or a value of the wrong type), and the returned {@link Caller} is passed
   * in its place — `check(tool, args, caller)`, `guard(payload, { dialect, caller })`,
   * `filterTools(tools, { dialect, caller })`, `stream({ dialect, caller })` — so a call with a
   * known caller costs no conversion of its context. Decisions are the same as with `ctx`.
   */
  caller(ctx: CallContext): Caller {
    try {
      return prepareCaller(this.#native.BindingCaller, ctx)
    } catch (err) {
      throw toToolGateError(err, 'E_CONFIG')
    }
  }

  /**
   * Decides one call. `args` is the raw JSON text the model sent (the hot path: parsed
   * strictly in Rust, once) or an already-parsed object; `""`, `null` and `undefined` mean `{}`.
   * Returns `passed` (run with `argumentsJson`, the caller's own text), `repaired` (run with
   * the repaired `arguments`; each change is a flag), or a refusal with a model-readable
   * `message`. Never throws on model output. On a gate with remote state (`state.redis`) it
   * throws `E_ASYNC`: use {@link ToolGate.checkAsync}. The same `ctx` object passed call after
   * call is read in full each time but serialized only when it changed (compared value by
   * value); {@link ToolGate.caller} skips even that.
   */
  check(tool: string, args: string | object | null | undefined, ctx?: CallContext): Verdict
  /** {@link ToolGate.check} for a caller prepared once with {@link ToolGate.caller} (no conversion of the context per call). */
  check(tool: string, args: string | object | null | undefined, caller: Caller): Verdict
  check(tool: string, args: string | object | null | undefined, ctx?: CallContext | Caller): Verdict {
    if (this.#remote) throw remoteSync('check')
    const engines = this.#engines
    return this.#decide(tool, args, ctx, false, engines && ((r) => askEnginesSync(engines, r, this.#engineTimeoutMs, 'check', this.#onEngineError))) as Verdict
  }

  /**
   * {@link ToolGate.check} on a gate whose plugged engines may be asynchronous (each awaited,
   * bounded by `engineTimeoutMs`) or whose state is remote (the decision runs on libuv's thread
   * pool, never blocking the event loop). Works on any gate.
   */
  async checkAsync(tool: string, args: string | object | null | undefined, ctx?: CallContext | Caller): Promise<Verdict> {
    const engines = this.#engines
    return this.#decide(tool, args, ctx, this.#remote, engines && ((r) => askEngines(engines, r, this.#engineTimeoutMs, this.#onEngineError)))
  }

  /**
   * The second step of confirm-before-write: `token` is the host-only
   * `verdict.confirmation.token` of a `confirm` outcome, `ctx` the caller confirming (it must be
   * the same subject). Policy, engines, loop and taint run again with the current state; if they
   * still allow, the call's verdict (`passed`/`repaired`, with its exact arguments) is returned
   * exactly once. An unknown, used, expired or other caller's token is `token_invalid`. On a
   * gate with remote state it throws `E_ASYNC`: use {@link ToolGate.confirmAsync}.
   */
  confirm(token: string, ctx?: CallContext | Caller): Verdict {
    if (this.#remote) throw remoteSync('confirm')
    const engines = this.#engines
    return this.#confirm(token, ctx, false, engines && ((r) => askEnginesSync(engines, r, this.#engineTimeoutMs, 'confirm', this.#onEngineError))) as Verdict
  }

  /** {@link ToolGate.confirm} awaiting asynchronous engines, and remote state off the event loop. */
  async confirmAsync(token: string, ctx?: CallContext | Caller): Promise<Verdict> {
    const engines = this.#engines
    return this.#confirm(token, ctx, this.#remote, engines && ((r) => askEngines(engines, r, this.#engineTimeoutMs, this.#onEngineError)))
  }

  /**
   * Raises a session's taint to `label` by hand (for data the host knows came from outside, for
   * example a fetched web page); taint never goes down. `E_CONFIG` for a label not in `labels`.
   * With remote state it waits for Redis (at most `state.redis.timeoutMs`) and throws `E_STATE`
   * when the taint could not be raised: do not go on as if it had been.
   */
  markSession(session: string, label: string): void {
    this.#call(() => this.#binding.markSession(String(session), String(label)))
  }

  /**
   * Releases what the gate holds outside the process: the connections of the Redis store built
   * from its own `state.redis` (a shared {@link GateState} is closed by whoever made it). Later
   * decisions are refused (`state_unavailable`). Audit records are flushed.
   */
  async close(): Promise<void> {
    this.#audit?.flush()
    this.#binding.close()
  }

  /** One call: the binding's `check` / `checkAs`, in place or on the thread pool (`offLoop`), in two steps when engines are plugged (`#staged`). */
  #decide(tool: string, args: string | object | null | undefined, ctx: CallContext | Caller | undefined, offLoop: boolean, ask: Ask | undefined): Verdict | Promise<Verdict> {
    const text = args === null || args === undefined ? '' : jsonText(args)
    if (ask === undefined && !offLoop && typeof text === 'string' && typeof ctx === 'object' && ctx !== null) {
      // a prepared caller, or a context object passed before that still holds what it held
      const prepared = ctx instanceof Caller ? callerHandle(ctx) : rememberedCallerHandle(ctx)
      if (prepared !== undefined) {
        const wire = this.#check(this.#handle, String(tool), text, prepared)
        this.#audit?.decided(1)
        return this.#fromWire(tool, wire, text)
      }
    }
    const c = bareContextText(ctx)
    if (typeof text !== 'string') {
      // refused before any state is read: decided in place
      this.#audit?.decided(1)
      return this.#fromWire(tool, this.#call(() => this.#binding.checkUnreadable(String(tool), text.unreadable, c)), '')
    }
    if (ask === undefined && !offLoop) {
      let wire: string
      if (c === '') {
        wire = this.#check(this.#handle, String(tool), text)
      } else {
        // a context seen before is decided through the caller the binding prepared from its text
        const known = knownCallerHandleOf(this.#native.BindingCaller, ctx as object, c)
        wire =
          known !== undefined
            ? this.#check(this.#handle, String(tool), text, known)
            : this.#call(() => this.#native.checkAs(this.#handle, String(tool), text, c))
      }
      this.#audit?.decided(1)
      return this.#fromWire(tool, wire, text)
    }
    if (ask !== undefined) return this.#staged(tool, text, ctx, c, offLoop, ask)
    return this.#native.checkAsAsync(this.#handle, String(tool), text, c).then((w) => {
      this.#audit?.decided(1)
      return this.#fromWire(tool, taskAnswer(w, 'E_CONFIG'), text)
    })
  }

  #confirm(token: string, ctx: CallContext | Caller | undefined, offLoop: boolean, ask: Ask | undefined): Verdict | Promise<Verdict> {
    const c = bareContextText(ctx)
    const n = this.#native
    type Confirmed = { tool: string; verdict: Verdict; facts: Facts }
    const run = (engine: string | undefined): Confirmed | Promise<Confirmed> => {
      const read = (wire: string): Confirmed => {
        if (engine !== '') this.#audit?.decided(1)
        const nl = wire.indexOf('\n')
        const tool = JSON.parse(wire.slice(0, nl)) as string
        const facts: Facts = {}
        return { tool, verdict: this.#fromWire(tool, wire.slice(nl + 1), '', facts), facts }
      }
      return offLoop
        ? n.confirmAsync(this.#handle, String(token), c, engine).then((w) => read(taskAnswer(w, 'E_CONFIG')))
        : read(this.#call(() => n.confirm(this.#handle, String(token), c, engine)))
    }
    if (ask === undefined) return chain(run(undefined), (r) => r.verdict)
    return chain(run(''), (first) => {
      if (first.facts.engine === undefined) {
        this.#audit?.decided(1)
        return first.verdict
      }
      const answer = ask(engineRequest(first.tool, first.verdict.arguments ?? {}, first.facts, plainContext(ctx)))
      return chain(answer, (a) => chain(run(a), (r) => r.verdict))
    })
  }

  /**
   * Two-step check for a gate with engines, the call read once: the core decides it up to the
   * engines and keeps it (by handle: `checkStep`), the engines are asked with the decided
   * arguments, then only what comes after them runs (off the event loop for remote state). A
   * call refused before the engines' stage is final at the first step, recorded as such.
   */
  #staged(tool: string, text: string, ctx: CallContext | Caller | undefined, c: string, offLoop: boolean, ask: Ask): Verdict | Promise<Verdict> {
    const n = this.#native
    // a prepared caller, or a context seen before, goes by handle: its text is not read again
    const h = ctx instanceof Caller ? callerHandle(ctx) : c === '' ? undefined : knownCallerHandleOf(n.BindingCaller, ctx as object, c)
    // the first step reads no state: decided in place on any gate
    const step = this.#call(() => n.checkStep(this.#handle, String(tool), text, h === undefined ? c : '', h))
    const kept = pendingOf(step)
    if (kept === undefined) {
      // refused before the engines' stage: final, and recorded by the core as such
      this.#audit?.decided(1)
      return this.#fromWire(tool, step, text)
    }
    const [handle, wire] = kept
    const facts: Facts = {}
    const first = this.#fromWire(tool, wire, text, facts)
    const finish = (a: EngineAnswer): Verdict | Promise<Verdict> => {
      this.#audit?.decided(1)
      if (!offLoop) return this.#fromWire(tool, this.#call(() => n.finishCall(handle, a)), text)
      return n.finishCallAsync(handle, a).then(
        (w) => this.#fromWire(tool, taskAnswer(w, 'E_CONFIG'), text),
        (err: unknown) => {
          throw toToolGateError(err, 'E_CONFIG')
        },
      )
    }
    return afterAsking(() => ask(engineRequest(String(tool), first.arguments ?? {}, facts, plainContext(ctx))), finish, () => n.releaseCall(handle))
  }

  /** Runs a binding call that may throw for a context the host got wrong. */
  #call<T>(f: () => T): T {
    try {
      return f()
    } catch (err) {
      throw toToolGateError(err, 'E_CONFIG')
    }
  }

  /**
   * Guards a whole model turn: reads every tool call in `opts.dialect`'s wire shape (or
   * recognizes the shape with `'auto'`), decides each, and answers a {@link TurnReport}: the
   * verdicts in payload order, the calls to run with their exact arguments, the payload with
   * repairs written back, and `feedback` for refused calls shaped as the dialect's API wants it.
   * `payload` is raw JSON text (the hot path: parsed once, strictly, in Rust) or a parsed value.
   * A call's broken arguments refuse that call only; a broken turn throws `ToolGateError`
   * `E_PAYLOAD` naming the dialect and JSON path; an unknown dialect, or a turn `'auto'` cannot
   * tell, throws `E_DIALECT`. On a gate with remote state it throws `E_ASYNC`: use
   * {@link ToolGate.guardAsync}.
   */
  guard<D extends Dialect | 'auto'>(payload: string | object, opts: GuardOptions & CallerOption & { dialect: D }): TurnReport<D extends Dialect ? D : Dialect> {
    if (this.#remote) throw remoteSync('guard')
    const engines = this.#engines
    const ask = engines && ((r: EngineRequest) => askEnginesSync(engines, r, this.#engineTimeoutMs, 'guard', this.#onEngineError))
    return this.#guard(payload, opts, false, ask) as TurnReport<D extends Dialect ? D : Dialect>
  }

  /** {@link ToolGate.guard} awaiting asynchronous engines (each call's engines in payload order), and remote state off the event loop. */
  async guardAsync<D extends Dialect | 'auto'>(payload: string | object, opts: GuardOptions & CallerOption & { dialect: D }): Promise<TurnReport<D extends Dialect ? D : Dialect>> {
    const engines = this.#engines
    const ask = engines && ((r: EngineRequest) => askEngines(engines, r, this.#engineTimeoutMs, this.#onEngineError))
    return this.#guard(payload, opts, this.#remote, ask) as Promise<TurnReport<D extends Dialect ? D : Dialect>>
  }

  #guard(payload: string | object, opts: GuardOptions & CallerOption, offLoop: boolean, ask: Ask | undefined): TurnReport | Promise<TurnReport> {
    const dialect = opts?.dialect
    if (typeof dialect !== 'string') {
      throw new ToolGateError('E_DIALECT', 'guard: `dialect` is required (a Dialect name or "auto")')
    }
    const text = payloadText(payload, `${dialect} payload`)
    const prepared = callerOption(opts)
    const c = prepared === undefined ? contextText(opts) : ''
    const n = this.#native
    if (ask !== undefined) return this.#guardStaged(payload, text, dialect, opts, prepared, c, offLoop, ask)
    const opt = turnOptionsText(n, opts, prepared, c, offLoop)
    if (offLoop) {
      return n.guardAsync(this.#handle, dialect, text, opt).then(
        (w) => {
          void prepared // read here so the closure holds the caller: its handle is read on the thread pool
          this.#audit?.decided(1)
          return readTurnWire(taskAnswer(w, 'E_PAYLOAD'), payload, text)
        },
        (err: unknown) => {
          this.#audit?.decided(1)
          throw toToolGateError(err, 'E_PAYLOAD')
        },
      )
    }
    let wire: string
    try {
      wire = n.guard(this.#handle, dialect, text, opt)
    } catch (err) {
      throw toToolGateError(err, 'E_PAYLOAD')
    } finally {
      this.#audit?.decided(1)
    }
    return readTurnWire(wire, payload, text)
  }

  /**
   * A turn on a gate with engines, in two steps with one read of the payload: the core decides
   * every call up to the engines and keeps the decided turn (by handle: `guardStep`); the engines
   * are asked about the calls that reached them, with the arguments decided; the turn is then
   * finished with their answers (off the event loop for remote state). A turn no call of which
   * reaches the engines is final at the first step.
   */
  #guardStaged(payload: string | object, text: string, dialect: string, opts: GuardOptions & CallerOption, prepared: Caller | undefined, c: string, offLoop: boolean, ask: Ask): TurnReport | Promise<TurnReport> {
    const n = this.#native
    let step: string
    try {
      // the first step reads no state: decided in place on any gate
      step = n.guardStep(this.#handle, dialect, text, turnOptionsText(n, opts, prepared, c, false))
    } catch (err) {
      throw toToolGateError(err, 'E_PAYLOAD')
    } finally {
      this.#audit?.decided(1)
    }
    const kept = pendingOf(step)
    if (kept === undefined) return readTurnWire(step, payload, text)
    const [handle, questionsWire] = kept
    const questions = readQuestionsWire(questionsWire)
    const context = prepared !== undefined ? (prepared.context as CallContext) : (JSON.parse(c === '' ? '{}' : c) as CallContext)
    const askAll = (): EngineAnswer[] | Promise<EngineAnswer[]> => {
      const asked = questions.map((q) => ask(engineRequest(q.tool, q.arguments, q, context)))
      return asked.some(isPromise) ? Promise.all(asked) : (asked as EngineAnswer[])
    }
    const finish = (got: EngineAnswer[]): TurnReport | Promise<TurnReport> => {
      // by call index; a call the first step did not put to the engines keeps its refusal
      const answers: StageAnswer[] = []
      questions.forEach((q, i) => {
        answers[q.index] = got[i]
      })
      for (let i = 0; i < answers.length; i++) answers[i] ??= 'unasked'
      this.#audit?.decided(1)
      if (offLoop) {
        return n.finishTurnAsync(handle, answers).then(
          (w) => readTurnWire(taskAnswer(w, 'E_PAYLOAD'), payload, text),
          (err: unknown) => {
            throw toToolGateError(err, 'E_PAYLOAD')
          },
        )
      }
      let wire: string
      try {
        wire = n.finishTurn(handle, answers)
      } catch (err) {
        throw toToolGateError(err, 'E_PAYLOAD')
      }
      return readTurnWire(wire, payload, text)
    }
    return afterAsking(askAll, finish, () => n.releaseTurn(handle))
  }

  /** See {@link guardSingleCall}: `undefined` when this gate cannot decide in place (remote state, plugged engines). */
  #guardSingle(text: string, opts: GuardOptions & CallerOption & { dialect: Dialect }): SingleCallDecision | undefined {
    if (this.#remote || this.#engines !== undefined) return undefined
    const prepared = callerOption(opts)
    const c = prepared === undefined ? contextText(opts) : ''
    const n = this.#native
    let wire: string
    try {
      wire = n.guardSingle(this.#handle, opts.dialect, text, turnOptionsText(n, opts, prepared, c, false))
    } catch (err) {
      throw toToolGateError(err, 'E_PAYLOAD')
    } finally {
      this.#audit?.decided(1)
    }
    return readSingleCallWire(wire, text)
  }

  static {
    guardSingleOf = (gate, text, opts) => gate.#guardSingle(text, opts)
  }

  /**
   * Returns `tools` — a tool list in `opts.dialect`'s request shape (OpenAI `tools[]`, Anthropic
   * `tools[]`, MCP `tools/list` result, AI SDK tool record, Gemini `functionDeclarations` …, or a
   * request body holding one) — with only the tools this caller could call. Undeclared tools are
   * always removed. Given as text, the answer is text. Given as objects, the answer keeps the
   * caller's own tool definitions (by reference, as `Array.prototype.filter` does: helpers such
   * as openai's `zodFunction` keep their parsers) in new containers — the outer one always, and
   * each one on the way to something removed; AI SDK records and LangChain tool arrays likewise keep
   * the caller's own tool objects. A list holding a key written twice or a `__proto__` key throws
   * `E_PAYLOAD` naming where (another reader could take the other copy). A JSON list this gate
   * is given again (the same text, or objects serializing to it, in the same dialect) is not
   * read again: from the second time on it is filtered from the core's prepared list, with the
   * same answers and errors (16 lists remembered in the process; see {@link ToolGate.prepareTools}
   * to skip serializing objects as well).
   */
  filterTools<T>(tools: T, opts: FilterToolsOptions & CallerOption): T {
    const dialect = opts?.dialect
    if (typeof dialect !== 'string') {
      throw new ToolGateError('E_DIALECT', 'filterTools: `dialect` is required')
    }
    const n = this.#native
    const h = this.#handle
    const c = contextText(opts)
    const prepared = callerOption(opts)
    const ch = prepared === undefined ? undefined : callerHandle(prepared)
    // a list read before by this gate is filtered from the core's prepared list (the same
    // answers and errors), so it is not sent across and read again (src-ts/tool-list-memo.ts)
    const copy = typeof tools === 'string'
    const list = (d: string, t: string) => toolListMemo.prepared(this.#serial, d, t, copy, () => new n.BindingTools(h, d, t))
    try {
      return filterToolList(
        tools,
        dialect,
        (names) => n.visibleTools(h, names, c),
        (d, t) => {
          const l = list(d, t)
          return l === undefined ? n.filterTools(h, d, t, c) : n.filterPrepared(h, l.handle, c, ch)
        },
        (d, t) => {
          const l = list(d, t)
          return l === undefined ? n.filterToolsRemovals(h, d, t, c) : n.filterPreparedRemovals(h, l.handle, c, ch)
        },
      )
    } catch (err) {
      throw toToolGateError(err, 'E_PAYLOAD')
    }
  }

  /**
   * Reads and checks a tool list once, to filter it for many callers: `prepared.filter(caller)`
   * answers what `filterTools(tools, { dialect, ...caller })` answers for the list as it is now,
   * without sending it to the core or reading it again — the core asks only which of the list's
   * names the caller may see, and remembers what each set of answers removes. For a host that
   * offers the same tools to every request. Throws now what `filterTools` would throw for this
   * list (`E_PAYLOAD` / `E_DIALECT`). See {@link PreparedTools} for what its answers hold.
   */
  prepareTools<T>(tools: T, opts: { dialect: Dialect }): PreparedTools<T> {
    const dialect = opts?.dialect
    if (typeof dialect !== 'string') {
      throw new ToolGateError('E_DIALECT', 'prepareTools: `dialect` is required')
    }
    const n = this.#native
    // these hold this gate, so its handle stays live as long as the prepared list does
    const gate = {
      filter: (l: number, c: string, h: number | undefined) => n.filterPrepared(this.#handle, l, c, h),
      removals: (l: number, c: string, h: number | undefined) => n.filterPreparedRemovals(this.#handle, l, c, h),
      visible: (names: string[], c: string) => n.visibleTools(this.#handle, names, c),
      known: (ctx: object, c: string) => knownCallerHandleOf(n.BindingCaller, ctx, c),
    }
    try {
      const live = liveTools(tools, dialect)
      if (live !== undefined) return makePreparedTools(gate, { kind: 'live', live })
      const text = payloadText(tools, `${dialect} tool list`)
      const native = new n.BindingTools(this.#handle, dialect, text)
      const list = native.handle
      return makePreparedTools(gate, typeof tools === 'string' ? { kind: 'text', native, list } : { kind: 'data', native, list, snapshot: JSON.parse(text) as unknown })
    } catch (err) {
      throw toToolGateError(err, 'E_PAYLOAD')
    }
  }

  /**
   * Guards a streamed model turn (`openai`, `openai-responses`, `anthropic`, `ai-sdk`, `gemini`):
   * push every event into the returned {@link ToolCallStream}; each tool call is decided the
   * moment it completes (so a host can act on it before the stream ends), text is forwarded live,
   * a call is held until complete and then released with its repaired arguments or dropped, and
   * `end()` answers the whole turn exactly as {@link ToolGate.guard} would. Other dialects throw
   * `ToolGateError` `E_DIALECT`.
   */
  stream<D extends Dialect>(opts: StreamOptions & CallerOption & { dialect: D }): ToolCallStream<D> {
    const dialect = opts?.dialect
    if (typeof dialect !== 'string') {
      throw new ToolGateError('E_DIALECT', 'stream: `dialect` is required')
    }
    if (this.#engines !== undefined) {
      throw new ToolGateError('E_ASYNC', 'stream: this gate has plugged engines, which a stream cannot wait for; guard the assembled turn with guardAsync instead')
    }
    return new ToolCallStream<D>(this.#native, this.#handle, dialect, contextText(opts))
  }

  /** Reads the `check` wire (see crates/toolgate-node/src/lib.rs); `out` receives the policy facts' engine question. */
  #fromWire(tool: string, wire: string, text: string, out?: Facts): Verdict {
    if (wire === '') {
      return { outcome: 'passed', allowed: true, tool, arguments: JSON.parse(text), argumentsJson: text, flags: [] }
    }
    if (wire.charCodeAt(0) === 61 /* '=' */) {
      const v: Verdict = { outcome: 'passed', allowed: true, tool, arguments: JSON.parse(text), argumentsJson: text, flags: [] }
      return withFacts(v, wire.slice(1), out)
    }
    // `ARGS\nOUTCOME\nFLAGS[\nFACTS]` when allowed, `\nOUTCOME\nREASON\nFACTS\nMESSAGE` when refused
    const a = wire.indexOf('\n')
    const b = wire.indexOf('\n', a + 1)
    const outcome = wire.slice(a + 1, b) as Outcome
    if (a > 0) {
      const argumentsJson = wire.slice(0, a)
      const c = wire.indexOf('\n', b + 1)
      const flagsJson = c < 0 ? wire.slice(b + 1) : wire.slice(b + 1, c)
      const flags: Flag[] = flagsJson === '[]' ? [] : JSON.parse(flagsJson)
      const v: Verdict = { outcome, allowed: true, tool, arguments: JSON.parse(argumentsJson), argumentsJson, flags }
      return c < 0 ? v : withFacts(v, wire.slice(c + 1), out)
    }
    const c = wire.indexOf('\n', b + 1)
    const d = wire.indexOf('\n', c + 1)
    const v: Verdict = { outcome, allowed: false, tool, flags: [], reason: wire.slice(b + 1, c) as Reason, message: wire.slice(d + 1) }
    return d === c + 1 ? v : withFacts(v, wire.slice(c + 1, d), out)
  }
}

/**
 * Guards `text`, a turn the host will forward as it is when the gate changes nothing (the MCP
 * proxy's `tools/call` line), as {@link ToolGate.guard} does — same decisions, same errors — but
 * answers a turn of one plain call without building a {@link TurnReport} (see
 * {@link SingleCallDecision}). `undefined` when the gate must decide off the event loop or ask
 * engines: use `guard`/`guardAsync` then. Internal to the proxies, not exported by the package.
 */
export function guardSingleCall(gate: ToolGate, text: string, opts: GuardOptions & CallerOption & { dialect: Dialect }): SingleCallDecision | undefined {
  return guardSingleOf(gate, text, opts)
}

/**
 * The options text of a turn for the binding (crates/toolgate-node `turn_options`): `''`, the
 * common `{"caller":N}` spliced without building an object, or the whole object. A context seen
 * before goes as the caller the binding prepared from its text (sync only: the cache may let go
 * of that caller while a call waits on the thread pool).
 */
function turnOptionsText(n: ReturnType<typeof native>, opts: GuardOptions, prepared: Caller | undefined, c: string, offLoop: boolean): string {
  if (opts.protocolVersion === undefined) {
    const known = prepared === undefined && c !== '' && !offLoop ? knownCallerHandle(n.BindingCaller, c) : undefined
    return prepared !== undefined ? `{"caller":${callerHandle(prepared)}}` : known !== undefined ? `{"caller":${known}}` : c === '' ? '' : `{"context":${c}}`
  }
  const o: Record<string, unknown> = { protocolVersion: opts.protocolVersion }
  // a prepared caller is named by handle; it is kept alive by `opts` until the answer is read
  if (prepared !== undefined) o.caller = callerHandle(prepared)
  const options = JSON.stringify(o)
  return c !== '' ? `${options.slice(0, -1)},"context":${c}}` : options
}

const isPromise = isThenable as <T>(v: T | Promise<T>) => v is Promise<T>

/**
 * A first step's answer that kept a decision for the engines (`?HANDLE\nREST`, see
 * crates/toolgate-node/src/pending.rs): its handle and the rest; `undefined` for a final answer
 * (no final wire or report starts with `?`).
 */
function pendingOf(step: string): [number, string] | undefined {
  if (step.charCodeAt(0) !== 63 /* '?' */) return undefined
  const nl = step.indexOf('\n')
  return [Number(step.slice(1, nl)), step.slice(nl + 1)]
}

/**
 * Asks the engines (`ask`) and hands their answer to `finish`, which takes the kept decision.
 * When asking throws or rejects (an async engine on a sync method, a host's engine wrapper),
 * `release` drops the kept decision — nothing recorded, nothing runs — and the error goes on:
 * every kept decision is taken exactly once.
 */
function afterAsking<A, R>(ask: () => A | Promise<A>, finish: (a: A) => R | Promise<R>, release: () => void): R | Promise<R> {
  let answer: A | Promise<A>
  try {
    answer = ask()
  } catch (err) {
    release()
    throw err
  }
  if (!isPromise(answer)) return finish(answer)
  return answer.then(finish, (err: unknown) => {
    release()
    throw err
  })
}

/** Applies `f` to a value now, or once its promise settles: one decision path for sync and async. */
function chain<A, B>(x: A | Promise<A>, f: (a: A) => B | Promise<B>): B | Promise<B> {
  return isPromise(x) ? x.then(f) : f(x)
}

/** The answer of a decision run on the thread pool: the wire, or `\0CODE\nMESSAGE` thrown as a ToolGateError. */
function taskAnswer(answer: unknown, fallback: ToolGateErrorCode): string {
  if (typeof answer !== 'string') throw new ToolGateError(fallback, 'the native decision answered no text; nothing was allowed')
  if (answer.charCodeAt(0) !== 0) return answer
  const nl = answer.indexOf('\n')
  throw toToolGateError(Object.assign(new Error(answer.slice(nl + 1)), { code: answer.slice(1, nl) }), fallback)
}

/** The refusal of a sync decision on a gate with remote state. */
function remoteSync(method: 'check' | 'confirm' | 'guard'): ToolGateError {
  return new ToolGateError('E_ASYNC', `${method}: this gate keeps its state in Redis (state.redis), which a sync call would block the event loop waiting for; use ${method}Async`)
}

/** Adds the wire's policy facts to a verdict (never the engine question, which is internal). */
function withFacts(v: Verdict, json: string, out: Facts | undefined): Verdict {
  const f = readFacts(json)
  if (out !== undefined) Object.assign(out, f)
  return addFacts(v, f)
}

/**
 * The wire's policy facts. The common ones, `{"action":NAME}` with no escape in NAME (a JSON
 * string without a backslash is its characters as they are), are read without `JSON.parse`.
 */
function readFacts(json: string): Facts {
  if (json.length >= 13 && json.startsWith('{"action":"') && json.endsWith('"}')) {
    const action = json.slice(11, -2)
    if (!action.includes('"') && !action.includes('\\')) return { action }
  }
  return JSON.parse(json) as Facts
}

/** Identity helper that types a config object (editor completion, checked keys). */
export function defineConfig(config: ToolGateConfig): ToolGateConfig {
  return config
}

/**
 * What the audit trail drains, built outside the class so its closures hold the binding only,
 * never the gate: a gate nobody holds any more can be collected (its trail then writes the
 * last records and lets go of the file).
 */
function auditSource(binding: InstanceType<ReturnType<typeof native>['BindingGate']>, configHash: string): AuditSource {
  return { drain: () => binding.drainAudit(), setFailed: (f) => binding.setAuditFailed(f), configHash }
}
