// Gate state in Redis, through the real addon against a real redis-server on loopback (no mock):
// several gates in one process and several node processes act as one gate — a token is
// confirmed exactly once under 50 concurrent attempts, taint, loop counts and rate limits are
// shared — Redis killed mid-run refuses (`state_unavailable`) and never allows what it should
// refuse, and decisions resume when it is back. See docs/state.md.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GateState, ToolGate, ToolGateError, type ToolGateConfig, type Verdict } from '../src-ts/index'
import { redisCommand, startRedis, type TestRedis } from './helpers/redis'
import { chatChunks } from './helpers/upstream'

const root = join(__dirname, '..')
const worker = join(__dirname, 'fixtures', 'state', 'worker.ts')

let redis: TestRedis
let prefixN = 0

beforeAll(async () => {
  redis = await startRedis()
})
afterAll(async () => {
  await redis?.stop()
})

/** A config whose state lives in the test Redis under a prefix of its own (tests do not share keys). */
function config(extra: Record<string, unknown> = {}, prefix = `t${process.pid}-${++prefixN}:`): ToolGateConfig & { state: { redis: { url: string } } } {
  return {
    labels: ['public', 'secret'],
    tools: [
      { name: 'read_secret', output: { label: 'secret' } },
      { name: 'post', sink: { maxLabel: 'public' } },
      { name: 'search', loop: { maxIdentical: 3, windowSeconds: 60 } },
      { name: 'send_mail', writes: true },
      { name: 'noop' },
    ],
    rateLimits: [{ tools: ['send_*'], per: 'subject' as const, max: 5, windowSeconds: 3600 }],
    state: { redis: { url: redis.url, keyPrefix: prefix, timeoutMs: 200 } },
    ...extra,
  }
}

const alice = { subject: 'alice', session: 'a1' }

type WorkerOp = { kind: 'check'; tool: string; args: unknown; ctx?: object } | { kind: 'confirm'; token: string; ctx?: object }
type WorkerVerdict = { outcome: string; reason?: string; message?: string; token?: string }

/** Runs each op list in its own node process, all released at the same moment; answers each process's verdicts. */
async function inProcesses(cfg: object, opLists: WorkerOp[][]): Promise<WorkerVerdict[][]> {
  const procs = opLists.map((ops) => {
    const child = spawn(process.execPath, ['--import', 'tsx', worker, JSON.stringify(cfg), JSON.stringify(ops)], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d))
    child.stderr.setEncoding('utf8').on('data', (d) => (err += d))
    const ready = new Promise<void>((resolve, reject) => {
      const poll = setInterval(() => {
        if (out.startsWith('ready\n')) {
          clearInterval(poll)
          resolve()
        }
      }, 10)
      child.once('exit', (code) => {
        clearInterval(poll)
        reject(new Error(`worker exited ${code} before ready: ${err}`))
      })
    })
    const done = new Promise<WorkerVerdict[]>((resolve, reject) =>
      child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out.slice('ready\n'.length)) as WorkerVerdict[]) : reject(new Error(`worker exited ${code}: ${err}`)))),
    )
    return { child, ready, done }
  })
  await Promise.all(procs.map((p) => p.ready))
  for (const p of procs) p.child.stdin.end('go\n')
  return Promise.all(procs.map((p) => p.done))
}

describe('a gate with state.redis', () => {
  it('refuses sync check, guard and confirm with E_ASYNC naming the async method, and decides with the async ones', async () => {
    const gate = new ToolGate(config())
    for (const [name, call] of [
      ['checkAsync', () => gate.check('noop', {})],
      ['guardAsync', () => gate.guard({ tool_calls: [] }, { dialect: 'openai' })],
      ['confirmAsync', () => gate.confirm('x')],
    ] as const) {
      const e = (() => {
        try {
          call()
        } catch (err) {
          return err
        }
      })() as ToolGateError
      expect(e).toBeInstanceOf(ToolGateError)
      expect(e.code).toBe('E_ASYNC')
      expect(e.message).toContain(name)
    }
    expect((await gate.checkAsync('search', { q: 1 }, alice)).outcome).toBe('passed')
    const report = await gate.guardAsync(
      { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'search', arguments: '{"q":2}' } }] },
      { dialect: 'openai', context: alice },
    )
    expect(report.calls.map((v) => v.outcome)).toEqual(['passed'])
    expect((await gate.checkAsync('nope', {})).reason).toBe('unknown_tool')
    await gate.close()
  })

  it('shares taint and loop counts across two gates of one process and a GateState', async () => {
    const cfg = config()
    const a = new ToolGate(cfg)
    const b = new ToolGate(cfg)
    expect((await a.checkAsync('read_secret', {}, alice)).allowed).toBe(true)
    const refused = await b.checkAsync('post', { text: 'x' }, alice)
    expect([refused.outcome, refused.reason]).toEqual(['denied', 'taint'])
    expect((await b.checkAsync('post', { text: 'x' }, { subject: 'alice', session: 'other' })).allowed).toBe(true)
    const shared = new GateState({ redis: cfg.state.redis })
    expect(shared.remote).toBe(true)
    const c = new ToolGate({ ...cfg, state: undefined }, { state: shared })
    const seen = [await a.checkAsync('search', { q: 'same' }, alice), await b.checkAsync('search', { q: 'same' }, alice), await c.checkAsync('search', { q: 'same' }, alice), await a.checkAsync('search', { q: 'same' }, alice)]
    expect(seen.map((v) => v.reason ?? v.outcome)).toEqual(['passed', 'passed', 'passed', 'loop'])
    expect(() => c.check('noop', {})).toThrow(/checkAsync/)
    b.markSession('tainted-by-hand', 'secret')
    expect((await c.checkAsync('post', {}, { session: 'tainted-by-hand' })).reason).toBe('taint')
    await Promise.all([a.close(), b.close(), shared.close()])
  })

  it('finishes a turn with engines off the event loop, reading the shared state as it is when the engines have answered', async () => {
    const cfg = config()
    const other = new ToolGate(cfg)
    let release: () => void = () => {}
    const answered = new Promise<void>((r) => (release = r))
    const asked: string[] = []
    const gate = new ToolGate(cfg, {
      engines: [
        async (r) => {
          asked.push(r.tool)
          await answered
          return 'delegate' as const
        },
      ],
    })
    const ctx = { subject: 'eve', session: 'e1' }
    const turn = gate.guardAsync(
      { role: 'assistant', tool_calls: [{ id: 'p1', type: 'function', function: { name: 'post', arguments: '{"text":"hi"}' } }, { id: 's1', type: 'function', function: { name: 'search', arguments: '{"q":"a"}' } }] },
      { dialect: 'openai', ...ctx },
    )
    // while the engines answer, another gate taints the session through the shared state
    await new Promise((r) => setTimeout(r, 20))
    expect(asked).toEqual(['post', 'search'])
    expect((await other.checkAsync('read_secret', {}, ctx)).allowed).toBe(true)
    release()
    const report = await turn
    expect(report.calls.map((c) => c.reason ?? c.outcome)).toEqual(['taint', 'passed'])
    // the second step wrote its loop count to the shared state: two more identical searches hit the guard
    expect((await other.checkAsync('search', { q: 'a' }, ctx)).outcome).toBe('passed')
    expect((await other.checkAsync('search', { q: 'a' }, ctx)).outcome).toBe('passed')
    expect((await other.checkAsync('search', { q: 'a' }, ctx)).reason).toBe('loop')
    await Promise.all([gate.close(), other.close()])
  })

  it('keeps no key without a TTL and no session or token in clear', async () => {
    const prefix = `ttl${process.pid}:`
    const gate = new ToolGate(config({}, prefix))
    await gate.checkAsync('read_secret', {}, alice)
    await gate.checkAsync('search', { q: 1 }, alice)
    const pending = await gate.checkAsync('send_mail', { to: 'bob' }, alice)
    expect(pending.outcome).toBe('confirm')
    expect((await gate.confirmAsync(pending.confirmation!.token, alice)).allowed).toBe(true)
    const again = await gate.checkAsync('send_mail', { to: 'carol' }, alice)
    const keys = (await redisCommand(redis.port, 'KEYS', `${prefix}*`)).split('\r\n').filter((l) => l.startsWith(prefix))
    expect(keys.length).toBeGreaterThanOrEqual(4)
    for (const k of keys) {
      const ttl = Number((await redisCommand(redis.port, 'PTTL', k)).slice(1))
      expect(ttl, k).toBeGreaterThan(0)
      expect(k).not.toContain('alice')
      expect(k).not.toContain(again.confirmation!.token)
    }
    await gate.close()
  })
})

describe('streams on a gate with state.redis', () => {
  it('decide each completed call against the shared state (waiting in place, bounded by timeoutMs)', async () => {
    const cfg = config()
    const a = new ToolGate(cfg)
    const b = new ToolGate(cfg)
    const turn = (tool: string) =>
      chatChunks({ id: 'c', created: 1, model: 'm', choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: tool, arguments: '{"x":1}' } }] } }] })
    const streamed = (gate: ToolGate, tool: string) => {
      const s = gate.stream({ dialect: 'openai', context: { session: 'stream-1' } })
      for (const ev of turn(tool)) s.push(ev.data === '[DONE]' ? '[DONE]' : JSON.stringify(ev.data))
      return s.end().calls[0]!
    }
    expect(streamed(a, 'read_secret').outcome).toBe('passed')
    expect(streamed(b, 'post').reason, 'tainted through the other gate').toBe('taint')
    await a.close()
    expect(streamed(a, 'post').reason, 'a closed store refuses').toBe('state_unavailable')
    await b.close()
  })
})

describe('several processes, one Redis', () => {
  it('confirms a token exactly once under 50 concurrent attempts from 5 processes', async () => {
    const cfg = config()
    const issuer = new ToolGate(cfg)
    const v = await issuer.checkAsync('send_mail', { to: 'bob' }, alice)
    expect(v.outcome).toBe('confirm')
    const token = v.confirmation!.token
    const ops: WorkerOp[] = Array.from({ length: 10 }, () => ({ kind: 'confirm', token, ctx: alice }))
    const results = (await inProcesses(cfg, [ops, ops, ops, ops, ops])).flat()
    expect(results).toHaveLength(50)
    expect(results.filter((r) => r.outcome === 'passed')).toHaveLength(1)
    expect(results.filter((r) => r.reason === 'token_invalid')).toHaveLength(49)
    expect((await issuer.confirmAsync(token, alice)).reason).toBe('token_invalid')
    await issuer.close()
  })

  it('counts a rate limit, a loop threshold and taint across 3 processes', async () => {
    const cfg = config()
    // 3 processes × 4 distinct send_mail confirmations under one subject; max 5 per hour
    const gate = new ToolGate(cfg)
    const tokens: string[] = []
    for (let i = 0; i < 12; i++) {
      const v = await gate.checkAsync('send_mail', { to: `r${i}` }, alice)
      expect(v.outcome).toBe('confirm')
      tokens.push(v.confirmation!.token)
    }
    const byProc = [0, 1, 2].map((p) => tokens.slice(p * 4, p * 4 + 4).map((token): WorkerOp => ({ kind: 'confirm', token, ctx: alice })))
    const sends = (await inProcesses(cfg, byProc)).flat()
    expect(sends.filter((r) => r.outcome === 'passed')).toHaveLength(5)
    const limited = sends.filter((r) => r.reason === 'rate_limited')
    expect(limited).toHaveLength(7)
    expect(limited[0]!.message).toMatch(/at most 5 calls per 3600 seconds.*again in \d+ seconds/)
    // a refused confirmation was not counted: bob (another subject) still has all 5
    expect((await gate.checkAsync('send_mail', { to: 'x' }, { subject: 'bob' })).outcome).toBe('confirm')
    // loop: 3 identical calls tolerated in all, whichever process makes them
    const search: WorkerOp = { kind: 'check', tool: 'search', args: { q: 'same' }, ctx: alice }
    const loops = (await inProcesses(cfg, [[search, search], [search, search], [search, search]])).flat()
    expect(loops.filter((r) => r.outcome === 'passed')).toHaveLength(3)
    expect(loops.filter((r) => r.reason === 'loop')).toHaveLength(3)
    // taint raised in one process refuses the sink in another
    const [[read]] = await inProcesses(cfg, [[{ kind: 'check', tool: 'read_secret', args: {}, ctx: { session: 'shared-s' } }]])
    expect(read!.outcome).toBe('passed')
    const [[post]] = await inProcesses(cfg, [[{ kind: 'check', tool: 'post', args: {}, ctx: { session: 'shared-s' } }]])
    expect(post!.reason).toBe('taint')
    await gate.close()
  })
})

describe('Redis down', () => {
  it('refuses state_unavailable while Redis is killed mid-run, never allowing what it should refuse, and resumes when it is back', async () => {
    const cfg = config()
    const gate = new ToolGate(cfg)
    expect((await gate.checkAsync('read_secret', {}, alice)).allowed).toBe(true)
    const pending = await gate.checkAsync('send_mail', { to: 'bob' }, alice)
    const verdicts: Verdict[] = []
    let stop = false
    // a steady stream of calls that must all be refused (tainted sink) or are stateful
    const load = (async () => {
      while (!stop) {
        verdicts.push(await gate.checkAsync('post', { t: 1 }, alice))
        verdicts.push(await gate.checkAsync('search', { q: verdicts.length }, alice))
      }
    })()
    await new Promise((r) => setTimeout(r, 150))
    await redis.kill()
    await new Promise((r) => setTimeout(r, 400))
    const during = await Promise.all([gate.checkAsync('post', {}, alice), gate.checkAsync('search', { q: 'x' }, alice), gate.confirmAsync(pending.confirmation!.token, alice), gate.checkAsync('read_secret', {}, alice)])
    expect(during.map((v) => v.reason)).toEqual(['state_unavailable', 'state_unavailable', 'state_unavailable', 'state_unavailable'])
    expect(during[0]!.message).toContain('shared state could not be reached')
    expect((await gate.checkAsync('noop', {}, alice)).allowed, 'a call that needs no state still runs').toBe(true)
    expect(() => gate.markSession('s', 'secret')).toThrow(expect.objectContaining({ code: 'E_STATE' }))
    const beforeRestart = verdicts.length
    await redis.restart()
    await new Promise((r) => setTimeout(r, 300))
    stop = true
    await load
    // never an allowed post: before the kill it was tainted, during it state was unknown, after
    // it Redis came back empty (no persistence) — so it may pass only after the restart
    const untilRestart = verdicts.slice(0, beforeRestart)
    const posts = untilRestart.filter((v) => v.tool === 'post')
    expect(posts.some((v) => v.reason === 'taint')).toBe(true)
    expect(posts.some((v) => v.reason === 'state_unavailable')).toBe(true)
    expect(posts.filter((v) => v.allowed), 'no tainted post allowed while Redis was down').toEqual([])
    const firstDown = untilRestart.findIndex((v) => v.reason === 'state_unavailable')
    expect(untilRestart.slice(firstDown).filter((v) => v.allowed), 'nothing stateful allowed once Redis was gone').toEqual([])
    // back: decisions resume (the restarted Redis kept nothing: no persistence in this test)
    const back = await gate.checkAsync('search', { q: 'after' }, alice)
    expect(back.outcome).toBe('passed')
    expect((await gate.confirmAsync(pending.confirmation!.token, alice)).reason).toBe('token_invalid')
    await gate.close()
  })

  it('a closed gate refuses, and a bad state.redis block is E_CONFIG', async () => {
    const gate = new ToolGate(config())
    await gate.close()
    expect((await gate.checkAsync('search', { q: 1 }, alice)).reason).toBe('state_unavailable')
    expect(() => new ToolGate(config({ state: { redis: { url: 'http://x' } } }))).toThrow(expect.objectContaining({ code: 'E_CONFIG' }))
    expect(() => new ToolGate(config({ state: { redis: { url: redis.url, timeoutMs: 0 } } }))).toThrow(/timeoutMs/)
    expect(() => new ToolGate(config({ state: { redis: { url: 'rediss://127.0.0.1:1' } } }))).toThrow(/TLS/)
    expect(() => new ToolGate(config({ state: { redis: { url: redis.url, nope: 1 } } }))).toThrow(/nope/)
  })
})
