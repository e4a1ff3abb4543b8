// The tool-call parts of a model answer as a client would run them: every place in a Chat
// Completions message, a Messages `content` list or a Responses `output` list where an SDK finds
// a call to execute, in payload order, read the way the gate's codecs name them (the tool, the
// wire id). The HTTP proxy lines these up with the gate's report position by position, so a part
// the codec did not decide — or one an SDK could read two ways — is never passed on. Shapes only:
// which call runs is the gate's decision.
import { isObj } from '../../json-object'
import { ToolGateError } from '../../errors'
import type { RequestDialect } from '../../request-dialect'

type Obj = Record<string, unknown>

/** The model APIs whose answers are read here. */
export type AnswerDialect = RequestDialect

/**
 * How a part carries its call, which fixes how it is re-encoded: `function` / `custom` (Chat
 * `tool_calls[]` entries), `legacy` (Chat `function_call`), `tool_use` (a Messages block),
 * `text` (a Responses `function_call` / `custom_tool_call`, arguments as text), `builtin` (a
 * Responses item the host runs, its action as a value).
 */
export type PartShape = 'function' | 'custom' | 'legacy' | 'tool_use' | 'text' | 'builtin'

/** One tool-call part of an answer. */
export interface CallPart {
  shape: PartShape
  /** The wire `type` (`function`, `custom`, `tool_use`, `function_call`, `computer_call` …; `function` for a legacy call). */
  type: string
  /** The tool as the gate names it (Responses: `namespace.name` when the call names a namespace; built-ins: the item type). */
  tool: string
  /** The bare `name` member (`undefined` for built-ins). */
  name: string | undefined
  /** Responses: the `namespace` member, when a non-empty one is given. */
  namespace: string | undefined
  /** The wire id (Chat `id`, Messages `id`, Responses `call_id`); `undefined` for a legacy `function_call`. */
  id: string | undefined
  /** The member holding the arguments (`arguments`, `input`, `action`, `operation` …). */
  member: string
  /** The part itself. */
  part: Obj
}

/** Responses item types the server runs itself (as the gate's codec lists them). */
export const SERVER_ITEMS: ReadonlySet<string> = new Set([
  'web_search_call', 'file_search_call', 'code_interpreter_call', 'image_generation_call', 'mcp_call', 'mcp_approval_request', 'program',
])
/** Responses built-in items the host runs, and the member holding their action. */
const CLIENT_BUILTINS: Readonly<Record<string, string>> = {
  computer_call: 'action', local_shell_call: 'action', shell_call: 'action', apply_patch_call: 'operation', tool_search_call: 'arguments',
}

function refuse(dialect: AnswerDialect, where: string, what: string): never {
  throw new ToolGateError('E_PAYLOAD', `${dialect} answer at \`${where}\`: ${what}`)
}

function wireId(dialect: AnswerDialect, where: string, v: unknown, member: string): string {
  if (typeof v !== 'string' || v === '') refuse(dialect, where, `a tool call without a non-empty string \`${member}\` (calls are answered by id; an empty or missing one is ambiguous)`)
  return v
}

function nameOf(dialect: AnswerDialect, where: string, body: Obj): string {
  if (typeof body.name !== 'string') refuse(dialect, where, 'a tool call without a string `name`')
  return body.name
}

/**
 * A Responses output item as the host sees it: a `text` call (`function_call`,
 * `custom_tool_call`), a `builtin` call (the host runs it: `computer_call`, `shell_call` …, a
 * client `tool_search_call`, any other `*_call` carrying a `call_id`), or `undefined` (messages,
 * reasoning, items the server ran). Mirrors the gate's Responses codec.
 */
export function responsesCallShape(item: Obj): 'text' | 'builtin' | undefined {
  const t = item.type
  if (typeof t !== 'string') return undefined
  if (t === 'function_call' || t === 'custom_tool_call') return 'text'
  if (t === 'tool_search_call' && item.execution !== 'client') return undefined
  if (SERVER_ITEMS.has(t)) return undefined
  if (Object.hasOwn(CLIENT_BUILTINS, t)) return 'builtin'
  if (t.endsWith('_call') && item.call_id !== undefined && item.call_id !== null) return 'builtin'
  return undefined
}

/** The member of a Responses call item holding what runs (as the gate's codec picks it). */
export function responsesMember(item: Obj): string {
  const t = String(item.type)
  if (t === 'function_call') return 'arguments'
  if (t === 'custom_tool_call') return 'input'
  if (t === 'computer_call' && !('action' in item) && 'actions' in item) return 'actions'
  if (Object.hasOwn(CLIENT_BUILTINS, t)) return CLIENT_BUILTINS[t]
  return ['arguments', 'action', 'input', 'operation'].find((k) => k in item) ?? 'arguments'
}

/** One Responses item as a call part (`where` names it in errors), or `undefined` when the host runs nothing for it. */
export function responsesPart(item: Obj, where: string): CallPart | undefined {
  const d: AnswerDialect = 'openai-responses'
  const shape = responsesCallShape(item)
  if (shape === undefined) return undefined
  const type = String(item.type)
  const id = wireId(d, where, item.call_id, 'call_id')
  if (shape === 'builtin') return { shape, type, tool: type, name: undefined, namespace: undefined, id, member: responsesMember(item), part: item }
  const name = nameOf(d, where, item)
  if (item.namespace !== undefined && item.namespace !== null && typeof item.namespace !== 'string') refuse(d, where, '`namespace` is not a string')
  const namespace = typeof item.namespace === 'string' && item.namespace !== '' ? item.namespace : undefined
  return { shape, type, tool: namespace === undefined ? name : `${namespace}.${name}`, name, namespace, id, member: responsesMember(item), part: item }
}

/** One Messages content block as a call part, or `undefined` for any block the host does not run. */
export function messagesPart(block: unknown, where: string): CallPart | undefined {
  if (!isObj(block) || block.type !== 'tool_use') return undefined
  const d: AnswerDialect = 'anthropic'
  const id = wireId(d, where, block.id, 'id')
  const name = nameOf(d, where, block)
  return { shape: 'tool_use', type: 'tool_use', tool: name, name, namespace: undefined, id, member: 'input', part: block }
}

/**
 * One Chat Completions `tool_calls[]` entry as a call part. Refused as ambiguous: a `type` other
 * than `function` / `custom`, an entry carrying both a `function` and a `custom` member (clients
 * differ on which one they run), or one whose member for its type is missing.
 */
export function chatPart(entry: unknown, where: string): CallPart {
  const d: AnswerDialect = 'openai'
  if (!isObj(entry)) refuse(d, where, 'a tool call that is not an object')
  const declared = entry.type
  if (declared !== undefined && declared !== null && declared !== 'function' && declared !== 'custom') refuse(d, where, `a tool call of type ${JSON.stringify(declared)?.slice(0, 40)} (only \`function\` and \`custom\` are read)`)
  const has = (k: string) => entry[k] !== undefined && entry[k] !== null
  if (has('function') && has('custom')) refuse(d, where, 'a tool call carrying both `function` and `custom` (clients differ on which one they run)')
  const type = declared === 'custom' ? 'custom' : 'function'
  if (declared !== 'custom' && has('custom')) refuse(d, where, 'a tool call of type `function` carrying a `custom` member')
  const body = entry[type]
  if (!isObj(body)) refuse(d, where, `a tool call of type \`${type}\` without a \`${type}\` object`)
  const name = nameOf(d, `${where}.${type}`, body)
  const id = wireId(d, where, entry.id, 'id')
  return { shape: type, type, tool: name, name, namespace: undefined, id, member: type === 'function' ? 'arguments' : 'input', part: entry }
}

/**
 * The messages of a Chat Completions answer the gate reads, as the codec finds them: each
 * `choices[].message` (a `choices` that is not an array, or a choice without a message object,
 * is refused), else the answer's `message`, else the answer itself.
 */
export function chatMessages(body: Obj): { message: Obj; choice: Obj | undefined; where: string }[] {
  const d: AnswerDialect = 'openai'
  if ('choices' in body) {
    if (!Array.isArray(body.choices)) refuse(d, 'choices', 'not an array')
    return body.choices.map((c, i) => {
      const where = `choices[${i}].message`
      if (!isObj(c) || !isObj(c.message)) refuse(d, `choices[${i}]`, 'a choice without a `message` object')
      return { message: c.message, choice: c, where }
    })
  }
  if (isObj(body.message) && !('role' in body)) return [{ message: body.message, choice: undefined, where: 'message' }]
  return [{ message: body, choice: undefined, where: '(answer)' }]
}

/**
 * The call parts of one Chat Completions message, in the codec's order: its `tool_calls[]`
 * entries, or its legacy `function_call`. A message carrying both (even an empty `tool_calls`
 * beside a `function_call`) is refused: the gate reads one, some clients run the other.
 */
export function chatMessageParts(message: Obj, where: string): CallPart[] {
  const d: AnswerDialect = 'openai'
  const tc = message.tool_calls
  const fc = message.function_call
  const hasTc = tc !== undefined && tc !== null
  const hasFc = fc !== undefined && fc !== null
  if (hasTc && hasFc) refuse(d, where, 'a message carrying both `tool_calls` and a legacy `function_call`')
  if (hasTc) {
    if (!Array.isArray(tc)) refuse(d, `${where}.tool_calls`, 'not an array')
    return tc.map((e, j) => chatPart(e, `${where}.tool_calls[${j}]`))
  }
  if (!hasFc) return []
  if (!isObj(fc)) refuse(d, `${where}.function_call`, 'not an object')
  const name = nameOf(d, `${where}.function_call`, fc)
  return [{ shape: 'legacy', type: 'function', tool: name, name, namespace: undefined, id: undefined, member: 'arguments', part: fc }]
}

/**
 * Every call part of a whole answer (`body`, parsed by the proxy itself: what the client will
 * parse), in payload order. Throws `E_PAYLOAD` for an ambiguous part, an id that is empty or
 * missing, or two calls sharing an id.
 */
export function answerCallParts(dialect: AnswerDialect, body: Obj): CallPart[] {
  const out: CallPart[] = []
  if (dialect === 'openai') {
    for (const { message, where } of chatMessages(body)) out.push(...chatMessageParts(message, where))
  } else if (dialect === 'anthropic') {
    if (Array.isArray(body.content)) body.content.forEach((b, i) => {
      const p = messagesPart(b, `content[${i}]`)
      if (p) out.push(p)
    })
    else if (typeof body.content !== 'string') refuse(dialect, 'content', 'expected an array of blocks or a string')
  } else {
    if (!Array.isArray(body.output)) refuse(dialect, 'output', 'expected an array of items')
    body.output.forEach((item, i) => {
      const p = isObj(item) ? responsesPart(item, `output[${i}]`) : undefined
      if (p) out.push(p)
    })
  }
  const seen = new Set<string>()
  for (const p of out) {
    if (p.id === undefined) continue
    if (seen.has(p.id)) refuse(dialect, '(tool calls)', `two tool calls share the id \`${p.id.slice(0, 80)}\``)
    seen.add(p.id)
  }
  return out
}
