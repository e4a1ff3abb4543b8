// Plugged policy engines: asked after the built-in rules, in order (docs/policy.md, the engines
// paragraph). The core decides everything else; this file only calls the host's functions and
// turns what they return (or throw, or fail to return in time) into one answer.
import { ToolGateError } from './errors'
import type { CallContext, EngineAnswer, EngineRequest, PolicyEngine } from './types'

/** Default time an engine may take before it counts as a deny (ms). */
export const DEFAULT_ENGINE_TIMEOUT_MS = 50

/** Whether `v` is a promise (anything with a `then` method). */
export function isThenable(v: unknown): v is PromiseLike<unknown> {
  return v !== null && (typeof v === 'object' || typeof v === 'function') && typeof (v as { then?: unknown }).then === 'function'
}

/** Told why an engine's answer became a deny (it threw, answered nonsense, or timed out). */
export type EngineErrorReporter = (error: unknown, request: EngineRequest, engine: number) => void

function report(onError: EngineErrorReporter | undefined, error: unknown, request: EngineRequest, engine: number): 'deny' {
  if (onError !== undefined) {
    try {
      onError(error, request, engine)
    } catch {
      // a failing reporter changes nothing: the call is denied either way
    }
  }
  return 'deny'
}

function nonsense(v: unknown): Error {
  return new Error(`engine answered ${typeof v === 'string' ? JSON.stringify(v) : typeof v}; expected 'allow', 'deny' or 'delegate'`)
}

/**
 * Asks the engines synchronously: the first `allow`/`deny` decides; all delegating gives
 * `delegate`. An engine that throws, answers anything else, or runs past `timeoutMs` denies. An
 * engine that returns a promise throws `ToolGateError` `E_ASYNC` (use the `…Async` method).
 */
export function askEnginesSync(
  engines: readonly PolicyEngine[],
  request: EngineRequest,
  timeoutMs: number,
  method: string,
  onError?: EngineErrorReporter,
): EngineAnswer {
  for (const [i, engine] of engines.entries()) {
    const t0 = performance.now()
    let v: unknown
    try {
      v = engine(request)
    } catch (err) {
      return report(onError, err, request, i)
    }
    if (isThenable(v)) {
      // the promise is abandoned: keep its rejection from surfacing as unhandled
      Promise.resolve(v).catch(() => {})
      throw new ToolGateError('E_ASYNC', `${method}: a plugged engine returned a promise; use ${method}Async on a gate with asynchronous engines`)
    }
    const took = performance.now() - t0
    if (took > timeoutMs) return report(onError, new Error(`engine took ${took.toFixed(1)} ms, over engineTimeoutMs ${timeoutMs}`), request, i)
    if (v !== 'allow' && v !== 'deny' && v !== 'delegate') return report(onError, nonsense(v), request, i)
    if (v !== 'delegate') return v
  }
  return 'delegate'
}

/**
 * Asks the engines, awaiting each (bounded by `timeoutMs`); same rules as {@link askEnginesSync}.
 * The bound holds in two ways: a timer answers `deny` when an engine has not answered in time,
 * and an answer that arrives after `timeoutMs` is refused after the fact (an engine that blocks
 * the event loop keeps the timer from firing, so its late `allow` would otherwise win the race):
 * both deny and tell `onError`.
 */
export async function askEngines(engines: readonly PolicyEngine[], request: EngineRequest, timeoutMs: number, onError?: EngineErrorReporter): Promise<EngineAnswer> {
  for (const [i, engine] of engines.entries()) {
    let timer: ReturnType<typeof setTimeout> | undefined
    let late = false
    const timeout = new Promise<EngineAnswer>((resolve) => {
      timer = setTimeout(() => {
        late = true
        resolve(report(onError, new Error(`engine did not answer within engineTimeoutMs ${timeoutMs}`), request, i))
      }, timeoutMs)
    })
    let a: EngineAnswer
    const t0 = performance.now()
    try {
      const run = Promise.resolve()
        .then(() => engine(request))
        .then(
          (v): EngineAnswer => {
            if (late) return 'deny' // the timer answered (and told onError) already
            const took = performance.now() - t0
            if (took > timeoutMs) return report(onError, new Error(`engine took ${took.toFixed(1)} ms, over engineTimeoutMs ${timeoutMs}`), request, i)
            return v === 'allow' || v === 'deny' || v === 'delegate' ? v : report(onError, nonsense(v), request, i)
          },
          (err: unknown) => (late ? 'deny' : report(onError, err, request, i)),
        )
      a = await Promise.race([run, timeout])
    } finally {
      clearTimeout(timer)
    }
    if (a !== 'delegate') return a
  }
  return 'delegate'
}

/** The request an engine sees for one call that the built-in pipeline did not refuse. */
export function engineRequest(
  tool: string,
  args: Record<string, unknown>,
  facts: { action?: string; resource?: string; engine?: string },
  context: CallContext,
): EngineRequest {
  const req: EngineRequest = {
    tool,
    action: facts.action ?? tool,
    arguments: args,
    context,
    rules: facts.engine === 'allow' ? 'allow' : 'no_rule',
  }
  if (facts.resource !== undefined) req.resource = facts.resource
  return req
}
