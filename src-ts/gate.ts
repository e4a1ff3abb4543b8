import { readFileSync } from 'node:fs'
import { extname } from 'node:path'
import { parse as parseYaml } from 'yaml'

import { toToolGateError, ToolGateError } from './errors'
import { native, type BindingGate } from './native'
import { filterToolList } from './tools'
import { jsonText, payloadText, readTurnWire } from './turn'
import { ToolCallStream, type StreamOptions } from './stream'
import type { CallContext, Dialect, FilterToolsOptions, Flag, GuardOptions, Outcome, Reason, ToolGateConfig, TurnReport, Verdict } from './types'

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
  readonly #check: (handle: number, tool: string, args: string) => string
  readonly #tools: readonly string[]
  readonly #native: ReturnType<typeof native>

  /**
   * Compiles `config` (an object, or its JSON text). Throws `ToolGateError` `E_CONFIG`
   * naming the key or the tool and schema location when the config is wrong.
   */
  constructor(config: ToolGateConfig | string) {
    let text: string
    if (typeof config === 'string') {
      text = config
    } else {
      if (config === null || typeof config !== 'object') {
        throw new ToolGateError('E_CONFIG', `config: expected an object or JSON text, got ${config === null ? 'null' : typeof config}`)
      }
      try {
        text = JSON.stringify(config)
      } catch (err) {
        throw new ToolGateError('E_CONFIG', `config: cannot be serialized to JSON (${(err as Error).message})`, { cause: err })
      }
    }
    this.#native = native()
    const { BindingGate: Binding, check } = this.#native
    try {
      this.#binding = new Binding(text)
    } catch (err) {
      throw toToolGateError(err, 'E_CONFIG')
    }
    this.#handle = this.#binding.handle
    this.#check = check
    this.#tools = Object.freeze(this.#binding.toolNames())
  }

  /**
   * Loads a config file (`.json`, `.yaml` or `.yml`) and compiles it. Errors are
   * `ToolGateError` `E_CONFIG` naming the file.
   */
  static fromFile(path: string): ToolGate {
    let raw: string
    try {
      raw = readFileSync(path, 'utf8')
    } catch (err) {
      throw new ToolGateError('E_CONFIG', `config file ${path}: cannot be read (${(err as Error).message})`, { cause: err })
    }
    const ext = extname(path).toLowerCase()
    let text = raw
    if (ext === '.yaml' || ext === '.yml') {
      try {
        text = JSON.stringify(parseYaml(raw, { maxAliasCount: 100, uniqueKeys: true, prettyErrors: true }))
      } catch (err) {
        throw new ToolGateError('E_CONFIG', `config file ${path}: ${(err as Error).message}`, { cause: err })
      }
    }
    try {
      return new ToolGate(text)
    } catch (err) {
      const e = toToolGateError(err, 'E_CONFIG')
      throw new ToolGateError(e.code, `config file ${path}: ${e.message}`, { cause: err })
    }
  }

  /** The declared tool names, in config order. */
  get tools(): readonly string[] {
    return this.#tools
  }

  /**
   * Decides one call. `args` is the raw JSON text the model sent (the hot path: parsed
   * strictly in Rust, once) or an already-parsed object; `""`, `null` and `undefined` mean `{}`.
   * Returns `passed` (run with `argumentsJson`, the caller's own text), `repaired` (run with
   * the repaired `arguments`; each change is a flag), or a refusal with a model-readable
   * `message`. Never throws on model output.
   */
  check(tool: string, args: string | object | null | undefined, _ctx?: CallContext): Verdict {
    const text = args === null || args === undefined ? '' : jsonText(args)
    if (typeof text !== 'string') {
      return this.#fromWire(tool, this.#binding.checkUnreadable(String(tool), text.unreadable), '')
    }
    const wire = this.#check(this.#handle, String(tool), text)
    return this.#fromWire(tool, wire, text)
  }

  /**
   * Guards a whole model turn: reads every tool call in `opts.dialect`'s wire shape (or
   * recognizes the shape with `'auto'`), decides each, and answers a {@link TurnReport}: the
   * verdicts in payload order, the calls to run with their exact arguments, the payload with
   * repairs written back, and `feedback` for refused calls shaped as the dialect's API wants it.
   * `payload` is raw JSON text (the hot path: parsed once, strictly, in Rust) or a parsed value.
   * A call's broken arguments refuse that call only; a broken turn throws `ToolGateError`
   * `E_PAYLOAD` naming the dialect and JSON path; an unknown dialect, or a turn `'auto'` cannot
   * tell, throws `E_DIALECT`.
   */
  guard<D extends Dialect | 'auto'>(payload: string | object, opts: GuardOptions & { dialect: D }): TurnReport<D extends Dialect ? D : Dialect> {
    const dialect = opts?.dialect
    if (typeof dialect !== 'string') {
      throw new ToolGateError('E_DIALECT', 'guard: `dialect` is required (a Dialect name or "auto")')
    }
    const text = payloadText(payload, `${dialect} payload`)
    const options = opts.protocolVersion === undefined ? '' : JSON.stringify({ protocolVersion: opts.protocolVersion })
    let wire: string
    try {
      wire = this.#native.guard(this.#handle, dialect, text, options)
    } catch (err) {
      throw toToolGateError(err, 'E_PAYLOAD')
    }
    return readTurnWire(wire, payload, text) as TurnReport<D extends Dialect ? D : Dialect>
  }

  /**
   * Returns `tools` — a tool list in `opts.dialect`'s request shape (OpenAI `tools[]`, Anthropic
   * `tools[]`, MCP `tools/list` result, AI SDK tool record, Gemini `functionDeclarations` …, or a
   * request body holding one) — with only the tools this caller could call. Undeclared tools are
   * always removed. AI SDK records and LangChain tool arrays keep the caller's own tool objects.
   */
  filterTools<T>(tools: T, opts: FilterToolsOptions): T {
    const dialect = opts?.dialect
    if (typeof dialect !== 'string') {
      throw new ToolGateError('E_DIALECT', 'filterTools: `dialect` is required')
    }
    const n = this.#native
    try {
      return filterToolList(tools, dialect, (names) => n.visibleTools(this.#handle, names), (d, t) => n.filterTools(this.#handle, d, t))
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
  stream<D extends Dialect>(opts: StreamOptions & { dialect: D }): ToolCallStream<D> {
    const dialect = opts?.dialect
    if (typeof dialect !== 'string') {
      throw new ToolGateError('E_DIALECT', 'stream: `dialect` is required')
    }
    return new ToolCallStream<D>(this.#native, this.#handle, dialect)
  }

  #fromWire(tool: string, wire: string, text: string): Verdict {
    if (wire === '') {
      return { outcome: 'passed', allowed: true, tool, arguments: JSON.parse(text), argumentsJson: text, flags: [] }
    }
    // `ARGS\nOUTCOME\nFLAGS` when allowed, `\nOUTCOME\nREASON\nMESSAGE` when refused
    // (see crates/toolgate-node/src/lib.rs)
    const a = wire.indexOf('\n')
    const b = wire.indexOf('\n', a + 1)
    const outcome = wire.slice(a + 1, b) as Outcome
    if (a > 0) {
      const argumentsJson = wire.slice(0, a)
      const flagsJson = wire.slice(b + 1)
      const flags: Flag[] = flagsJson === '[]' ? [] : JSON.parse(flagsJson)
      return { outcome, allowed: true, tool, arguments: JSON.parse(argumentsJson), argumentsJson, flags }
    }
    const c = wire.indexOf('\n', b + 1)
    return { outcome, allowed: false, tool, flags: [], reason: wire.slice(b + 1, c) as Reason, message: wire.slice(c + 1) }
  }
}

/** Identity helper that types a config object (editor completion, checked keys). */
export function defineConfig(config: ToolGateConfig): ToolGateConfig {
  return config
}
