// One raw JSON-RPC POST to an MCP Streamable HTTP endpoint, as a client that is not the SDK would
// send it (a message the SDK would never write): the status, the session id it names, and the
// JSON-RPC messages of its answer (a JSON body, or the `data:` lines of an SSE stream).

/** What {@link rawMcpPost} answers. */
export interface RawMcpAnswer {
  status: number
  sid?: string
  messages: Record<string, unknown>[]
}

/** POSTs `body` (JSON text, as is) to `url`, in session `sid` when given; gives up after 20 s. */
export async function rawMcpPost(url: string, body: string, sid?: string): Promise<RawMcpAnswer> {
  const session: Record<string, string> = sid === undefined ? {} : { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' }
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...session }, body, signal: AbortSignal.timeout(20_000) })
  const text = await r.text()
  const sse = (r.headers.get('content-type') ?? '').startsWith('text/event-stream')
  const messages = sse ? text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>) : text === '' ? [] : [JSON.parse(text) as Record<string, unknown>]
  return { status: r.status, sid: r.headers.get('mcp-session-id') ?? undefined, messages }
}
