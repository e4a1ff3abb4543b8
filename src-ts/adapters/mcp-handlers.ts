// The one place toolgate/mcp reaches into the MCP SDK (`@modelcontextprotocol/sdk` 1.x): the
// request handler table of a low-level `Server`. The SDK has no public way to read or wrap a
// handler that is already installed (McpServer installs its `tools/call` and `tools/list`
// handlers on its `server` when the first tool is registered, or in its constructor with
// `capabilities.tools`), so the table entry itself is wrapped. Entries take the raw JSON-RPC
// request, before the SDK parses it or McpServer validates arguments with the tool's zod schema —
// exactly where the gate must run (its repairs have to happen before that validation). Handlers
// installed later go through the public `setRequestHandler`, which is wrapped on the instance so
// they are intercepted too. If the table is not where 1.x keeps it, interception throws
// `E_CONFIG` rather than leaving a server ungated.
//
// Types only from the SDK: this file never loads it at runtime.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js'
import type { JSONRPCRequest, Result, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js'

import { ToolGateError } from '../errors'

/**
 * A low-level MCP `Server`, whatever its custom request, notification and result types (a
 * `Server<MyRequest, …>` is not assignable to `Server`: its generics are invariant).
 */
export interface McpLowLevelServer {
  setRequestHandler(...args: never[]): unknown
  removeRequestHandler(method: string): void
}

/** What toolgate/mcp gates: an `McpServer`, or a low-level `Server`. */
export type GateableMcpServer = McpServer | McpLowLevelServer

/** The SDK's request context as a `Server`'s request handlers receive it. */
export type McpRequestExtra = RequestHandlerExtra<ServerRequest, ServerNotification>

/** A handler table entry: the raw JSON-RPC request in, the result out (a throw becomes a JSON-RPC error). */
export type RawHandler = (request: JSONRPCRequest, extra: McpRequestExtra) => Promise<Result>

/** Makes the gated entry for `method` from the entry the SDK (or the host) installed. */
export type WrapHandler = (method: string, original: RawHandler) => RawHandler

/** The methods toolgate/mcp intercepts. */
export const GATED_METHODS: readonly string[] = ['tools/call', 'tools/list']

const ORIGINAL = Symbol('toolgate.mcp.original')
const INTERCEPTED = Symbol('toolgate.mcp.intercepted')

type Wrapped = RawHandler & { [ORIGINAL]?: RawHandler }
type Marked = Server & { [INTERCEPTED]?: true }

/**
 * The low-level `Server` behind `server`: an McpServer's `server`, or `server` itself. Anything
 * else is `E_CONFIG`.
 */
export function lowLevelServer(server: GateableMcpServer, where: string): Server {
  const candidate = server as unknown as { server?: unknown; setRequestHandler?: unknown } | null
  if (candidate !== null && typeof candidate === 'object') {
    const inner = candidate.server as { setRequestHandler?: unknown } | null | undefined
    if (inner !== null && typeof inner === 'object' && typeof inner.setRequestHandler === 'function') return inner as Server
    if (typeof candidate.setRequestHandler === 'function') return server as unknown as Server
  }
  throw new ToolGateError('E_CONFIG', `${where}: expected an McpServer or a Server from @modelcontextprotocol/sdk, got ${describe(server)}`)
}

/** The server's handler table, or `E_CONFIG` when this SDK version keeps it elsewhere. */
function handlerTable(server: Server, where: string): Map<string, Wrapped> {
  const table = (server as unknown as { _requestHandlers?: unknown })._requestHandlers
  if (!(table instanceof Map)) {
    throw new ToolGateError(
      'E_CONFIG',
      `${where}: this @modelcontextprotocol/sdk Server keeps no request handler table where 1.x does (\`_requestHandlers\`); toolgate/mcp supports @modelcontextprotocol/sdk >=1.32.2 <2`,
    )
  }
  return table as Map<string, Wrapped>
}

/**
 * Wraps the `tools/call` and `tools/list` entries of `server`'s handler table with `wrap`, now
 * and whenever a handler for them is installed later (through `setRequestHandler`, as McpServer
 * does on its first `registerTool`). A server is intercepted at most once (`E_CONFIG` otherwise).
 */
export function interceptToolHandlers(server: Server, wrap: WrapHandler, where: string): void {
  const marked = server as Marked
  if (marked[INTERCEPTED] === true) {
    throw new ToolGateError('E_CONFIG', `${where}: this server is already gated; gate it once, with one ToolGate`)
  }
  const table = handlerTable(server, where)
  const rewrap = (): void => {
    for (const method of GATED_METHODS) {
      const entry = table.get(method)
      if (entry === undefined || entry[ORIGINAL] !== undefined) continue
      const gated: Wrapped = wrap(method, entry)
      gated[ORIGINAL] = entry
      table.set(method, gated)
    }
  }
  const install = server.setRequestHandler
  const patched: Server['setRequestHandler'] = (schema, handler) => {
    install.call(server, schema, handler)
    rewrap()
  }
  Object.defineProperty(server, 'setRequestHandler', { value: patched, writable: true, configurable: true, enumerable: false })
  Object.defineProperty(server, INTERCEPTED, { value: true })
  rewrap()
}

/** The handler the SDK (or the host) installed for `method`, under toolgate's wrapper if any. */
export function originalHandler(server: Server, method: string, where: string): RawHandler | undefined {
  const entry = handlerTable(server, where).get(method)
  return entry?.[ORIGINAL] ?? entry
}

function describe(v: unknown): string {
  if (v === null) return 'null'
  if (typeof v !== 'object') return typeof v
  const name = (v as { constructor?: { name?: unknown } }).constructor?.name
  return typeof name === 'string' && name !== '' ? `an instance of ${name}` : 'an object'
}
