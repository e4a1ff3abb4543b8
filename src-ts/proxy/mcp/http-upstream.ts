// The MCP server behind one session of the HTTP listener: a process spawned for the session
// (stdio, newline-delimited JSON-RPC) or a session of its own with an HTTP MCP server (the SDK's
// StreamableHTTPClientTransport). Both report what the server says, which requests could not be
// delivered, and when the server is gone; both are ended with `close()`.
import { spawn, type ChildProcess } from 'node:child_process'

import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'

import { readLines, writeMessage, type LineEvent, type RpcId } from './jsonrpc-lines'
import { loadMcpSdk } from './sdk'
import { redactUrl } from '../redact-url'

/** Where an upstream reports to. */
export interface UpstreamEvents {
  /** A raw line from a stdio server. */
  line(e: LineEvent): void
  /** A parsed message from an HTTP server. */
  message(msg: unknown): void
  /** Requests (their ids) that will never be answered, and why. */
  undelivered(ids: RpcId[], why: string): void
  /** The server is gone (exited, could not start). Reported once. */
  closed(why: string): void
  log(line: string): void
}

/** One session's MCP server. */
export interface Upstream {
  /** Sends one message (failures come back through {@link UpstreamEvents}). */
  send(msg: unknown): void
  /** Ends it: the process is stopped (stdin closed, then SIGTERM, then SIGKILL), the HTTP session deleted. */
  close(): Promise<void>
  /** For HTTP upstreams: the protocol version to announce once negotiated. */
  setProtocolVersion(version: string): void
}

/** How long a stdio server gets to exit after its stdin is closed, before SIGTERM (and again before SIGKILL). */
const EXIT_GRACE_MS = 2000

/** Spawns `command` with its stdin/stdout piped (stderr goes to ours). */
export function stdioUpstream(command: string[], maxMessageBytes: number, ev: UpstreamEvents): Upstream {
  const [cmd, ...args] = command
  // Windows: a .cmd/.bat (npx.cmd) runs only through the shell (Node refuses it otherwise).
  const viaShell = process.platform === 'win32' && /\.(cmd|bat)$/i.test(cmd)
  const quote = (a: string) => (/^[\w\-.:\\/=@]+$/.test(a) ? a : `"${a.replace(/"/g, '""')}"`)
  const child: ChildProcess = viaShell
    ? spawn([cmd, ...args].map(quote).join(' '), { stdio: ['pipe', 'pipe', 'inherit'], shell: true })
    : spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] })
  let closedWhy: string | undefined
  const exited = new Promise<void>((resolve) => {
    const gone = (why: string) => {
      if (closedWhy !== undefined) return
      closedWhy = why
      ev.log(why)
      ev.closed(why)
      resolve()
    }
    child.on('error', (err) => gone(`the MCP server could not be started (${err.message})`))
    child.on('exit', (code, signal) => {
      const why = signal ? `the MCP server was killed by ${signal}` : `the MCP server exited with code ${code}`
      // Let its last lines (already in the pipe) through before answering the rest.
      const out = child.stdout!
      if (out.readableEnded || out.destroyed) gone(why)
      else {
        out.once('close', () => gone(why))
        setTimeout(() => gone(why), 1000).unref()
      }
    })
  })
  child.stdin!.on('error', (err) => ev.log(`writing to the MCP server failed: ${err.message}`))
  readLines(child.stdout!, maxMessageBytes, (e) => ev.line(e), () => {})
  return {
    send(msg) {
      if (!writeMessage(child.stdin!, msg)) ev.log('the MCP server’s stdin is closed; message dropped')
    },
    async close() {
      if (closedWhy !== undefined || child.exitCode !== null || child.signalCode !== null) return
      child.stdin!.end()
      const waited = (ms: number) => Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())])
      if (await waited(EXIT_GRACE_MS)) return
      child.kill('SIGTERM')
      if (await waited(EXIT_GRACE_MS)) return
      child.kill('SIGKILL')
      await waited(EXIT_GRACE_MS)
    },
    setProtocolVersion() {},
  }
}

/** How long messages after `notifications/initialized` wait for the upstream's GET stream to open. */
export const GET_STREAM_WAIT_MS = 5000

/**
 * A session with the HTTP MCP server at `url`. The initialize request goes first and alone (its
 * answer carries the upstream's session id); the client's `notifications/initialized` next, and
 * nothing after it is sent until the session's standalone GET stream is open (answered, refused
 * with 405, failed, or {@link GET_STREAM_WAIT_MS} passed): a server request that belongs to no
 * client request (elicitation, sampling, roots) goes on that stream, and a server that finds it
 * closed stores the message where no one reads it. Later messages are sent concurrently. A
 * request whose POST fails, or whose answer stream brings an event over `maxMessageBytes`, is
 * reported undelivered. `headers` (`proxy.upstreamHeaders`) go with every request to the
 * server: its credentials come from the config, never from the client.
 */
export async function httpUpstream(url: string, maxMessageBytes: number, ev: UpstreamEvents, headers?: Record<string, string>): Promise<Upstream> {
  const { StreamableHTTPClientTransport: Client } = await loadMcpSdk(() => import('@modelcontextprotocol/sdk/client/streamableHttp.js'), 'toolgate mcp-proxy --upstream-url')
  let getAnswered: () => void = () => {}
  const getStream = new Promise<void>((resolve) => (getAnswered = resolve))
  const transport: StreamableHTTPClientTransport = new Client(new URL(url), { fetch: boundedFetch(maxMessageBytes, ev, () => getAnswered()), requestInit: headers === undefined ? undefined : { headers } })
  let closed = false
  transport.onmessage = (msg) => ev.message(msg)
  transport.onerror = (err) => {
    if (!closed) ev.log(`upstream ${redactUrl(url)}: ${err.message}`)
  }
  await transport.start()
  // Until the initialize POST is answered, everything else waits behind it; after the
  // initialized notification, until the GET stream is open.
  let gate: Promise<void> | undefined
  const getStreamOpen = () =>
    new Promise<void>((resolve) => {
      const t = setTimeout(resolve, GET_STREAM_WAIT_MS)
      t.unref()
      void getStream.then(() => {
        clearTimeout(t)
        resolve()
      })
    })
  const post = (msg: unknown) => {
    const ids = requestIds(msg)
    const p = transport.send(msg as JSONRPCMessage).catch((err: Error) => {
      if (closed) return
      const why = `the upstream MCP server at ${redactUrl(url)} failed: ${err.message}`
      ev.log(why)
      if (ids.length > 0) ev.undelivered(ids, why)
    })
    return p
  }
  return {
    send(msg) {
      if (closed) return
      const isInit = typeof msg === 'object' && msg !== null && (msg as { method?: unknown }).method === 'initialize'
      if (isInit && gate === undefined) {
        gate = post(msg)
        return
      }
      if (isInitialized(msg)) {
        // the SDK opens the GET stream once this POST is accepted; wait for it to be answered
        const sent = (gate ?? Promise.resolve()).then(() => post(msg))
        gate = sent.then(getStreamOpen)
        return
      }
      if (gate) void gate.then(() => post(msg))
      else void post(msg)
    },
    async close() {
      if (closed) return
      closed = true
      if (transport.sessionId !== undefined) await transport.terminateSession().catch(() => {})
      await transport.close().catch(() => {})
    },
    setProtocolVersion(version) {
      transport.setProtocolVersion(version)
    },
  }
}

/** Whether `msg` is the client's `notifications/initialized`. */
function isInitialized(msg: unknown): boolean {
  return typeof msg === 'object' && msg !== null && (msg as { method?: unknown }).method === 'notifications/initialized'
}

/** The ids of the requests in a message (or batch). */
function requestIds(msg: unknown): RpcId[] {
  const list = Array.isArray(msg) ? msg : [msg]
  const ids: RpcId[] = []
  for (const m of list) {
    if (typeof m !== 'object' || m === null) continue
    const { id, method } = m as { id?: unknown; method?: unknown }
    if (typeof method === 'string' && (typeof id === 'string' || typeof id === 'number')) ids.push(id)
  }
  return ids
}

/**
 * `fetch` whose response bodies are bounded: a JSON body over `max` bytes, or an SSE event over
 * `max` bytes (plus room for its field names), fails the stream instead of being buffered, and
 * the requests of that POST are reported undelivered. `getAnswered` is called when a GET (the
 * standalone stream) is answered or fails.
 */
function boundedFetch(max: number, ev: UpstreamEvents, getAnswered: () => void): (url: string | URL, init?: RequestInit) => Promise<Response> {
  const limit = max + 1024
  return async (url, init) => {
    const isGet = (init?.method ?? 'GET').toUpperCase() === 'GET'
    let res: Response
    try {
      res = await fetch(url, init)
    } finally {
      if (isGet) getAnswered()
    }
    if (res.body === null) return res
    const sse = (res.headers.get('content-type') ?? '').toLowerCase().startsWith('text/event-stream')
    const ids = typeof init?.body === 'string' ? safeIds(init.body) : []
    // bytes of the current SSE event (or of the whole JSON body), and of the current line
    let event = 0
    let line = 0
    let lastByte = -1
    const bounded = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
          let over = false
          if (sse) {
            // an event ends at an empty line (`\n` or `\r\n` alone)
            let pos = 0
            for (let nl = buf.indexOf(0x0a, pos); nl >= 0 && !over; nl = buf.indexOf(0x0a, pos)) {
              const len = line + (nl - pos)
              const cr = len === 1 && (nl > pos ? buf[nl - 1] : lastByte) === 0x0d
              event += nl - pos + 1
              over = event > limit
              if (len === 0 || cr) event = 0
              line = 0
              pos = nl + 1
            }
            line += buf.length - pos
            event += buf.length - pos
            if (buf.length > 0) lastByte = buf[buf.length - 1]
          } else {
            event += buf.length
          }
          over ||= event > limit
          if (over) {
            const why = `the upstream MCP server sent a message over ${max} bytes (--max-message-bytes)`
            ev.log(why)
            if (ids.length > 0) ev.undelivered(ids, why)
            controller.error(new Error(why))
            return
          }
          controller.enqueue(chunk)
        },
      }),
    )
    return new Response(bounded, { status: res.status, statusText: res.statusText, headers: res.headers })
  }
}

function safeIds(body: string): RpcId[] {
  try {
    return requestIds(JSON.parse(body))
  } catch {
    return []
  }
}
