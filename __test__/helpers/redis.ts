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

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = createConnection({ port, host: '127.0.0.1' })
    c.once('connect', () => {
      c.destroy()
      resolve(true)
    })
    c.once('error', () => resolve(false))
  })
}

/** Starts redis-server; fails the test if it is not installed (`apt-get install -y redis-server`). */
export async function startRedis(): Promise<TestRedis> {
  const port = await freePort()
  let child: ChildProcess | undefined
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
    const failed = new Promise<never>((_, reject) => child!.once('error', (e) => reject(new Error(`redis-server could not start (install it: apt-get install -y redis-server): ${e.message}`))))
    const ready = (async () => {
      const t = Date.now()
      while (!(await canConnect(port))) {
        if (Date.now() - t > 10_000) throw new Error('redis-server did not start within 10 s')
        await new Promise((r) => setTimeout(r, 20))
      }
    })()
    await Promise.race([ready, failed])
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
  await start()
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
