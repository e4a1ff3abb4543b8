// toolgate/mcp (src-ts/adapters/mcp.ts) with the real @modelcontextprotocol/sdk and the real
// native addon: a real McpServer (and a low-level Server) with real tools, gated, and a real
// Client over the SDK's InMemoryTransport, whose requests carry `authInfo` as an HTTP auth
// middleware would attach it. Allowed, repaired (where the SDK alone would refuse), refused
// (unknown tool, malformed params, policy per caller, confirm-before-write), tools/list per
// caller, tools registered after gating, async engines, the error cases, and the example.
import { describe, expect, expectTypeOf, it } from 'vitest'
import { z } from 'zod'

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Notification,
  type Request,
  type Result,
} from '@modelcontextprotocol/sdk/types.js'

import { gateMcpServer, toolsFromMcpServer, type McpRequestExtra, type McpSubjectFrom, type McpVerdictInfo } from '../src-ts/adapters/mcp'
import { ToolGate, type CallContext, type ToolConfig, type ToolGateConfig, type TurnCall } from '../src-ts/index'
import { runExample, runScript } from './helpers/tsx-child'
import { thrownConfigError } from './helpers/thrown'

const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] })

const ANA: AuthInfo = { token: 'tok-ana', clientId: 'ana', scopes: ['analyst'] }
const GUEST: AuthInfo = { token: 'tok-guest', clientId: 'guest', scopes: [] }

/** The caller from the host's auth: subject and roles from the token, never from the model. */
const fromAuth = (extra: McpRequestExtra): CallContext => (extra.authInfo === undefined ? {} : { subject: extra.authInfo.clientId, roles: extra.authInfo.scopes })

type Ran = { tool: string; args: unknown }[]

/** A real McpServer with real tools; `ran` records what the handlers actually received. */
function weatherServer(): { server: McpServer; ran: Ran } {
  const server = new McpServer({ name: 'weather', version: '1.0.0' })
  const ran: Ran = []
  server.registerTool(
    'get_weather',
    { description: 'Forecast', inputSchema: { city: z.string(), days: z.number().int().optional(), unit: z.enum(['celsius', 'fahrenheit']).optional() } },
    async (args) => {
      ran.push({ tool: 'get_weather', args })
      return text(`weather ${JSON.stringify(args)}`)
    },
  )
  server.registerTool('read_report', { inputSchema: { path: z.string() } }, async (args) => {
    ran.push({ tool: 'read_report', args })
    return text(`report ${args.path}`)
  })
  server.registerTool('send_email', { inputSchema: { to: z.string(), body: z.string() } }, async (args) => {
    ran.push({ tool: 'send_email', args })
    return text('sent')
  })
  // the legacy `tool()` form, on the server but never declared to the gate
  server.tool('shell', { cmd: z.string() }, async (args) => {
    ran.push({ tool: 'shell', args })
    return text('ran')
  })
  return { server, ran }
}

/** Declared to the gate up front, registered on the server only after gating. */
const LATER: ToolConfig = { name: 'later_tool', inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } }

async function policyGate(server: McpServer): Promise<ToolGate> {
  const listed = await toolsFromMcpServer(server, { read_report: { resource: 'report:{path*}' }, send_email: { writes: true } })
  const config: ToolGateConfig = {
    tools: [...listed.filter((t) => t.name !== 'shell'), LATER],
    policy: {
      rules: [
        { effect: 'allow', tools: ['get_weather', 'later_tool'] },
        { effect: 'allow', roles: ['analyst'], tools: ['read_report'], resources: ['report:public/**'] },
        { effect: 'allow', roles: ['analyst'], tools: ['send_email'] },
      ],
    },
  }
  return new ToolGate(config)
}

/** A real Client on an in-memory link; `as(auth)` sets the auth info its next requests carry. */
async function connect(server: McpServer | Server) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  let auth: AuthInfo | undefined
  const send = clientSide.send.bind(clientSide)
  clientSide.send = (message, options) => send(message, { ...options, authInfo: auth })
  await server.connect(serverSide)
  const client = new Client({ name: 'agent', version: '1.0.0' })
  await client.connect(clientSide)
  return {
    client,
    as(a: AuthInfo | undefined) {
      auth = a
    },
    async close() {
      await client.close()
      await server.close()
    },
  }
}

/** Gates `server` recording every verdict with its info. */
function gateRecording<S extends McpServer | Server>(server: S, gate: ToolGate, subjectFrom: McpSubjectFrom = fromAuth) {
  const verdicts: { verdict: TurnCall; info: McpVerdictInfo }[] = []
  gateMcpServer(server, gate, { subjectFrom, onVerdict: (verdict, info) => void verdicts.push({ verdict, info }) })
  return verdicts
}

const textOf = (r: object) => ((r as { content: { type: string; text: string }[] }).content).map((c) => c.text).join('\n')

async function rejection(p: Promise<unknown>): Promise<McpError> {
  try {
    await p
  } catch (e) {
    expect(e).toBeInstanceOf(McpError)
    return e as McpError
  }
  throw new Error('expected the request to fail')
}

/** The message of the `E_CONFIG` error `f` throws. */
const configError = (f: () => unknown): string => thrownConfigError(f).message

// Compile-time (checked by `npx tsc --noEmit -p .`): the caller's types are kept.
expectTypeOf(gateMcpServer<McpServer>).returns.toEqualTypeOf<McpServer>()
expectTypeOf(gateMcpServer<Server>).returns.toEqualTypeOf<Server>()
// a Server with its own request/result types (its generics are invariant, so not a `Server`)
interface CustomRequest extends Request {
  method: 'custom/ping'
}
interface CustomResult extends Result {
  pong: true
}
expectTypeOf(gateMcpServer<Server<CustomRequest, Notification, CustomResult>>).returns.toEqualTypeOf<Server<CustomRequest, Notification, CustomResult>>()
// @ts-expect-error not an MCP server
expectTypeOf(gateMcpServer<{ name: string }>).returns.toBeObject()
expectTypeOf(toolsFromMcpServer).returns.toEqualTypeOf<Promise<ToolConfig[]>>()
expectTypeOf<McpRequestExtra['authInfo']>().toEqualTypeOf<AuthInfo | undefined>()

describe('gateMcpServer on an McpServer, through a real Client', () => {
  it('runs an allowed call as sent, and the verdict reaches onVerdict with the caller', async () => {
    const { server, ran } = weatherServer()
    const gate = await policyGate(server)
    const verdicts = gateRecording(server, gate)
    const link = await connect(server)
    try {
      link.as(GUEST)
      const r = await link.client.callTool({ name: 'get_weather', arguments: { city: 'Oslo', days: 3 } })
      expect(r.isError).toBeFalsy()
      expect(textOf(r)).toBe('weather {"city":"Oslo","days":3}')
      expect(ran).toEqual([{ tool: 'get_weather', args: { city: 'Oslo', days: 3 } }])
      expect(verdicts).toHaveLength(1)
      expect(verdicts[0].verdict).toMatchObject({ outcome: 'passed', allowed: true, tool: 'get_weather', callId: String(verdicts[0].info.requestId) })
      expect(verdicts[0].info.context).toEqual({ subject: 'guest', roles: [] })
      expect(verdicts[0].info.extra.authInfo).toEqual(GUEST)
      expect(typeof verdicts[0].info.requestId).toBe('number') // the Client's own id, as sent
    } finally {
      await link.close()
    }
  })

  it('repairs before McpServer validates: "2" reaches the handler as 2, where the SDK alone refuses', async () => {
    const args = { city: 'Zürich', days: '2', unit: 'CELSIUS' }
    // Without the gate: the SDK's own zod validation refuses the call.
    const bare = weatherServer()
    const bareLink = await connect(bare.server)
    try {
      const r = await bareLink.client.callTool({ name: 'get_weather', arguments: args })
      expect(r.isError).toBe(true)
      expect(textOf(r)).toContain('Input validation error')
      expect(bare.ran).toEqual([])
    } finally {
      await bareLink.close()
    }
    // With the gate: repaired, run with the exact repaired arguments.
    const { server, ran } = weatherServer()
    const verdicts = gateRecording(server, await policyGate(server))
    const link = await connect(server)
    try {
      const r = await link.client.callTool({ name: 'get_weather', arguments: args })
      expect(r.isError).toBeFalsy()
      expect(ran).toEqual([{ tool: 'get_weather', args: { city: 'Zürich', days: 2, unit: 'celsius' } }])
      expect(verdicts[0].verdict.outcome).toBe('repaired')
      expect(verdicts[0].verdict.arguments).toEqual({ city: 'Zürich', days: 2, unit: 'celsius' })
      expect(verdicts[0].verdict.flags.map((f) => f.code)).toEqual(['StringToInteger', 'EnumCaseNormalized'])
    } finally {
      await link.close()
    }
  })

  it('refuses unknown tools (on the server but undeclared, or nowhere) with a tool error the Client parses; the tool never runs; the session goes on', async () => {
    const { server, ran } = weatherServer()
    const verdicts = gateRecording(server, await policyGate(server))
    const link = await connect(server)
    try {
      for (const name of ['shell', 'drop_table']) {
        const r = await link.client.callTool({ name, arguments: { cmd: 'rm -rf /' } })
        const parsed = CallToolResultSchema.parse(r)
        expect(parsed.isError).toBe(true)
        const v = verdicts.at(-1)!.verdict
        expect(v).toMatchObject({ outcome: 'rejected', reason: 'unknown_tool', tool: name })
        // the model sees exactly the gate's message, in MCP's own tool error shape
        expect(parsed.content).toEqual([{ type: 'text', text: v.message }])
        expect(v.message).toContain(`Unknown tool \`${name}\``)
      }
      expect(ran).toEqual([])
      // the next request on the same session is accepted and runs
      const next = await link.client.callTool({ name: 'get_weather', arguments: { city: 'Oslo' } })
      expect(next.isError).toBeFalsy()
      expect(ran).toEqual([{ tool: 'get_weather', args: { city: 'Oslo' } }])
    } finally {
      await link.close()
    }
  })

  it('answers malformed params with the gate’s own JSON-RPC -32602, message unchanged', async () => {
    const { server, ran } = weatherServer()
    const verdicts = gateRecording(server, await policyGate(server))
    const link = await connect(server)
    try {
      const err = await rejection(link.client.request({ method: 'tools/call', params: { arguments: {} } } as never, CallToolResultSchema))
      expect(err.code).toBe(ErrorCode.InvalidParams)
      const v = verdicts.at(-1)!.verdict
      expect(v.allowed).toBe(false)
      expect(v.reason).toBe('bad_arguments')
      expect(err.message).toBe(`MCP error -32602: ${v.message}`) // the Client's McpError prefix, then the gate's text
      expect(ran).toEqual([])
    } finally {
      await link.close()
    }
  })

  it('decides per caller with subjectFrom reading extra.authInfo: no_rule for a guest, run for an analyst', async () => {
    const { server, ran } = weatherServer()
    const verdicts = gateRecording(server, await policyGate(server))
    const link = await connect(server)
    try {
      link.as(GUEST)
      const refused = await link.client.callTool({ name: 'read_report', arguments: { path: 'public/q3.csv' } })
      expect(refused.isError).toBe(true)
      expect(verdicts.at(-1)!.verdict).toMatchObject({ outcome: 'denied', reason: 'no_rule', resource: 'report:public/q3.csv' })
      expect(textOf(refused)).toBe(verdicts.at(-1)!.verdict.message)

      link.as(ANA)
      const ok = await link.client.callTool({ name: 'read_report', arguments: { path: 'public/./q3.csv' } })
      expect(ok.isError).toBeFalsy()
      expect(ran).toEqual([{ tool: 'read_report', args: { path: 'public/./q3.csv' } }])

      // the analyst's rule covers public reports only
      const priv = await link.client.callTool({ name: 'read_report', arguments: { path: 'private/pay.csv' } })
      expect(priv.isError).toBe(true)
      expect(verdicts.at(-1)!.verdict.reason).toBe('no_rule')
      // and no caller at all is no caller (not a guessed one)
      link.as(undefined)
      await link.client.callTool({ name: 'read_report', arguments: { path: 'public/q3.csv' } })
      expect(verdicts.at(-1)!.info.context).toEqual({})
      expect(verdicts.at(-1)!.verdict.reason).toBe('no_rule')
      expect(ran).toHaveLength(1)
    } finally {
      await link.close()
    }
  })

  it('filters tools/list per caller (schemas untouched); undeclared tools are never listed', async () => {
    const { server } = weatherServer()
    const gate = await policyGate(server)
    const bare = weatherServer()
    const bareLink = await connect(bare.server)
    const everything = await bareLink.client.listTools()
    await bareLink.close()
    gateMcpServer(server, gate, { subjectFrom: fromAuth })
    const link = await connect(server)
    try {
      expect(everything.tools.map((t) => t.name)).toEqual(['get_weather', 'read_report', 'send_email', 'shell'])
      link.as(ANA)
      const ana = await link.client.listTools()
      expect(ana.tools.map((t) => t.name)).toEqual(['get_weather', 'read_report', 'send_email'])
      expect(ana.tools[0]).toEqual(everything.tools[0])
      link.as(GUEST)
      expect((await link.client.listTools()).tools.map((t) => t.name)).toEqual(['get_weather'])
    } finally {
      await link.close()
    }
  })

  it('answers a writes tool with the confirm message only: the token goes to onVerdict, never to the client', async () => {
    const { server, ran } = weatherServer()
    const gate = await policyGate(server)
    const verdicts = gateRecording(server, gate)
    const link = await connect(server)
    const wire: unknown[] = []
    try {
      link.as(ANA)
      const r = await link.client.callTool({ name: 'send_email', arguments: { to: 'boss@example.com', body: 'done' } })
      wire.push(r)
      const v = verdicts.at(-1)!.verdict
      expect(v).toMatchObject({ outcome: 'confirm', reason: 'confirm_required', allowed: false })
      const token = v.confirmation!.token
      expect(token.length).toBeGreaterThan(20)
      expect(r.isError).toBe(true)
      expect(textOf(r)).toBe(v.message)
      expect(JSON.stringify(wire)).not.toContain(token)
      expect(ran).toEqual([])
      // the host redeems the token for the same caller, out of band
      const confirmed = gate.confirm(token, verdicts.at(-1)!.info.context)
      expect(confirmed).toMatchObject({ outcome: 'passed', arguments: { to: 'boss@example.com', body: 'done' } })
    } finally {
      await link.close()
    }
  })

  it('gates a tool registered after gateMcpServer (declared: repaired; undeclared: unknown_tool, unlisted)', async () => {
    const { server, ran } = weatherServer()
    const verdicts = gateRecording(server, await policyGate(server))
    const link = await connect(server) // tools registered after connect: the SDK sends list_changed
    try {
      server.registerTool('later_tool', { inputSchema: { n: z.number().int() } }, async (args) => {
        ran.push({ tool: 'later_tool', args })
        return text(`n=${args.n}`)
      })
      server.registerTool('later_secret', { inputSchema: {} }, async () => {
        ran.push({ tool: 'later_secret', args: {} })
        return text('secret')
      })
      const r = await link.client.callTool({ name: 'later_tool', arguments: { n: '7' } })
      expect(textOf(r)).toBe('n=7')
      expect(ran).toEqual([{ tool: 'later_tool', args: { n: 7 } }])
      expect(verdicts.at(-1)!.verdict.outcome).toBe('repaired')
      const secret = await link.client.callTool({ name: 'later_secret', arguments: {} })
      expect(secret.isError).toBe(true)
      expect(verdicts.at(-1)!.verdict.reason).toBe('unknown_tool')
      expect((await link.client.listTools()).tools.map((t) => t.name)).toEqual(['get_weather', 'later_tool'])
      expect(ran).toHaveLength(1)
    } finally {
      await link.close()
    }
  })

  it('gates a server gated before its first tool (McpServer installs its handlers on the first registerTool)', async () => {
    const server = new McpServer({ name: 'empty', version: '1.0.0' })
    const ran: Ran = []
    const verdicts = gateRecording(server, new ToolGate({ tools: [LATER] }))
    server.registerTool('later_tool', { inputSchema: { n: z.number().int() } }, async (args) => {
      ran.push({ tool: 'later_tool', args })
      return text(`n=${args.n}`)
    })
    server.registerTool('other', { inputSchema: {} }, async () => text('other'))
    const link = await connect(server)
    try {
      expect(textOf(await link.client.callTool({ name: 'later_tool', arguments: { n: '5' } }))).toBe('n=5')
      expect(ran).toEqual([{ tool: 'later_tool', args: { n: 5 } }])
      expect((await link.client.callTool({ name: 'other', arguments: {} })).isError).toBe(true)
      expect(verdicts.map((v) => v.verdict.outcome)).toEqual(['repaired', 'rejected'])
      expect((await link.client.listTools()).tools.map((t) => t.name)).toEqual(['later_tool'])
    } finally {
      await link.close()
    }
  })

  it('also gates an McpServer whose handlers the constructor installed (capabilities.tools)', async () => {
    const server = new McpServer({ name: 'eager', version: '1.0.0' }, { capabilities: { tools: {} } })
    gateMcpServer(server, new ToolGate({ tools: [LATER] }))
    const ran: Ran = []
    server.registerTool('later_tool', { inputSchema: { n: z.number().int() } }, async (args) => {
      ran.push({ tool: 'later_tool', args })
      return text('ok')
    })
    const link = await connect(server)
    try {
      await link.client.callTool({ name: 'later_tool', arguments: { n: '1' } })
      expect(ran).toEqual([{ tool: 'later_tool', args: { n: 1 } }])
    } finally {
      await link.close()
    }
  })

  it('takes a fixed CallContext or an async subjectFrom, and awaits async engines', async () => {
    const { server, ran } = weatherServer()
    const listed = await toolsFromMcpServer(server)
    const gate = new ToolGate(
      { tools: listed.filter((t) => t.name === 'get_weather'), policy: { rules: [{ effect: 'allow', roles: ['forecaster'], tools: ['get_weather'] }] } },
      { engines: [async (r) => (r.arguments.city === 'Mordor' ? 'deny' : 'delegate')], engineTimeoutMs: 2000 },
    )
    const verdicts = gateRecording(server, gate, async (extra) => {
      await new Promise((resolve) => setTimeout(resolve, 1))
      return { subject: extra.authInfo?.clientId ?? 'nobody', roles: ['forecaster'], session: 's-1' }
    })
    const link = await connect(server)
    try {
      expect((await link.client.callTool({ name: 'get_weather', arguments: { city: 'Oslo' } })).isError).toBeFalsy()
      const mordor = await link.client.callTool({ name: 'get_weather', arguments: { city: 'Mordor' } })
      expect(mordor.isError).toBe(true)
      expect(verdicts.map((v) => [v.verdict.outcome, v.verdict.reason])).toEqual([
        ['passed', undefined],
        ['denied', 'engine'],
      ])
      expect(verdicts[0].info.context).toEqual({ subject: 'nobody', roles: ['forecaster'], session: 's-1' })
      expect(ran).toEqual([{ tool: 'get_weather', args: { city: 'Oslo' } }])
    } finally {
      await link.close()
    }

    const fixed = weatherServer()
    gateMcpServer(fixed.server, gate, { subjectFrom: { subject: 'ops', roles: ['forecaster'] } })
    const fixedLink = await connect(fixed.server)
    try {
      expect((await fixedLink.client.callTool({ name: 'get_weather', arguments: { city: 'Oslo' } })).isError).toBeFalsy()
      expect(fixed.ran).toHaveLength(1)
    } finally {
      await fixedLink.close()
    }
  })

  it('fails closed when subjectFrom or onVerdict throws: a JSON-RPC error, the tool does not run', async () => {
    for (const options of [
      {
        subjectFrom: () => {
          throw new Error('no session')
        },
      },
      {
        onVerdict: async () => {
          throw new Error('audit log down')
        },
      },
    ]) {
      const { server, ran } = weatherServer()
      gateMcpServer(server, await policyGate(server), options)
      const link = await connect(server)
      try {
        const err = await rejection(link.client.callTool({ name: 'get_weather', arguments: { city: 'Oslo' } }))
        expect(err.code).toBe(ErrorCode.InternalError)
        expect(ran).toEqual([])
      } finally {
        await link.close()
      }
    }
  })
})

describe('gateMcpServer on a low-level Server', () => {
  function lowServer() {
    const server = new Server({ name: 'low', version: '1.0.0' }, { capabilities: { tools: {} } })
    const ran: unknown[] = []
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [
        { name: 'add', inputSchema: { type: 'object' as const, properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] } },
        { name: 'rm', inputSchema: { type: 'object' as const, properties: { path: { type: 'string' } } } },
      ],
    }))
    server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
      ran.push(request.params)
      const { a, b } = request.params.arguments as { a: unknown; b: unknown }
      return text(`${typeof a} ${typeof b} ${String(Number(a) + Number(b))}`)
    })
    return { server, ran }
  }

  it('hands its own tools/call handler the repaired arguments (it validates nothing itself) and filters its tools/list', async () => {
    const { server, ran } = lowServer()
    const gate = new ToolGate({ tools: (await toolsFromMcpServer(server)).filter((t) => t.name === 'add') })
    gateMcpServer(server, gate)
    const link = await connect(server)
    try {
      const r = await link.client.callTool({ name: 'add', arguments: { a: '2', b: 3 } })
      expect(textOf(r)).toBe('number number 5')
      expect(ran).toEqual([{ name: 'add', arguments: { a: 2, b: 3 } }])
      expect((await link.client.callTool({ name: 'rm', arguments: { path: '/' } })).isError).toBe(true)
      expect((await link.client.callTool({ name: 'add', arguments: { a: 'two', b: 3 } })).isError).toBe(true)
      expect(ran).toHaveLength(1)
      expect((await link.client.listTools()).tools.map((t) => t.name)).toEqual(['add'])
    } finally {
      await link.close()
    }
  })

  it('gates handlers the host installs (or replaces) after gating', async () => {
    const { server } = lowServer()
    const gate = new ToolGate({ tools: (await toolsFromMcpServer(server)).filter((t) => t.name === 'add') })
    gateMcpServer(server, gate)
    const ran: unknown[] = []
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      ran.push(request.params.arguments)
      return text('replaced')
    })
    const link = await connect(server)
    try {
      expect(textOf(await link.client.callTool({ name: 'add', arguments: { a: '1', b: '1' } }))).toBe('replaced')
      expect(ran).toEqual([{ a: 1, b: 1 }])
      expect((await link.client.callTool({ name: 'rm', arguments: {} })).isError).toBe(true)
      expect(ran).toHaveLength(1)
    } finally {
      await link.close()
    }
  })
})

describe('toolsFromMcpServer', () => {
  it('reads every tool as the server lists it (the SDK’s own JSON Schema), with declarations merged by name', async () => {
    const { server } = weatherServer()
    const tools = await toolsFromMcpServer(server, { send_email: { writes: true, description: 'Sends mail' } })
    expect(tools.map((t) => t.name)).toEqual(['get_weather', 'read_report', 'send_email', 'shell'])
    expect(tools[0]).toMatchObject({
      name: 'get_weather',
      description: 'Forecast',
      inputSchema: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' }, unit: { enum: ['celsius', 'fahrenheit'] } }, required: ['city'] },
    })
    expect(tools[2]).toMatchObject({ name: 'send_email', writes: true, description: 'Sends mail' })
    // what the gate compiles from it repairs the way the server's zod schema needs
    const gate = new ToolGate({ tools })
    expect(gate.check('get_weather', { city: 'x', days: '4' }).arguments).toEqual({ city: 'x', days: 4 })
  })

  it('lists the server’s own tools also once it is gated (not the gate’s filtered view)', async () => {
    const { server } = weatherServer()
    gateMcpServer(server, new ToolGate({ tools: [{ name: 'get_weather' }] }))
    expect((await toolsFromMcpServer(server)).map((t) => t.name)).toEqual(['get_weather', 'read_report', 'send_email', 'shell'])
  })

  it('reads every page of a paginated tools/list', async () => {
    const server = new Server({ name: 'paged', version: '1.0.0' }, { capabilities: { tools: {} } })
    server.setRequestHandler(ListToolsRequestSchema, async (request) => {
      const page = Number(request.params?.cursor ?? '0')
      return { tools: [{ name: `t${page}`, inputSchema: { type: 'object' as const } }], ...(page < 2 ? { nextCursor: String(page + 1) } : {}) }
    })
    expect((await toolsFromMcpServer(server)).map((t) => t.name)).toEqual(['t0', 't1', 't2'])
  })

  it('refuses a declaration for a tool the server does not list, and a server without tools', async () => {
    const { server } = weatherServer()
    await expect(toolsFromMcpServer(server, { send_emial: { writes: true } })).rejects.toMatchObject({ code: 'E_CONFIG', message: expect.stringContaining('`send_emial`') })
    await expect(toolsFromMcpServer(new McpServer({ name: 'none', version: '1' }))).rejects.toMatchObject({ code: 'E_CONFIG', message: expect.stringContaining('no tools/list handler') })
  })
})

describe('gateMcpServer errors', () => {
  it('is E_CONFIG for a non-gate, a non-server, unknown options, a second gating, and an SDK without the handler table', () => {
    const gate = new ToolGate({ tools: [{ name: 'get_weather' }] })
    expect(configError(() => gateMcpServer(weatherServer().server, {} as ToolGate))).toContain('must be a ToolGate')
    expect(configError(() => gateMcpServer({} as McpServer, gate))).toContain('expected an McpServer or a Server')
    expect(configError(() => gateMcpServer(weatherServer().server, gate, { subjectFrm: fromAuth } as never))).toContain('unknown option `subjectFrm`')
    expect(configError(() => gateMcpServer(weatherServer().server, gate, { subjectFrom: 'ana' } as never))).toContain('subjectFrom')
    expect(configError(() => gateMcpServer(weatherServer().server, gate, { onVerdict: true } as never))).toContain('onVerdict')
    const { server } = weatherServer()
    gateMcpServer(server, gate)
    expect(configError(() => gateMcpServer(server, gate))).toContain('already gated')
    const lookalike = { setRequestHandler() {} } as unknown as Server
    expect(configError(() => gateMcpServer(lookalike, gate))).toContain('_requestHandlers')
  })
})

describe('loading', () => {
  it('never loads the MCP SDK (or zod) at runtime: it is only imported for types', () => {
    const script = "require('./src-ts/adapters/mcp.ts'); console.log(JSON.stringify(Object.keys(require.cache).filter((k) => /@modelcontextprotocol|[\\\\/]zod[\\\\/]/.test(k))))"
    const out = runScript(script)
    expect(JSON.parse(out)).toEqual([])
  })
})

describe('the example', () => {
  it('examples/mcp.ts runs offline and prints what its comments say', () => {
    const out = runExample('mcp.ts')
    const lines = out.trim().split('\n')
    expect(lines[0]).toBe('ana sees: get_weather, read_report, send_email')
    expect(lines[1]).toBe('guest sees: get_weather')
    expect(lines[2]).toBe('ana get_weather {"city":"Oslo","days":"3"} -> Oslo: sunny for 3 days')
    expect(lines[3]).toBe('ana read_report {"path":"public/q3.csv"} -> contents of public/q3.csv')
    expect(lines[4]).toMatch(/^ana read_report \{"path":"private\/pay.csv"\} -> refused: Not permitted: no policy rule allows `read_report`/)
    expect(lines[5]).toMatch(/^guest read_report \{"path":"public\/q3.csv"\} -> refused: Not permitted/)
    expect(lines[6]).toMatch(/^ana send_email .* -> refused: `send_email` changes data, so it waits for the user's confirmation/)
    expect(lines[7]).toMatch(/^ana drop_table \{\} -> refused: Unknown tool `drop_table`/)
    expect(lines[8]).toBe('host: user approved send_email -> passed {"to":"boss@example.com","body":"done"}')
    expect(lines).toHaveLength(9)
  })
})
