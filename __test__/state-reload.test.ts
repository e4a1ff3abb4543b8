// `toolgate proxy` reloads its config without a restart (the built CLI, a real upstream on
// loopback): SIGHUP and --watch swap in a config that validates at once, keeping every session's
// state; one that does not validate leaves the running config in place and the log says why.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { until, writeConfig } from './helpers/config-reload'
import { startProxy, type RawUpstream, type RunningProxy } from './helpers/http-proxy'
import { callThrough, startToolCallUpstream } from './helpers/tool-call-upstream'

const declared = ['read_secret', 'post', 'search']
const base = {
  labels: ['public', 'secret'],
  tools: [
    { name: 'read_secret', output: { label: 'secret' } },
    { name: 'post', sink: { maxLabel: 'public' } },
    { name: 'search' },
  ],
}
const denyPost = { ...base, policy: { rules: [{ effect: 'allow', tools: ['read_secret', 'search'] }] } }
const limitSearch = { ...base, rateLimits: [{ tools: ['search'], per: 'session', max: 1, windowSeconds: 3600 }] }

let upstream: RawUpstream
let dir: string
const running: RunningProxy[] = []

beforeAll(async () => {
  upstream = await startToolCallUpstream()
  dir = mkdtempSync(join(tmpdir(), 'toolgate-reload-'))
})
afterAll(async () => {
  await Promise.all(running.map((p) => p.close()))
  await upstream?.close()
})

const write = writeConfig

describe('toolgate proxy config reload', () => {
  it('SIGHUP swaps in a valid config at once, keeps session state, and keeps the old one when the new one is broken', async () => {
    const file = join(dir, 'hup.json')
    write(file, base)
    const proxy = await startProxy(['--upstream', upstream.origin, '--port', '0', '--config', file])
    running.push(proxy)
    const s = { subject: 'ann', session: 'hup-1' }
    const call = (tool: string, who = s) => callThrough(proxy.url, declared, tool, { x: Math.random() }, who)
    expect(await call('post')).toBe('passed')
    expect(await call('read_secret')).toBe('passed')
    write(file, denyPost)
    proxy.child.kill('SIGHUP')
    await until(() => proxy.stderr().includes('SIGHUP: config reloaded'), 'the reload')
    expect(await call('post', { subject: 'bo', session: 'clean' })).toBe('no_rule')
    expect(await call('search')).toBe('passed')
    // back to no policy: the taint raised before both reloads still refuses the sink
    write(file, base)
    proxy.child.kill('SIGHUP')
    await until(() => proxy.stderr().split('SIGHUP: config reloaded').length === 3, 'the second reload')
    expect(await call('post')).toBe('taint')
    expect(await call('post', { subject: 'bo', session: 'clean' })).toBe('passed')
    // a broken config (a rule naming no declared tool) keeps the running one
    write(file, { ...base, policy: { rules: [{ effect: 'allow', tools: ['sned_*'] }] } })
    proxy.child.kill('SIGHUP')
    await until(() => proxy.stderr().includes('SIGHUP: the config was not reloaded'), 'the refusal')
    expect(proxy.stderr()).toMatch(/the running one stays: .*sned_\*/)
    write(file, '{ not json')
    proxy.child.kill('SIGHUP')
    await until(() => proxy.stderr().split('SIGHUP: the config was not reloaded').length === 3, 'the second refusal')
    expect(await call('post', { subject: 'cy', session: 'c2' })).toBe('passed')
    expect(proxy.child.exitCode).toBe(null)
  })

  it('--watch reloads when the file changes', async () => {
    const file = join(dir, 'watch.json')
    write(file, base)
    const proxy = await startProxy(['--upstream', upstream.origin, '--port', '0', '--config', file, '--watch'])
    running.push(proxy)
    const s = { subject: 'dee', session: 'w-1' }
    expect(await callThrough(proxy.url, declared, 'search', { q: 1 }, s)).toBe('passed')
    expect(await callThrough(proxy.url, declared, 'search', { q: 2 }, s)).toBe('passed')
    write(file, limitSearch)
    await until(() => proxy.stderr().includes('config file changed: config reloaded'), 'the reload')
    expect(await callThrough(proxy.url, declared, 'search', { q: 3 }, s)).toBe('passed')
    expect(await callThrough(proxy.url, declared, 'search', { q: 4 }, s)).toBe('rate_limited')
  })
})
