// Two `toolgate mcp-proxy` processes (the built CLI over stdio, each in front of its own MCP
// server) sharing one real redis-server through --state-url: a loop threshold and a rate limit
// count across both, and with Redis killed every call is refused (never forwarded). docs/state.md
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rawMcpProxy, root, type RawMcpProxy } from './helpers/mcp-proxy'
import { startRedis, type TestRedis } from './helpers/redis'

let redis: TestRedis
let proxies: RawMcpProxy[] = []
let id = 100

beforeAll(async () => {
  redis = await startRedis()
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-mcp-state-'))
  const file = join(dir, 'toolgate.json')
  writeFileSync(
    file,
    JSON.stringify({
      tools: [{ name: 'echo', loop: { maxIdentical: 2, windowSeconds: 60 } }],
      rateLimits: [{ tools: ['echo'], per: 'subject', max: 5, windowSeconds: 3600 }],
      state: { redis: { url: 'redis://127.0.0.1:1', keyPrefix: `mcp${process.pid}:`, timeoutMs: 200 } },
    }),
  )
  proxies = [0, 1].map(() => rawMcpProxy(['--config', file, '--subject', 'alice', '--state-url', redis.url], [process.execPath, join(root, 'bench', 'mcp-echo-server.mjs')]))
  await Promise.all(proxies.map((p) => p.handshake()))
}, 60_000)

afterAll(async () => {
  for (const p of proxies) p.child.kill('SIGTERM')
  await Promise.all(proxies.map((p) => p.exited))
  await redis?.stop()
})

/** One tools/call through proxy `i`: `passed` (the server answered) or the refusal's text. */
async function call(i: number, args: object): Promise<string> {
  const p = proxies[i]!
  const n = ++id
  p.send({ jsonrpc: '2.0', id: n, method: 'tools/call', params: { name: 'echo', arguments: args } })
  const m = (await p.next((x) => x.id === n)) as { result?: { isError?: boolean; content: { text: string }[] } }
  if (m.result?.isError !== true) {
    expect(JSON.parse(m.result!.content[0]!.text)).toEqual(args)
    return 'passed'
  }
  return m.result.content[0]!.text
}

describe('two toolgate mcp-proxy processes, one Redis', () => {
  it('count a loop threshold and a rate limit across both, and refuse everything while Redis is down', async () => {
    const loop = [await call(0, { text: 'same', n: 1 }), await call(1, { text: 'same', n: 1 }), await call(0, { text: 'same', n: 1 }), await call(1, { text: 'same', n: 1 })]
    expect(loop.slice(0, 2)).toEqual(['passed', 'passed'])
    expect(loop[2]).toMatch(/already called `echo` with these exact arguments 2 times/)
    expect(loop[3]).toMatch(/already called/)
    // 2 counted so far; 3 more allowed in the hour, whichever proxy
    const more = []
    for (let k = 0; k < 6; k++) more.push(await call(k % 2, { text: `t${k}`, n: k }))
    expect(more.slice(0, 3)).toEqual(['passed', 'passed', 'passed'])
    for (const r of more.slice(3)) expect(r).toMatch(/`echo` is rate limited: at most 5 calls per 3600 seconds/)
    await redis.kill()
    const down = [await call(0, { text: 'down', n: 1 }), await call(1, { text: 'down', n: 2 })]
    for (const r of down) expect(r).toMatch(/shared state could not be reached/)
    await redis.restart()
    // reconnects by itself (connect attempts back off 100 ms after a failure)
    const t = Date.now()
    let back = ''
    for (let k = 0; back !== 'passed' && Date.now() - t < 5_000; k++) back = await call(1, { text: 'back', n: k })
    expect(back).toBe('passed')
  })
})
