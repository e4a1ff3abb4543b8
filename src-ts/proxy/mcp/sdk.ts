// The MCP SDK is an optional peer dependency: only the Streamable HTTP listener needs it at run
// time. Loading it here turns a missing package into a ToolGateError that says what to install.
import { ToolGateError } from '../../errors'

/**
 * Loads the SDK module `load` imports; a missing `@modelcontextprotocol/sdk` is `E_CONFIG`
 * naming the package and the feature that needs it.
 */
export async function loadMcpSdk<T>(load: () => Promise<T>, feature: string): Promise<T> {
  try {
    return await load()
  } catch (err) {
    const code = (err as { code?: unknown }).code
    if (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND' || code === 'ERR_PACKAGE_PATH_NOT_EXPORTED') {
      throw new ToolGateError('E_CONFIG', `${feature} needs the MCP SDK: npm install @modelcontextprotocol/sdk@^1.32.2 (${(err as Error).message.split('\n')[0]})`, { cause: err })
    }
    throw err
  }
}
