// A model API request body's `tools`, filtered for a caller: shared by the OpenAI/Anthropic client
// adapters and the HTTP proxy, which both send a request the host wrote (the proxy must not
// depend on an adapter). The filtering itself is `gate.filterTools`; this only fits the body.
//
// `tools` is not the only member that gives the model tools. Some members make the provider run
// a hosted tool, or declare tools, outside `tools` (found by a survey of the request types of the
// `openai` and `@anthropic-ai/sdk` clients: chat.completions, responses and messages, beta
// included). Each is decided here by the gate, like the hosted tool it stands for, or refused:
//
// - a member standing for a hosted tool (HOSTED_MEMBERS) is kept only when the gate's filter
//   keeps that tool's name for this caller; otherwise it is removed (the rewrite told), or the
//   request refused when removing it would leave a request that means something else;
// - a tool list inside the request's items (Responses `input[]` `additional_tools` and
//   `tool_search_output`) is filtered like `tools`;
// - a member whose tools the gate cannot see (a stored prompt, legacy `functions`, an Anthropic
//   `tool_addition` block; for the proxy also server-held conversation state) refuses the
//   request, naming it.
//
// Which names a caller may see is always the gate's answer; the tables below only say which
// member stands for which hosted tool.
import { isObj } from './json-object'
import { ToolGateError } from './errors'
import type { ToolGate } from './gate'
import { fitToolChoice } from './request-tool-choice'
import type { RequestDialect } from './request-dialect'
import type { CallContext } from './types'

type Obj = Record<string, unknown>

/**
 * Members that make the provider run a hosted tool outside `tools`, by dialect: the name the
 * gate knows that tool by (the name the same tool is learned under in `tools`), and what to do
 * when this caller may not see it.
 *
 * - Chat Completions `web_search_options` is `web_search`. Refused when hidden: it only
 *   configures the search of the search models, which search whether or not it is sent (and
 *   other models reject it), so removing it would pretend a control it does not give.
 * - Anthropic `mcp_servers` (the MCP connector: Anthropic connects to each server and runs its
 *   tools) is `mcp`, the name Responses' `{ type: "mcp" }` is learned under. Removed when
 *   hidden: the request without it is the same request minus the servers' tools, as a hosted
 *   tool filtered out of `tools`.
 * - Anthropic `container` (a code-execution container, its `skills` loaded into it) is
 *   `code_execution`: skills run only through the code execution tool. Removed when hidden: the
 *   code execution tool is then filtered out of `tools` too, and a container without it holds
 *   nothing the model can use.
 */
const HOSTED_MEMBERS: Readonly<Record<RequestDialect, Readonly<Record<string, { tool: string; hidden: 'remove' | 'refuse' }>>>> = Object.freeze({
  openai: { web_search_options: { tool: 'web_search', hidden: 'refuse' } },
  'openai-responses': {},
  anthropic: { mcp_servers: { tool: 'mcp', hidden: 'remove' }, container: { tool: 'code_execution', hidden: 'remove' } },
})

/**
 * Members refused whatever the caller, with what to send instead: the tools they carry are
 * not in the request (a stored prompt) or not in a list the gate filters (legacy `functions`,
 * which the gate would have to learn and filter as a second tool list, with a second tool
 * choice: the API has taken `tools` for years, so the request is refused instead).
 */
const REFUSED_MEMBERS: Readonly<Record<RequestDialect, Readonly<Record<string, string>>>> = Object.freeze({
  openai: {
    functions: 'the legacy `functions` list is not filtered by the gate; send the functions as `tools` (`{ "type": "function", "function": … }`)',
    function_call: 'the legacy `function_call` is not fitted by the gate; send `tool_choice` (with the functions as `tools`)',
  },
  'openai-responses': {
    prompt: 'a stored prompt can carry tools the gate never sees; send its instructions and tools in the request',
  },
  anthropic: {},
})

/**
 * Members that replay server-held conversation state (stored items, which can declare tools:
 * Responses `additional_tools` items, Anthropic `tool_addition` blocks), refused by the HTTP
 * proxy, which cannot see that state, and whose callers are tenants who may name each other's.
 * An adapter's host holds its conversations itself and is trusted: these pass there.
 */
const REPLAYED_MEMBERS: Readonly<Record<RequestDialect, Readonly<Record<string, string>>>> = Object.freeze({
  openai: {},
  'openai-responses': {
    previous_response_id: 'a stored response can hold tool declarations the gate never sees; send the conversation\'s items in `input`',
    conversation: 'a stored conversation can hold tool declarations the gate never sees; send its items in `input`',
  },
  anthropic: {
    thread: 'a server-held thread can hold tool declarations the gate never sees; send the whole conversation in `messages`',
  },
})

/** Responses input items holding a `tools` list the model is offered (filtered like `tools`). */
const TOOL_LIST_ITEMS: ReadonlySet<string> = new Set(['additional_tools', 'tool_search_output'])

/**
 * Every member and item name this module reads (see {@link mentionsOutsideTools}), by dialect.
 */
const NAMES: Readonly<Record<RequestDialect, readonly string[]>> = Object.freeze({
  openai: [...Object.keys(HOSTED_MEMBERS.openai), ...Object.keys(REFUSED_MEMBERS.openai)],
  'openai-responses': [...Object.keys(REFUSED_MEMBERS['openai-responses']), ...Object.keys(REPLAYED_MEMBERS['openai-responses']), ...TOOL_LIST_ITEMS, 'item_reference'],
  anthropic: [...Object.keys(HOSTED_MEMBERS.anthropic), ...Object.keys(REPLAYED_MEMBERS.anthropic), 'tool_addition'],
})

/** A request refused for a member outside `tools`: its message names the member and what to send instead. */
export class RequestMemberRefused extends ToolGateError {
  constructor(message: string) {
    super('E_PAYLOAD', message)
  }
}

/** Who sends the request: the HTTP proxy (callers are tenants) or a client adapter (the host's own). */
export type RequestSender = 'proxy' | 'client'

/** What a request declares outside `tools` (see the file comment). */
export interface OutsideTools {
  /** Members standing for a hosted tool, in body order. */
  hosted: { member: string; tool: string; hidden: 'remove' | 'refuse' }[]
  /** Tool lists inside the items of Responses `input`, by item position. */
  lists: { index: number; tools: unknown }[]
}

const present = (v: unknown): boolean => v !== undefined && v !== null

/**
 * Whether a request body's text could hold a member or item {@link outsideTools} reads: one of
 * their names in quotes, or any `\u` escape (which could spell one). A text without either can
 * be read by no JSON parser as declaring tools outside `tools`, whatever it does with a key
 * written twice; one with them is sent upstream re-serialized from the parse that was decided on.
 */
export function mentionsOutsideTools(raw: string, dialect: RequestDialect): boolean {
  return raw.includes('\\u') || NAMES[dialect].some((n) => raw.includes(`"${n}"`))
}

/**
 * What `body` declares outside `tools`. Throws {@link RequestMemberRefused} naming the first
 * member the gate cannot see into (`null` counts as absent).
 */
export function outsideTools(dialect: RequestDialect, body: Obj, sender: RequestSender): OutsideTools {
  const out: OutsideTools = { hosted: [], lists: [] }
  for (const k of Object.keys(body)) {
    if (!present(body[k])) continue
    const why = REFUSED_MEMBERS[dialect][k] ?? (sender === 'proxy' ? REPLAYED_MEMBERS[dialect][k] : undefined)
    if (why !== undefined) throw new RequestMemberRefused(`request \`${k}\`: ${why}`)
    const hosted = HOSTED_MEMBERS[dialect][k]
    if (hosted !== undefined) out.hosted.push({ member: k, ...hosted })
  }
  if (dialect === 'openai-responses' && Array.isArray(body.input)) {
    body.input.forEach((item, i) => {
      if (!isObj(item)) return
      if (item.type === 'item_reference' && sender === 'proxy') throw new RequestMemberRefused(`request \`input[${i}]\`: an \`item_reference\` names a stored item, which can declare tools the gate never sees; send the item itself`)
      if (typeof item.type === 'string' && TOOL_LIST_ITEMS.has(item.type)) out.lists.push({ index: i, tools: item.tools })
    })
  }
  if (dialect === 'anthropic' && Array.isArray(body.messages)) {
    body.messages.forEach((m, i) => {
      if (!isObj(m) || !Array.isArray(m.content)) return
      m.content.forEach((b, j) => {
        if (isObj(b) && b.type === 'tool_addition') {
          throw new RequestMemberRefused(`request \`messages[${i}].content[${j}]\`: a \`tool_addition\` block offers a tool outside \`tools\`, which the gate does not filter; declare the tool in \`tools\``)
        }
      })
    })
  }
  return out
}

/** A one-tool list in `dialect`'s request shape naming `name`: how a hosted member is put to the gate's filter (and learned by the proxy). */
export function standInTool(dialect: RequestDialect, name: string): Obj {
  if (dialect === 'openai') return { type: 'function', function: { name } }
  if (dialect === 'anthropic') return { name }
  return { type: 'function', name }
}

/** The tool definitions `found` declares, in `dialect`'s request shape: what the proxy learns besides `tools`. */
export function outsideDefinitions(dialect: RequestDialect, found: OutsideTools): unknown[] {
  const defs: unknown[] = found.hosted.map((h) => standInTool(dialect, h.tool))
  for (const l of found.lists) if (Array.isArray(l.tools)) defs.push(...l.tools)
  return defs
}

/** The body's members outside `tools` as decided for the caller: members to leave out, a new `input`, and the rewrites to tell. */
export interface FittedOutside {
  /** Members removed from the body (hidden hosted members). */
  removed: ReadonlySet<string>
  /** Responses `input` with its items' tool lists filtered, when one changed. */
  input: unknown[] | undefined
  /** Why, for the host's log (never names a tool the caller may not see to the model). */
  why: string[]
}

/**
 * Decides `found` with the gate's filter for `context`: a hosted member is kept only when the
 * filter keeps its tool's name; a hidden one is removed or (see HOSTED_MEMBERS) refused with
 * {@link RequestMemberRefused}; each item's tool list is filtered. Throws as `filterTools` does.
 */
export function fitOutside(body: Obj, found: OutsideTools, gate: ToolGate, dialect: RequestDialect, context: CallContext): FittedOutside {
  const removed = new Set<string>()
  const why: string[] = []
  const opts = { ...context, dialect }
  for (const h of found.hosted) {
    const kept = gate.filterTools([standInTool(dialect, h.tool)], opts) as unknown[]
    if (kept.length === 1) continue
    if (h.hidden === 'refuse') throw new RequestMemberRefused(`request \`${h.member}\`: it enables the hosted tool \`${h.tool}\`, which this caller may not use; send the request without it`)
    removed.add(h.member)
    why.push(`\`${h.member}\` enables the hosted tool \`${h.tool}\`, which this caller may not use: removed`)
  }
  let input: unknown[] | undefined
  for (const l of found.lists) {
    const item = (body.input as unknown[])[l.index] as Obj
    // the filtered list always replaces the item's (the filter's answer is what goes out)
    const tools = gate.filterTools(l.tools, opts) as unknown[]
    input ??= [...(body.input as unknown[])]
    input[l.index] = { ...item, tools }
    if (JSON.stringify(tools) !== JSON.stringify(l.tools)) why.push(`input[${l.index}] (${String(item.type)}): tools this caller may not use removed`)
  }
  return { removed, input, why }
}

/**
 * The body with `tools` filtered for the caller (a copy; the caller's body is not touched). For
 * Chat Completions a list left empty is dropped with `tool_choice` and `parallel_tool_calls`.
 * A `tool_choice` naming a tool the filter removed (or forcing a call when none is left) is sent
 * as `auto` (see `fitToolChoice`); `onRewrite` hears why, for the host's log. Members outside
 * `tools` are decided as the file comment says (a refused one throws
 * {@link RequestMemberRefused}). Bodies declaring no tool come back as they are. Throws as
 * `gate.filterTools` does.
 */
export function filterBody(body: unknown, gate: ToolGate, dialect: RequestDialect, context: CallContext, onRewrite?: (why: string) => void): unknown {
  if (!isObj(body)) return body
  const found = outsideTools(dialect, body, 'client')
  const outside = found.hosted.length > 0 || found.lists.length > 0 ? fitOutside(body, found, gate, dialect, context) : undefined
  if (!Array.isArray(body.tools) && outside === undefined) return body
  const out: Obj = { ...body }
  if (outside !== undefined) {
    for (const m of outside.removed) delete out[m]
    if (outside.input !== undefined) out.input = outside.input
    for (const w of outside.why) onRewrite?.(w)
  }
  if (!Array.isArray(body.tools)) return out
  const tools = gate.filterTools(body.tools, { ...context, dialect }) as unknown[]
  out.tools = tools
  if (dialect === 'openai' && tools.length === 0 && body.tools.length > 0) {
    // Chat Completions refuses an empty `tools` list, and `tool_choice` without tools: a request
    // offering this caller no tool is one without them.
    delete out.tools
    delete out.tool_choice
    delete out.parallel_tool_calls
    return out
  }
  const fit = fitToolChoice(body.tool_choice, body.tools, tools, dialect)
  if (fit !== undefined) {
    out.tool_choice = fit.toolChoice
    onRewrite?.(fit.why)
  }
  return out
}
