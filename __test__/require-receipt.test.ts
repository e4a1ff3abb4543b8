// The tool server's side of receipts: requireReceipt in front of a real MCP server tool and a
// real HTTP endpoint on loopback, and the MCP proxy carrying each allowed call's receipt in
// params._meta["toolgate/receipt"].
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'

import { McpProxy } from '../src-ts/proxy/mcp/proxy'
import { RECEIPT_HEADER, RECEIPT_META, requireReceipt, ToolGate, ToolGateError } from '../src-ts/index'

const seed = Buffer.alloc(32, 3).toString('base64url')
const config = {
  receipts: { privateKey: seed },
  tools: [
    { name: 'transfer', inputSchema: { type: 'object', properties: { amount: { type: 'integer' }, to: { type: 'string' } }, required: ['amount', 'to'] } },
    { name: 'other', inputSchema: { type: 'object' } },
  ],
}

async function mcpPair() {
  const gate = new ToolGate(config)
  const runs: unknown[] = []
  const server = new McpServer({ name: 'bank', version: '1.0.0' })
  server.registerTool(
    'transfer',
    { inputSchema: { amount: z.number().int(), to: z.string() } },
    requireReceipt(async (args: { amount: number; to: string }) => {
      runs.push(args)
      return { content: [{ type: 'text' as const, text: `sent ${args.amount} to ${args.to}` }] }
    }, { publicKey: gate.publicKey!, tool: 'transfer' }),
  )
  const client = new Client({ name: 'agent', version: '1.0.0' })
  const [a, b] = InMemoryTransport.createLinkedPair()
  await Promise.all([server.connect(a), client.connect(b)])
  const call = (args: Record<string, unknown>, receipt?: string) =>
    client.callTool({ name: 'transfer', arguments: args, ...(receipt === undefined ? {} : { _meta: { [RECEIPT_META]: receipt } }) }) as Promise<{ isError?: boolean; content: { text: string }[] }>
  return { gate, runs, call, close: () => client.close() }
}

describe('requireReceipt on an MCP tool', () => {
  it('runs only calls a gate allowed, with exactly those arguments, once', async () => {
    const { gate, runs, call, close } = await mcpPair()
    try {
      const v = gate.check('transfer', { amount: '50', to: 'acct-1' }, { subject: 'ana' })
      expect(v.outcome).toBe('repaired')
      expect((await call({ amount: 50, to: 'acct-1' })).content[0].text).toMatch(/missing/)
      expect((await call({ amount: 5000, to: 'acct-1' }, v.receipt)).content[0].text).toMatch(/wrong_arguments/)
      const ok = await call({ to: 'acct-1', amount: 50 }, v.receipt)
      expect([ok.isError, ok.content[0].text]).toEqual([undefined, 'sent 50 to acct-1'])
      const again = await call({ amount: 50, to: 'acct-1' }, v.receipt)
      expect([again.isError, again.content[0].text]).toEqual([true, expect.stringMatching(/replayed/)])
      const forOther = gate.check('other', { amount: 50, to: 'acct-1' }).receipt
      expect((await call({ amount: 50, to: 'acct-1' }, forOther)).content[0].text).toMatch(/wrong_tool/)
      const forged = new ToolGate({ ...config, receipts: {} }).check('transfer', { amount: 50, to: 'acct-1' }).receipt
      expect((await call({ amount: 50, to: 'acct-1' }, forged)).content[0].text).toMatch(/wrong_key/)
      expect(runs).toEqual([{ amount: 50, to: 'acct-1' }])
    } finally {
      await close()
    }
  })

  it('needs a public key', () => {
    expect(() => requireReceipt(async () => 1, { publicKey: '' })).toThrow(ToolGateError)
  })
})

describe('requireReceipt on an HTTP endpoint', () => {
  it('reads the x-toolgate-receipt header and the JSON body; refusals are 403 with the reason', async () => {
    const gate = new ToolGate(config)
    const runs: unknown[] = []
    const handler = requireReceipt.http((_req, res, args) => {
      runs.push(args)
      res.end('ran')
    }, { publicKey: gate.publicKey!, tool: 'transfer', maxReplayCache: 10 })
    const server = createServer((req, res) => void handler(req, res))
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/transfer`
    const post = (body: string, receipt?: string) => fetch(url, { method: 'POST', body, headers: receipt ? { [RECEIPT_HEADER]: receipt } : {} })
    try {
      const r = gate.check('transfer', { amount: 7, to: 'x' }).receipt!
      expect((await post('{"amount":7,"to":"x"}')).status).toBe(403)
      const wrong = await post('{"amount":8,"to":"x"}', r)
      expect([wrong.status, ((await wrong.json()) as { error: { reason: string } }).error.reason]).toEqual([403, 'wrong_arguments'])
      const ok = await post('{"to":"x","amount":7}', r)
      expect([ok.status, await ok.text()]).toEqual([200, 'ran'])
      expect((await post('{"amount":7,"to":"x"}', r)).status).toBe(403)
      expect((await post('{not json', r)).status).toBe(400)
      expect(runs).toEqual([{ to: 'x', amount: 7 }])
    } finally {
      server.close()
    }
  })
})

describe('the MCP proxy carries receipts', () => {
  it('adds each allowed call’s receipt to params._meta, keeping the client’s own _meta', () => {
    const toServer: Record<string, unknown>[] = []
    const toClient: Record<string, unknown>[] = []
    const proxy = new McpProxy({ config }, { toServer: (m) => toServer.push(m as never), toClient: (m) => toClient.push(m as never) })
    proxy.fromClient({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'transfer', arguments: { amount: '3', to: 'y' }, _meta: { progressToken: 9 } } })
    proxy.fromClient({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'nope', arguments: {} } })
    expect(toServer).toHaveLength(1)
    const params = toServer[0].params as { arguments: object; _meta: Record<string, string | number> }
    expect(params.arguments).toEqual({ amount: 3, to: 'y' })
    expect(params._meta.progressToken).toBe(9)
    const claims = JSON.parse(Buffer.from(String(params._meta[RECEIPT_META]).split('.')[1], 'base64url').toString())
    expect(claims).toMatchObject({ tool: 'transfer', callId: '1' })
    expect(toClient).toHaveLength(1) // the refusal, without a receipt
    expect(JSON.stringify(toClient)).not.toContain(RECEIPT_META)
  })
})
