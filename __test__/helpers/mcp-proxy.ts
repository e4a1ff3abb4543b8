// Test helpers for `toolgate mcp-proxy`: the built CLI (dist/cli/main.js, from `npm run
// build:ts`) as an SDK client's stdio transport or as a plain command, and reading a tool
// result's text.
import { spawn } from 'node:child_process'
import { join } from 'node:path'

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
