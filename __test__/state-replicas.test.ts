// Three `toolgate proxy` replicas (the built CLI, as users run it) and one real redis-server on
// loopback, requests spread round-robin: taint raised at one replica refuses the sink at another,
// a loop threshold and a rate limit count across all three (exactly, under concurrency), Redis
// killed mid-run refuses (`state_unavailable`) at every replica and never lets through what it
// should refuse, and decisions resume when Redis is back. See docs/state.md.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startProxy, type RawUpstream, type RunningProxy } from './helpers/http-proxy'
import { callThrough, startToolCallUpstream } from './helpers/tool-call-upstream'
import { redisCommand, startRedis, type TestRedis } from './helpers/redis'

let redis: TestRedis
let upstream: RawUpstream
let replicas: RunningProxy[] = []

const config = {
  labels: ['public', 'secret'],
  tools: [
    { name: 'read_secret', output: { label: 'secret' }, inputSchema: { type: 'object' } },
    { name: 'post', sink: { maxLabel: 'public' }, inputSchema: { type: 'object' } },
    { name: 'lookup', loop: { maxIdentical: 2, windowSeconds: 60 }, inputSchema: { type: 'object' } },
    { name: 'search', inputSchema: { type: 'object' } },
  ],
  rateLimits: [{ tools: ['search'], per: 'subject', max: 10, windowSeconds: 3600 }],
  state: { redis: { url: 'redis://127.0.0.1:1', keyPrefix: `replicas${process.pid}:`, timeoutMs: 200 } },
}

beforeAll(async () => {
  redis = await startRedis()
  // the upstream model: answers every chat request with the one tool call the user message names
  upstream = await startToolCallUpstream()
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-replicas-'))
  const file = join(dir, 'toolgate.json')
  writeFileSync(file, JSON.stringify(config))
  // the config's URL points nowhere: --state-url wins over it
  replicas = await Promise.all([0, 1, 2].map(() => startProxy(['--upstream', upstream.origin, '--port', '0', '--config', file, '--state-url', redis.url])))
}, 60_000)

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.close()))
  await upstream?.close()
  await redis?.stop()
})

let next = 0
const declared = config.tools.map((t) => t.name)
/** One request through the next replica (round-robin): `passed`, or the refusal reason. */
const call = (tool: string, args: object, who: { subject?: string; session?: string }, replica = next++ % 3): Promise<string> => callThrough(replicas[replica]!.url, declared, tool, args, who)

describe('three toolgate proxy replicas, one Redis', () => {
  it('taint raised at one replica refuses the sink at the others', async () => {
    const s = { subject: 'ann', session: 'taint-1' }
    expect(await call('post', { x: 1 }, s, 0)).toBe('passed')
    expect(await call('read_secret', {}, s, 1)).toBe('passed')
    expect(await call('post', { x: 2 }, s, 2)).toBe('taint')
    expect(await call('post', { x: 3 }, s, 0)).toBe('taint')
    expect(await call('post', { x: 4 }, { subject: 'ann', session: 'taint-2' }, 0)).toBe('passed')
  })

  it('counts a loop threshold across the replicas', async () => {
    const s = { subject: 'bo', session: 'loop-1' }
    const got = []
    for (let i = 0; i < 6; i++) got.push(await call('lookup', { q: 'same' }, s))
    expect(got).toEqual(['passed', 'passed', 'loop', 'loop', 'loop', 'loop'])
  })

  it('counts a rate limit exactly across the replicas under 30 concurrent requests', async () => {
    const got = await Promise.all(Array.from({ length: 30 }, (_, i) => call('search', { q: i }, { subject: 'cy', session: `s${i % 4}` }, i % 3)))
    expect(got.filter((g) => g === 'passed')).toHaveLength(10)
    expect(got.filter((g) => g === 'rate_limited')).toHaveLength(20)
    expect(await call('search', { q: 'other' }, { subject: 'dee' })).toBe('passed')
  })

  it('refuses state_unavailable at every replica while Redis is down, and resumes when it is back', async () => {
    const s = { subject: 'eve', session: 'down-1' }
    expect(await call('read_secret', {}, s)).toBe('passed')
    await redis.kill()
    const during = []
    for (let i = 0; i < 6; i++) during.push(await call(i % 2 === 0 ? 'post' : 'search', { i }, s))
    expect(during).toEqual(Array(6).fill('state_unavailable'))
    await redis.restart()
    const t = Date.now()
    let back = 'state_unavailable'
    while (back === 'state_unavailable' && Date.now() - t < 5_000) back = await call('search', { q: 'back' }, { subject: 'fay' })
    expect(back).toBe('passed')
    for (let i = 0; i < 3; i++) expect(await call('lookup', { q: `after-${i}` }, s, i)).toBe('passed')
    for (const r of replicas) expect(r.stderr()).not.toContain('redis://')
  })

  it('stop cleanly on SIGTERM (exit 0) and leave no Redis connection behind', async () => {
    const clients = async () => Number(/connected_clients:(\d+)/.exec(await redisCommand(redis.port, 'INFO', 'clients'))![1]) - 1 // less this INFO's own
    expect(await clients()).toBeGreaterThanOrEqual(3)
    expect(await Promise.all(replicas.map((r) => r.close()))).toEqual([0, 0, 0])
    expect(await clients()).toBe(0)
  })
})
