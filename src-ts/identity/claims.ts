// A verified token's claims as a CallContext: the subject, the roles and the configured identity
// facts, found by claim path. The claims are signed by the issuer, but their shape is still
// checked and bounded: a subject that is not a string, roles that are not strings, or too many
// of them refuse the token rather than guess (docs/identity.md lists the IdP layouts).
import { isObj } from '../json-object'
import type { CallContext } from '../types'
import type { CheckedJwtConfig } from './config'

/** Bounds on what a token may put into a CallContext. */
export const CLAIM_LIMITS = Object.freeze({ subjectChars: 256, roles: 64, roleChars: 128, sessionChars: 256 })

/** A caller as a verified token names it: a subject always, roles always (maybe none). */
export type VerifiedCaller = CallContext & { subject: string; roles: string[] }

/**
 * The value at `path` in `claims`: the whole path as one claim name first (Auth0's namespaced
 * claims such as `https://example.com/roles` hold dots), else split at a dot into a claim and
 * the rest of the path inside it (`realm_access.roles`), trying the shortest first. Own
 * properties only; `undefined` when absent.
 */
export function claimAt(claims: unknown, path: string): unknown {
  if (!isObj(claims)) return undefined
  if (Object.hasOwn(claims, path)) return claims[path]
  for (let i = path.indexOf('.'); i > 0; i = path.indexOf('.', i + 1)) {
    const head = path.slice(0, i)
    if (!Object.hasOwn(claims, head)) continue
    const found = claimAt(claims[head], path.slice(i + 1))
    if (found !== undefined) return found
  }
  return undefined
}

/**
 * The roles a claim value names: a list of strings, or one string separated by spaces or commas
 * (Entra `scp`-style). Absent: none. Anything else, or more than the bounds allow: a message
 * saying what is wrong (the token is then refused).
 */
export function rolesOf(value: unknown, claim: string): string[] | string {
  if (value === undefined || value === null) return []
  let list: unknown[]
  if (typeof value === 'string') list = value.split(/[\s,]+/)
  else if (Array.isArray(value)) list = value
  else return `the roles claim \`${claim}\` is neither a list nor a string`
  const out = new Set<string>()
  for (const r of list) {
    if (typeof r !== 'string') return `the roles claim \`${claim}\` holds a value that is not a string`
    const t = r.trim()
    if (t === '') continue
    if (t.length > CLAIM_LIMITS.roleChars) return `the roles claim \`${claim}\` holds a role longer than ${CLAIM_LIMITS.roleChars} characters`
    out.add(t)
  }
  if (out.size > CLAIM_LIMITS.roles) return `the roles claim \`${claim}\` holds more than ${CLAIM_LIMITS.roles} roles`
  return [...out]
}

/** The caller named by verified `claims`, or a message saying which claim is missing or wrong. */
export function callerOf(claims: Record<string, unknown>, c: CheckedJwtConfig): VerifiedCaller | string {
  const subject = claimAt(claims, c.subjectClaim)
  if (typeof subject !== 'string' || subject.trim() === '') return `the token has no subject (claim \`${c.subjectClaim}\` missing or not a non-empty string)`
  if (subject.length > CLAIM_LIMITS.subjectChars) return `the subject claim \`${c.subjectClaim}\` is longer than ${CLAIM_LIMITS.subjectChars} characters`
  const roles = rolesOf(claimAt(claims, c.rolesClaim), c.rolesClaim)
  if (typeof roles === 'string') return roles
  const caller: VerifiedCaller = { subject, roles }
  if (c.identityClaims.length > 0) {
    const identity: Record<string, unknown> = {}
    for (const [name, path] of c.identityClaims) {
      const v = claimAt(claims, path)
      if (v !== undefined) identity[name] = v
    }
    caller.identity = identity
  }
  return caller
}

/**
 * The session of a verified caller, always inside their own subject so that one user can never
 * share, taint or read another user's loop, taint or rate-limit state: `["alice"]` when they
 * name no session (one scope per user), `["alice","conv-1"]` for a conversation they name (JSON,
 * so no subject or name can forge another's pair). `undefined` for a name that is too long.
 */
export function scopedSession(subject: string, named: string | undefined): string | undefined {
  if (named === undefined || named === '') return JSON.stringify([subject])
  if (named.length > CLAIM_LIMITS.sessionChars) return undefined
  return JSON.stringify([subject, named])
}
