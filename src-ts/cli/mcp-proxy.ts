// PLACEHOLDER: `toolgate mcp-proxy` is being written now; until then it says so and exits 2.

/** `toolgate mcp-proxy`. */
export const command = {
  usage: 'toolgate mcp-proxy [flags] -- <server command…>   front an MCP server over stdio',
  run(_argv: string[]): number {
    process.stderr.write('toolgate mcp-proxy: not available in this build yet\n')
    return 2
  },
}
