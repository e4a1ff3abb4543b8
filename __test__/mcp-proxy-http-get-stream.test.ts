// mcp-proxy --listen in front of an HTTP MCP server ({ url }): the upstream session's standalone
// GET stream. A server sends its own requests that belong to no client request (elicitation,
// sampling, roots) on that stream; a server that finds it not yet open stores them where no one
// reads them. So the proxy sends nothing after `notifications/initialized` until the GET is
// answered — and a server that is slow to answer it, never answers it, or refuses it (405) can
// delay the session at most GET_STREAM_WAIT_MS, never hang it.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { CallToolResultSchema, ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'

import { listenMcpHttp, type McpHttpListener } from '../src-ts/proxy/mcp/http'
import { GET_STREAM_WAIT_MS } from '../src-ts/proxy/mcp/http-upstream'
import { mcpSessions } from './helpers/mcp-http-server'

const T = 60_000
const text = (r: unknown) => ((CallToolResultSchema.parse(r) as CallToolResult).content[0] as { text: string }).text

/** How the upstream answers the session's GET (standalone SSE) request. */
type GetMode = { delayMs: number } | 'never' | 405

/**
 * An SDK MCP server over HTTP whose tool `ask_aside` sends an elicitation that belongs to no
 * client request (so it can only go on the GET stream) and returns the user's answer.
 */
async function upstream(get: GetMode) {
  const build = () => {
    const s = new McpServer({ name: 'aside', version: '1.0.0' })
    s.registerTool('ask_aside', { inputSchema: {} }, async () => {
      // no relatedRequestId: the SDK sends it on the standalone GET stream, or stores it when none is open
      const r = await s.server.elicitInput({ message: 'Aside?', requestedSchema: { type: 'object', properties: {} } })
      return { content: [{ type: 'text', text: `the user said ${r.action}` }] }
    })
    s.registerTool('ping_tool', { inputSchema: {} }, async () => ({ content: [{ type: 'text', text: 'pong' }] }))
    return s
  }
  const { handle } = mcpSessions(build)
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      if (get === 405) return void res.writeHead(405, { Allow: 'POST, DELETE' }).end()
      if (get === 'never') return // headers never come
      setTimeout(() => void handle(req, res), get.delayMs)
      return
    }
    void handle(req, res)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    async close() {
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
    },
  }
}

async function connect(url: string) {
  const transport = new StreamableHTTPClientTransport(new URL(url))
  const client = new Client({ name: 'get-stream-test', version: '1.0.0' }, { capabilities: { elicitation: {} } })
  const asked: string[] = []
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params.message)
    return { action: 'accept', content: {} }
  })
  await client.connect(transport)
  return { client, asked }
}

let cleanup: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => {})
  cleanup = []
})

async function setUp(get: GetMode) {
  const up = await upstream(get)
  cleanup.push(() => up.close())
  const logs: string[] = []
  const l: McpHttpListener = await listenMcpHttp({ host: '127.0.0.1', port: 0, maxMessageBytes: 1 << 20, allowedOrigins: [], upstream: { url: up.url }, log: (s) => logs.push(s) })
  cleanup.push(() => l.close())
  const c = await connect(l.url)
  cleanup.push(() => c.client.close())
  return { ...c, logs }
}

describe('mcp-proxy --listen --upstream-url: the upstream session’s GET stream', () => {
  it('a server request on the GET stream right after the first call is delivered, though the server is slow to open the stream', async () => {
    const { client, asked } = await setUp({ delayMs: 400 })
    // the first call after the handshake: before the fix it reached the server before its GET
    // stream was open, and the server's elicitation was stored and never delivered (a hang)
    const r = await client.callTool({ name: 'ask_aside', arguments: {} }, undefined, { timeout: 15_000 })
    expect(text(r)).toBe('the user said accept')
    expect(asked).toEqual(['Aside?'])
  }, T)

  it('a server that never answers the GET delays the session by the bound, never hangs it', async () => {
    const { client } = await setUp('never')
    const started = Date.now()
    const r = await client.callTool({ name: 'ping_tool', arguments: {} }, undefined, { timeout: 20_000 })
    expect(text(r)).toBe('pong')
    expect(Date.now() - started).toBeLessThan(GET_STREAM_WAIT_MS + 5000)
  }, T)

  it('a server that refuses the GET (405) costs nothing: calls go through at once', async () => {
    const { client } = await setUp(405)
    const started = Date.now()
    expect(text(await client.callTool({ name: 'ping_tool', arguments: {} }))).toBe('pong')
    expect(Date.now() - started).toBeLessThan(GET_STREAM_WAIT_MS)
  }, T)
})
