// Test helpers for `toolgate proxy`: start the built CLI (dist/cli/main.js, from
// `npm run build:ts`) as users run it and wait for its ready line; and a bare loopback upstream
// whose every answer the test writes itself (for headers, errors, compression, timeouts and
// aborts — what the scripted upstream in ./upstream.ts does not cover).
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'

const root = join(__dirname, '..', '..')
const cli = join(root, 'dist', 'cli', 'main.js')

/** A running `toolgate proxy`. */
export interface RunningProxy {
  /** `http://127.0.0.1:<port>`: the Anthropic client's baseURL; append `/v1` for OpenAI's. */
  url: string
  /** Everything the proxy wrote to stderr so far. */
  stderr(): string
  /** Sends SIGTERM and resolves with the exit code once the process is gone. */
  close(): Promise<number | null>
  child: ChildProcess
}

/**
 * Spawns `node dist/cli/main.js proxy …args` and resolves once it prints
 * `toolgate proxy: listening on URL → UPSTREAM` (pass `--port 0`). Rejects with its stderr when
 * it exits first or takes longer than 20 s.
 */
export function startProxy(args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<RunningProxy> {
  if (!existsSync(join(root, 'dist', 'proxy', 'http', 'proxy.js'))) throw new Error('run `npm run build:ts` first: the tests spawn dist/cli/main.js')
  const child = spawn(process.execPath, [cli, 'proxy', ...args], { cwd: opts.cwd ?? root, env: opts.env ?? process.env, stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`toolgate proxy did not start within 20 s:\n${stderr}`))
    }, 20_000)
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString()
      const m = /toolgate proxy: listening on (http:\/\/\S+) → /.exec(stderr)
      if (m === null) return
      clearTimeout(timer)
      resolve({
        url: m[1],
        stderr: () => stderr,
        child,
        close: () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
          return exited
        },
      })
    })
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`toolgate proxy exited (${code}) before listening:\n${stderr}`))
    })
  })
}

/** One request a {@link RawUpstream} received. */
export interface RawRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: string
  /** Resolves when the request's connection closes before the answer was finished (the client or the proxy gave up). */
  aborted: Promise<void>
}

/** A loopback upstream answering each request with the test's own handler. */
export interface RawUpstream {
  origin: string
  requests: RawRequest[]
  close(): Promise<void>
}

/** Starts a {@link RawUpstream}; `answer` writes each response (it may also never answer). */
export async function startRawUpstream(answer: (req: RawRequest, res: ServerResponse) => void): Promise<RawUpstream> {
  const requests: RawRequest[] = []
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    let onAbort: () => void = () => undefined
    const aborted = new Promise<void>((resolve) => (onAbort = resolve))
    res.on('close', () => {
      if (!res.writableFinished) onAbort()
    })
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const r: RawRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), aborted }
      requests.push(r)
      answer(r, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    close: () => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
