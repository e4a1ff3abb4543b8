// The MCP proxy over Streamable HTTP: `toolgate mcp-proxy --listen HOST:PORT`. (First cut: the
// signature other code builds against; the listener follows.)
import { ToolGateError } from '../errors'
import type { McpProxyOptions } from './mcp'

/** Options of {@link listenMcpHttp}. */
export interface McpHttpListenOptions extends McpProxyOptions {
  /** Address to bind (loopback unless the caller decided otherwise). */
  host: string
  /** Port to bind; 0 picks a free one. */
  port: number
  /** The MCP server behind the proxy: a command spawned per session (stdio), or an HTTP MCP endpoint. */
  upstream: { command: string[] } | { url: string }
  /** Largest request body (one POST) from a client, in bytes; larger ones are answered 413. */
  maxMessageBytes: number
  /** Browser origins allowed besides loopback ones (exact `scheme://host[:port]`). */
  allowedOrigins: string[]
  /** When set, every request must carry `Authorization: Bearer <token>` (else 401). */
  bearerToken?: string
}

/** A running listener. */
export interface McpHttpListener {
  /** The MCP endpoint, `http://host:port/mcp`. */
  url: string
  /** Ends every session (their upstreams too) and stops listening. */
  close(): Promise<void>
}

/** Serves MCP Streamable HTTP at `/mcp` on `host:port`, one gated proxy per client session. */
export async function listenMcpHttp(opts: McpHttpListenOptions): Promise<McpHttpListener> {
  throw new ToolGateError('E_CONFIG', `mcp-proxy --listen ${opts.host}:${opts.port}: not built yet`)
}
