// The MCP proxy over stdio: the client on the proxy's own stdin/stdout, the server a spawned
// process with piped stdin/stdout, both newline-delimited JSON-RPC (jsonrpc-lines.ts). The
// routing is McpProxy's; this file wires the streams (with backpressure both ways, so neither
// write buffer grows without bound), and turns the server exiting into answers for what still
// waits and the proxy's exit code.
import type { ChildProcess } from 'node:child_process'
import { constants } from 'node:os'
import type { Readable, Writable } from 'node:stream'

import { LineBatch, messageLine, readLines } from './jsonrpc-lines'
import { McpProxy, type McpProxyOptions } from './proxy'

/** Once the server is gone, how long the client may stay quiet before the proxy stops reading it (ms). */
const DRAIN_QUIET_MS = 150
/** Once the server is gone, the longest the proxy keeps answering the client's requests with errors (ms). */
const DRAIN_MAX_MS = 2000

/** Options of {@link runMcpProxy}. */
export interface StdioProxyOptions extends McpProxyOptions {
  /** Largest message (one line) from either side, in bytes. */
  maxMessageBytes: number
}

/**
 * Runs the proxy between a client (`clientIn` / `clientOut`, e.g. the process's stdin/stdout)
 * and a spawned server process (its stdin/stdout piped). Resolves with the server's exit code
 * once the server has exited (when the client hangs up, the server's stdin is closed and it is
 * given 5 seconds to exit before SIGTERM). Once the server is gone every request still waiting
 * is answered with an error, and so is every request the client sends until it has been quiet
 * for a moment (at most 2 s): no request the client sent goes unanswered.
 */
export function runMcpProxy(opts: StdioProxyOptions, clientIn: Readable, clientOut: Writable, server: ChildProcess): Promise<number> {
  const log = opts.log ?? (() => {})
  const serverIn = server.stdin!
  const serverOut = server.stdout!
  // Lines are gathered and written once per turn of the event loop's microtasks (one write for
  // every message a read produced). Backpressure both ways, so no write buffer grows without
  // bound: while one side does not read what the proxy wrote to it, the proxy stops reading the
  // other side.
  const toClient = new LineBatch(clientOut, () => {
    if (clientOut.writableNeedDrain && !serverOut.isPaused()) {
      serverOut.pause()
      clientOut.once('drain', () => serverOut.resume())
    }
  }, () => {})
  const toServer = new LineBatch(serverIn, () => {
    if (serverIn.writableNeedDrain && !clientIn.isPaused()) {
      clientIn.pause()
      serverIn.once('drain', () => clientIn.resume())
    }
  }, (n) => log(`the server’s stdin is closed; ${n === 1 ? 'message' : `${n} messages`} dropped`))
  const proxy = new McpProxy(opts, {
    toClient: (m) => toClient.add(messageLine(m)),
    toServer: (m) => toServer.add(messageLine(m)),
    toClientText: (text) => toClient.add(text),
    toServerText: (text) => toServer.add(text),
  })
  serverIn.on('error', (err) => log(`writing to the server failed: ${err.message}`))
  clientOut.on('error', (err) => {
    // the client went away (EPIPE): same as its hanging up
    log(`writing to the client failed: ${err.message}`)
    serverIn.end()
  })
  return new Promise((resolve) => {
    let done = false
    let killTimer: NodeJS.Timeout | undefined
    let clientEnded = false
    let afterExit: (() => void) | undefined
    const exit = (code: number, why: string) => {
      if (done) return
      done = true
      if (killTimer) clearTimeout(killTimer)
      proxy.serverClosed(why)
      // What the client already sent gets its answer too (an error): keep reading until it has
      // been quiet for a moment (or hung up), then stop.
      let finished = false
      const finish = () => {
        if (finished) return
        finished = true
        toClient.flush()
        clearTimeout(quiet)
        clearTimeout(cap)
        clientIn.off('data', more)
        clientIn.pause()
        // resolve once everything written to the client is flushed
        if (clientOut.writableLength === 0) resolve(code)
        else clientOut.write('', () => resolve(code))
      }
      let quiet = setTimeout(finish, DRAIN_QUIET_MS)
      const more = () => {
        clearTimeout(quiet)
        quiet = setTimeout(finish, DRAIN_QUIET_MS)
      }
      const cap = setTimeout(finish, DRAIN_MAX_MS)
      afterExit = finish
      if (clientEnded) return finish()
      clientIn.on('data', more)
      clientIn.resume()
    }
    readLines(clientIn, opts.maxMessageBytes, (e) => proxy.clientLine(e), (err) => {
      if (err) log(`reading from the client failed: ${err.message}`)
      clientEnded = true
      proxy.clientClosed()
      if (done) return afterExit?.()
      toServer.flush()
      serverIn.end()
      killTimer = setTimeout(() => server.kill('SIGTERM'), 5000)
      killTimer.unref()
    })
    readLines(serverOut, opts.maxMessageBytes, (e) => proxy.serverLine(e), () => {})
    server.on('error', (err) => {
      log(`the server could not be run: ${err.message}`)
      exit(127, `the MCP server could not be started (${err.message})`)
    })
    server.on('exit', (code, signal) => {
      const why = signal ? `the MCP server was killed by ${signal}` : `the MCP server exited with code ${code}`
      log(why)
      // Let its last lines (already in the pipe) through before answering the rest.
      const settle = () => exit(code ?? (signal ? 128 + signalNumber(signal) : 1), `${why} before answering`)
      if (serverOut.readableEnded || serverOut.destroyed) settle()
      else {
        serverOut.once('close', settle)
        setTimeout(settle, 1000).unref()
      }
    })
  })
}

function signalNumber(signal: NodeJS.Signals): number {
  const n = constants.signals[signal]
  return typeof n === 'number' ? n : 0
}
