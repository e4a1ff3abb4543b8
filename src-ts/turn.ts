// Conversion only: a turn payload to JSON text for the binding, and the binding's report wire
// (crates/toolgate-wire, `report_with_patches`) to a TurnReport. Every decision is the core's.
import { ToolGateError } from './errors'
import type { Dialect, Flag, Outcome, Reason, TurnCall, TurnReport, TurnRefusal, ProviderExecutedCall } from './types'

interface WireCall {
  callId: string
  tool: string
  outcome: Outcome
  argumentsJson?: string
  flags: Flag[]
  message?: string
  reason?: Reason
  action?: string
  resource?: string
  confirmation?: TurnCall['confirmation']
  /** Stage one of a gate with engines: the rules' answer the engines are asked about. */
  engine?: string
  receipt?: string
  shadow?: boolean
  wouldBe?: Reason
}

/** A repair to write into the caller's payload: `calls[call]`'s arguments at `path` (as JSON text when `asText`). */
interface WirePatch {
  call: number
  path: (string | number)[]
  asText: boolean
}

interface WireReport {
  dialect: Dialect
  calls: WireCall[]
  /** A stream's report carries its payload; `guard`'s carries `patches` to the caller's own. */
  payload?: unknown
  patches?: WirePatch[]
  feedback: TurnReport['feedback']
  providerExecuted: ProviderExecutedCall[]
  /** Absent when empty. */
  turnRefusals?: TurnRefusal[]
}

/**
 * JSON text of `value` as the core will read it (text is taken as it is), or why there is none:
 * a value that cannot be JSON (a cycle, a BigInt, a function) or text holding a lone UTF-16
 * surrogate, which cannot cross into UTF-8 unchanged (the gate would read U+FFFD where the host
 * holds the original). Shared by `check` (which refuses the call) and `guard`/`filterTools`/
 * streams (which throw).
 */
export function jsonText(value: unknown): string | { unreadable: string } {
  let text: string | undefined
  if (typeof value === 'string') {
    text = value
  } else {
    try {
      text = JSON.stringify(value)
    } catch (err) {
      return { unreadable: (err as Error).message }
    }
    if (typeof text !== 'string') return { unreadable: `a ${typeof value} is not JSON` }
    // JSON.stringify writes Infinity and NaN as null, so the gate would decide on null while the
    // tool runs with Infinity (a model's `1e999` parsed by an SDK): refused, as text `1e999` is.
    // Only a text holding `null` can hide one, so the common case pays one scan.
    if (text.includes('null') && hasNonFinite(value)) return { unreadable: 'a number is Infinity or NaN, which JSON cannot hold' }
  }
  return text.isWellFormed() ? text : { unreadable: 'the text holds a lone UTF-16 surrogate' }
}

/** Whether serializing `value` meets a non-finite number (walked as JSON.stringify walks it: toJSON, own enumerable keys). */
function hasNonFinite(value: unknown): boolean {
  let found = false
  JSON.stringify(value, (_k, v: unknown) => {
    if (typeof v === 'number' && !Number.isFinite(v)) found = true
    return found ? undefined : v
  })
  return found
}

/** JSON text of a payload given as text or as a parsed value; `E_PAYLOAD` when there is none (see {@link jsonText}). */
export function payloadText(payload: unknown, what: string): string {
  const text = jsonText(payload)
  if (typeof text !== 'string') throw new ToolGateError('E_PAYLOAD', `${what}: cannot be read as JSON (${text.unreadable})`)
  return text
}

function readCall(c: WireCall): TurnCall {
  let v: TurnCall
  if (c.argumentsJson !== undefined) {
    const args = JSON.parse(c.argumentsJson) as Record<string, unknown>
    v = { callId: c.callId, outcome: c.outcome, allowed: true, tool: c.tool, arguments: args, argumentsJson: c.argumentsJson, flags: c.flags }
  } else {
    v = { callId: c.callId, outcome: c.outcome, allowed: false, tool: c.tool, flags: c.flags, reason: c.reason, message: c.message }
  }
  return addFacts(v, c)
}

/** Policy facts of a decision on the wire (a verdict's, or a turn call's). */
export interface Facts {
  action?: string
  resource?: string
  confirmation?: TurnCall['confirmation']
  receipt?: string
  shadow?: boolean
  wouldBe?: Reason
  /** Stage one only: the rules' answer the engines are asked about. */
  engine?: string
}

/**
 * Copies the facts a decision shows (`action`, `resource`, `confirmation`, `receipt`,
 * `shadow`/`wouldBe`) from the wire onto `v` — never the engine question, which is internal.
 */
export function addFacts<V extends Facts>(v: V, f: Facts): V {
  if (f.action !== undefined) v.action = f.action
  if (f.resource !== undefined) v.resource = f.resource
  if (f.confirmation !== undefined) v.confirmation = f.confirmation
  if (f.receipt !== undefined) v.receipt = f.receipt
  if (f.shadow) {
    v.shadow = true
    v.wouldBe = f.wouldBe
  }
  return v
}

/**
 * A call of a turn decided up to the plugged engines that they must be asked about
 * (`toolgate_wire::questions`): its position in the turn, the tool, the arguments it runs with
 * if allowed, what policy was asked and the rules' answer.
 */
export interface EngineQuestion {
  index: number
  tool: string
  arguments: Record<string, unknown>
  action?: string
  resource?: string
  engine: string
}

/** Reads the questions of a turn kept for the engines (what `guardStep` answers after its handle), in payload order. */
export function readQuestionsWire(wire: string): EngineQuestion[] {
  return JSON.parse(wire) as EngineQuestion[]
}

/** Parses a report wire (`toolgate_wire::report_with_patches`). */
function parseTurnWire(wire: string): WireReport {
  return JSON.parse(wire) as WireReport
}

/** Reads a JSON array of calls in the per-call wire (`toolgate_wire::calls`), e.g. a stream's `push` answer. */
export function readCallsWire(wire: string): TurnCall[] {
  return (JSON.parse(wire) as WireCall[]).map(readCall)
}

/** Answers the object it is given from its constructor, so a subclass's private field lands on that object. */
class Stamp {
  constructor(o: object) {
    // biome-ignore lint/correctness/noConstructorReturn: the point: the subclass's field goes on `o`
    return o as Stamp
  }
}

/**
 * The mark of every report the gate made (`guard`, `guardAsync`, a stream's `end`): a private
 * field stamped on the plain report object (its prototype untouched), which no other value can
 * carry — not a copy, not a proxy — and which also holds what its lazy `payload` needs. A
 * WeakSet and a hidden symbol property did the same for 0.5–2 µs more per turn.
 */
class MadeByGate extends Stamp {
  #lazy: LazyPayload | undefined

  constructor(report: object, lazy: LazyPayload | undefined) {
    super(report)
    this.#lazy = lazy
  }

  static has(v: object): boolean {
    return #lazy in v
  }

  static lazy(v: object): LazyPayload | undefined {
    return MadeByGate.has(v) ? (v as MadeByGate).#lazy : undefined
  }
}

/** Whether `v` is a report the gate made — never judged by shape (an upstream answer can carry any keys). */
export function isGateReport(v: unknown): v is TurnReport {
  return typeof v === 'object' && v !== null && MadeByGate.has(v)
}

/** Builds the public report from the binding's wire (text, or parsed by {@link parseTurnWire}); `original` is the payload as the caller gave it. */
export function readTurnWire(wire: string, original: unknown, text: string): TurnReport {
  const w = parseTurnWire(wire)
  const calls: TurnCall[] = w.calls.map(readCall)
  const allowed: TurnReport['allowed'] = []
  for (const c of calls) {
    if (c.allowed) allowed.push({ callId: c.callId, tool: c.tool, arguments: c.arguments! })
  }
  const report = { dialect: w.dialect, calls, allowed, feedback: w.feedback, providerExecuted: w.providerExecuted, turnRefusals: w.turnRefusals ?? [] } as TurnReport
  if ('payload' in w) {
    report.payload = w.payload
    new MadeByGate(report, undefined)
  } else {
    // Built on first read: most hosts use `allowed` and `feedback` and never pay for it. The
    // descriptor is shared (no closure per report); what it needs sits in the report's mark.
    new MadeByGate(report, { original, text, patches: w.patches ?? [], calls })
    Object.defineProperty(report, 'payload', LAZY_PAYLOAD)
  }
  return report
}

interface LazyPayload {
  original: unknown
  text: string
  patches: WirePatch[]
  calls: TurnCall[]
}

function settle(report: object, value: unknown): unknown {
  Object.defineProperty(report, 'payload', { value, enumerable: true, writable: true, configurable: true })
  return value
}

/** `payload` as an own enumerable property computed on first read (then a plain data property). */
const LAZY_PAYLOAD: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  get(this: object) {
    const l = MadeByGate.lazy(this)!
    return settle(this, patchedPayload(l.original, l.text, l.patches, l.calls))
  },
  set(this: object, value: unknown) {
    settle(this, value)
  },
}

/**
 * The payload with the core's repairs written in: the caller's own value when there are none
 * (parsed, when it was text), else a fresh parse of the text the core read with each patch set.
 */
function patchedPayload(original: unknown, text: string, patches: WirePatch[], calls: TurnCall[]): unknown {
  if (patches.length === 0) return typeof original === 'string' ? JSON.parse(text) : original
  let root = JSON.parse(text) as unknown
  for (const p of patches) {
    const json = calls[p.call].argumentsJson!
    if (p.path.length === 0) {
      root = p.asText ? json : JSON.parse(json)
      continue
    }
    let parent = root as Record<string | number, unknown>
    for (let i = 0; i < p.path.length - 1; i++) parent = parent[p.path[i]] as Record<string | number, unknown>
    parent[p.path[p.path.length - 1]] = p.asText ? json : JSON.parse(json)
  }
  return root
}
