// `chat.completions.runTools` on a guarded OpenAI client. The SDK's runner asks the model through
// `create` (the guarded one: tools filtered, each answer guarded) and then calls each tool
// function with the call's argument text — but never with the call's id. So each turn's report
// fills a ledger of verdicts keyed by tool name and exact argument text (in call order), and each
// tool function is wrapped to take its call's verdict from it: an allowed call runs with the
// gate's (repaired) arguments, which are the very text the runner holds; a refused call never
// reaches the function and is answered with the gate's message. Nothing is decided here.
import { isObj } from '../json-object'
import { ToolGateError } from '../errors'
import type { TurnCall, TurnReport } from '../types'

type Obj = Record<string, unknown>

/** A function tool as `runTools` takes it (`RunnableToolFunction`'s `function`). */
interface RunnableFunction {
  function: (args: unknown, runner: unknown, context: unknown) => unknown
  parse?: (args: string) => unknown
  name?: string
  [key: string]: unknown
}

/** The verdicts of the turn the runner is running, by tool name and exact argument text, each used once. */
export class RunLedger {
  #queues = new Map<string, TurnCall[]>()

  /** Replaces the ledger with the calls of a guarded Chat Completions turn (choice 0, the one the runner runs). */
  load(report: TurnReport): void {
    this.#queues.clear()
    const payload = report.payload as Obj
    const message = Array.isArray(payload?.choices) ? ((payload.choices[0] as Obj | undefined)?.message as Obj | undefined) : undefined
    const calls = Array.isArray(message?.tool_calls) ? (message.tool_calls as unknown[]) : []
    const byId = new Map(report.calls.map((c) => [c.callId, c]))
    for (const c of calls) {
      if (!isObj(c) || !isObj(c.function) || typeof c.id !== 'string') continue
      const verdict = byId.get(c.id)
      if (verdict === undefined) continue
      const k = key(String(c.function.name), String(c.function.arguments))
      const q = this.#queues.get(k)
      if (q === undefined) this.#queues.set(k, [verdict])
      else q.push(verdict)
    }
  }

  /**
   * The verdict of the next call of `tool` with exactly `args` (calls that are identical in name
   * and text are run in call order: as many as the gate allowed), or `undefined` when the turn
   * holds no such call.
   */
  take(tool: string, args: string): TurnCall | undefined {
    return this.#queues.get(key(tool, args))?.shift()
  }
}

function key(tool: string, args: string): string {
  return `${tool}\u0000${args}`
}

/** What the wrapped `parse` hands the wrapped `function`: the call's verdict and the value to run with. */
class Decided {
  constructor(
    readonly verdict: TurnCall | undefined,
    readonly tool: string,
    readonly value: unknown,
  ) {}

  /** The model-readable answer for a call that must not run. */
  refusal(): string {
    if (this.verdict === undefined) return `\`${this.tool}\` was not decided by the gate for this turn, so it did not run.`
    return this.verdict.message ?? `\`${this.tool}\` was refused.`
  }
}

/**
 * `params.tools` with every function tool gated through `ledger` (auto-parseable tools from
 * `zodFunction` are unpacked into the `{ function, parse }` form the runner makes of them), and
 * the function tools whose names `visible` does not keep left out: the runner answers a call to
 * a name it does not hold by listing the names it holds, which must never name a tool this caller
 * may not see. The caller's tool objects are not changed. Other tools pass as they are (the
 * runner runs only function tools; the guarded `create` filters them).
 */
export function gateRunnableTools(tools: unknown[], ledger: RunLedger, visible: (names: string[]) => ReadonlySet<string>, where: string): unknown[] {
  const named = tools.map((tool, i) => {
    if (!isObj(tool) || tool.type !== 'function') return { tool, name: undefined }
    const fn = runnableOf(tool, where, i)
    return { tool, fn, name: typeof fn.name === 'string' && fn.name !== '' ? fn.name : fn.function.name }
  })
  const keep = visible(named.flatMap((n) => (n.name === undefined ? [] : [n.name])))
  return named.flatMap(({ tool, fn, name }) => {
    if (fn === undefined || name === undefined) return [tool]
    if (!keep.has(name)) return []
    return [gated(tool as Obj, fn, name, ledger)]
  })
}

/** One function tool, gated through `ledger`. */
function gated(tool: Obj, fn: RunnableFunction, name: string, ledger: RunLedger): Obj {
  const original = fn.function
  const originalParse = fn.parse
  const runnable: RunnableFunction = {
    ...fn,
    name,
    // always present, so the runner hands the function what this returns
    parse: async (args: string): Promise<Decided> => {
      const verdict = ledger.take(name, args)
      if (verdict === undefined || !verdict.allowed) return new Decided(verdict, name, undefined)
      // `args` is exactly the text the gate allowed (the ledger is keyed by it)
      return new Decided(verdict, name, originalParse === undefined ? args : await originalParse.call(fn, args))
    },
    function: async (decided: unknown, runner: unknown, context: unknown): Promise<unknown> => {
      if (!(decided instanceof Decided)) return `\`${name}\` was not decided by the gate, so it did not run.`
      if (decided.verdict === undefined || !decided.verdict.allowed) return decided.refusal()
      return original.call(fn, decided.value, runner, context)
    },
  }
  return { ...tool, function: runnable }
}

/** The runnable function of a function tool: its own `function`, or an auto-parseable tool's callback and parser. */
function runnableOf(tool: Obj, where: string, i: number): RunnableFunction {
  const t = tool as { $brand?: unknown; $callback?: unknown; $parseRaw?: unknown; function?: unknown }
  if (t.$brand === 'auto-parseable-tool') {
    const f = t.function as Obj
    if (typeof t.$callback !== 'function') throw new ToolGateError('E_CONFIG', `${where}: tool ${i} (\`${String(f?.name)}\`) has no function to run`)
    return { ...f, function: t.$callback as RunnableFunction['function'], parse: t.$parseRaw as RunnableFunction['parse'], strict: true }
  }
  const f = t.function
  if (!isObj(f) || typeof f.function !== 'function') {
    throw new ToolGateError('E_CONFIG', `${where}: tool ${i} is not a runnable function tool ({ type: 'function', function: { function, parameters, … } })`)
  }
  if (f.parse !== undefined && typeof f.parse !== 'function') throw new ToolGateError('E_CONFIG', `${where}: tool ${i}'s \`parse\` is not a function`)
  return f as RunnableFunction
}
