import type { CoreErrorCode } from './contract-types.generated'

/**
 * The stable codes a {@link ToolGateError} carries (a closed set; README "API").
 * - `E_CONFIG`: the config or a tool schema is wrong (unknown keys included).
 * - `E_PAYLOAD`: a turn's shape is broken.
 * - `E_DIALECT`: unknown dialect, or `auto` cannot tell.
 * - `E_RECEIPT`: a receipt failed verification.
 * - `E_ASYNC`: a sync call on a gate with an async engine, or with remote state (`state.redis`).
 * - `E_STATE`: `markSession` could not reach the gate's remote state (the taint was perhaps not
 *   raised; docs/state.md). Decisions never throw it: they are refused `state_unavailable`.
 * - `E_UNAUTHENTICATED`: a bearer token is missing or not valid (`verifyCaller`, the servers'
 *   identity check; docs/identity.md). `reason` says why (`missing`, `expired`, `wrong_audience` …).
 */
export type ToolGateErrorCode = CoreErrorCode | 'E_ASYNC' | 'E_UNAUTHENTICATED'

// Every code once: a code the core adds (generated `CoreErrorCode`) is a type error here until listed.
const EVERY_CODE: Record<ToolGateErrorCode, true> = {
  E_CONFIG: true,
  E_PAYLOAD: true,
  E_DIALECT: true,
  E_RECEIPT: true,
  E_STATE: true,
  E_ASYNC: true,
  E_UNAUTHENTICATED: true,
}
const CODES: ReadonlySet<string> = new Set(Object.keys(EVERY_CODE))

/**
 * The one error toolgate throws. `code` is stable across versions; `message` names what was
 * wrong and where. Bad model output never throws: it becomes a refusing `Verdict`.
 */
export class ToolGateError extends Error {
  /** Stable machine-readable code. */
  readonly code: ToolGateErrorCode
  /** `E_RECEIPT`: why the receipt was refused (`bad_signature`, `expired`, `wrong_arguments` …);
   *  `E_UNAUTHENTICATED`: why the bearer token was refused (`missing`, `expired`, `unknown_kid` …). */
  readonly reason?: string

  constructor(code: ToolGateErrorCode, message: string, options?: { cause?: unknown; reason?: string }) {
    super(message, options)
    this.name = 'ToolGateError'
    this.code = code
    if (options?.reason !== undefined) this.reason = options.reason
  }
}

/**
 * Converts anything thrown by the native binding into a `ToolGateError`. The binding sets
 * `code` on its errors; anything else is reported under `fallback`.
 */
export function toToolGateError(err: unknown, fallback: ToolGateErrorCode): ToolGateError {
  if (err instanceof ToolGateError) return err
  const code = (err as { code?: unknown } | null)?.code
  const message = err instanceof Error ? err.message : String(err)
  return new ToolGateError(typeof code === 'string' && CODES.has(code) ? (code as ToolGateErrorCode) : fallback, message, {
    cause: err,
  })
}
