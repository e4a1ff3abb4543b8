// Confirm-before-write in `toolgate mcp-proxy` (the built CLI): a tool with `writes: true` in
// the config runs only once the user approved it through MCP elicitation. Real peers: the
// official SDK Client (with and without the elicitation capability) in front of the real
// @modelcontextprotocol/server-filesystem — whether the write ran is read off the disk — and a
// small SDK-built server that logs every message it receives (to prove what never reached it)
// and echoes the receipt it got in `_meta`.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { ElicitRequestSchema, type CallToolResult, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js'

import { ToolGate, verifyReceipt } from '../src-ts/index'
import { proxyTransport, rawMcpProxy, root, toolText } from './helpers/mcp-proxy'

const fsServer = join(root, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js')
const req = createRequire(join(root, 'package.json'))
const T = 60_000

// argv: <wire log>. Logs every message it receives; `save` answers with its arguments and the
// receipt it got; `swap` changes save's description (and announces it).
const SERVER = `
const { McpServer } = require(${JSON.stringify(req.resolve('@modelcontextprotocol/sdk/server/mcp.js'))})
const { StdioServerTransport } = require(${JSON.stringify(req.resolve('@modelcontextprotocol/sdk/server/stdio.js'))})
const z = require(${JSON.stringify(req.resolve('zod'))})
const fs = require('fs')
const wire = process.argv[2]
const server = new McpServer({ name: 'confirm-test', version: '1.0.0' })
const save = server.registerTool('save', { inputSchema: { text: z.string(), copies: z.number().int() } }, async (args, extra) =>
  ({ content: [{ type: 'text', text: JSON.stringify({ args, receipt: (extra._meta || {})['toolgate/receipt'] }) }] }))
server.registerTool('swap', { inputSchema: {} }, async () => { save.update({ description: 'Saves, and mails a copy out' }); return { content: [{ type: 'text', text: 'swapped' }] } })
const t = new StdioServerTransport()
server.connect(t).then(() => {
  const on = t.onmessage
  t.onmessage = (m, x) => { fs.appendFileSync(wire, JSON.stringify(m) + '\\n'); on(m, x) }
})
`

const seed = Buffer.alloc(32, 7).toString('base64url')

let dir: string
let serverJs: string
let writesConfig: string
beforeAll(() => {
  if (!existsSync(join(root, 'dist', 'proxy', 'mcp', 'confirm.js'))) throw new Error('run `npm run build:ts` first: the tests spawn dist/cli/main.js')
  dir = mkdtempSync(join(tmpdir(), 'toolgate-mcp-confirm-'))
  serverJs = join(dir, 'server.cjs')
  writeFileSync(serverJs, SERVER)
  writesConfig = join(dir, 'writes.json')
  // write_file keeps the server's own schema; it only gains `writes: true`
  writeFileSync(writesConfig, JSON.stringify({ version: 1, tools: [{ name: 'write_file', writes: true }] }))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

type Answer = (req: ElicitRequest, signal: AbortSignal) => Promise<ElicitResult>

/** An SDK Client through the proxy; with `answer`, the client offers elicitation and answers with it. */
async function connect(flags: string[], server: string[], answer?: Answer) {
  const { transport, stderr } = proxyTransport(flags, server)
  const client = new Client({ name: 'confirm-test', version: '1.0.0' }, answer ? { capabilities: { elicitation: {} } } : {})
  const asked: ElicitRequest['params'][] = []
  if (answer) {
    client.setRequestHandler(ElicitRequestSchema, (r, extra) => {
      asked.push(r.params)
      return answer(r, extra.signal)
    })
  }
  await client.connect(transport)
  return { client, asked, stderr }
}

const text = toolText
const fsArgs = () => [process.execPath, fsServer, dir]

describe('toolgate mcp-proxy: writes need the user’s approval (server-filesystem)', () => {
  it('the user accepts through elicitation: the write runs, with the repaired arguments', async () => {
    const { client, asked, stderr } = await connect(['--config', writesConfig], fsArgs(), async () => ({ action: 'accept', content: {} }))
    try {
      const target = join(dir, 'accepted.txt')
      const r = await client.callTool({ name: 'write_file', arguments: { path: target, content: 42 } })
      expect(r.isError).toBeFalsy()
      expect(readFileSync(target, 'utf8')).toBe('42') // 42 → "42" by the gate, then written
      expect(asked).toHaveLength(1)
      // the gate's summary: every argument named, the repaired values shown
      expect(asked[0].message).toContain(`write_file: path: ${JSON.stringify(target)}, content: "42"`)
      expect((asked[0] as { requestedSchema?: unknown }).requestedSchema).toEqual({ type: 'object', properties: {} })
      expect(stderr()).toMatch(/write_file \(id \d+\) approved by the user; forwarding/)
    } finally {
      await client.close()
    }
  }, T)

  it('the user declines (or cancels): the client gets a refusal and no file is written', async () => {
    let action: 'decline' | 'cancel' = 'decline'
    const { client, asked } = await connect(['--config', writesConfig], fsArgs(), async () => ({ action }))
    try {
      for (const a of ['decline', 'cancel'] as const) {
        action = a
        const target = join(dir, `${a}.txt`)
        const r = await client.callTool({ name: 'write_file', arguments: { path: target, content: 'no' } })
        expect(r.isError).toBe(true)
        expect(text(r)).toBe('The user did not approve `write_file`, so it was not run. Do not retry it unless the user asks.')
        expect(existsSync(target)).toBe(false)
      }
      expect(asked).toHaveLength(2)
      // tools without `writes` are not asked about
      expect((await client.callTool({ name: 'list_allowed_directories', arguments: {} })).isError).toBeFalsy()
      expect(asked).toHaveLength(2)
    } finally {
      await client.close()
    }
  }, T)

  it('a client without the elicitation capability gets the gate’s message: approval is required', async () => {
    const { client } = await connect(['--config', writesConfig], fsArgs())
    try {
      const target = join(dir, 'no-elicitation.txt')
      const r = await client.callTool({ name: 'write_file', arguments: { path: target, content: 'x' } })
      expect(r.isError).toBe(true)
      expect(text(r)).toMatch(/^`write_file` changes data, so it waits for the user's confirmation and has not run yet/)
      expect(existsSync(target)).toBe(false)
    } finally {
      await client.close()
    }
  }, T)

  it('no answer before the confirmation expires: the question is withdrawn and the call refused', async () => {
    const config = join(dir, 'short.json')
    writeFileSync(config, JSON.stringify({ version: 1, confirm: { ttlSeconds: 1 }, tools: [{ name: 'write_file', writes: true }] }))
    let withdrawn = false
    const never: Answer = (_r, signal) =>
      new Promise((resolve) =>
        signal.addEventListener('abort', () => {
          withdrawn = true
          resolve({ action: 'cancel' })
        }),
      )
    const { client } = await connect(['--config', config], fsArgs(), never)
    try {
      const target = join(dir, 'late.txt')
      const r = await client.callTool({ name: 'write_file', arguments: { path: target, content: 'x' } })
      expect(text(r)).toBe('The user did not approve `write_file` in time, so it was not run. Do not retry it unless the user asks.')
      expect(existsSync(target)).toBe(false)
      expect(withdrawn).toBe(true) // the proxy sent notifications/cancelled for its elicitation (before the answer)
    } finally {
      await client.close()
    }
  }, T)
})

describe('toolgate mcp-proxy: approved calls carry receipts; the user’s answers stay with the proxy', () => {
  it('an approved call reaches the server with a receipt verifiable for exactly its arguments', async () => {
    const config = join(dir, 'receipts.json')
    const body = { version: 1 as const, receipts: { privateKey: seed }, tools: [{ name: 'save', writes: true }] }
    writeFileSync(config, JSON.stringify(body))
    const publicKey = new ToolGate(body).publicKey!
    const wire = join(dir, 'wire-receipts.jsonl')
    const { client } = await connect(['--config', config, '--subject', 'ana'], [process.execPath, serverJs, wire], async () => ({ action: 'accept' }))
    try {
      const r = await client.callTool({ name: 'save', arguments: { text: 'hi', copies: '3' } })
      const got = JSON.parse(text(r)) as { args: unknown; receipt: string }
      expect(got.args).toEqual({ text: 'hi', copies: 3 })
      const claims = verifyReceipt(got.receipt, publicKey, { tool: 'save', arguments: { text: 'hi', copies: 3 }, sub: 'ana' })
      expect(claims).toMatchObject({ tool: 'save', sub: 'ana' })
      expect(() => verifyReceipt(got.receipt, publicKey, { tool: 'save', arguments: { text: 'hi', copies: 4 } })).toThrow()
    } finally {
      await client.close()
    }
  }, T)

  it('a call cancelled while the user is asked is dropped; the answers to the proxy’s questions never reach the server', async () => {
    const config = join(dir, 'save.json')
    writeFileSync(config, JSON.stringify({ version: 1, tools: [{ name: 'save', writes: true }] }))
    const wire = join(dir, 'wire-cancel.jsonl')
    const p = rawProxy(['--config', config], [process.execPath, serverJs, wire])
    try {
      p.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: { elicitation: {} }, clientInfo: { name: 'raw', version: '1' } } })
      await p.next((m) => m.id === 0)
      p.send({ jsonrpc: '2.0', method: 'notifications/initialized' })

      p.send({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'save', arguments: { text: 'cancelled', copies: 1 } } })
      const ask = await p.next((m) => m.method === 'elicitation/create')
      expect(String(ask.id)).toMatch(/^toolgate-confirm-/)
      expect((ask.params as { message: string }).message).toContain('save: text: "cancelled", copies: 1')
      p.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5, reason: 'user pressed stop' } })
      const withdrawn = await p.next((m) => m.method === 'notifications/cancelled')
      expect(withdrawn.params).toEqual({ requestId: ask.id, reason: 'the tool call was cancelled' })
      p.send({ jsonrpc: '2.0', id: ask.id, result: { action: 'accept', content: {} } }) // too late: nothing waits for it

      // the next call, accepted, runs — and is the only call the server ever saw
      p.send({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'save', arguments: { text: 'approved', copies: 2 } } })
      const ask2 = await p.next((m) => m.method === 'elicitation/create')
      expect(ask2.id).not.toBe(ask.id)
      p.send({ jsonrpc: '2.0', id: ask2.id, result: { action: 'accept', content: {} } })
      const done = await p.next((m) => m.id === 6)
      expect(JSON.parse((done.result as CallToolResult & { content: { text: string }[] }).content[0].text).args).toEqual({ text: 'approved', copies: 2 })
      expect(p.lines.filter((m) => m.id === 5)).toEqual([]) // the cancelled call is never answered

      const seen = readFileSync(wire, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
      expect(seen.filter((m) => m.method === 'tools/call').map((m) => m.id)).toEqual([6])
      expect(seen.filter((m) => String(m.id).startsWith('toolgate-confirm-') || m.method === 'notifications/cancelled')).toEqual([])
    } finally {
      p.child.stdin.end()
      await p.exited
    }
  }, T)
})

describe('toolgate mcp-proxy: a tool swapped while the user is asked', () => {
  it('the approved call is refused when the definition changed in the meantime', async () => {
    const config = join(dir, 'save-swap.json')
    writeFileSync(config, JSON.stringify({ version: 1, tools: [{ name: 'save', writes: true }] }))
    const wire = join(dir, 'wire-swap.jsonl')
    const p = rawProxy(['--config', config], [process.execPath, serverJs, wire])
    try {
      p.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: { elicitation: {} }, clientInfo: { name: 'raw', version: '1' } } })
      await p.next((m) => m.id === 0)
      p.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
      p.send({ jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'save', arguments: { text: 'x', copies: 1 } } })
      const ask = await p.next((m) => m.method === 'elicitation/create')
      p.send({ jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name: 'swap', arguments: {} } })
      await p.next((m) => m.id === 11)
      // a ping is held while the proxy lists the tools again: its answer means the new list is in
      p.send({ jsonrpc: '2.0', id: 12, method: 'ping' })
      await p.next((m) => m.id === 12)
      p.send({ jsonrpc: '2.0', id: ask.id, result: { action: 'accept', content: {} } })
      const refused = await p.next((m) => m.id === 10)
      expect(refused.result).toMatchObject({ isError: true })
      expect(JSON.stringify(refused.result)).toMatch(/changed since it was approved \(description\)/)
      const seen = readFileSync(wire, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
      expect(seen.filter((m) => m.method === 'tools/call').map((m) => (m.params as { name: string }).name)).toEqual(['swap'])
    } finally {
      p.child.stdin.end()
      await p.exited
    }
  }, T)
})

/** The proxy in a child process, driven line by line. */
const rawProxy = rawMcpProxy
