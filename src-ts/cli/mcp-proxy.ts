// `toolgate mcp-proxy`: front an MCP server (spawned, stdio) and gate the client's tools/call.
import { spawn } from 'node:child_process'
import { dirname, isAbsolute, resolve } from 'node:path'

import { ToolGate } from '../gate'
import type { McpProxyOptions } from '../proxy/mcp/proxy'
import { runMcpProxy } from '../proxy/mcp/stdio'
import { listenMcpHttp } from '../proxy/mcp/http'
import { prepareIdentityReload, serverIdentity, type ServerIdentity, type ServerVerifier } from '../identity/servers'
import { isLoopbackHost } from '../proxy/mcp/http-guard'
import { ToolPins } from '../proxy/mcp/pins'
import { McpConfigReloads } from '../proxy/mcp/reload'
import { GateState } from '../state'
import { redactSecrets, redactUrl } from '../proxy/redact-url'
import type { CallContext, ToolGateConfig } from '../types'
import { parseFlags, UsageError, type FlagSpec } from './args'
import { deferredLog } from './log'
import { loadProxyConfig } from './proxy-config'

const DEFAULT_MAX = 16 * 1024 * 1024

const USAGE = 'toolgate mcp-proxy [flags] -- <server command…>   front an MCP server (stdio, or --listen for HTTP)'

const HELP = `toolgate mcp-proxy — front an MCP server (stdio, or Streamable HTTP with --listen) and gate every tools/call

Usage:
  toolgate mcp-proxy [flags] -- <server command> [server args…]
  toolgate mcp-proxy --listen [HOST:]PORT [flags] (-- <server command…> | --upstream-url URL)

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

Tool definitions are pinned: the first definition the server lists for a tool (name, title,
description, inputSchema, outputSchema, annotations) is approved; if the server later lists a
different one, calls to that tool are refused until an operator accepts the change. With
--pins-file the pins persist, so a server cannot swap a tool between runs either.

Tools with "writes": true in the config need the user's approval: when the client offers MCP
elicitation, the proxy asks the user (elicitation/create) and runs the call on "accept";
otherwise the call is refused with a message saying approval is required.

Flags:
  --config FILE            toolgate config (.json, .yaml): tools declared here win over the
                           server's tool of the same name (without inputSchema: the server's);
                           its "proxy" section sets subject, roles, session, acceptToolChanges
                           and pinsFile (flags win; paths are relative to the config file)
  --filter-list            tools/list answers show only what the gate keeps (and no tool whose
                           definition changed); with --config tools, only those tools are
                           listed and callable (an allowlist)
  --subject NAME           who is calling (CallContext.subject)
  --role ROLE              a role of the caller (repeatable; replaces the config's roles)
  --session ID             session for loop and taint state
  --state-url URL          keep loop, taint, rate-limit and confirmation state in Redis
                           (redis://host:port[/db]), shared by every proxy using it; wins over
                           the config's state.redis.url (docs/state.md)
  --pins-file FILE         keep approved tool definitions in FILE across runs (created if
                           missing; a corrupt file is an error: exit 2)
  --accept-tool-changes[=NAME,…]
                           accept changed definitions (of every tool, or of the named ones)
                           and pin them anew
  --max-message-bytes N    largest JSON-RPC message from either side (default ${DEFAULT_MAX})
  -h, --help               this text

Streamable HTTP (instead of stdio; one gated session per client, at http://HOST:PORT/mcp):
  --listen [HOST:]PORT     serve MCP over HTTP; HOST defaults to 127.0.0.1 (IPv6: [::1]:PORT;
                           port 0 picks a free one, printed on stderr)
  --allow-remote           allow a HOST that is not loopback (put TLS and the host's own
                           authentication in front; use --token-env)
  --upstream-url URL       front an HTTP MCP server instead of a spawned command
                           (config proxy.upstream)
  --allow-origin ORIGIN    a browser Origin accepted besides loopback ones (repeatable;
                           config proxy.allowedOrigins)
  --token-env NAME         clients must send "Authorization: Bearer <token>", the token read
                           from the environment variable NAME (never from the command line;
                           config proxy.bearerTokenEnv)
  With "identity" in the config (instead of --token-env), every request needs a bearer JWT of
  the configured issuer; each session is decided for, and belongs to, the verified subject; an
  HTTP upstream gets proxy.upstreamHeaders, never the client's token (docs/identity.md)

Exit codes: the server's exit code; 2 for a usage, config or pins-file error (and, with
--listen, an address that cannot be bound); 127 when the server command cannot be run;
0 when a listener is stopped by SIGINT/SIGTERM.

Examples:
  toolgate mcp-proxy -- npx -y @modelcontextprotocol/server-filesystem /path/to/dir
  toolgate mcp-proxy --config toolgate.config.yaml --filter-list -- node my-server.js
  toolgate mcp-proxy --pins-file pins.json -- node my-server.js
  toolgate mcp-proxy --pins-file pins.json --accept-tool-changes=search -- node my-server.js
  MCP_TOKEN=s3cret toolgate mcp-proxy --listen 127.0.0.1:8808 --token-env MCP_TOKEN -- node my-server.js
  toolgate mcp-proxy --listen 8808 --upstream-url http://127.0.0.1:9000/mcp

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

More: docs/mcp-proxy.md
`

interface Parsed {
  configPath?: string
  filterList: boolean
  subject?: string
  roles?: string[]
  session?: string
  pinsFile?: string
  acceptToolChanges?: true | string[]
  maxMessageBytes: number
  server: string[]
  listen?: { host: string; port: number }
  allowRemote: boolean
  upstreamUrl?: string
  allowOrigins?: string[]
  tokenEnv?: string
  stateUrl?: string
}

const FLAGS: FlagSpec = {
  values: {
    config: 'a toolgate config file (.json, .yaml)',
    subject: 'the caller subject',
    session: 'a session id',
    'state-url': 'a Redis URL (redis://host:port)',
    'pins-file': 'a file to keep approved tool definitions in',
    'max-message-bytes': 'a whole number of bytes, at least 1024',
    listen: '[HOST:]PORT (e.g. 127.0.0.1:8808, [::1]:8808 or 8808)',
    'upstream-url': 'an http:// or https:// URL of an MCP server',
    'token-env': 'the name of an environment variable',
  },
  repeatable: { role: 'a role of the caller', 'allow-origin': 'an origin (scheme://host[:port], no path)' },
  optional: { 'accept-tool-changes': 'tool names separated by commas (or no value: every tool)' },
  switches: ['filter-list', 'allow-remote', 'help'],
  aliases: { h: 'help' },
  rest: true,
}

function parse(argv: string[]): Parsed | string {
  let flags: ReturnType<typeof parseFlags>
  try {
    flags = parseFlags(argv, FLAGS)
  } catch (err) {
    if (!(err instanceof UsageError)) throw err
    return err.message.startsWith('unexpected argument') ? `${err.message} (the server command goes after \`--\`)` : err.message
  }
  const { values: v, lists, switches, optional } = flags
  const out: Parsed = { filterList: switches.has('filter-list'), allowRemote: switches.has('allow-remote'), maxMessageBytes: DEFAULT_MAX, server: flags.rest }
  out.configPath = v.config
  out.stateUrl = v['state-url']
  out.subject = v.subject
  out.session = v.session
  out.pinsFile = v['pins-file']
  out.roles = lists.role
  const accept = optional['accept-tool-changes']
  if (accept !== undefined) {
    // no value: every tool; `=a,b`: those tools (a following word is never taken as the value)
    if (accept === true) out.acceptToolChanges = true
    else {
      const names = accept.flatMap((a) => a.split(',').map((n) => n.trim()))
      if (names.some((n) => n === '')) return '--accept-tool-changes= needs tool names separated by commas (or no value: every tool)'
      out.acceptToolChanges = names
    }
  }
  if (v['max-message-bytes'] !== undefined) {
    const n = /^\d+$/.test(v['max-message-bytes']) ? Number(v['max-message-bytes']) : NaN
    if (!Number.isSafeInteger(n) || n < 1024) return '--max-message-bytes needs a whole number of bytes, at least 1024'
    out.maxMessageBytes = n
  }
  if (v.listen !== undefined) {
    const l = listenAddress(v.listen)
    if (l === undefined) return `--listen needs [HOST:]PORT (e.g. 127.0.0.1:8808, [::1]:8808 or 8808), got \`${v.listen}\``
    out.listen = l
  }
  if (v['upstream-url'] !== undefined) {
    if (!/^https?:\/\/./i.test(v['upstream-url'])) return `--upstream-url needs an http:// or https:// URL of an MCP server, got \`${redactUrl(v['upstream-url'])}\``
    out.upstreamUrl = v['upstream-url']
  }
  for (const o of lists['allow-origin'] ?? []) {
    if (!/^[a-z][a-z0-9+.-]*:\/\/[^/\s]+$/i.test(o)) return `--allow-origin needs an origin (scheme://host[:port], no path), got \`${o}\``
  }
  out.allowOrigins = lists['allow-origin']
  if (v['token-env'] !== undefined) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(v['token-env'])) return `--token-env needs the name of an environment variable, got \`${v['token-env']}\``
    out.tokenEnv = v['token-env']
  }
  if (out.listen === undefined) {
    for (const [given, flag] of [[out.upstreamUrl, '--upstream-url'], [out.allowOrigins, '--allow-origin'], [out.tokenEnv, '--token-env'], [out.allowRemote || undefined, '--allow-remote']] as const) {
      if (given !== undefined) return `${flag} needs --listen (the stdio proxy has no HTTP side)`
    }
  } else {
    if (out.upstreamUrl !== undefined && out.server.length > 0) return 'give either --upstream-url or a server command after `--`, not both'
    if (!out.allowRemote && !isLoopbackHost(out.listen.host)) return `--listen ${out.listen.host} is not a loopback address; add --allow-remote to serve other hosts (and --token-env)`
    return out // the upstream may still come from the config (proxy.upstream)
  }
  if (out.server.length === 0) return 'missing the server command: toolgate mcp-proxy [flags] -- <server command…>'
  return out
}

/** `[HOST:]PORT`, `[v6]:PORT`: host defaults to 127.0.0.1. */
function listenAddress(v: string): { host: string; port: number } | undefined {
  const m = /^(?:(\[[0-9a-fA-F:.]+\]|[^:[\]\s]+):)?(\d{1,5})$/.exec(v)
  if (!m) return undefined
  const port = Number(m[2])
  if (port > 65535) return undefined
  const host = m[1] === undefined ? '127.0.0.1' : m[1].startsWith('[') ? m[1].slice(1, -1) : m[1]
  return { host, port }
}

/**
 * Reads the config file the gate will use (checked by the gate itself, errors naming the file).
 * Paths inside it are made absolute against the file's folder, since the proxy builds its gates
 * from the parsed object (see {@link readConfig}).
 */
function loadConfig(path: string): ToolGateConfig {
  // the gate's own checks and error messages, naming the file; rule globs may name tools the
  // server lists later (each still unmatched is logged once the list is known)
  ToolGate.fromFile(path, { learnsTools: true })
  return readConfig(path)
}

/**
 * The config file parsed as `toolgate proxy` reads it (paths absolute, the receipt key inline:
 * `generatedKey`, or one generated now when `receipts` names none, so every session's gate and
 * every reload sign with one key), plus `proxy.pinsFile` made absolute. Not compiled here.
 */
function readConfig(path: string, generatedKey?: string): ToolGateConfig {
  const config = loadProxyConfig(path, generatedKey)
  if (config.audit?.stdout === true) {
    throw new Error(`config file ${path}: \`audit.stdout\` cannot be used with mcp-proxy (stdout carries the protocol); use \`audit.jsonl\``)
  }
  if (typeof config.proxy?.pinsFile === 'string' && !isAbsolute(config.proxy.pinsFile)) {
    config.proxy = { ...config.proxy, pinsFile: resolve(dirname(resolve(path)), config.proxy.pinsFile) }
  }
  return config
}

/** The caller identity and pin settings: flags win over the config's `proxy` section. */
function settings(p: Parsed, config: ToolGateConfig | undefined): { context: CallContext; pinsFile?: string; accept?: boolean | string[] } {
  const proxy = config?.proxy ?? {}
  const context: CallContext = {}
  const subject = p.subject ?? proxy.subject
  const roles = p.roles ?? proxy.roles
  const session = p.session ?? proxy.session
  if (subject !== undefined) context.subject = subject
  if (roles !== undefined) context.roles = roles
  if (session !== undefined) context.session = session
  return { context, pinsFile: p.pinsFile ?? proxy.pinsFile, accept: p.acceptToolChanges ?? proxy.acceptToolChanges }
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
      process.stderr.write(`toolgate mcp-proxy: ${redactSecrets(p)}\n`)
      return 2
    }
    let config: ToolGateConfig | undefined
    let pins: ToolPins
    let s: ReturnType<typeof settings>
    let state: GateState
    try {
      if (p.configPath !== undefined) config = loadConfig(p.configPath)
      s = settings(p, config)
      pins = new ToolPins({ file: s.pinsFile, accept: s.accept })
      // one store for every gate (and every --listen session): in memory, or Redis (the flag wins)
      state = GateState.forConfig(config?.state, p.stateUrl)
    } catch (err) {
      process.stderr.write(`toolgate mcp-proxy: ${redactSecrets((err as Error).message)}\n`)
      return 2
    }
    // batched once per event-loop turn: a repaired or refused call's line costs the call nothing
    const log = deferredLog('toolgate mcp-proxy: ')
    const proxyOpts: McpProxyOptions = { config, context: s.context, filterList: p.filterList, pins, log, state }
    // the listener's verifier once it is built (identity): a reload replaces what it verifies against
    const door: Door = {}
    if (p.configPath !== undefined) proxyOpts.reloads = reloadOnHangup(p.configPath, config, state, log, door)
    if (p.listen !== undefined) return listen(p, config, proxyOpts, door)
    if ((config as { identity?: unknown } | undefined)?.identity !== undefined) {
      process.stderr.write('toolgate mcp-proxy: config `identity` needs --listen (the stdio proxy has no requests to take bearer tokens from; docs/identity.md)\n')
      return 2
    }
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
    return runMcpProxy({ ...proxyOpts, maxMessageBytes: p.maxMessageBytes }, process.stdin, process.stdout, child).then((code) => {
      // stdin may still hold the event loop open
      process.stdin.destroy()
      return code
    })
  },
}

/** The verifier of the listener's door (identity configured), set once the listener is built. */
interface Door {
  verifier?: ServerVerifier
}

/**
 * SIGHUP reloads the config file: read and compiled for every running proxy (each session of the
 * listener), its `identity.jwt` built into a verifier, then all swapped in at once, keeping all
 * state; a config that does not compile or whose identity block does not build leaves the
 * running one in place, and the log says why. Identity cannot be turned on or off by a reload;
 * the `proxy` and `state` blocks are read at start only (a change to them is logged as needing a
 * restart). Reloads run one at a time, in the order the signals came.
 */
function reloadOnHangup(path: string, config: ToolGateConfig | undefined, state: GateState, log: (line: string) => void, door: Door): McpConfigReloads {
  const reloads = new McpConfigReloads(config, state)
  const startOnly = (c: ToolGateConfig | undefined) => JSON.stringify([c?.proxy, c?.state])
  const atStart = startOnly(config)
  let reloading = Promise.resolve()
  process.on('SIGHUP', () => {
    reloading = reloading.then(async () => {
      let next: ToolGateConfig
      let n: number
      let identityChanged: boolean
      try {
        next = readConfig(path, config?.receipts?.privateKey)
        const identity = await prepareIdentityReload(door.verifier, next)
        n = reloads.reload(next) // throws before anything is swapped
        identity.commit()
        identityChanged = identity.changed
      } catch (err) {
        const why = redactSecrets((err as Error).message)
        log(`SIGHUP: the config was not reloaded, the running one stays: ${why.startsWith('config file ') ? why : `config file ${path}: ${why}`}`)
        return
      }
      log(`SIGHUP: config reloaded from ${path} (${n === 1 ? '1 proxy' : `${n} proxies`} running)`)
      if (identityChanged) log('SIGHUP: identity: tokens are verified against the reloaded `identity.jwt` from now on')
      if (startOnly(next) !== atStart) log('SIGHUP: the `proxy` and `state` blocks are read at start only; restart the proxy for their changes')
    })
  })
  return reloads
}

/** `--listen`: serve the proxy over Streamable HTTP until SIGINT/SIGTERM (exit 0). */
async function listen(p: Parsed, config: ToolGateConfig | undefined, proxyOpts: McpProxyOptions, door: Door): Promise<number> {
  const fail = (why: string) => {
    // through the same queue as the lines before it, so they stay in order
    if (proxyOpts.log !== undefined) proxyOpts.log(why)
    else process.stderr.write(`toolgate mcp-proxy: ${redactSecrets(why)}\n`)
    return 2
  }
  const proxy = config?.proxy ?? {}
  const url = p.upstreamUrl ?? (p.server.length === 0 ? proxy.upstream : undefined)
  if (p.server.length === 0 && url === undefined) return fail('--listen needs an upstream: a server command after `--`, --upstream-url, or proxy.upstream in the config')
  if (url !== undefined && !/^https?:\/\/./i.test(url)) return fail(`config proxy.upstream: expected an http:// or https:// URL of an MCP server, got \`${redactUrl(url)}\``)
  // identity (docs/identity.md): verified callers instead of a fixed one; the upstream's own headers
  let ident: ServerIdentity
  try {
    const given = [['--subject', p.subject], ['--role', p.roles], ['--session', p.session], ['proxy.subject', proxy.subject], ['proxy.roles', proxy.roles], ['proxy.session', proxy.session]]
    ident = await serverIdentity(config, given.filter(([, v]) => v !== undefined).map(([f]) => f as string))
  } catch (err) {
    return fail((err as Error).message)
  }
  door.verifier = ident.verifier
  if (ident.verifier !== undefined && (p.tokenEnv ?? proxy.bearerTokenEnv) !== undefined) return fail('config `identity` and --token-env (proxy.bearerTokenEnv) both read Authorization; give one')
  if (url === undefined && Object.keys(ident.upstreamHeaders).length > 0) proxyOpts.log?.('note: proxy.upstreamHeaders apply to an HTTP upstream only; a spawned server takes its credentials from its environment')
  const tokenEnv = p.tokenEnv ?? proxy.bearerTokenEnv
  let bearerToken: string | undefined
  if (tokenEnv !== undefined) {
    bearerToken = process.env[tokenEnv]?.trim()
    if (!bearerToken) return fail(`${p.tokenEnv !== undefined ? '--token-env' : 'config proxy.bearerTokenEnv'}: the environment variable ${tokenEnv} is not set`)
  }
  if (!isLoopbackHost(p.listen!.host) && bearerToken === undefined && ident.verifier === undefined) proxyOpts.log?.(`warning: serving ${p.listen!.host} without a bearer token (--token-env); anyone who can reach it can call the tools`)
  let listener: Awaited<ReturnType<typeof listenMcpHttp>>
  try {
    listener = await listenMcpHttp({
      ...proxyOpts,
      host: p.listen!.host,
      port: p.listen!.port,
      upstream: url !== undefined ? { url } : { command: p.server },
      maxMessageBytes: p.maxMessageBytes,
      allowedOrigins: p.allowOrigins ?? proxy.allowedOrigins ?? [],
      bearerToken,
      identity: ident.verifier,
      upstreamHeaders: ident.upstreamHeaders,
    })
  } catch (err) {
    return fail((err as Error).message)
  }
  // the listener has said where it listens (once)
  const l = listener
  return new Promise<number>((resolve) => {
    let stopping = false
    const stop = (sig: NodeJS.Signals) => () => {
      if (stopping) return
      stopping = true
      proxyOpts.log?.(`${sig}: closing the listener`)
      l.close().then(
        () => resolve(0),
        (err: Error) => {
          proxyOpts.log?.(`closing the listener failed: ${err.message}`)
          resolve(1)
        },
      )
    }
    process.once('SIGINT', stop('SIGINT'))
    process.once('SIGTERM', stop('SIGTERM'))
  })
}
