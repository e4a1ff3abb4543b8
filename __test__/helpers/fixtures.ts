// The shared fixture corpus under __test__/fixtures/ (also read by the Rust tests): loading and
// the message mask the fixture formats use.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** Every `<dialect>/<case>.json` under `root`, named `<dialect>/<case>.json`, in name order. */
export function readFixtures<T>(root: string): [string, T][] {
  const out: [string, T][] = []
  for (const d of readdirSync(root).sort()) {
    const dir = join(root, d)
    if (!statSync(dir).isDirectory()) continue
    for (const f of readdirSync(dir).sort()) {
      if (f.endsWith('.json')) out.push([`${d}/${f}`, JSON.parse(readFileSync(join(dir, f), 'utf8')) as T])
    }
  }
  return out
}

/** Replaces every string equal to a refusal message by `"<message>"` (fixtures do not pin wording). */
export function mask(v: unknown, messages: Set<string>): unknown {
  if (typeof v === 'string') return messages.has(v) ? '<message>' : v
  if (Array.isArray(v)) return v.map((x) => mask(x, messages))
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mask(x, messages)]))
  return v
}
