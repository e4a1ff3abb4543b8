// A model request's `tool_choice`, fitted to the tools the gate left in it: shared by the OpenAI and
// Anthropic client adapters and the HTTP proxy (through request-tools.ts). A choice that names a
// tool the filter removed would tell the model (or the API's error) the name of a tool this
// caller may not see, and force a call the gate would refuse; it is sent as `auto` instead, the
// choice that forces nothing. Which tools are left is `gate.filterTools`' answer; this only reads
// which of the host's named choices still name one of them.
import { isObj } from './json-object'
import type { RequestDialect } from './request-dialect'

type Obj = Record<string, unknown>

/** A rewritten `tool_choice` and why, for the host's log. */
export interface FittedToolChoice {
  /** What to send instead of the host's `tool_choice`. */
  toolChoice: unknown
  /** Why, naming the removed tool(s): for the host's log, never for the model. */
  why: string
}

/**
 * The `tool_choice` to send with the filtered tools `after` (the request's tools were `before`),
 * or `undefined` to send the host's own unchanged. A choice is rewritten only when it names a
 * tool (or, for Responses, a built-in tool type or MCP server) that was in `before` and is not in
 * `after`, or forces a call when nothing is left:
 *
 * - Chat Completions: `{ type: 'function' | 'custom', … name }` → `'auto'`; `allowed_tools` keeps
 *   the tools still offered (none left: `'auto'`).
 * - Responses: `{ type: 'function' | 'custom', name }`, a built-in (`{ type: 'web_search' }` …) or
 *   `{ type: 'mcp', server_label }` → `'auto'`; `allowed_tools` as for Chat; `'required'` with no
 *   tool left → `'auto'`.
 * - Anthropic: `{ type: 'tool', name }` → `{ type: 'auto' }` (keeping `disable_parallel_tool_use`);
 *   `{ type: 'any' }` with no tool left → the same.
 *
 * A choice naming a tool that was never in the request is left as it is (the API says what is
 * wrong with it, as it would without the gate). `after` may be given as a function answering
 * it, called only when the choice could be rewritten (`"auto"`, `"none"` never need it): the
 * HTTP proxy parses the filtered list only then.
 */
export function fitToolChoice(choice: unknown, before: unknown, after: unknown, dialect: RequestDialect): FittedToolChoice | undefined {
  if (choice === undefined || !Array.isArray(before)) return undefined
  let read: { list: unknown } | undefined
  // the tools left, read once when first needed; not a list: nothing is rewritten (every rewrite
  // below reads it)
  const left = (): unknown[] | undefined => {
    read ??= { list: typeof after === 'function' ? (after as () => unknown)() : after }
    return Array.isArray(read.list) ? read.list : undefined
  }
  const noneLeft = (): boolean => left()?.length === 0
  const removed = (spec: Obj): boolean => before.some((t) => matches(spec, t, dialect)) && left()?.some((t) => matches(spec, t, dialect)) === false
  if (dialect === 'anthropic') {
    if (!isObj(choice)) return undefined
    const auto = (): Obj => (choice.disable_parallel_tool_use === undefined ? { type: 'auto' } : { type: 'auto', disable_parallel_tool_use: choice.disable_parallel_tool_use })
    if (choice.type === 'tool' && removed(choice)) return { toolChoice: auto(), why: `tool_choice named \`${String(choice.name)}\`, which this caller may not call: sent as {"type":"auto"}` }
    if (choice.type === 'any' && noneLeft() && before.length > 0) return { toolChoice: auto(), why: 'tool_choice "any" with no tool left for this caller: sent as {"type":"auto"}' }
    return undefined
  }
  if (choice === 'required') {
    return noneLeft() && before.length > 0 ? { toolChoice: 'auto', why: 'tool_choice "required" with no tool left for this caller: sent as "auto"' } : undefined
  }
  if (!isObj(choice)) return undefined
  if (choice.type === 'allowed_tools') {
    const inner = dialect === 'openai' ? choice.allowed_tools : choice
    if (!isObj(inner) || !Array.isArray(inner.tools)) return undefined
    const specs = inner.tools as unknown[]
    const gone = specs.filter((t) => isObj(t) && removed(t))
    if (gone.length === 0) return undefined
    const names = gone.map((t) => `\`${nameOf(t as Obj, dialect)}\``).join(', ')
    const left = specs.filter((t) => !gone.includes(t))
    if (left.length === 0) return { toolChoice: 'auto', why: `tool_choice allowed only ${names}, which this caller may not call: sent as "auto"` }
    const kept = { ...inner, tools: left }
    return { toolChoice: dialect === 'openai' ? { ...choice, allowed_tools: kept } : kept, why: `tool_choice allowed_tools lost ${names}, which this caller may not call` }
  }
  if (removed(choice)) return { toolChoice: 'auto', why: `tool_choice named \`${nameOf(choice, dialect)}\`, which this caller may not call: sent as "auto"` }
  return undefined
}

/** Whether the choice `spec` names the tool definition `tool`. */
function matches(spec: Obj, tool: unknown, dialect: RequestDialect): boolean {
  if (!isObj(tool)) return false
  if (dialect === 'anthropic') return typeof spec.name === 'string' && tool.name === spec.name
  if (dialect === 'openai') {
    const kind = typeof spec.type === 'string' ? spec.type : 'function'
    const name = (spec[kind] as Obj | undefined)?.name
    const toolKind = typeof tool.type === 'string' ? tool.type : 'function'
    return typeof name === 'string' && toolKind === kind && (tool[kind] as Obj | undefined)?.name === name
  }
  if (spec.type === 'function' || spec.type === 'custom') return typeof spec.name === 'string' && tool.type === spec.type && tool.name === spec.name
  if (spec.type === 'mcp') return tool.type === 'mcp' && tool.server_label === spec.server_label
  return typeof spec.type === 'string' && tool.type === spec.type
}

/** The name a choice gives, for the log. */
function nameOf(spec: Obj, dialect: RequestDialect): string {
  if (dialect === 'openai') {
    const kind = typeof spec.type === 'string' ? spec.type : 'function'
    return String((spec[kind] as Obj | undefined)?.name)
  }
  if (spec.type === 'mcp') return `mcp:${String(spec.server_label)}`
  return String(spec.name ?? spec.type)
}
