// Conversion only: the caller's context (`CallContext`, possibly spread into an options object
// such as `{ dialect, ...ctx }`) to the JSON text the binding reads. Unknown keys of a bare
// context are refused by the core (a typo such as `role` must not silently drop a role).
import type { CallContext } from './types'

const KEYS = ['subject', 'roles', 'identity', 'purpose', 'context', 'session', 'surface', 'callId'] as const

/**
 * JSON text of the `CallContext` fields of `opts` (other keys, such as `dialect`, are options of
 * the call, not of the caller); `''` when there are none.
 */
export function contextText(opts: object | null | undefined): string {
  if (opts === null || opts === undefined) return ''
  const o = opts as Record<string, unknown>
  let picked: Record<string, unknown> | undefined
  for (const k of KEYS) {
    const v = o[k]
    if (v !== undefined) (picked ??= {})[k] = v
  }
  return picked === undefined ? '' : JSON.stringify(picked)
}

/**
 * JSON text of a bare context passed as `check`'s or `confirm`'s `ctx` argument: every key is
 * sent, so the core names any that is not a `CallContext` field.
 */
export function bareContextText(ctx: CallContext | null | undefined): string {
  if (ctx === null || ctx === undefined) return ''
  let empty = true
  for (const k in ctx) {
    if ((ctx as Record<string, unknown>)[k] !== undefined) {
      empty = false
      break
    }
  }
  return empty ? '' : JSON.stringify(ctx)
}
