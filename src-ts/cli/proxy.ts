// `toolgate proxy`: an OpenAI / Anthropic compatible HTTP proxy in front of a model API, gating
// the tools a request offers and the tool calls the model answers with (src-ts/proxy/http/proxy.ts).
import { unwatchFile, watchFile, type Stats } from 'node:fs'

import { DEFAULT_MAX_BODY_BYTES, DEFAULT_TIMEOUT_MS, startHttpProxy } from '../proxy/http/proxy'
import { DEFAULT_PASS_THROUGH, passThroughList } from '../proxy/http/paths'
import { parseUpstream } from '../proxy/http/upstream'
import { prepareIdentityReload, serverIdentity, type ServerVerifier } from '../identity/servers'
import type { CallContext, ToolGateConfig } from '../types'
import { parseFlags, UsageError } from './args'
import { loadProxyConfig } from './proxy-config'
import { deferredLog } from './log'

const USAGE = 'toolgate proxy --upstream URL --port N [flags]   an OpenAI/Anthropic-compatible HTTP proxy'

const HELP = `toolgate proxy — an OpenAI / Anthropic compatible HTTP proxy that gates tool calls

Usage:
  toolgate proxy --upstream URL --port N [--host 127.0.0.1] [--config FILE]
                 [--subject NAME] [--role ROLE]… [--session ID]
                 [--timeout-ms N] [--max-body-bytes N] [--pass-through 'METHOD /path']…

Point your SDK's base URL at the proxy. POST /v1/chat/completions, /v1/responses and
/v1/messages are guarded: the request's tools are filtered for the caller, and the model's
tool calls are checked — repaired arguments are written back, refused calls are removed (the
refusal is told in a text part and the x-toolgate-refused header; a turn whose calls were all
refused ends as plain text). Streamed answers are guarded event by event. Any POST whose
path ends in /chat/completions, /responses or /messages is guarded too (Azure's
/openai/deployments/{d}/chat/completions included); paths are normalised first (duplicate
and trailing slashes, percent-escapes; dot segments refused). Other requests pass through
unchanged only when on the pass-through list — by default those that cannot return model
output: ${DEFAULT_PASS_THROUGH.join(', ')} — and are answered 403 otherwise. An upstream
redirect on a guarded path is answered 502; an upstream error passes only in the API's own
error shape. Each request goes to the upstream URL + the normalised path (a trailing /v1 on
--upstream is dropped: clients send /v1/… themselves). Credentials in URLs are never printed.

The gate knows the config's tools and learns the tools each request declares (the host
writes them, not the model); with a config policy, deny by default holds for both.

Who is calling: --subject/--role/--session (or the config's proxy.subject/roles/session) fix
one caller for every request; without them each request names its caller in the headers
x-toolgate-subject, x-toolgate-roles (comma-separated) and x-toolgate-session (names set by
proxy.identityHeaders). These headers are stripped before forwarding and trusted as sent:
run the proxy behind your own authentication. Authorization / x-api-key pass through
untouched and are never logged.

With "identity" in the config, every request must carry "Authorization: Bearer <JWT>" from
the configured issuer (401 otherwise; RFC 9728 metadata at /.well-known/oauth-protected-resource):
the verified token names the caller, the x-toolgate-subject/-roles headers are ignored, the
client's Authorization is never forwarded, and the upstream's key comes from
proxy.upstreamHeaders (e.g. authorization: { env: OPENAI_API_KEY }). More: docs/identity.md

Flags:
  --upstream URL         the model API (or config proxy.upstream), e.g. https://api.openai.com
  --port N               port to listen on; 0 picks a free one (the ready line shows it)
  --host ADDR            address to bind (default 127.0.0.1)
  --config FILE          toolgate config (.json, .yaml): tools, policy, receipts, audit, proxy
  --subject NAME         a fixed caller subject
  --role ROLE            a fixed caller role (repeatable)
  --session ID           a fixed session for loop and taint state
  --state-url URL        keep loop, taint, rate-limit and confirmation state in Redis
                         (redis://host:port[/db]), shared by every replica using it; wins over
                         the config's state.redis.url (docs/state.md)
  --timeout-ms N         upstream time limit, answered 504 (default ${DEFAULT_TIMEOUT_MS})
  --max-body-bytes N     largest request body on a guarded path, answered 413 (default ${DEFAULT_MAX_BODY_BYTES})
  --watch                reload the config when its file changes (as on SIGHUP)
  --pass-through 'METHOD /path'
                         also pass this request through unguarded (repeatable; * is one path
                         segment, e.g. 'GET /v1/responses/*' — only for endpoints you accept
                         returning model output the gate never sees)
  -h, --help             this text

Once listening it prints to stderr:
  toolgate proxy: listening on http://127.0.0.1:PORT → UPSTREAM
SIGINT / SIGTERM stop it cleanly (audit records flushed). SIGHUP reloads the config file:
validated first, swapped at once, every session's state kept; a config that does not validate
leaves the running one in place and the log says why. A changed identity block is applied with
the rest (a key removed from it stops verifying at once); identity cannot be turned on or off
by a reload, and the proxy and state blocks are read at start only.

Examples:
  toolgate proxy --upstream https://api.openai.com --port 8787 --config toolgate.config.yaml
  toolgate proxy --upstream https://api.anthropic.com --port 8788 --subject alice --role analyst

  // openai: the proxy in place of https://api.openai.com/v1
  const client = new OpenAI({ baseURL: 'http://127.0.0.1:8787/v1' })
  // @anthropic-ai/sdk: the proxy in place of https://api.anthropic.com
  const client = new Anthropic({ baseURL: 'http://127.0.0.1:8788',
    defaultHeaders: { 'x-toolgate-subject': 'alice', 'x-toolgate-roles': 'analyst' } })
`

const SPEC = {
  values: {
    upstream: 'the model API base URL (http:// or https://)',
    port: 'a port number (0 picks a free one)',
    host: 'an address to bind, e.g. 127.0.0.1',
    config: 'a toolgate config file (.json, .yaml)',
    subject: 'the caller subject',
    session: 'a session id',
    'state-url': 'a Redis URL, e.g. redis://127.0.0.1:6379',
    'timeout-ms': 'a whole number of milliseconds, at least 1',
    'max-body-bytes': 'a whole number of bytes, at least 1024',
  },
  repeatable: {
    role: 'a role of the caller',
    'pass-through': "'METHOD /path'",
  },
  switches: ['help', 'watch'],
  aliases: { h: 'help' },
}

const whole = (flag: string, v: string, min: number, max = Number.MAX_SAFE_INTEGER): number => {
  const n = /^\d+$/.test(v) ? Number(v) : NaN
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new UsageError(`--${flag} needs ${SPEC.values[flag as keyof typeof SPEC.values]}${max < Number.MAX_SAFE_INTEGER ? ` (at most ${max})` : ''}, got \`${v}\``)
  return n
}

/** `toolgate proxy`. */
export const command = {
  usage: USAGE,
  async run(argv: string[]): Promise<number> {
    // batched once per event-loop turn, after the answer went out; flushed on exit
    const out = deferredLog('toolgate proxy: ')
    try {
      const { values, switches, lists } = parseFlags(argv, SPEC)
      const roles = lists.role ?? []
      const passThrough: string[] = [...DEFAULT_PASS_THROUGH]
      for (const v of lists['pass-through'] ?? []) {
        try {
          passThroughList([v])
        } catch (err) {
          throw new UsageError(`--pass-through: ${(err as Error).message}`)
        }
        passThrough.push(v)
      }
      if (switches.has('help')) {
        process.stdout.write(HELP)
        return 0
      }
      if (switches.has('watch') && values.config === undefined) throw new UsageError('--watch needs --config: the file to watch')
      let config: ToolGateConfig | undefined
      if (values.config !== undefined) {
        try {
          config = loadProxyConfig(values.config)
        } catch (err) {
          out((err as Error).message)
          return 2
        }
      }
      const withStateUrl = (c: ToolGateConfig | undefined): ToolGateConfig | undefined => {
        if (values['state-url'] === undefined) return c
        // the flag wins over state.redis.url; the config's keyPrefix and timeoutMs still apply
        const state = c?.state
        return { ...c, tools: c?.tools ?? [], state: { ...state, redis: { ...state?.redis, url: values['state-url'] } } }
      }
      config = withStateUrl(config)
      const p = config?.proxy ?? {}
      const upstream = values.upstream ?? p.upstream
      if (upstream === undefined) throw new UsageError('--upstream needs a value: the model API base URL (or set proxy.upstream in the config)')
      const bad = parseUpstream(upstream)
      if (typeof bad === 'string') throw new UsageError(`${values.upstream !== undefined ? '--upstream' : 'config proxy.upstream'}: ${bad}`)
      if (values.port === undefined) throw new UsageError('--port needs a value: a port number (0 picks a free one)')
      const port = whole('port', values.port, 0, 65535)
      const timeoutMs = values['timeout-ms'] !== undefined ? whole('timeout-ms', values['timeout-ms'], 1) : p.timeoutMs ?? DEFAULT_TIMEOUT_MS
      const maxBodyBytes = values['max-body-bytes'] !== undefined ? whole('max-body-bytes', values['max-body-bytes'], 1024) : p.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
      const fixed: Pick<CallContext, 'subject' | 'roles' | 'session'> = {}
      const subject = values.subject ?? p.subject
      const fixedRoles = roles.length > 0 ? roles : p.roles
      const session = values.session ?? p.session
      if (subject !== undefined) fixed.subject = subject
      if (fixedRoles !== undefined) fixed.roles = fixedRoles
      if (session !== undefined) fixed.session = session
      let proxy: Awaited<ReturnType<typeof startHttpProxy>>
      let verifier: ServerVerifier | undefined
      try {
        // identity (docs/identity.md): verified callers instead of a fixed one; the upstream's own headers
        const given = [['--subject', values.subject], ['--role', roles[0]], ['--session', values.session], ['proxy.subject', p.subject], ['proxy.roles', p.roles], ['proxy.session', p.session]]
        const ident = await serverIdentity(config, given.filter(([, v]) => v !== undefined).map(([f]) => f as string))
        verifier = ident.verifier
        const upstreamHeaders = ident.upstreamHeaders
        proxy = await startHttpProxy({
          upstream, port, host: values.host ?? '127.0.0.1', config, fixed, identityHeaders: p.identityHeaders, timeoutMs, maxBodyBytes, log: out, passThrough, identity: verifier, upstreamHeaders,
        })
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code
        out(code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL' ? `cannot listen on ${values.host ?? '127.0.0.1'}:${port} (${code})` : (err as Error).message)
        return 2
      }
      if (proxy.publicKey !== undefined) out(`receipts signed with the public key ${proxy.publicKey}`)
      out(`listening on ${proxy.url} → ${proxy.upstream}`)
      const configPath = values.config
      let unwatch: () => void = () => {}
      if (configPath !== undefined) {
        // a key generated at start keeps signing: receipts verify across a reload
        const generated = config?.receipts?.privateKey
        const running = proxy
        const door = verifier
        const startOnly = (c: ToolGateConfig | undefined) => JSON.stringify([c?.proxy, c?.state])
        const atStart = startOnly(config)
        // one reload at a time, in the order asked (building a verifier takes a moment)
        let reloading = Promise.resolve()
        const reload = (why: string) => {
          reloading = reloading.then(async () => {
            let next: ToolGateConfig
            let identityChanged: boolean
            try {
              next = withStateUrl(loadProxyConfig(configPath, generated))!
              // the new identity.jwt built first, then the gates compiled; both swapped together or neither
              const identity = await prepareIdentityReload(door, next)
              running.reload(next)
              identity.commit()
              identityChanged = identity.changed
            } catch (err) {
              out(`${why}: the config was not reloaded, the running one stays: ${(err as Error).message}`)
              return
            }
            out(`${why}: config reloaded from ${configPath}`)
            if (identityChanged) out(`${why}: identity: tokens are verified against the reloaded \`identity.jwt\` from now on`)
            if (startOnly(next) !== atStart) out(`${why}: the \`proxy\` and \`state\` blocks are read at start only; restart the proxy for their changes`)
          })
        }
        process.on('SIGHUP', () => reload('SIGHUP'))
        if (switches.has('watch')) {
          const onChange = (now: Stats, before: Stats) => {
            if (now.mtimeMs !== before.mtimeMs || now.size !== before.size || now.ino !== before.ino) reload('config file changed')
          }
          watchFile(configPath, { interval: 250 }, onChange)
          unwatch = () => unwatchFile(configPath, onChange)
        }
      }
      return await new Promise<number>((done) => {
        const stop = (sig: string) => () => {
          out(`${sig}: closing`)
          unwatch()
          void proxy.close().then(() => done(0), (err: unknown) => {
            out(`closing failed: ${(err as Error).message}`)
            done(1)
          })
        }
        process.once('SIGINT', stop('SIGINT'))
        process.once('SIGTERM', stop('SIGTERM'))
      })
    } catch (err) {
      if (err instanceof UsageError) {
        out(err.message)
        return 2
      }
      throw err
    }
  },
}
