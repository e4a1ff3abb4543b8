// `proxy.upstreamHeaders`: the headers both proxies send to their upstream (the model API key, an
// MCP server's token), from the config or from environment variables, resolved once at start.
// With `identity` on, these are the upstream's only credentials: the caller's own
// `Authorization` is never passed on (docs/identity.md, "No token passthrough").
import { ToolGateError } from '../errors'

/** A header value in the config: the text itself, or `{ env: "VAR" }` to read it from the environment at start. */
export type UpstreamHeaderValue = string | { env: string }

/** Bounds: a handful of credentials, not a header dump. */
export const UPSTREAM_HEADER_LIMITS = Object.freeze({ headers: 32, valueChars: 8192 })

/** Headers the proxy itself owns (framing, hops, the target): never set from the config. */
const OWN = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'proxy-connection', 'expect', 'content-encoding', 'accept-encoding'])

/**
 * The headers `spec` names, lower-cased, each value read now (`{ env }` from `env`); an
 * `authorization` value without a scheme (a bare API key) is sent as `Bearer <key>`. Throws
 * `ToolGateError` `E_CONFIG` naming the header (never its value) for a name that is not an HTTP
 * token or is one the proxy owns, a value with a line break, or an environment variable that is
 * not set or empty.
 */
export function resolveUpstreamHeaders(spec: unknown, env: NodeJS.ProcessEnv = process.env, at = 'proxy.upstreamHeaders'): Record<string, string> {
  const bad = (what: string): never => {
    throw new ToolGateError('E_CONFIG', `config at \`${at}\`: ${what}`)
  }
  if (spec === undefined) return {}
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return bad('expected an object: header name → value or { env: "VAR" }')
  const entries = Object.entries(spec as Record<string, unknown>)
  if (entries.length > UPSTREAM_HEADER_LIMITS.headers) bad(`at most ${UPSTREAM_HEADER_LIMITS.headers} headers`)
  const out: Record<string, string> = {}
  for (const [name, v] of entries) {
    const key = name.toLowerCase()
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(key)) bad(`\`${name.slice(0, 60)}\` is not a header name`)
    if (OWN.has(key)) bad(`\`${name}\` is set by the proxy itself`)
    if (key in out) bad(`\`${name}\` is given twice (header names ignore case)`)
    let value: string
    if (typeof v === 'string') value = v
    else if (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 1 && typeof (v as { env?: unknown }).env === 'string') {
      const varName = (v as { env: string }).env
      const got = env[varName]
      if (got === undefined || got.trim() === '') return bad(`\`${name}\`: the environment variable ${varName} is not set`)
      value = got.trim()
    } else return bad(`\`${name}\`: expected a string or { env: "VAR" }`)
    if (/[\r\n\0]/.test(value)) bad(`\`${name}\`: the value holds a line break or NUL`)
    if (value.length > UPSTREAM_HEADER_LIMITS.valueChars) bad(`\`${name}\`: the value is longer than ${UPSTREAM_HEADER_LIMITS.valueChars} characters`)
    // `authorization: { env: OPENAI_API_KEY }`: a bare key (no scheme) is sent as a bearer token
    out[key] = key === 'authorization' && !/\s/.test(value) ? `Bearer ${value}` : value
  }
  return out
}
