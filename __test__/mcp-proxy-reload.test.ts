// `toolgate mcp-proxy` reloads its config on SIGHUP without a restart (the built CLI in front of
// a real MCP server): over stdio and for every session of the --listen HTTP side, a config that
// compiles is swapped in at once keeping rate-limit state; one that does not compile leaves the
// running one in place and the log says why. docs/mcp-proxy.md "Reloading the config".
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { until, writeConfig } from './helpers/config-reload'
import { cli, listenerUrl, rawMcpProxy, root, toolResult, type RawMcpProxy } from './helpers/mcp-proxy'

const echoServer = [process.execPath, join(root, 'bench', 'mcp-echo-server.mjs')]
/** At most two allowed `echo` calls per session and hour: a count that must survive a reload. */
const limit = { rateLimits: [{ tools: ['echo'], per: 'session', max: 2, windowSeconds: 3600 }] }
const open = { tools: [], ...limit }
/** The same limit, and a policy refusing `echo` with text "secret". */
const denySecret = { ...open, policy: { rules: [{ effect: 'allow', tools: ['*'] }, { effect: 'deny', tools: ['echo'], when: 'args.text == "secret"' }] } }

let dir: string
const children: ChildProcess[] = []
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-mcp-reload-'))
})
afterAll(async () => {
  await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : (c.once('exit', r), c.kill('SIGTERM'))))))
})

const write = writeConfig

/** Sends SIGHUP and waits for the `n`th reload line (done or refused) in the proxy's log. */
async function hangup(child: ChildProcess, stderr: () => string, n: number): Promise<string> {
  child.kill('SIGHUP')
  const lines = () => stderr().split('\n').filter((l) => /SIGHUP: (config reloaded|the config was not reloaded)/.test(l))
  await until(() => lines().length >= n, `reload #${n}`)
  return lines()[n - 1]!
}

describe('toolgate mcp-proxy (stdio) on SIGHUP', () => {
  let p: RawMcpProxy
  let id = 10
  const call = async (text: string): Promise<string> => {
    const n = ++id
    p.send({ jsonrpc: '2.0', id: n, method: 'tools/call', params: { name: 'echo', arguments: { text, n } } })
    const m = (await p.next((x) => x.id === n)) as { result?: { isError?: boolean; content: { text: string }[] } }
    return m.result?.isError === true ? m.result.content[0]!.text : 'passed'
  }

  it('swaps in a config that compiles (rate-limit counts kept) and keeps the running one when the new one is broken', async () => {
    const file = join(dir, 'stdio.json')
    write(file, open)
    p = rawMcpProxy(['--config', file, '--subject', 'ann', '--session', 's-stdio'], echoServer)
    children.push(p.child)
    await p.handshake()
    expect(await call('secret')).toBe('passed') // 1 of 2

    write(file, denySecret)
    expect(await hangup(p.child, p.stderr, 1)).toMatch(/config reloaded from .*stdio\.json \(1 proxy running\)/)
    expect(await call('secret')).toMatch(/`echo`/) // the new policy refuses it
    expect(await call('hello')).toBe('passed') // 2 of 2: the count from before the reload was kept
    expect(await call('again')).toMatch(/rate limited/)

    write(file, '{"tools": [], "policy": {"rules": [{"effect": "allow", "tools": ["*"], "when": "args.text =="}]}}')
    expect(await hangup(p.child, p.stderr, 2)).toMatch(/the config was not reloaded, the running one stays: config file .*stdio\.json: .*when/)
    expect(await call('secret')).toMatch(/`echo`/) // still the policy of the second config
    write(file, '{"tools": [], "policy": ')
    expect(await hangup(p.child, p.stderr, 3)).toMatch(/not reloaded/)
    expect(p.child.exitCode).toBeNull() // a broken file never stops the proxy

    write(file, { ...denySecret, state: { maxSessions: 5 } })
    await hangup(p.child, p.stderr, 4)
    await until(() => /`state` blocks are read at start only/.test(p.stderr()), 'the start-only note')
  }, 60_000)
})

describe('toolgate mcp-proxy --listen on SIGHUP', () => {
  it('reloads every running session and the sessions opened later, all or nothing', async () => {
    const file = join(dir, 'listen.json')
    const { rateLimits: _, ...unlimited } = denySecret
    write(file, { tools: [] })
    const child = spawn(process.execPath, [cli, 'mcp-proxy', '--listen', '127.0.0.1:0', '--config', file, '--', ...echoServer], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    children.push(child)
    const { url, stderr } = await listenerUrl(child)
    const connect = async (): Promise<Client> => {
      const client = new Client({ name: 'reload-test', version: '1.0.0' })
      await client.connect(new StreamableHTTPClientTransport(new URL(url)))
      return client
    }
    const call = async (client: Client, text: string): Promise<string> => {
      const r = toolResult(await client.callTool({ name: 'echo', arguments: { text, n: 1 } }))
      return r.isError === true ? (r.content[0] as { text: string }).text : 'passed'
    }
    const [a, b] = [await connect(), await connect()]
    expect(await call(a, 'secret')).toBe('passed')
    expect(await call(b, 'secret')).toBe('passed')

    write(file, unlimited)
    expect(await hangup(child, stderr, 1)).toMatch(/config reloaded .*\(2 proxies running\)/)
    expect(await call(a, 'secret')).toMatch(/`echo`/)
    expect(await call(b, 'secret')).toMatch(/`echo`/)
    const c = await connect() // opened after the reload: built from the new config
    expect(await call(c, 'secret')).toMatch(/`echo`/)
    expect(await call(c, 'fine')).toBe('passed')

    write(file, { tools: [{ name: 'echo', inputSchema: { type: 'nonsense' } }] })
    expect(await hangup(child, stderr, 2)).toMatch(/not reloaded, the running one stays/)
    for (const s of [a, b, c]) expect(await call(s, 'secret')).toMatch(/`echo`/)
    await Promise.all([a, b, c].map((s) => s.close()))
  }, 60_000)
})
