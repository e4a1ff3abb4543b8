// Plugged policy engines: asked after the built-in rules, in order (SPEC.md "Pluggable
// engines"). The core decides everything else; this file only calls the host's functions and
// turns what they return (or throw, or fail to return in time) into one answer.
import { ToolGateError } from './errors'
import type { CallContext, EngineAnswer, EngineRequest, PolicyEngine } from './types'

/** Default time an engine may take before it counts as a deny (ms). */
export const DEFAULT_ENGINE_TIMEOUT_MS = 50

function answerOf(v: unknown): EngineAnswer {
  // anything but the three words is a failure, and a failure denies
  return v === 'allow' || v === 'deny' || v === 'delegate' ? v : 'deny'
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return v !== null && (typeof v === 'object' || typeof v === 'function') && typeof (v as { then?: unknown }).then === 'function'
}

/**
 * Asks the engines synchronously: the first `allow`/`deny` decides; all delegating gives
 * `delegate`. An engine that throws, answers anything else, or runs past `timeoutMs` denies. An
 * engine that returns a promise throws `ToolGateError` `E_ASYNC` (use the `…Async` method).
 */
export function askEnginesSync(engines: readonly PolicyEngine[], request: EngineRequest, timeoutMs: number, method: string): EngineAnswer {
  for (const engine of engines) {
    const t0 = performance.now()
    let v: unknown
    try {
      v = engine(request)
    } catch {
      return 'deny'
    }
    if (isThenable(v)) {
      // the promise is abandoned: keep its rejection from surfacing as unhandled
      Promise.resolve(v).catch(() => {})
      throw new ToolGateError('E_ASYNC', `${method}: a plugged engine returned a promise; use ${method}Async on a gate with asynchronous engines`)
    }
    if (performance.now() - t0 > timeoutMs) return 'deny'
    const a = answerOf(v)
    if (a !== 'delegate') return a
  }
  return 'delegate'
}

/** Asks the engines, awaiting each (bounded by `timeoutMs`); same rules as {@link askEnginesSync}. */
export async function askEngines(engines: readonly PolicyEngine[], request: EngineRequest, timeoutMs: number): Promise<EngineAnswer> {
  for (const engine of engines) {
    let timer: ReturnType<typeof setTimeout> | undefined
    const timeout = new Promise<EngineAnswer>((resolve) => {
      timer = setTimeout(() => resolve('deny'), timeoutMs)
    })
    let a: EngineAnswer
    try {
      const run = Promise.resolve()
        .then(() => engine(request))
        .then(answerOf, () => 'deny' as const)
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
