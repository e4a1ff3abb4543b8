// A Cedar policy engine for `new ToolGate(config, { engines: [cedarEngine(…)] })`, on the
// `@cedar-policy/cedar-wasm` package. Optional: toolgate never loads that package unless
// `cedarEngine` is called (users install it themselves), and nothing here decides anything Cedar
// does not: this file maps a call to a Cedar request and Cedar's answer back to allow/deny/delegate.
import { createHash } from 'node:crypto'

import { ToolGateError } from '../errors'
import type { EngineAnswer, EngineRequest, PolicyEngine } from '../types'

/** A Cedar entity reference: `User::"alice"` is `{ type: 'User', id: 'alice' }`. */
export interface CedarEntityRef {
  type: string
  id: string
}

/** An entity in Cedar's JSON entity format (`attrs` values are Cedar JSON values). */
export interface CedarEntity {
  uid: CedarEntityUid
  attrs: Record<string, unknown>
  parents: CedarEntityUid[]
  tags?: Record<string, unknown>
}

/** An error as cedar-wasm reports it. */
export interface CedarError {
  message: string
  help?: string | null
  sourceLocations?: { start: number; end: number; label?: string | null }[]
}

type CedarCheck = { type: 'success' } | { type: 'failure'; errors: CedarError[] }
/** An entity reference as Cedar's JSON formats accept it: plain, or in an `__entity` escape. */
export type CedarEntityUid = CedarEntityRef | { __entity: CedarEntityRef }
/** A Cedar schema: Cedar schema text, or its JSON form. */
export type CedarSchema = string | Record<string, unknown>
type CedarScope = { op: string; entity?: unknown; entities?: unknown[] }

/**
 * The part of `@cedar-policy/cedar-wasm` (4.x; tested with 4.13.0) this adapter calls. The
 * package's `nodejs` build satisfies it: `require('@cedar-policy/cedar-wasm/nodejs')`.
 */
export interface CedarWasm {
  policySetTextToParts(text: string): { type: 'success'; policies: string[]; policy_templates: string[] } | { type: 'failure'; errors: CedarError[] }
  policyToJson(policy: string): { type: 'success'; json: { effect: 'permit' | 'forbid'; action: CedarScope; annotations?: Record<string, string | null> } } | { type: 'failure'; errors: CedarError[] }
  preparsePolicySet(id: string, policies: { staticPolicies?: unknown }): CedarCheck
  preparseSchema(name: string, schema: CedarSchema): CedarCheck
  validate(call: { schema: CedarSchema; policies: { staticPolicies?: unknown }; validationSettings?: { mode: 'strict' } }):
    | { type: 'success'; validationErrors: { policyId: string; error: CedarError }[] }
    | { type: 'failure'; errors: CedarError[] }
  checkParseEntities(call: { entities: CedarEntity[]; schema?: CedarSchema | null }): CedarCheck
  statefulIsAuthorized(call: {
    principal: CedarEntityUid
    action: CedarEntityUid
    resource: CedarEntityUid
    context: Record<string, unknown>
    entities: CedarEntity[]
    preparsedPolicySetId: string
    preparsedSchemaName?: string
    validateRequest?: boolean
  }):
    | { type: 'success'; response: { decision: string; diagnostics: { reason: string[]; errors: { policyId: string; error: CedarError }[] } } }
    | { type: 'failure'; errors: CedarError[] }
}

/** Options of {@link cedarEngine}. */
export interface CedarEngineOptions {
  /**
   * Cedar policies as text: `permit`/`forbid` statements. `@id("name")` names a policy in error
   * messages (else Cedar's `policy0`, `policy1` … in text order). Templates are not supported.
   */
  policies: string
  /**
   * Entities in Cedar's JSON format: a fixed list (checked at construction), or a function of
   * the request. A function returning a promise makes the engine asynchronous: use the gate's
   * `checkAsync`/`guardAsync`/`confirmAsync` (the sync methods throw `E_ASYNC`).
   */
  entities?: CedarEntity[] | ((request: EngineRequest) => CedarEntity[] | Promise<CedarEntity[]>)
  /**
   * A Cedar schema (text or JSON). When given, the policies are validated against it in strict
   * mode at construction, and each request, its context and the entities are checked against it
   * (a mismatch denies with reason `engine`); the schema must then declare the context below
   * (`options.context` can trim it). Cedar reads a `{ type, id }` record as an entity reference
   * where the schema types an attribute as an entity, so type arguments as records or strings.
   */
  schema?: CedarSchema
  /** The principal (default `User::"<context.subject>"`; no subject: `undefined`). `undefined` denies. */
  principal?: (request: EngineRequest) => CedarEntityRef | undefined
  /** The action (default `Action::"<action>"`). `undefined` denies. */
  action?: (request: EngineRequest) => CedarEntityRef | undefined
  /** The resource (default `Resource::"<resource>"`, or `Resource::"<tool>"` for a tool without one). `undefined` denies. */
  resource?: (request: EngineRequest) => CedarEntityRef | undefined
  /**
   * The Cedar context: receives the default one (see {@link cedarEngine}) and returns the one to
   * use, for example to add host facts or to match a schema. Its values pass the same conversion.
   */
  context?: (request: EngineRequest, defaults: Record<string, unknown>) => Record<string, unknown>
  /**
   * The answer when no Cedar policy is satisfied (Cedar's default deny): `'delegate'` (default:
   * the built-in rules' result stands) or `'deny'` (Cedar must permit every call).
   */
  unmatched?: 'delegate' | 'deny'
  /** The loaded cedar-wasm module; default `require('@cedar-policy/cedar-wasm/nodejs')`. */
  cedar?: CedarWasm
}

/** Keys that Cedar's JSON value format reads as entity or extension escapes, never data. */
const ESCAPES: ReadonlySet<string> = new Set(['__entity', '__extn', '__expr'])

/**
 * A JSON value as the Cedar value that holds it exactly: strings and booleans as they are, safe
 * integers (|n| ≤ 2^53 − 1, inside Cedar's `Long`) as they are, arrays as sets of their
 * converted elements, objects as records. A value Cedar cannot hold exactly is never dropped:
 * a fraction, an integer beyond 2^53 − 1 (JavaScript has already rounded it), a non-finite
 * number, `null`, or a key Cedar's JSON format reads as an escape (`__entity`, `__extn`,
 * `__expr`: a model must not forge an entity or extension value) throws, naming where it is, so
 * the gate denies the call (reason `engine`, `onEngineError` told). Map such values yourself in
 * `options.context` (to a string, a whole number of cents, or away) if a policy should see them.
 */
function cedarValue(v: unknown, at: string): unknown {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v
    case 'number':
      if (Number.isSafeInteger(v)) return v
      throw new Error(`cedarEngine: ${at} is ${String(v)}, which Cedar cannot hold exactly (${Number.isInteger(v) ? 'an integer beyond 2^53 - 1' : Number.isFinite(v) ? 'a fraction' : 'not a finite number'}); the call is denied`)
    case 'object':
      if (v === null) throw new Error(`cedarEngine: ${at} is null, which Cedar has no value for; the call is denied`)
      if (Array.isArray(v)) return v.map((e, i) => cedarValue(e, `${at}[${i}]`))
      return cedarRecord(v as Record<string, unknown>, at)
    default:
      throw new Error(`cedarEngine: ${at} is ${typeof v === 'undefined' ? 'undefined' : `a ${typeof v}`}, which Cedar has no value for; the call is denied`)
  }
}

function cedarRecord(o: Record<string, unknown>, at: string): Record<string, unknown> {
  // null prototype: a `__proto__` key stays data
  const out = Object.create(null) as Record<string, unknown>
  for (const k of Object.keys(o)) {
    if (o[k] === undefined) continue // not JSON: absent
    if (ESCAPES.has(k)) throw new Error(`cedarEngine: ${at} has the key ${k}, which Cedar would read as an entity or extension escape; the call is denied`)
    out[k] = cedarValue(o[k], `${at}.${k}`)
  }
  return out
}

/** The default Cedar context of a request (before conversion). */
function defaultContext(r: EngineRequest): Record<string, unknown> {
  const c = r.context ?? {}
  const ctx: Record<string, unknown> = {
    tool: r.tool,
    arguments: r.arguments,
    roles: Array.isArray(c.roles) ? c.roles : [],
    rules: r.rules,
    surface: c.surface ?? 'visitor',
  }
  if (typeof c.purpose === 'string') ctx.purpose = c.purpose
  if (c.identity !== undefined && c.identity !== null) ctx.identity = c.identity
  return ctx
}

function isRef(v: unknown): v is CedarEntityRef {
  return typeof v === 'object' && v !== null && typeof (v as CedarEntityRef).type === 'string' && typeof (v as CedarEntityRef).id === 'string'
}

function isThenable<T>(v: unknown): v is PromiseLike<T> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function'
}

/** `policies:3:14: message (help)`, offsets (UTF-8 bytes) turned into a line and column of `text`. */
function explain(errors: readonly CedarError[], where: string, text?: string): string {
  return errors
    .map((e) => {
      const at = e.sourceLocations?.[0]
      let pos = where
      if (at !== undefined && text !== undefined) {
        const before = Buffer.from(text, 'utf8').subarray(0, at.start).toString('utf8').split('\n')
        pos = `${where}:${before.length}:${before[before.length - 1].length + 1}`
      }
      const hint = [at?.label, e.help].filter((s) => typeof s === 'string' && s !== '').join('; ')
      return `${pos}: ${e.message}${hint === '' ? '' : ` (${hint})`}`
    })
    .join('\n')
}

function loadCedar(): CedarWasm {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('@cedar-policy/cedar-wasm/nodejs') as CedarWasm
  } catch (err) {
    const missing = (err as { code?: unknown }).code === 'MODULE_NOT_FOUND' && String((err as Error).message).includes('@cedar-policy/cedar-wasm')
    throw new ToolGateError(
      'E_CONFIG',
      missing
        ? 'cedarEngine: the package @cedar-policy/cedar-wasm is not installed; run `npm install @cedar-policy/cedar-wasm` (4.x, tested with 4.13.0) or pass the loaded module as `cedar`'
        : `cedarEngine: @cedar-policy/cedar-wasm could not be loaded: ${(err as Error).message}`,
      { cause: err },
    )
  }
}

const hash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 32)

/** The action ids a policy's scope names (`==`, `in`), for the warm-up. */
function scopeActions(scope: CedarScope): string[] {
  const refs = scope.entities ?? (scope.entity === undefined ? [] : [scope.entity])
  return refs.map((e) => (e as { __entity?: CedarEntityRef }).__entity ?? e).filter(isRef).map((e) => e.id)
}

/**
 * A {@link PolicyEngine} deciding with Cedar policies. It is synchronous (usable with
 * `gate.check`) unless `options.entities` returns a promise. Construction parses the policies
 * (and validates them against `options.schema` when given), checks fixed entities, caches the
 * parsed set inside cedar-wasm (keyed by a hash of the policies, so equal sets share one entry;
 * entries live as long as the process)
 * and runs a few throwaway decisions so Cedar's lazily compiled code is ready before the first
 * call counts against `engineTimeoutMs`; any problem throws `ToolGateError` `E_CONFIG` naming
 * the policy and line. It loads `@cedar-policy/cedar-wasm` only here, and only unless
 * `options.cedar` is given.
 *
 * Each call is asked as the Cedar request
 * - principal `User::"<context.subject>"` (no subject: the call is denied, so an anonymous caller
 *   cannot slip past a `forbid`; map anonymous callers with `options.principal` to let them in),
 * - action `Action::"<action>"`, resource `Resource::"<resource ?? tool>"`,
 * - context `{ tool, arguments, roles, rules, surface, purpose?, identity? }`: `roles` a set of
 *   strings (empty when none), `rules` the built-in rules' result (`"allow"` or `"no_rule"`),
 *   `surface` `"visitor"` unless the caller said `"operator"`; `purpose` and `identity` only when
 *   the caller gave them (test with `context has purpose`). `arguments` are the exact (repaired,
 *   pinned) arguments as Cedar values: strings, booleans and safe integers as they are, arrays as
 *   sets, objects as records. Nothing is dropped: a value Cedar cannot hold exactly (a fraction,
 *   an integer beyond 2^53 − 1, a non-finite number, `null`) or a key `__entity`/`__extn`/`__expr`
 *   (a model could otherwise forge an entity reference), anywhere in the context, makes the
 *   engine throw, which the gate turns into a deny (reason `engine`). Map such values in
 *   `options.context` when a policy should see them.
 *
 * Cedar's answer maps to the gate's:
 * - `allow` (a `permit` satisfied, no `forbid`) → `'allow'`: the call may run even where no
 *   built-in rule allowed it; a built-in `deny` rule is final and never reaches the engine;
 * - `deny` with a satisfied `forbid` → `'deny'` (reason `engine`), even over a built-in allow;
 * - `deny` because nothing was satisfied (Cedar's default deny) → `options.unmatched`
 *   (`'delegate'`: the built-in rules' result stands);
 * - a `forbid` whose condition errors (a missing attribute, a type mismatch …), or a request Cedar
 *   rejects (bad entities, a schema mismatch) → throws, which the gate turns into a deny (reason
 *   `engine`): Cedar alone would skip an erroring `forbid`, which fails open. An erroring `permit`
 *   is skipped, as Cedar does. The gate does not surface the thrown error; wrap the engine to log it.
 */
export function cedarEngine(options: CedarEngineOptions): PolicyEngine {
  if (typeof options !== 'object' || options === null || typeof options.policies !== 'string') {
    throw new ToolGateError('E_CONFIG', 'cedarEngine: `policies` must be Cedar policy text')
  }
  const cedar = options.cedar ?? loadCedar()
  for (const f of ['policySetTextToParts', 'policyToJson', 'preparsePolicySet', 'preparseSchema', 'validate', 'checkParseEntities', 'statefulIsAuthorized'] as const) {
    if (typeof cedar[f] !== 'function') throw new ToolGateError('E_CONFIG', `cedarEngine: the cedar-wasm module has no \`${f}\`; use @cedar-policy/cedar-wasm 4.x (tested with 4.13.0)`)
  }
  const unmatched = options.unmatched ?? 'delegate'
  if (unmatched !== 'delegate' && unmatched !== 'deny') throw new ToolGateError('E_CONFIG', `cedarEngine: \`unmatched\` must be 'delegate' or 'deny', got ${String(unmatched)}`)

  // one statement at a time, to know each policy's effect by the id we give it
  const parts = cedar.policySetTextToParts(options.policies)
  if (parts.type !== 'success') throw new ToolGateError('E_CONFIG', `cedarEngine: the policies do not parse:\n${explain(parts.errors, 'policies', options.policies)}`)
  if (parts.policy_templates.length > 0) throw new ToolGateError('E_CONFIG', 'cedarEngine: policy templates (`?principal`, `?resource`) are not supported; write static policies')
  // Cedar's own ids are policy0 … in text order; it lists the statements sorted by id as strings
  const autoIds = parts.policies.map((_, i) => `policy${i}`).sort()
  const texts: Record<string, string> = Object.create(null)
  const effects = new Map<string, 'permit' | 'forbid'>()
  const actions = new Set<string>()
  parts.policies.forEach((text, i) => {
    const json = cedar.policyToJson(text)
    if (json.type !== 'success') throw new ToolGateError('E_CONFIG', `cedarEngine: the policies do not parse:\n${explain(json.errors, 'policy', text)}`)
    const annotated = json.json.annotations?.id
    const id = typeof annotated === 'string' && annotated !== '' ? annotated : autoIds[i]
    if (effects.has(id)) throw new ToolGateError('E_CONFIG', `cedarEngine: two policies have the id "${id}"`)
    texts[id] = text
    effects.set(id, json.json.effect)
    for (const a of scopeActions(json.json.action)) actions.add(a)
  })

  const schema = options.schema
  let schemaName: string | undefined
  if (schema !== undefined) {
    const v = cedar.validate({ schema, policies: { staticPolicies: texts }, validationSettings: { mode: 'strict' } })
    if (v.type !== 'success') throw new ToolGateError('E_CONFIG', `cedarEngine: the schema or policies are invalid:\n${explain(v.errors, 'schema')}`)
    if (v.validationErrors.length > 0) {
      const lines = v.validationErrors.map((e) => explain([e.error], `policy "${e.policyId}"`, texts[e.policyId]))
      throw new ToolGateError('E_CONFIG', `cedarEngine: the policies do not validate against the schema:\n${lines.join('\n')}`)
    }
    schemaName = `toolgate:${hash(typeof schema === 'string' ? schema : JSON.stringify(schema))}`
    const s = cedar.preparseSchema(schemaName, schema)
    if (s.type !== 'success') throw new ToolGateError('E_CONFIG', `cedarEngine: the schema does not parse:\n${explain(s.errors, 'schema')}`)
  }
  const fixed = Array.isArray(options.entities) ? options.entities : undefined
  if (options.entities !== undefined && fixed === undefined && typeof options.entities !== 'function') {
    throw new ToolGateError('E_CONFIG', 'cedarEngine: `entities` must be an array of Cedar entities or a function returning one')
  }
  if (fixed !== undefined) {
    const e = cedar.checkParseEntities({ entities: fixed, schema: schema ?? null })
    if (e.type !== 'success') throw new ToolGateError('E_CONFIG', `cedarEngine: the entities are invalid:\n${explain(e.errors, 'entities')}`)
  }
  const setId = `toolgate:${hash(JSON.stringify(Object.entries(texts)))}`
  const pre = cedar.preparsePolicySet(setId, { staticPolicies: texts })
  if (pre.type !== 'success') throw new ToolGateError('E_CONFIG', `cedarEngine: the policies do not parse:\n${explain(pre.errors, 'policies')}`)

  const principalOf = options.principal ?? ((r: EngineRequest) => (typeof r.context?.subject === 'string' && r.context.subject !== '' ? { type: 'User', id: r.context.subject } : undefined))
  const actionOf = options.action ?? ((r: EngineRequest) => ({ type: 'Action', id: r.action }))
  const resourceOf = options.resource ?? ((r: EngineRequest) => ({ type: 'Resource', id: r.resource ?? r.tool }))
  const contextHook = options.context
  const entitiesOf = typeof options.entities === 'function' ? options.entities : undefined

  const authorize = (principal: CedarEntityRef, action: CedarEntityRef, resource: CedarEntityRef, context: Record<string, unknown>, entities: CedarEntity[]): EngineAnswer => {
    const answer = cedar.statefulIsAuthorized({ principal, action, resource, context, entities, preparsedPolicySetId: setId, preparsedSchemaName: schemaName, validateRequest: schemaName !== undefined })
    if (answer.type !== 'success') throw new Error(`cedar rejected the request:\n${explain(answer.errors, 'request')}`)
    const { decision, diagnostics } = answer.response
    for (const e of diagnostics.errors) {
      if (effects.get(e.policyId) !== 'permit') throw new Error(`cedar: forbid policy "${e.policyId}" could not be evaluated, so the call is denied: ${e.error.message}`)
    }
    if (decision === 'allow') return 'allow'
    if (decision !== 'deny') throw new Error(`cedar: unknown decision ${String(decision)}`)
    return diagnostics.reason.length > 0 ? 'deny' : unmatched
  }

  // Throwaway decisions through the real path: cedar-wasm compiles its code on first use
  // (100–300 ms here), which would otherwise land on the first calls and their timeout.
  for (const id of ['', ...[...actions].slice(0, 16)]) {
    try {
      const args = { s: 'x', n: 1, b: true, l: ['x', 1], r: { k: 'v' } }
      authorize({ type: 'User', id: '' }, { type: 'Action', id }, { type: 'Resource', id: '' }, cedarRecord({ ...defaultContext({ tool: '', action: id, arguments: args, context: {}, rules: 'no_rule' }), purpose: '' }, 'context'), fixed ?? [])
    } catch {
      // only the compiling matters
    }
  }

  return (request: EngineRequest) => {
    const principal = principalOf(request)
    const action = actionOf(request)
    const resource = resourceOf(request)
    if (principal === undefined || action === undefined || resource === undefined) return 'deny'
    for (const [what, ref] of [['principal', principal], ['action', action], ['resource', resource]] as const) {
      if (!isRef(ref)) throw new Error(`cedarEngine: \`${what}\` must give { type, id } strings`)
    }
    const defaults = defaultContext(request)
    const context = cedarRecord(contextHook === undefined ? defaults : contextHook(request, defaults), 'context')
    const entities = entitiesOf === undefined ? fixed ?? [] : entitiesOf(request)
    if (isThenable<CedarEntity[]>(entities)) return Promise.resolve(entities).then((e) => authorize(principal, action, resource, context, e))
    return authorize(principal, action, resource, context, entities)
  }
}
