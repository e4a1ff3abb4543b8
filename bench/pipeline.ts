/**
 * The plain pipeline a Node developer writes by hand to gate a tool call from a known caller:
 * a `Map` of role → allowed tool names (built once from the policy), `JSON.parse` of the
 * model's argument text, and one ajv 8 validator per tool compiled up front with ajv's own
 * repair options (`coerceTypes: 'array'`, `useDefaults: true`, `removeAdditional: 'failing'`).
 * No change detection (every allowed call is `passed`), no duplicate or prototype keys
 * refused, destructive tools repaired like any other, no enum repair, no message for the model:
 * the cheapest honest version. `bench/peer.ts` keeps the variant that also tells passed from
 * repaired.
 */
import { Ajv, type ValidateFunction } from 'ajv'

/** What the pipeline answers for one call. */
export interface PipelineResult {
  outcome: 'passed' | 'rejected' | 'denied'
  arguments?: Record<string, unknown>
}

/** A caller as the pipeline sees it (the roles only). */
export interface PipelineCaller {
  roles: readonly string[]
}

/** Compiles every schema once; returns `check(tool, argsText, caller)`. */
export function makePipeline(
  tools: readonly { name: string; inputSchema: Record<string, unknown> }[],
  allowedByRole: ReadonlyMap<string, ReadonlySet<string>>,
): (tool: string, args: string, caller: PipelineCaller) => PipelineResult {
  const ajv = new Ajv({ coerceTypes: 'array', useDefaults: true, removeAdditional: 'failing', allErrors: false, strict: false, logger: false })
  const validators = new Map<string, ValidateFunction>()
  for (const t of tools) validators.set(t.name, ajv.compile(t.inputSchema))
  return function check(tool, args, caller) {
    const validate = validators.get(tool)
    if (validate === undefined) return { outcome: 'rejected' }
    let allowed = false
    for (const r of caller.roles) {
      if (allowedByRole.get(r)?.has(tool)) {
        allowed = true
        break
      }
    }
    if (!allowed) return { outcome: 'denied' }
    let data: unknown
    try {
      data = args === '' ? {} : JSON.parse(args)
    } catch {
      return { outcome: 'rejected' }
    }
    if (data === null || typeof data !== 'object' || Array.isArray(data) || !validate(data)) return { outcome: 'rejected' }
    return { outcome: 'passed', arguments: data as Record<string, unknown> }
  }
}
