// Test helpers for `toolgate mcp-proxy`: the built CLI (dist/cli/main.js, from `npm run
// build:ts`) as an SDK client's stdio transport, as a plain command, or driven with raw JSON-RPC
// lines; reading a tool result's text; the check both transports run in front of
// server-filesystem; and a raw HTTP request to a listener.
import { spawn, type ChildProcess, type ChildProcessByStdio } from 'node:child_process'
import { existsSync } from 'node:fs'
import { request, type IncomingHttpHeaders } from 'node:http'
import type { Readable, Writable } from 'node:stream'
import { join } from 'node:path'
import { expect } from 'vitest'

import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'

/** The repository root (the proxies' working directory in tests). */
export const root = join(__dirname, '..', '..')
/** The built CLI. */
export const cli = join(root, 'dist', 'cli', 'main.js')

/** A stdio transport that runs `toolgate mcp-proxy FLAGS -- SERVER…`, and what the proxy wrote to stderr so far. */
export function proxyTransport(flags: string[], server: string[]): { transport: StdioClientTransport; stderr: () => string } {
  const transport = new StdioClientTransport({ command: process.execPath, args: [cli, 'mcp-proxy', ...flags, '--', ...server], stderr: 'pipe', cwd: root })
  let stderr = ''
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
  return { transport, stderr: () => stderr }
}

/** Runs `toolgate mcp-proxy ARGS` with no input to its end: exit code, stdout and stderr. */
export function runMcpProxyCli(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [cli, 'mcp-proxy', ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    c.stdout.on('data', (d: Buffer) => (out += d.toString()))
    c.stderr.on('data', (d: Buffer) => (err += d.toString()))
    c.on('exit', (code) => resolve({ code, out, err }))
  })
}

/** A `tools/call` answer, checked against the SDK's schema. */
export const toolResult = (r: unknown): CallToolResult => CallToolResultSchema.parse(r) as CallToolResult
/** The text of a tool result's first content block. */
export const toolText = (r: unknown): string => (toolResult(r).content[0] as { text: string }).text

/** A `toolgate mcp-proxy` child driven with raw JSON-RPC lines (see {@link rawMcpProxy}). */
export interface RawMcpProxy {
  child: ChildProcessByStdio<Writable, Readable, Readable>
  /** Writes one message (an object, or a line as it is) to the proxy's stdin. */
  send(m: unknown): void
  /** The first message not yet taken that matches `pred` (waits for it), taken. */
  next(pred: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>
  /** Waits until `pred()` holds (checked after every line the proxy writes). */
  until(pred: () => boolean): Promise<void>
  /** initialize (id 0) and notifications/initialized, as a client does. */
  handshake(): Promise<void>
  /** Every message the proxy wrote to stdout so far, taken or not. */
  lines: Record<string, unknown>[]
  stderr(): string
  exited: Promise<number | null>
}

/** Spawns `node dist/cli/main.js mcp-proxy FLAGS -- SERVER…` with piped stdio, to see raw answers and its exit code. */
export function rawMcpProxy(flags: string[], server: string[]): RawMcpProxy {
  const child = spawn(process.execPath, [cli, 'mcp-proxy', ...flags, '--', ...server], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] })
  const lines: Record<string, unknown>[] = []
  const untaken: Record<string, unknown>[] = []
  const waiters: (() => void)[] = []
  let buf = ''
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  child.stdout.on('data', (d: Buffer) => {
    buf += d.toString()
    let i: number
    while ((i = buf.indexOf('\n')) >= 0) {
      const m = JSON.parse(buf.slice(0, i)) as Record<string, unknown>
      lines.push(m)
      untaken.push(m)
      buf = buf.slice(i + 1)
    }
    for (const w of waiters.splice(0)) w()
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const send = (m: unknown) => void child.stdin.write((typeof m === 'string' ? m : JSON.stringify(m)) + '\n')
  const wait = () => new Promise<void>((r) => waiters.push(r))
  const next = async (pred: (m: Record<string, unknown>) => boolean) => {
    for (;;) {
      const i = untaken.findIndex(pred)
      if (i >= 0) return untaken.splice(i, 1)[0]
      await wait()
    }
  }
  const until = async (pred: () => boolean) => {
    while (!pred()) await wait()
  }
  const handshake = async () => {
    send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })
    await next((m) => m.id === 0)
    send({ jsonrpc: '2.0', method: 'notifications/initialized' })
  }
  return { child, send, next, until, handshake, lines, stderr: () => stderr, exited }
}

/**
 * The MCP URL a `mcp-proxy --listen 127.0.0.1:0` child prints once it listens (its stderr must be
 * piped); rejects with what it printed if it exits first. `stderr()` is all it printed so far.
 */
export async function listenerUrl(child: ChildProcess): Promise<{ url: string; stderr: () => string }> {
  let stderr = ''
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString()
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stderr)
      if (m) resolve(m[1])
    })
    child.on('exit', (code) => reject(new Error(`the CLI exited (${code}) before listening:\n${stderr}`)))
  })
  return { url, stderr: () => stderr }
}

/**
 * `client`, through the proxy in front of server-filesystem serving `dir` (which holds `five.txt`,
 * five lines): the tools are listed, a real read passes, `head: "2"` is repaired to 2 (the
 * server's own schema wants a number; `log()` is what the proxy logged) and the server reads two
 * lines, and a `write_file` whose `content` is not a string is refused by the gate, never written.
 */
export async function expectFilesystemGated(client: Client, dir: string, log: () => string): Promise<void> {
  const names = (await client.listTools()).tools.map((t) => t.name)
  expect(names).toEqual(expect.arrayContaining(['read_text_file', 'write_file', 'list_allowed_directories']))

  const read = await client.callTool({ name: 'read_text_file', arguments: { path: join(dir, 'five.txt') } })
  expect(read.isError).toBeFalsy()
  expect(toolText(read)).toBe('one\ntwo\nthree\nfour\nfive\n')

  const head = await client.callTool({ name: 'read_text_file', arguments: { path: join(dir, 'five.txt'), head: '2' } })
  expect(head.isError).toBeFalsy()
  expect(toolText(head).split('\n').filter(Boolean)).toEqual(['one', 'two'])
  expect(log()).toMatch(/repaired read_text_file .*StringToFloat \/head/)

  // a bad type (no safe repair): answered by the gate, the file is never written
  const target = join(dir, 'never.txt')
  const bad = await client.callTool({ name: 'write_file', arguments: { path: target, content: { not: 'a string' } } })
  expect(bad.isError).toBe(true)
  expect(toolText(bad)).toMatch(/^Invalid arguments for tool `write_file`:\n- `content`: expected string/)
  expect(existsSync(target)).toBe(false)
}

/**
 * One raw HTTP request to an MCP listener (POST of JSON by default, accepting JSON or SSE), to set
 * what an SDK client would not (Host, Origin, sizes, a stolen session id) as a browser or an
 * attacker would; answers the status, headers and whole body.
 */
export function rawMcpRequest(url: string, o: { method?: string; headers?: Record<string, string>; body?: string }): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: o.method ?? 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...o.headers } }, (res) => {
      let body = ''
      res.on('data', (d: Buffer) => (body += d.toString()))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
    })
    req.on('error', reject)
    req.end(o.body)
  })
}
