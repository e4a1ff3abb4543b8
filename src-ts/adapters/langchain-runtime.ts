// The runtime values toolgate/langchain takes from LangChain.js, loaded on first use only (the
// packages are optional peer dependencies: importing toolgate/langchain loads none of them). A
// package that is not installed is `E_CONFIG` naming what to install. Types come from the
// packages with `import type`; `@langchain/langgraph/prebuilt` has no types this repository's
// `node10` module resolution can see, so the few members used of `ToolNode` are written out here.
import type * as CoreMessages from '@langchain/core/messages'
import type { RunnableConfig } from '@langchain/core/runnables'
import type * as CoreTools from '@langchain/core/tools'
import type * as CoreJsonSchema from '@langchain/core/utils/json_schema'

import { ToolGateError } from '../errors'

/** `@langchain/core/messages` as toolgate uses it. */
export type MessagesModule = typeof CoreMessages
/** `@langchain/core/tools` as toolgate uses it. */
export type ToolsModule = typeof CoreTools
/** `@langchain/core/utils/json_schema` as toolgate uses it. */
export type JsonSchemaModule = typeof CoreJsonSchema

/** What `ToolNode` (from `@langchain/langgraph/prebuilt`, 1.x) offers a subclass. */
export interface ToolNodeBase {
  tools: unknown[]
  /** Runs the unanswered calls of the last AIMessage (or a Send's `lg_tool_call`). */
  run(input: unknown, config: RunnableConfig): Promise<unknown>
}

/** The `ToolNode` class: `new ToolNode(tools, { name, tags, handleToolErrors })`. */
export type ToolNodeClass = new (tools: unknown[], options?: { name?: string; tags?: string[]; handleToolErrors?: boolean }) => ToolNodeBase

/** `@langchain/langgraph/prebuilt` as toolgate uses it. */
export interface PrebuiltModule {
  ToolNode: ToolNodeClass
}

const cache = new Map<string, unknown>()

function load<T>(pkg: string, module: string, where: string, range: string): T {
  const hit = cache.get(module)
  if (hit !== undefined) return hit as T
  let loaded: T
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    loaded = require(module) as T
  } catch (err) {
    const missing = (err as { code?: unknown }).code === 'MODULE_NOT_FOUND' && String((err as Error).message).includes(pkg)
    throw new ToolGateError(
      'E_CONFIG',
      missing
        ? `${where}: install ${pkg} (${range}) to use toolgate/langchain: \`npm install ${pkg}\``
        : `${where}: ${module} could not be loaded: ${(err as Error).message}`,
      { cause: err },
    )
  }
  cache.set(module, loaded)
  return loaded
}

/** `@langchain/core/messages` (ToolMessage, AIMessage, isAIMessage …). */
export function messagesModule(where: string): MessagesModule {
  return load<MessagesModule>('@langchain/core', '@langchain/core/messages', where, '>=1.4.0 <2')
}

/** `@langchain/core/tools` (ToolInputParsingException). */
export function toolsModule(where: string): ToolsModule {
  return load<ToolsModule>('@langchain/core', '@langchain/core/tools', where, '>=1.4.0 <2')
}

/** `@langchain/core/utils/json_schema` (toJsonSchema). */
export function jsonSchemaModule(where: string): JsonSchemaModule {
  return load<JsonSchemaModule>('@langchain/core', '@langchain/core/utils/json_schema', where, '>=1.4.0 <2')
}

/** `@langchain/langgraph/prebuilt` (ToolNode). */
export function prebuiltModule(where: string): PrebuiltModule {
  const m = load<Partial<PrebuiltModule>>('@langchain/langgraph', '@langchain/langgraph/prebuilt', where, '>=1.7.3 <2')
  if (typeof m.ToolNode !== 'function') {
    throw new ToolGateError('E_CONFIG', `${where}: @langchain/langgraph/prebuilt has no ToolNode; use @langchain/langgraph >=1.7.3 <2`)
  }
  return m as PrebuiltModule
}
