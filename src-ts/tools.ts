// Conversion only for `filterTools`: which tools a caller may see is decided by the core.
// JSON tool lists go to the core whole (it knows each dialect's shape); AI SDK records and
// LangChain tool arrays usually hold live objects (functions, zod schemas, class instances) that
// cannot cross as JSON, so for those the core is asked about names and the caller's own objects
// are kept, identical, in a container of the same shape.
import { ToolGateError } from './errors'
import { payloadText } from './turn'
import type { Dialect } from './types'

type Visible = (names: string[]) => boolean[]
type FilterJson = (dialect: string, tools: string) => string

const LIVE_OBJECT_DIALECTS: ReadonlySet<Dialect> = new Set(['ai-sdk', 'ai-sdk-ui', 'langchain'])

/** The name a LangChain tool goes by: a tool instance or spec (`name`), or an OpenAI-format definition (`function.name`). */
function langchainName(t: unknown): string | undefined {
  if (t === null || typeof t !== 'object') return undefined
  const o = t as { name?: unknown; function?: { name?: unknown } }
  if (typeof o.name === 'string') return o.name
  if (o.function && typeof o.function.name === 'string') return o.function.name
  return undefined
}

/** Filters `tools` in `dialect`'s shape; see `ToolGate.filterTools`. */
export function filterToolList<T>(tools: T, dialect: Dialect, visible: Visible, filterJson: FilterJson): T {
  if (LIVE_OBJECT_DIALECTS.has(dialect)) {
    if ((dialect === 'ai-sdk' || dialect === 'ai-sdk-ui') && tools !== null && typeof tools === 'object' && !Array.isArray(tools)) {
      const record = tools as Record<string, unknown>
      const names = Object.keys(record)
      const keep = visible(names)
      const out: Record<string, unknown> = {}
      names.forEach((n, i) => {
        if (keep[i]) out[n] = record[n]
      })
      return out as T
    }
    if (dialect === 'langchain' && Array.isArray(tools)) {
      const names = tools.map((t, i) => {
        const n = langchainName(t)
        if (n === undefined) throw new ToolGateError('E_PAYLOAD', `langchain tool list at \`[${i}]\`: a tool without a name`)
        return n
      })
      const keep = visible(names)
      return tools.filter((_, i) => keep[i]) as T
    }
  }
  const text = payloadText(tools, `${dialect} tool list`)
  const filtered = filterJson(dialect, text)
  // the same shape back: JSON text in, JSON text out
  return (typeof tools === 'string' ? filtered : JSON.parse(filtered)) as T
}
