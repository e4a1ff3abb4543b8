// An MCP server gated by toolgate: every tools/call is decided before the server's own handler
// runs (repaired, or refused with a message the model can act on), and every tools/list answer
// shows each caller only what it may call. Who is calling comes from the host's auth
// (`extra.authInfo`), never from the model.
//   npx tsx examples/mcp.ts        (no network: a real MCP Client talks to the server in memory)
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'

import { gateMcpServer, toolsFromMcpServer } from '../src-ts/adapters/mcp'
import { ToolGate } from '../src-ts/index'

const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] })

async function main(): Promise<void> {
  // 1. The server, written as usual.
  const server = new McpServer({ name: 'reports', version: '1.0.0' })
  server.registerTool('get_weather', { description: 'Forecast for a city', inputSchema: { city: z.string(), days: z.number().int().min(1).max(7) } }, async ({ city, days }) =>
    text(`${city}: sunny for ${days} days`),
  )
  server.registerTool('read_report', { inputSchema: { path: z.string() } }, async ({ path }) => text(`contents of ${path}`))
  server.registerTool('send_email', { inputSchema: { to: z.string(), body: z.string() } }, async ({ to }) => text(`sent to ${to}`))

  // 2. The gate: the tools exactly as the server lists them, plus policy.
  const gate = new ToolGate({
    tools: await toolsFromMcpServer(server, { read_report: { resource: 'report:{path*}' }, send_email: { writes: true } }),
    policy: {
      rules: [
        { effect: 'allow', tools: ['get_weather'] },
        { effect: 'allow', roles: ['analyst'], tools: ['read_report'], resources: ['report:public/**'] },
        { effect: 'allow', roles: ['analyst'], tools: ['send_email'] },
      ],
    },
  })

  // 3. One line. The confirmation token of a `writes` call goes to the host only.
  const tokens: string[] = []
  gateMcpServer(server, gate, {
    subjectFrom: (extra) => ({ subject: extra.authInfo?.clientId ?? 'anonymous', roles: extra.authInfo?.scopes ?? [] }),
    onVerdict: (verdict) => {
      if (verdict.confirmation !== undefined) tokens.push(verdict.confirmation.token)
    },
  })

  // A client whose requests carry the auth info an HTTP auth middleware would attach.
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  let auth: AuthInfo | undefined
  const send = clientSide.send.bind(clientSide)
  clientSide.send = (message, options) => send(message, { ...options, authInfo: auth })
  await server.connect(serverSide)
  const client = new Client({ name: 'agent', version: '1.0.0' })
  await client.connect(clientSide)
  const ana: AuthInfo = { token: 't1', clientId: 'ana', scopes: ['analyst'] }
  const guest: AuthInfo = { token: 't2', clientId: 'guest', scopes: [] }

  for (const [who, as] of [['ana', ana], ['guest', guest]] as const) {
    auth = as
    const { tools } = await client.listTools()
    console.log(`${who} sees: ${tools.map((t) => t.name).join(', ')}`)
  }

  const calls: [string, AuthInfo, string, Record<string, unknown>][] = [
    ['ana', ana, 'get_weather', { city: 'Oslo', days: '3' }], // "3": repaired to 3 before zod sees it
    ['ana', ana, 'read_report', { path: 'public/q3.csv' }],
    ['ana', ana, 'read_report', { path: 'private/pay.csv' }], // no rule allows it
    ['guest', guest, 'read_report', { path: 'public/q3.csv' }], // not an analyst
    ['ana', ana, 'send_email', { to: 'boss@example.com', body: 'done' }], // waits for the user
    ['ana', ana, 'drop_table', {}], // no such tool
  ]
  for (const [who, as, name, args] of calls) {
    auth = as
    const result = await client.callTool({ name, arguments: args })
    const first = (result.content as { type: string; text?: string }[])[0]?.text?.split('\n')[0] ?? ''
    console.log(`${who} ${name} ${JSON.stringify(args)} -> ${result.isError === true ? 'refused: ' : ''}${first}`)
  }
  // The model never saw the token. Once the user approves (in the host's own UI), the host
  // redeems it and runs the write with exactly the arguments the gate decided.
  const approved = gate.confirm(tokens[0], { subject: 'ana', roles: ['analyst'] })
  console.log(`host: user approved send_email -> ${approved.outcome} ${JSON.stringify(approved.arguments)}`)
  await client.close()
}

main().catch((err: unknown) => {
  console.error(err)
  process.exitCode = 1
})

export {} // a module, so the tests can type-check this file
