// A model API request body's `tools`, filtered for a caller: shared by the OpenAI/Anthropic client
// adapters and the HTTP proxy, which both send a request the host wrote (the proxy must not
// depend on an adapter). The filtering itself is `gate.filterTools`; this only fits the body.
import { isObj } from './json-object'
import type { ToolGate } from './gate'
import { fitToolChoice } from './request-tool-choice'
import type { RequestDialect } from './request-dialect'
import type { CallContext } from './types'

type Obj = Record<string, unknown>

/**
 * The body with `tools` filtered for the caller (a copy; the caller's body is not touched). For
 * Chat Completions a list left empty is dropped with `tool_choice` and `parallel_tool_calls`.
 * A `tool_choice` naming a tool the filter removed (or forcing a call when none is left) is sent
 * as `auto` (see `fitToolChoice`); `onRewrite` hears why, for the host's log. Bodies without a
 * `tools` array come back as they are. Throws as `gate.filterTools` does.
 */
export function filterBody(body: unknown, gate: ToolGate, dialect: RequestDialect, context: CallContext, onRewrite?: (why: string) => void): unknown {
  if (!isObj(body) || !Array.isArray(body.tools)) return body
  const tools = gate.filterTools(body.tools, { ...context, dialect }) as unknown[]
  const out: Obj = { ...body, tools }
  if (dialect === 'openai' && tools.length === 0 && body.tools.length > 0) {
    // Chat Completions refuses an empty `tools` list, and `tool_choice` without tools: a request
    // offering this caller no tool is one without them.
    delete out.tools
    delete out.tool_choice
    delete out.parallel_tool_calls
    return out
  }
  const fit = fitToolChoice(body.tool_choice, body.tools, tools, dialect)
  if (fit !== undefined) {
    out.tool_choice = fit.toolChoice
    onRewrite?.(fit.why)
  }
  return out
}
