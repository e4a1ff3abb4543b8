// Credentials that ride in URLs — `user:password@` and `api_key=` / `key=` / `token=` …
// query parameters — kept out of everything the proxies print: start lines, usage errors, logs.

/** Query parameter names whose values are secrets (compared without regard to case, `-` and `_`). */
const SECRET_PARAMS = /^(?:api-?key|key|token|access-?token|auth|authorization|password|passwd|pwd|secret|client-?secret|sig|signature|x-?api-?key|jwt|bearer|credential|credentials)$/i

/** Shown in place of a secret. */
export const REDACTED = '***'

/**
 * `url` with its user name and password replaced by `***` and the value of every secret-looking
 * query parameter (`api_key`, `key`, `token`, `access_token`, `password`, `secret`, `sig` …)
 * replaced by `***`. Text that is not a URL is scrubbed by {@link redactSecrets}.
 */
export function redactUrl(url: string): string {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    return redactSecrets(url)
  }
  if (u.username !== '' || u.password !== '') {
    u.username = REDACTED
    u.password = ''
  }
  const names = [...u.searchParams.keys()]
  for (const k of names) if (SECRET_PARAMS.test(k.replace(/_/g, '-'))) u.searchParams.set(k, REDACTED)
  return u.href
}

/**
 * Any text with URL credentials scrubbed: `scheme://user:pass@` → `scheme://***@`, and
 * `name=value` where `name` is a secret-looking parameter → `name=***`. For log lines and
 * messages that may quote a URL somewhere inside.
 */
export function redactSecrets(text: string): string {
  // each pattern needs `://` or `=`: a line with neither (most log lines) has nothing to scrub
  if (!text.includes('=') && !text.includes('://')) return text
  return text
    .replace(/([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^\s/?#@`'"]*@/g, `$1${REDACTED}@`)
    .replace(/([?&;\s`'"]|^)([A-Za-z0-9_-]{1,40})=([^&#\s`'"]*)/g, (all, pre: string, name: string, _v: string) => (SECRET_PARAMS.test(name.replace(/_/g, '-')) ? `${pre}${name}=${REDACTED}` : all))
}
