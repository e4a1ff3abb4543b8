// A minimal MCP server for bench/mcp-proxy.bench.ts: the official SDK's McpServer over stdio with
// one tool, `echo`, whose small object schema is { text: string, n: integer, tag?: 'a' | 'b' }.
// It answers at once with the arguments it received, as JSON text, so a caller can see exactly
// what reached the server (a proxied `"n": "5"` arrives as 5 only if the gate repaired it).
//
//   node bench/mcp-echo-server.mjs        # speaks MCP on stdin/stdout; nothing on stderr
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { z } from 'zod'

const server = new McpServer({ name: 'toolgate-bench-echo', version: '1.0.0' })
server.registerTool(
  'echo',
  {
    description: 'Answers with the arguments it received.',
    inputSchema: { text: z.string().max(200), n: z.number().int(), tag: z.enum(['a', 'b']).optional() },
  },
  async (args) => ({ content: [{ type: 'text', text: JSON.stringify(args) }] }),
)
await server.connect(new StdioServerTransport())
