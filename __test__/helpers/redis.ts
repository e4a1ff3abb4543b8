// A real redis-server for tests: started on a free loopback port (redis-server has no
// `--port 0`, so the port is found by binding 127.0.0.1:0 first), no persistence, stopped after.
import { spawn, type ChildProcess } from 'node:child_process'
import { createConnection, createServer } from 'node:net'

export interface TestRedis {
  port: number
  url: string
  /** SIGKILL: gone at once, as in a crash. */
  kill(): Promise<void>
  /** Starts again on the same port. */
  restart(): Promise<void>
  stop(): Promise<void>
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })
}

/** The `process_id` of the Redis answering on `port`, if one answers. */
async function pidOn(port: number): Promise<number | undefined> {
  try {
    const m = /process_id:(\d+)/.exec(await redisCommand(port, 'INFO', 'server'))
    return m === null ? undefined : Number(m[1])
  } catch {
    return undefined
  }
}

/**
 * Spawns redis-server on `port` and answers it once it is the process answering there, or
 * `undefined` when it exits first or another process holds the port. Test files run in parallel,
 * each starting its own server: a port found free can be taken by another file's server before
 * this one binds it, and a plain "something answers on the port" check would then pass on the
 * other file's server — which that file may kill.
 */
async function spawnOn(port: number): Promise<ChildProcess | undefined> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
  let exited = false
  child.once('exit', () => {
    exited = true
  })
  const failed = new Promise<never>((_, reject) => child.once('error', (e) => reject(new Error(`redis-server could not start (install it: apt-get install -y redis-server): ${e.message}`))))
  const ready = (async () => {
    const t = Date.now()
    while (Date.now() - t < 10_000 && !exited) {
      const pid = await pidOn(port)
      if (pid === child.pid) return child
      if (pid !== undefined) break
      await new Promise((r) => setTimeout(r, 20))
    }
    child.kill('SIGKILL')
    return undefined
  })()
  return Promise.race([ready, failed])
}

/** Starts redis-server; fails the test if it is not installed (`apt-get install -y redis-server`). */
export async function startRedis(): Promise<TestRedis> {
  let port = 0
  let child: ChildProcess | undefined
  for (let attempt = 0; attempt < 10 && child === undefined; attempt++) {
    port = await freePort()
    child = await spawnOn(port)
  }
  if (child === undefined) throw new Error('redis-server did not start on any of 10 free ports')
  const start = async () => {
    child = await spawnOn(port)
    if (child === undefined) throw new Error(`redis-server did not start again on port ${port}`)
  }
  const kill = async () => {
    const c = child
    child = undefined
    if (c === undefined || c.exitCode !== null) return
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve())
      c.kill('SIGKILL')
    })
  }
  return { port, url: `redis://127.0.0.1:${port}`, kill, restart: start, stop: kill }
}

/** Where the RESP value starting at `at` ends (the index after it), or -1 while incomplete. */
function respEnd(buf: Buffer, at: number): number {
  const nl = buf.indexOf('\r\n', at)
  if (nl < 0) return -1
  const type = String.fromCharCode(buf[at]!)
  const n = Number(buf.toString('latin1', at + 1, nl))
  if (type === '$') return n < 0 ? nl + 2 : buf.length >= nl + 2 + n + 2 ? nl + 2 + n + 2 : -1
  if (type === '*') {
    let p = nl + 2
    for (let i = 0; i < n; i++) {
      p = respEnd(buf, p)
      if (p < 0) return -1
    }
    return p
  }
  return nl + 2 // +simple, -error, :integer
}

/** Runs one raw Redis command (RESP over a socket) and answers the raw reply text once it is whole. */
export function redisCommand(port: number, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = createConnection({ port, host: '127.0.0.1' })
    let out = Buffer.alloc(0)
    c.once('error', reject)
    c.on('data', (d: Buffer) => {
      out = Buffer.concat([out, d])
      if (respEnd(out, 0) === out.length) {
        c.destroy()
        resolve(out.toString('utf8'))
      }
    })
    c.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`)
  })
}
