// Which requests the HTTP proxy guards, which it passes through, and which it refuses. The path
// is normalised first — percent-decoded segment by segment, duplicate and trailing slashes
// dropped, dot segments and encoded separators refused — and the normalised path is the one sent
// upstream, so the proxy decides on exactly the path the upstream serves. A `POST` whose path
// ends in a model endpoint (`…/chat/completions`, `…/responses`, `…/messages`, whatever the
// prefix: `/v1/…`, Azure's `/openai/deployments/{d}/…`, `/openai/v1/…`) is guarded; any other
// request passes only when it is on the pass-through list (by default: requests that cannot
// return model output), and is refused otherwise.

import { ToolGateError } from '../../errors'
import type { RequestDialect } from '../../request-dialect'

/** The endpoint suffixes guarded on `POST`, and the API each one speaks. */
export const GUARDED_SUFFIXES: readonly (readonly [string, RequestDialect])[] = Object.freeze([
  ['/chat/completions', 'openai'],
  ['/responses', 'openai-responses'],
  ['/messages', 'anthropic'],
] as const)

/**
 * The default pass-through list: `METHOD /path` entries, `*` standing for one path segment.
 * None of them can answer with model output (a model list, embeddings, moderation scores, token
 * counts, file metadata and uploads). Stored responses (`GET /v1/responses/{id}`), stored chat
 * completions, batches and file contents can, and are refused unless listed with `--pass-through`.
 */
export const DEFAULT_PASS_THROUGH: readonly string[] = Object.freeze([
  'GET /v1/models',
  'GET /v1/models/*',
  'HEAD /v1/models',
  'POST /v1/embeddings',
  'POST /v1/moderations',
  'POST /v1/messages/count_tokens',
  'POST /v1/responses/input_tokens',
  'GET /v1/files',
  'POST /v1/files',
  'GET /v1/files/*',
  'DELETE /v1/files/*',
])

/** A path that could not be normalised: the reason, for a 400. */
export interface BadPath {
  bad: string
}

/** Characters kept as they are in a forwarded path segment (RFC 3986 `pchar` minus `%`). */
const PCHAR = /[A-Za-z0-9\-._~!$&'()*+,;=:@]/

/** A path every step of {@link normalisePath} leaves as it is: `/`-separated non-empty segments of {@link PCHAR} characters, none `.` or `..`. */
const PLAIN_PATH = /^(?:\/(?!\.\.?(?:\/|$))[A-Za-z0-9\-._~!$&'()*+,;=:@]+)+$/

function encodeSegment(s: string): string {
  let out = ''
  for (const ch of s) out += PCHAR.test(ch) ? ch : encodeURIComponent(ch)
  return out
}

/**
 * `raw` (a request path, no query) normalised: each segment percent-decoded (malformed escapes,
 * encoded `/` or `\`, NUL and control characters, `.` and `..` segments are refused), empty
 * segments (duplicate slashes, a trailing slash) dropped, and each segment re-encoded the one
 * canonical way. Answers `/a/b` form (`/` for no segment) or {@link BadPath}.
 */
export function normalisePath(raw: string): string | BadPath {
  // a path already in that form (every segment non-empty, plain characters, no `%`, no dot
  // segment) is its own normal form: the common case, one test
  if (PLAIN_PATH.test(raw)) return raw
  const segs: string[] = []
  for (const part of raw.split('/')) {
    if (part === '') continue
    let seg: string
    try {
      seg = decodeURIComponent(part)
    } catch {
      return { bad: 'a malformed percent-escape in the path' }
    }
    // eslint-disable-next-line no-control-regex
    if (/[/\\\u0000-\u001f\u007f]/.test(seg)) return { bad: 'an encoded separator or control character in the path' }
    if (seg === '.' || seg === '..') return { bad: 'a dot segment in the path' }
    segs.push(encodeSegment(seg))
  }
  return `/${segs.join('/')}`
}

/** The API a `POST` to `path` (normalised) speaks when it is guarded; matched without regard to case. */
export function guardedDialect(method: string | undefined, path: string): RequestDialect | undefined {
  if (method !== 'POST') return undefined
  const p = path.toLowerCase()
  for (const [suffix, dialect] of GUARDED_SUFFIXES) if (p.endsWith(suffix)) return dialect
  return undefined
}

/** A compiled pass-through list. */
export interface PassThroughList {
  /** Whether `method path` (normalised path) is on the list. */
  allows(method: string, path: string): boolean
  /** The entries, as given. */
  readonly entries: readonly string[]
}

/**
 * Compiles `entries` (`METHOD /path`, `*` for one segment; `*` as the method for any method).
 * Throws `E_CONFIG` naming the first entry that is not of that form.
 */
export function passThroughList(entries: readonly string[]): PassThroughList {
  const compiled = entries.map((e) => {
    const m = /^([A-Z]+|\*) (\/\S*)$/.exec(e.trim())
    if (m === null) throw new ToolGateError('E_CONFIG', `pass-through entry \`${e}\`: expected \`METHOD /path\` (\`*\` for one path segment)`)
    const norm = normalisePath(m[2])
    if (typeof norm !== 'string') throw new ToolGateError('E_CONFIG', `pass-through entry \`${e}\`: ${norm.bad}`)
    return { method: m[1], segs: norm.split('/').slice(1) }
  })
  return {
    entries,
    allows(method, path) {
      const segs = path.split('/').slice(1)
      return compiled.some((c) => (c.method === '*' || c.method === method) && c.segs.length === segs.length && c.segs.every((s, i) => s === '*' || s === segs[i]))
    },
  }
}
