// Tool schemas as TypeScript users write them: a tool's `inputSchema` may be a zod 4 schema, an AI
// SDK `jsonSchema()` / `zodSchema()` value, or any Standard Schema that exports JSON Schema; each is
// turned into JSON Schema once, when the gate is built, with the schema library's own exporter.
// Conversion only: what the gate accepts is then decided by the core on that JSON Schema. No
// schema library is imported here: a schema object carries its own exporter (zod 4 through its
// Standard JSON Schema face); only zod 4 builds without one (`zod/mini`) load `zod/v4/core`, lazily.
import { ToolGateError } from './errors'
import type { ToolConfig, ToolGateConfig } from './types'

/** Where the AI SDK marks its `Schema` values (`Symbol.for('vercel.ai.schema')` in `@ai-sdk/provider-utils`). */
const AI_SDK_SCHEMA = Symbol.for('vercel.ai.schema')

/** The JSON Schema dialect asked of exporters (zod's own default); the core also reads draft-07. */
const TARGET = 'draft-2020-12'

/**
 * A zod 4 schema, recognized by its `_zod` internals (zod's documented marker for library
 * authors); `zod` and `zod/mini` alike. Converted with zod's own exporter as
 * `z.toJSONSchema(schema, { io: 'input' })` would: the JSON Schema of what the model must send.
 */
export interface ZodSchemaLike {
  readonly _zod: object
}

/**
 * An AI SDK `Schema` (what `jsonSchema()` and `zodSchema()` from `ai` return): its `jsonSchema` is
 * read once. A `jsonSchema` that is a promise cannot be read by the synchronous constructor
 * (`E_CONFIG`): resolve it first and pass `jsonSchema(await …)`.
 */
export interface AiSdkSchemaLike {
  readonly jsonSchema: unknown
  readonly validate?: unknown
}

/**
 * A Standard Schema (zod 4, ArkType, Valibot …) that exports JSON Schema through the Standard JSON
 * Schema interface (`~standard.jsonSchema.input`).
 */
export interface StandardJsonSchemaLike {
  readonly '~standard': {
    readonly vendor: string
    readonly jsonSchema: { readonly input: (options: { target: 'draft-2020-12' | 'draft-07' }) => unknown }
  }
}

/**
 * What a tool's `inputSchema` may be: JSON Schema (an object, or `true`/`false`), a zod 4
 * schema, an AI SDK `Schema`, a Standard Schema with a JSON Schema export, or an AI SDK lazy
 * schema (a function returning a `Schema`). Everything but JSON Schema is converted once, when the
 * gate is built ({@link normalizeToolSchemas}).
 */
export type ToolInputSchema =
  | Record<string, unknown>
  | boolean
  | ZodSchemaLike
  | AiSdkSchemaLike
  | StandardJsonSchemaLike
  | (() => AiSdkSchemaLike)

// Hand-written over the generated config types (src-ts/config-types.generated.ts): schema objects
// of TypeScript libraries exist only before the config is JSON, so no JSON Schema (and nothing the
// Rust types could derive) describes them.
/** A {@link ToolConfig} whose `inputSchema` may be any {@link ToolInputSchema}. */
export type ToolConfigInput = Omit<ToolConfig, 'inputSchema'> & { inputSchema?: ToolInputSchema }

/** A {@link ToolGateConfig} whose tools' `inputSchema` may be any {@link ToolInputSchema}. */
export type ToolGateConfigInput = Omit<ToolGateConfig, 'tools'> & { tools: ToolConfigInput[] }

/**
 * Returns `config` with every tool's `inputSchema` as JSON Schema, converting, once:
 *
 * - a zod 4 schema with zod's own exporter, as `z.toJSONSchema(schema, { io: 'input' })` (draft
 *   2020-12): the schema of what the model must send. A transform's input side is kept
 *   (`z.string().transform(…)` is a string); refinements (`.refine`, `.superRefine`, custom
 *   checks) and transforms cannot be carried by JSON Schema, so the tool's own parse still runs
 *   after the gate. A type JSON Schema cannot represent (`z.date()`, `z.bigint()`, a bare
 *   `z.transform`, …) is `E_CONFIG`;
 * - an AI SDK `Schema` (`jsonSchema(…)`, `zodSchema(…)`) by reading its `jsonSchema` (a promise is
 *   `E_CONFIG`), or a lazy schema function by calling it first;
 * - another Standard Schema through `~standard.jsonSchema.input` (draft 2020-12, else draft-07).
 *
 * JSON Schema (a plain object, or a boolean) is kept as it is. Anything else — a zod 3 schema, a
 * Standard Schema without a JSON Schema export, a class instance — is `ToolGateError` `E_CONFIG`
 * naming the tool, never read as an (empty, allow-anything) JSON Schema. Pure: `config` is not
 * changed, and is returned itself when no tool needed converting. A value that is not a config
 * object is returned as it is (the gate names what is wrong with it).
 */
export function normalizeToolSchemas(config: ToolGateConfigInput): ToolGateConfig {
  if (config === null || typeof config !== 'object') return config
  const tools: unknown = (config as { tools?: unknown }).tools
  if (!Array.isArray(tools)) return config as ToolGateConfig
  let out: unknown[] | undefined
  tools.forEach((tool: unknown, i) => {
    if (tool === null || typeof tool !== 'object' || !('inputSchema' in tool)) return
    const schema = (tool as { inputSchema: unknown }).inputSchema
    if (schema === undefined || typeof schema === 'boolean' || isPlainJsonSchema(schema)) return
    const converted = toJsonSchema(schema, where(tool, i))
    out ??= [...tools]
    out[i] = { ...tool, inputSchema: converted }
  })
  return (out === undefined ? config : { ...config, tools: out }) as ToolGateConfig
}

/** `tool `name`: inputSchema` (the core's wording for schema errors), or `tools[i]: inputSchema`. */
function where(tool: object, i: number): string {
  const name = (tool as { name?: unknown }).name
  return `${typeof name === 'string' ? `tool \`${name}\`` : `tools[${i}]`}: inputSchema`
}

/**
 * A plain object (no prototype but Object's, or none) whose own JSON-visible keys carry no schema
 * library's marker. (zod's exporter hangs a non-enumerable `~standard` on the JSON Schema it
 * makes; that is still plain JSON Schema.)
 */
function isPlainJsonSchema(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) return false
  if ((value as Record<symbol, unknown>)[AI_SDK_SCHEMA] === true) return false
  return !MARKERS.some((k) => Object.prototype.propertyIsEnumerable.call(value, k))
}

/** Keys by which schema libraries' objects give themselves away (zod 4, zod 3, Standard Schema). */
const MARKERS = ['_zod', '_def', '~standard'] as const

/** The JSON Schema of one non-JSON `inputSchema`, or `E_CONFIG` saying why there is none. */
function toJsonSchema(schema: unknown, at: string): unknown {
  if (typeof schema === 'function') {
    // an AI SDK lazy schema (`lazySchema(…)`): a function returning a Schema
    let made: unknown
    try {
      made = (schema as () => unknown)()
    } catch (err) {
      throw fail(at, `the schema function threw (${message(err)})`, err)
    }
    if (!isAiSdkSchema(made)) throw fail(at, 'a function that does not return an AI SDK Schema (jsonSchema() / zodSchema())')
    return fromAiSdkSchema(made, at)
  }
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
    throw fail(at, `expected JSON Schema (an object or a boolean), a zod 4 schema or an AI SDK Schema, got ${schema === null ? 'null' : Array.isArray(schema) ? 'an array' : typeof schema}`)
  }
  if (isAiSdkSchema(schema)) return fromAiSdkSchema(schema, at)
  const standard = (schema as { '~standard'?: { vendor?: unknown; jsonSchema?: { input?: unknown } } })['~standard']
  const exporter = standard?.jsonSchema?.input
  if (typeof exporter === 'function') {
    return checked(exportStandard(exporter.bind(standard!.jsonSchema), at, standard?.vendor), at)
  }
  if ('_zod' in schema) return checked(fromZodCore(schema, at), at)
  if (standard !== undefined && standard.vendor === 'zod') {
    throw fail(at, "a zod 3 schema, which toolgate cannot convert: use zod 4, or wrap it with the AI SDK's zodSchema()")
  }
  if (standard !== undefined) {
    throw fail(at, `a Standard Schema (vendor \`${String(standard.vendor)}\`) without a JSON Schema export: pass its JSON Schema instead, or wrap it with the AI SDK's jsonSchema()`)
  }
  throw fail(at, `expected JSON Schema (a plain object or a boolean), a zod 4 schema or an AI SDK Schema, got ${describe(schema)}`)
}

function isAiSdkSchema(value: unknown): value is AiSdkSchemaLike {
  return value !== null && typeof value === 'object' && (value as Record<symbol, unknown>)[AI_SDK_SCHEMA] === true && 'jsonSchema' in value
}

function fromAiSdkSchema(schema: AiSdkSchemaLike, at: string): unknown {
  let json: unknown
  try {
    json = schema.jsonSchema // a getter: runs a lazy conversion (zodSchema()) the first time
  } catch (err) {
    throw fail(at, `the AI SDK schema's jsonSchema could not be made (${message(err)})`, err)
  }
  if (json !== null && typeof json === 'object' && typeof (json as { then?: unknown }).then === 'function') {
    throw fail(at, "the AI SDK schema's jsonSchema is a promise, which the gate cannot wait for when it is built: resolve it first and pass jsonSchema(await …)")
  }
  return checked(json, at)
}

function exportStandard(input: (o: { target: 'draft-2020-12' | 'draft-07' }) => unknown, at: string, vendor: unknown): unknown {
  try {
    return input({ target: TARGET })
  } catch (first) {
    try {
      return input({ target: 'draft-07' })
    } catch {
      throw fail(at, `${vendor === 'zod' ? 'zod' : `\`${String(vendor)}\``} cannot export it as JSON Schema (${message(first)})`, first)
    }
  }
}

/** zod 4 without the Standard JSON Schema face (`zod/mini`): zod's own `toJSONSchema`, loaded now. */
function fromZodCore(schema: object, at: string): unknown {
  let core: { toJSONSchema?: unknown }
  try {
    core = require('zod/v4/core') as { toJSONSchema?: unknown }
  } catch (err) {
    throw fail(at, `a zod 4 schema, but \`zod/v4/core\` cannot be loaded to convert it (install zod: npm install zod) (${message(err)})`, err)
  }
  if (typeof core.toJSONSchema !== 'function') throw fail(at, 'a zod 4 schema, but the installed zod has no toJSONSchema (zod 4 is needed)')
  try {
    return (core.toJSONSchema as (s: object, o: object) => unknown)(schema, { target: TARGET, io: 'input' })
  } catch (err) {
    throw fail(at, `zod cannot export it as JSON Schema (${message(err)})`, err)
  }
}

/** What an exporter made must itself be JSON Schema. */
function checked(json: unknown, at: string): unknown {
  if (typeof json === 'boolean' || isPlainJsonSchema(json)) return json
  throw fail(at, `the schema's JSON Schema export is not JSON Schema (got ${describe(json)})`)
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value !== 'object') return typeof value
  const ctor = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name
  return typeof ctor === 'string' && ctor !== 'Object' ? `an instance of ${ctor}` : 'an object with a schema library marker'
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

function fail(at: string, what: string, cause?: unknown): ToolGateError {
  return new ToolGateError('E_CONFIG', `${at}: ${what}`, cause === undefined ? undefined : { cause })
}
