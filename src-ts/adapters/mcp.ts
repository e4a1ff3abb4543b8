// toolgate/mcp: one line to gate an MCP server written with `@modelcontextprotocol/sdk`.
// Every `tools/call` goes through `gate.guardAsync` before the server's own handler (so repairs
// happen before McpServer validates the arguments with the tool's zod schema), and every
// `tools/list` answer through `gate.filterTools`. Nothing here decides anything: allowed or not,
// the arguments to run with, and the refusal's wire shape all come from the gate's TurnReport.
// The SDK is an optional peer dependency and is only ever imported for its types.
import type { JSONRPCRequest, RequestId, Result } from '@modelcontextprotocol/sdk/types.js'

import type { McpFeedback, McpListToolsResult } from '../dialects/mcp'
import { ToolGateError } from '../errors'
import { ToolGate } from '../gate'
import type { CallContext, TurnCall } from '../types'
import { interceptToolHandlers, lowLevelServer, type GateableMcpServer, type McpRequestExtra, type RawHandler } from './mcp-handlers'

export { toolsFromMcpServer, type McpToolDeclaration } from './mcp-tools'
export type { GateableMcpServer, McpLowLevelServer, McpRequestExtra } from './mcp-handlers'

/** What {@link gateMcpServer} tells `onVerdict` besides the verdict. */
export interface McpVerdictInfo {
  /** The JSON-RPC id of the `tools/call` request, as the client sent it. */
  requestId: RequestId
  /** The caller the verdict was decided for (what `subjectFrom` gave). */
  context: CallContext
  /** The SDK's request context (`authInfo`, `sessionId`, `requestInfo`, `signal` …). */
  extra: McpRequestExtra
}

/**
 * Who is calling, per request: a fixed `CallContext`, or a function of the SDK's request context
 * (`extra.authInfo` from the host's auth middleware, `extra.sessionId`, `extra.requestInfo` …)
 * returning one, or a promise of one.
 */
export type McpSubjectFrom = CallContext | ((extra: McpRequestExtra) => CallContext | Promise<CallContext>)

/** Options of {@link gateMcpServer}. Unknown keys are `E_CONFIG`. */
export interface GateMcpServerOptions {
  /**
   * The caller of each request, for policy, pins, loop and taint state. Absent: no caller (with
   * a `policy`, only rules that need no caller allow). State is scoped by the context's
   * `session`, else its `subject`: return `session: extra.sessionId` to scope it per MCP session.
   * A throw (or rejection) fails the request with a JSON-RPC error; nothing runs.
   */
  subjectFrom?: McpSubjectFrom
  /**
   * Told every `tools/call` verdict before anything runs or is answered: the host's log, and
   * the only place a `confirm` outcome's `verdict.confirmation.token` appears (the client gets
   * `verdict.message` only). Awaited when it returns a promise; a throw (or rejection) fails the
   * request with a JSON-RPC error and the tool does not run.
   */
  onVerdict?: (verdict: TurnCall, info: McpVerdictInfo) => void | Promise<void>
}

const WHERE = 'gateMcpServer'
const OPTION_KEYS: ReadonlySet<string> = new Set(['subjectFrom', 'onVerdict'])

/**
 * Gates an MCP server (`McpServer`, or a low-level `Server` with its own `tools/call` /
 * `tools/list` handlers) and returns it, same object and type. From then on:
 * - each `tools/call` is decided by `gate.guardAsync(request, { dialect: 'mcp', ...caller })`
 *   before the server sees it: an allowed call reaches the server's handler with the gate's
 *   repaired arguments (`"2"` → `2`, before McpServer's zod validation); a refused one (also
 *   `confirm`) never reaches it and is answered with the gate's feedback — a `CallToolResult`
 *   with `isError: true` and the gate's message, or, for malformed params, the JSON-RPC error
 *   (`-32602`) the gate gives, message unchanged. Exactly one answer per request.
 * - each `tools/list` answer holds only what `gate.filterTools` keeps for this caller.
 * - tools and handlers registered later are gated too; tools the gate does not declare are
 *   refused (`unknown_tool`) and not listed.
 *
 * A server is gated once (`E_CONFIG` the second time). `E_CONFIG` too for a `gate` that is not a
 * `ToolGate`, a server that is neither, or unknown options. A gate's async engines are awaited.
 */
export function gateMcpServer<S extends GateableMcpServer>(server: S, gate: ToolGate, options: GateMcpServerOptions = {}): S {
  if (!(gate instanceof ToolGate)) {
    throw new ToolGateError('E_CONFIG', `${WHERE}: \`gate\` must be a ToolGate`)
  }
  checkOptions(options)
  const { subjectFrom, onVerdict } = options
  const low = lowLevelServer(server, WHERE)
  const callerOf = async (extra: McpRequestExtra): Promise<CallContext> => {
    const ctx = typeof subjectFrom === 'function' ? await subjectFrom(extra) : (subjectFrom ?? {})
    if (ctx === null || typeof ctx !== 'object' || Array.isArray(ctx)) {
      throw new ToolGateError('E_CONFIG', `${WHERE}: subjectFrom must give a CallContext object, got ${ctx === null ? 'null' : Array.isArray(ctx) ? 'an array' : typeof ctx}`)
    }
    return ctx
  }

  const gatedCall = (original: RawHandler): RawHandler => async (request, extra) => {
    const context = await callerOf(extra)
    const report = await gate.guardAsync(request, { ...context, dialect: 'mcp' })
    const verdict = report.calls[0]
    if (report.calls.length !== 1 || verdict === undefined) {
      throw new ToolGateError('E_PAYLOAD', `${WHERE}: a tools/call request read as ${report.calls.length} calls`)
    }
    if (onVerdict !== undefined) await onVerdict(verdict, { requestId: request.id, context, extra })
    if (verdict.allowed) return original(report.payload as JSONRPCRequest, extra)
    return answer(report.feedback[0], verdict)
  }

  const gatedList = (original: RawHandler): RawHandler => async (request, extra) => {
    const context = await callerOf(extra)
    const listed = (await original(request, extra)) as unknown as McpListToolsResult
    return gate.filterTools(listed, { ...context, dialect: 'mcp' }) as unknown as Result
  }

  interceptToolHandlers(low, (method, original) => (method === 'tools/call' ? gatedCall(original) : gatedList(original)), WHERE)
  return server
}

/**
 * The SDK's way of sending the gate's feedback for a refused call: its tool error result is
 * returned as the request's result; its JSON-RPC error is thrown as an error the SDK sends with
 * the same code, message and data.
 */
function answer(feedback: McpFeedback | undefined, verdict: TurnCall): Result {
  if (feedback === undefined) {
    throw new ToolGateError('E_PAYLOAD', `${WHERE}: the gate refused \`${verdict.tool}\` (${verdict.reason ?? verdict.outcome}) without feedback`)
  }
  if ('error' in feedback) throw new JsonRpcError(feedback.error.code, feedback.error.message, feedback.error.data)
  return feedback.result
}

/** A JSON-RPC error the SDK answers as is: `code`, `message` and `data` go on the wire unchanged (an `McpError` would prefix the message). */
class JsonRpcError extends Error {
  readonly code: number
  readonly data: unknown

  constructor(code: number, message: string, data: unknown) {
    super(message)
    this.name = 'JsonRpcError'
    this.code = code
    this.data = data
  }
}

function checkOptions(options: GateMcpServerOptions): void {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new ToolGateError('E_CONFIG', `${WHERE}: options must be an object`)
  }
  const unknown = Object.keys(options).filter((k) => !OPTION_KEYS.has(k))
  if (unknown.length > 0) {
    throw new ToolGateError('E_CONFIG', `${WHERE}: unknown option ${unknown.map((k) => `\`${k}\``).join(', ')} (expected subjectFrom, onVerdict)`)
  }
  const { subjectFrom, onVerdict } = options
  if (subjectFrom !== undefined && typeof subjectFrom !== 'function' && (subjectFrom === null || typeof subjectFrom !== 'object' || Array.isArray(subjectFrom))) {
    throw new ToolGateError('E_CONFIG', `${WHERE}: subjectFrom must be a CallContext or a function returning one`)
  }
  if (onVerdict !== undefined && typeof onVerdict !== 'function') {
    throw new ToolGateError('E_CONFIG', `${WHERE}: onVerdict must be a function`)
  }
}
