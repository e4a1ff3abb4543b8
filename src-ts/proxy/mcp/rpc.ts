// JSON-RPC as the MCP proxy writes and passes it: the error answers it makes itself, the ids it
// routes by, and the checks that let a line go on as the peer wrote it (one `id`, one
// `arguments`, one line to every reader) rather than re-encoded from the parsed message.
import { valueSpan } from '../json-span'
import type { RpcId } from './jsonrpc-lines'

/** A JSON-RPC message as the proxy reads it: a plain object. */
export type Msg = Record<string, unknown>

/** JSON-RPC error codes the proxy itself answers with. */
export const PARSE_ERROR = -32700
export const INVALID_REQUEST = -32600
/** The MCP SDK's `ConnectionClosed`: the server went away before answering. */
export const CONNECTION_CLOSED = -32000
/** The proxy's own bound was reached (held messages, requests in flight): the request was not forwarded. */
export const OVERLOADED = -32001

/** What the requests counted against `maxPending` are, as refusals name them. */
export const OPEN_WHY = 'in flight, or cancelled and not yet answered by the server'

/** A JSON-RPC id the proxy routes by: a string, or an integer. */
export const isId = (v: unknown): v is RpcId => typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v))

/** A JSON-RPC error answer the proxy writes itself. */
export function rpcError(id: RpcId | null, code: number, message: string): Msg {
  return { jsonrpc: '2.0', id, error: { code, message } }
}

/**
 * Whether a server line may be passed on as it came: the key `"id"` written once, no `\u`
 * escape (which could spell another), and no carriage return (see {@link oneLine}). A line with two `id` members could be read by the client
 * with the first and by the proxy with the last; such lines (and any with escapes) are written
 * from the parsed message instead, so the client reads the id the proxy routed by.
 */
export function oneId(line: string): boolean {
  const i = line.indexOf('"id"')
  return i === line.lastIndexOf('"id"') && !line.includes('\\u') && oneLine(line)
}

/**
 * Whether `text`, one line to this proxy's reader (split at `\n` only, as the MCP stdio transport
 * says), is one line to every reader: it holds no carriage return. JSON reads a bare `\r` as
 * whitespace, so a line may hold `\r{…another message…}\r` between two tokens and still parse as
 * the one message the gate decided — but a reader splitting at `\r` too (Python's text streams in
 * universal-newline mode, as the official Python SDK's stdio server reads; Java's and .NET's
 * `readLine`) reads the message between them, which the gate never saw. Such text is never passed
 * on as it came: it is written from the parsed message (whose serializer escapes every `\r`).
 */
export function oneLine(text: string): boolean {
  return !text.includes('\r')
}

/**
 * Where the `arguments` object of a `tools/call` the gate decided stands in its text, for a
 * message that has `params.arguments` (`text` is what the gate read: its strict parse refused any
 * key written twice): found only when the text names `"arguments"` once and holds no `\u` escape
 * (which could spell it), so that one occurrence is `params.arguments`'s key; from its `{` to its
 * `}`. `undefined` otherwise (the caller then re-encodes the whole message from the decision).
 */
export function argumentsAt(text: string): { start: number; end: number } | undefined {
  const key = text.indexOf('"arguments"')
  if (key < 0 || key !== text.lastIndexOf('"arguments"') || text.includes('\\u')) return undefined
  return valueSpan(text, key + 11, '{')
}

/** A request id as the log and the error messages name it (a string quoted, and clipped). */
export function idText(id: RpcId): string {
  return typeof id === 'number' ? String(id) : clip(JSON.stringify(id))
}

/** `s`, cut to 200 characters for a log line or an error message. */
export function clip(s: string): string {
  return s.length > 200 ? `${s.slice(0, 200)}…` : s
}
