// `toolgate mcp-proxy`: front an MCP server (spawned, stdio) and gate the client's tools/call.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { extname } from 'node:path'
import { parse as parseYaml } from 'yaml'

import { ToolGate } from '../gate'
import { runMcpProxy } from '../proxy/mcp'
import type { CallContext, ToolGateConfig } from '../types'

const DEFAULT_MAX = 16 * 1024 * 1024

const USAGE = 'toolgate mcp-proxy [flags] -- <server command…>   front an MCP server over stdio'

const HELP = `toolgate mcp-proxy — front an MCP server (stdio) and gate every tools/call

Usage:
  toolgate mcp-proxy [flags] -- <server command> [server args…]

The proxy spawns the server and speaks MCP over its own stdin/stdout to the client. Every
message passes through unchanged, except the client's tools/call requests: each is checked
against the tool's inputSchema (learned from the server's own tools/list; --config tools win
for their names). An allowed call is forwarded with its repaired arguments; a refused call is
answered to the client directly (isError: true with the gate's message, or a -32602 error for
malformed params) and never reaches the server. After the client's initialized notification
the proxy lists the server's tools itself (ids "toolgate-…", never shown to the client) and
holds the client's messages until that list is in. Logs go to stderr; stdout is protocol only.
When the server exits, requests still waiting get a JSON-RPC error (-32000) and the proxy
exits with the server's code.

Flags:
  --config FILE            toolgate config (.json, .yaml): tools declared here win over the
                           server's tool of the same name (without inputSchema: the server's)
  --filter-list            tools/list answers show only what the gate keeps; with --config
                           tools, only those tools are listed and callable (an allowlist)
  --subject NAME           who is calling (CallContext.subject)
  --role ROLE              a role of the caller (repeatable)
  --session ID             session for loop and taint state
  --max-message-bytes N    largest JSON-RPC line from either side (default ${DEFAULT_MAX})
  -h, --help               this text

Examples:
  toolgate mcp-proxy -- npx -y @modelcontextprotocol/server-filesystem /path/to/dir
  toolgate mcp-proxy --config toolgate.config.yaml --filter-list -- node my-server.js

  Claude Desktop / Cursor (mcpServers in claude_desktop_config.json or .cursor/mcp.json):
    {
      "mcpServers": {
        "filesystem": {
          "command": "npx",
          "args": ["toolgate", "mcp-proxy", "--", "npx", "-y",
                   "@modelcontextprotocol/server-filesystem", "/path"]
        }
      }
    }
  On Windows use "npx.cmd" for both commands (or "cmd" with ["/c", "npx", …]).

Not built yet: the Streamable HTTP listener, tool-definition pinning, elicitation.
`

interface Parsed {
  configPath?: string
  filterList: boolean
  context: CallContext
  maxMessageBytes: number
  server: string[]
}

function parse(argv: string[]): Parsed | string {
  const out: Parsed = { filterList: false, context: {}, maxMessageBytes: DEFAULT_MAX, server: [] }
  let i = 0
  const value = (flag: string): string | undefined => {
    const v = argv[++i]
    return v === undefined || v === '--' ? undefined : v
  }
  for (; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--') {
      out.server = argv.slice(i + 1)
      break
    }
    const eq = a.indexOf('=')
    const [flag, inline] = a.startsWith('--') && eq > 0 ? [a.slice(0, eq), a.slice(eq + 1)] : [a, undefined]
    const need = (): string | undefined => inline ?? value(flag)
    switch (flag) {
      case '--config': {
        const v = need()
        if (v === undefined) return '--config needs a file'
        out.configPath = v
        break
      }
      case '--filter-list':
        if (inline !== undefined) return '--filter-list takes no value'
        out.filterList = true
        break
      case '--subject': {
        const v = need()
        if (v === undefined) return '--subject needs a name'
        out.context.subject = v
        break
      }
      case '--role': {
        const v = need()
        if (v === undefined) return '--role needs a role'
        ;(out.context.roles ??= []).push(v)
        break
      }
      case '--session': {
        const v = need()
        if (v === undefined) return '--session needs an id'
        out.context.session = v
        break
      }
      case '--max-message-bytes': {
        const v = need()
        const n = v === undefined ? NaN : Number(v)
        if (!Number.isSafeInteger(n) || n < 1024) return '--max-message-bytes needs a whole number of bytes, at least 1024'
        out.maxMessageBytes = n
        break
      }
      default:
        return `unknown flag \`${a}\` (the server command goes after \`--\`)`
    }
  }
  if (out.server.length === 0) return 'missing the server command: toolgate mcp-proxy [flags] -- <server command…>'
  return out
}

function loadConfig(path: string): ToolGateConfig {
  const raw = readFileSync(path, 'utf8')
  const ext = extname(path).toLowerCase()
  const config = (ext === '.yaml' || ext === '.yml' ? parseYaml(raw, { maxAliasCount: 100, uniqueKeys: true }) : JSON.parse(raw)) as ToolGateConfig
  ToolGate.fromFile(path) // the gate's own checks and error messages, naming the file
  return config
}

/** `toolgate mcp-proxy`. */
export const command = {
  usage: USAGE,
  run(argv: string[]): number | Promise<number> {
    const dash = argv.indexOf('--')
    const own = dash < 0 ? argv : argv.slice(0, dash)
    if (own.includes('--help') || own.includes('-h')) {
      process.stdout.write(HELP)
      return 0
    }
    const p = parse(argv)
    if (typeof p === 'string') {
      process.stderr.write(`toolgate mcp-proxy: ${p}\n`)
      return 2
    }
    let config: ToolGateConfig | undefined
    if (p.configPath !== undefined) {
      try {
        config = loadConfig(p.configPath)
      } catch (err) {
        process.stderr.write(`toolgate mcp-proxy: ${(err as Error).message}\n`)
        return 2
      }
    }
    const log = (line: string) => process.stderr.write(`toolgate mcp-proxy: ${line}\n`)
    const [cmd, ...args] = p.server
    // Windows: a .cmd/.bat (npx.cmd) runs only through the shell (Node refuses it otherwise).
    const viaShell = process.platform === 'win32' && /\.(cmd|bat)$/i.test(cmd)
    const quote = (a: string) => (/^[\w\-.:\\/=@]+$/.test(a) ? a : `"${a.replace(/"/g, '""')}"`)
    const child = viaShell
      ? spawn([cmd, ...args].map(quote).join(' '), { stdio: ['pipe', 'pipe', 'inherit'], shell: true })
      : spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] })
    const forward = (sig: NodeJS.Signals) => () => {
      if (child.exitCode === null && child.signalCode === null) child.kill(sig)
    }
    process.on('SIGINT', forward('SIGINT'))
    process.on('SIGTERM', forward('SIGTERM'))
    return runMcpProxy({ config, context: p.context, filterList: p.filterList, maxMessageBytes: p.maxMessageBytes, log }, process.stdin, process.stdout, child).then((code) => {
      // stdin may still hold the event loop open
      process.stdin.destroy()
      return code
    })
  },
}
