// toolgate/otel: OpenTelemetry spans and metrics for the gate's decisions, built on the audit
// trail. The core already writes one record per decision (docs/audit.md); the trail drains them
// off the hot path and hands each line to `onAudit`. This module is such an `onAudit`: it turns a
// `decision` record into one `toolgate.decision` span (placed at the record's time, lasting its
// `latencyUs`) and counts it, and a `turn_error` record into an ERROR span. Nothing here runs on
// the hot path or decides anything. `@opentelemetry/api` is an optional peer dependency: it is
// imported for types only and loaded by `otelAudit()`, never by importing this module.
import type { Attributes, Counter, Histogram, HrTime, Meter, MeterProvider, Tracer, TracerProvider } from '@opentelemetry/api'

import { ToolGateError } from '../errors'
import type { ToolGateOptions } from '../types'

type OtelApi = typeof import('@opentelemetry/api')

/** The instrumentation scope name of every span and instrument. */
export const OTEL_SCOPE = 'toolgate'

/** Options of {@link otelAudit} and {@link withOtel}. Unknown keys are `E_CONFIG`. */
export interface OtelAuditOptions {
  /** The tracer to start spans on. Default: `tracerProvider`'s tracer `toolgate`, else the global tracer provider's. */
  tracer?: Tracer
  /** Where the `toolgate` tracer comes from when no `tracer` is given (default: the global one, `trace.getTracerProvider()`). */
  tracerProvider?: TracerProvider
  /** The meter to create the instruments on. Default: `meterProvider`'s meter `toolgate`, else the global meter provider's. */
  meter?: Meter
  /** Where the `toolgate` meter comes from when no `meter` is given (default: the global one, `metrics.getMeterProvider()`). */
  meterProvider?: MeterProvider
  /**
   * Also put who acted on spans: `enduser.id` (the record's `sub`) and `session.id`. Off by
   * default: the semantic conventions mark `enduser.id` as PII, and traces usually leave the host
   * for a backend the audit log never reaches. Never on metrics (unbounded cardinality).
   */
  recordSubject?: boolean
}

/** One decision record (docs/audit.md), the fields read here. */
interface DecisionRecord {
  type: 'decision'
  time: string
  id?: string
  sub?: string
  session?: string
  surface?: string
  dialect?: string
  callId?: string
  step?: string
  tool: string
  action?: string
  resource?: string
  outcome: string
  reason?: string
  shadow?: boolean
  wouldBe?: string
  flags?: { code?: string }[]
  latencyUs?: number
  /** Not in the format yet (proposed): how many distinct schema problems an `invalid` refusal had. */
  validationErrors?: number
  jti?: string
  configHash?: string
}

/** A whole turn refused before any call was decided (`E_PAYLOAD`, `E_DIALECT`). */
interface TurnErrorRecord {
  type: 'turn_error'
  time: string
  id?: string
  sub?: string
  session?: string
  dialect?: string
  code: string
  message?: string
  configHash?: string
}

/** Latency buckets in seconds: a decision takes microseconds; a plugged engine can take a network round trip. */
const DURATION_BUCKETS = [
  0.000001, 0.0000025, 0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
  0.25, 0.5, 1, 2.5, 5, 10,
]

/** Refusals decided before the arguments met the schema: no count of validation errors applies. */
const BEFORE_SCHEMA: ReadonlySet<string> = new Set(['unknown_tool', 'bad_arguments', 'surface', 'token_invalid'])

const OPTION_KEYS: ReadonlySet<string> = new Set(['tracer', 'tracerProvider', 'meter', 'meterProvider', 'recordSubject'])
const WHERE = 'otelAudit'

/**
 * An `onAudit` function (for `new ToolGate(config, { onAudit })`, whose config has an `audit`
 * block) that reports every decision to OpenTelemetry:
 * - a span `toolgate.decision` (kind INTERNAL, a root span) per `decision` record, from the
 *   record's `time` for its `latencyUs`, with `gen_ai.operation.name: "execute_tool"`,
 *   `gen_ai.tool.name`, `gen_ai.tool.call.id`, `toolgate.outcome`, `toolgate.reason`,
 *   `toolgate.coercion_count`, `toolgate.validation_errors`, `toolgate.latency_us` and the
 *   record's other facts (docs/otel.md). Status stays UNSET: a refusal is the gate working.
 * - a span `toolgate.decision` with status ERROR and `error.type` (`E_PAYLOAD`, `E_DIALECT`) per
 *   `turn_error` record.
 * - a counter `toolgate.decisions` and a histogram `toolgate.decision.duration` (seconds) by
 *   `toolgate.outcome` (and `toolgate.reason`, `toolgate.would_be` where present); a counter
 *   `toolgate.turn_errors` by `error.type`.
 *
 * Loads `@opentelemetry/api` now (`E_CONFIG` when it is not installed). The returned function
 * never throws: a telemetry failure must not make the trail report its sink failed (which
 * refuses calls with `audit_unavailable`); the first one is reported as a process warning.
 */
export function otelAudit(options: OtelAuditOptions = {}): (line: string) => void {
  checkOptions(options)
  const api = loadApi()
  const version = ownVersion()
  const tracer = options.tracer ?? (options.tracerProvider ?? api.trace.getTracerProvider()).getTracer(OTEL_SCOPE, version)
  const meter = options.meter ?? (options.meterProvider ?? api.metrics.getMeterProvider()).getMeter(OTEL_SCOPE, version)
  const instruments: Instruments = {
    decisions: meter.createCounter('toolgate.decisions', { description: 'Tool-call decisions made by the gate', unit: '{decision}' }),
    duration: meter.createHistogram('toolgate.decision.duration', {
      description: 'Time the gate took to decide a tool call',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    }),
    turnErrors: meter.createCounter('toolgate.turn_errors', { description: 'Whole turns refused before any call was decided', unit: '{turn}' }),
  }
  const subject = options.recordSubject === true
  let warned = false
  return (line: string): void => {
    try {
      const rec = JSON.parse(line) as { type?: unknown }
      if (rec.type === 'decision') onDecision(api, tracer, instruments, rec as DecisionRecord, subject)
      else if (rec.type === 'turn_error') onTurnError(api, tracer, instruments, rec as TurnErrorRecord, subject)
    } catch (err) {
      if (!warned) {
        warned = true
        process.emitWarning(`toolgate/otel: a record could not be reported to OpenTelemetry (${err instanceof Error ? err.message : String(err)}); the audit trail itself is unaffected. Further failures are not reported.`)
      }
    }
  }
}

/**
 * The `ToolGateOptions` fragment that reports decisions to OpenTelemetry, to spread into a gate's
 * options: `new ToolGate({ ...config, audit: {} }, { ...withOtel({ tracerProvider }) })`.
 * Same as `{ onAudit: otelAudit(options) }`.
 */
export function withOtel(options: OtelAuditOptions = {}): Required<Pick<ToolGateOptions, 'onAudit'>> {
  return { onAudit: otelAudit(options) }
}

interface Instruments {
  decisions: Counter
  duration: Histogram
  turnErrors: Counter
}

function onDecision(api: OtelApi, tracer: Tracer, m: Instruments, rec: DecisionRecord, subject: boolean): void {
  const latencyUs = typeof rec.latencyUs === 'number' && rec.latencyUs >= 0 ? rec.latencyUs : 0
  const flags = Array.isArray(rec.flags) ? rec.flags : []
  const attributes: Attributes = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': rec.tool,
  }
  if (rec.callId !== undefined) attributes['gen_ai.tool.call.id'] = rec.callId
  attributes['toolgate.outcome'] = rec.outcome
  if (rec.reason !== undefined) attributes['toolgate.reason'] = rec.reason
  attributes['toolgate.coercion_count'] = flags.length
  if (flags.length > 0) attributes['toolgate.coercions'] = flags.map((f) => String(f.code))
  const validationErrors = validationErrorsOf(rec)
  if (validationErrors !== undefined) attributes['toolgate.validation_errors'] = validationErrors
  attributes['toolgate.latency_us'] = latencyUs
  optional(attributes, 'toolgate.decision.id', rec.id)
  optional(attributes, 'toolgate.dialect', rec.dialect)
  optional(attributes, 'toolgate.step', rec.step)
  optional(attributes, 'toolgate.action', rec.action)
  optional(attributes, 'toolgate.resource', rec.resource)
  if (rec.shadow === true) attributes['toolgate.shadow'] = true
  optional(attributes, 'toolgate.would_be', rec.wouldBe)
  optional(attributes, 'toolgate.surface', rec.surface)
  optional(attributes, 'toolgate.receipt.id', rec.jti)
  optional(attributes, 'toolgate.config.hash', rec.configHash)
  callerAttributes(attributes, rec, subject)
  const start = hrTimeOf(rec.time)
  const span = tracer.startSpan('toolgate.decision', { kind: api.SpanKind.INTERNAL, startTime: start, attributes }, api.ROOT_CONTEXT)
  span.end(addMicros(start, latencyUs))

  const byOutcome: Attributes = { 'toolgate.outcome': rec.outcome }
  optional(byOutcome, 'toolgate.reason', rec.reason)
  optional(byOutcome, 'toolgate.would_be', rec.wouldBe)
  m.decisions.add(1, byOutcome)
  m.duration.record(latencyUs / 1e6, byOutcome)
}

function onTurnError(api: OtelApi, tracer: Tracer, m: Instruments, rec: TurnErrorRecord, subject: boolean): void {
  const attributes: Attributes = { 'error.type': rec.code }
  optional(attributes, 'toolgate.decision.id', rec.id)
  optional(attributes, 'toolgate.dialect', rec.dialect)
  optional(attributes, 'toolgate.config.hash', rec.configHash)
  callerAttributes(attributes, rec, subject)
  const at = hrTimeOf(rec.time)
  const span = tracer.startSpan('toolgate.decision', { kind: api.SpanKind.INTERNAL, startTime: at, attributes }, api.ROOT_CONTEXT)
  span.setStatus({ code: api.SpanStatusCode.ERROR, message: rec.message ?? rec.code })
  span.end(at)
  m.turnErrors.add(1, { 'error.type': rec.code })
}

/**
 * `toolgate.validation_errors`: the record's count when it carries one; `1` for an `invalid`
 * refusal without one (the record says only that there was at least one); `0` once the
 * arguments met the schema (allowed calls, and refusals later in the pipeline); absent where the
 * schema was never reached (`unknown_tool`, `bad_arguments`, `surface`, `token_invalid`).
 */
function validationErrorsOf(rec: DecisionRecord): number | undefined {
  if (typeof rec.validationErrors === 'number') return rec.validationErrors
  if (rec.reason === 'invalid') return 1
  if (rec.reason !== undefined && BEFORE_SCHEMA.has(rec.reason)) return undefined
  return 0
}

function optional(attributes: Attributes, key: string, value: string | undefined): void {
  if (typeof value === 'string') attributes[key] = value
}

/** Who called (`enduser.id`, `session.id`), only with `recordSubject`: the one place a span may name the caller. */
function callerAttributes(attributes: Attributes, rec: { sub?: string; session?: string }, subject: boolean): void {
  if (!subject) return
  optional(attributes, 'enduser.id', rec.sub)
  optional(attributes, 'session.id', rec.session)
}

/** The record's RFC 3339 time (ms precision) as an OpenTelemetry HrTime. */
function hrTimeOf(time: string): HrTime {
  const ms = Date.parse(time)
  if (!Number.isFinite(ms)) throw new Error(`a record with an unreadable time ${JSON.stringify(time)}`)
  return [Math.floor(ms / 1000), (ms % 1000) * 1_000_000]
}

function addMicros([s, ns]: HrTime, us: number): HrTime {
  const total = ns + Math.round(us * 1000)
  return [s + Math.floor(total / 1e9), total % 1e9]
}

function checkOptions(options: OtelAuditOptions): void {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new ToolGateError('E_CONFIG', `${WHERE}: options must be an object`)
  }
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) throw new ToolGateError('E_CONFIG', `${WHERE}: unknown option \`${key}\` (expected one of ${[...OPTION_KEYS].join(', ')})`)
  }
  const { tracer, tracerProvider, meter, meterProvider, recordSubject } = options
  if (tracer !== undefined && tracerProvider !== undefined) throw new ToolGateError('E_CONFIG', `${WHERE}: give \`tracer\` or \`tracerProvider\`, not both`)
  if (meter !== undefined && meterProvider !== undefined) throw new ToolGateError('E_CONFIG', `${WHERE}: give \`meter\` or \`meterProvider\`, not both`)
  expectMethod(tracer, 'tracer', 'startSpan')
  expectMethod(tracerProvider, 'tracerProvider', 'getTracer')
  expectMethod(meter, 'meter', 'createCounter')
  expectMethod(meterProvider, 'meterProvider', 'getMeter')
  if (recordSubject !== undefined && typeof recordSubject !== 'boolean') throw new ToolGateError('E_CONFIG', `${WHERE}: \`recordSubject\` must be a boolean`)
}

function expectMethod(value: unknown, name: string, method: string): void {
  if (value === undefined) return
  if (value === null || typeof value !== 'object' || typeof (value as Record<string, unknown>)[method] !== 'function') {
    throw new ToolGateError('E_CONFIG', `${WHERE}: \`${name}\` must be an OpenTelemetry ${name[0].toUpperCase()}${name.slice(1)} (with \`${method}\`)`)
  }
}

function loadApi(): OtelApi {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('@opentelemetry/api') as OtelApi
  } catch (err) {
    const missing = (err as { code?: unknown }).code === 'MODULE_NOT_FOUND' && String((err as Error).message).includes('@opentelemetry/api')
    throw new ToolGateError(
      'E_CONFIG',
      missing
        ? `${WHERE}: the package @opentelemetry/api is not installed; install @opentelemetry/api (1.x, tested with 1.9.0) and an OpenTelemetry SDK: npm install @opentelemetry/api`
        : `${WHERE}: @opentelemetry/api could not be loaded: ${(err as Error).message}`,
      { cause: err },
    )
  }
}

/** toolgate's own version, for the instrumentation scope (the package root is two levels up from both src-ts/adapters and dist/adapters). */
function ownVersion(): string | undefined {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const v = (require('../../package.json') as { version?: unknown }).version
    return typeof v === 'string' ? v : undefined
  } catch {
    return undefined
  }
}
