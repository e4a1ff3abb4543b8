// The upstream side of the MCP-over-HTTP tests: an HTTP MCP server built with the official SDK as
// its documentation shows, one `McpServer` and one Streamable HTTP transport per session, found
// again by the `mcp-session-id` header.
import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'

import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'

/** Routes requests to their session (a new one, from `build`, for a request without a session id). */
export interface McpSessions {
  /** Answers one HTTP request: an unknown session id is 404; a closed session is forgotten. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>
  /** How many sessions are open. */
  count(): number
}

/** Sessions of the MCP servers `build` makes, one per session. */
export function mcpSessions(build: () => McpServer): McpSessions {
  const transports = new Map<string, StreamableHTTPServerTransport>()
  return {
    async handle(req, res) {
      const sid = req.headers['mcp-session-id'] as string | undefined
      let t = sid ? transports.get(sid) : undefined
      if (!t) {
        if (sid) return void res.writeHead(404).end()
        const created = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void transports.set(id, created) })
        created.onclose = () => {
          if (created.sessionId) transports.delete(created.sessionId)
        }
        await build().connect(created)
        t = created
      }
      await t.handleRequest(req, res)
    },
    count: () => transports.size,
  }
}
