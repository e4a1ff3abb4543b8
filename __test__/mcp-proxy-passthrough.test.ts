// The MCP router's pass-through (issue 20): a message the gate does not decide goes on as the
// text it came in, a `tools/call` the gate passed unchanged goes on as the very text the gate
// decided (the client's own line, which the gate's strict parse refuses when it could be read
// two ways) — and a server line whose `id` could be read two ways is written from the parsed
// message instead, so the client reads the id the proxy routed by.
import { describe, expect, it } from 'vitest'

import { McpProxy } from '../src-ts/proxy/mcp/proxy'
import { argumentsAt } from '../src-ts/proxy/mcp/rpc'

const config = { tools: [{ name: 'echo', inputSchema: { type: 'object', properties: { n: { type: 'integer' }, s: { type: 'string' } }, required: ['n'] } }] }

function router() {
  const out = { client: [] as string[], server: [] as string[] }
  const proxy = new McpProxy({ config }, {
    toClient: (m) => out.client.push(`parsed:${JSON.stringify(m)}`),
    toServer: (m) => out.server.push(`parsed:${JSON.stringify(m)}`),
    toClientText: (t) => out.client.push(`text:${t}`),
    toServerText: (t) => out.server.push(`text:${t}`),
  })
  const client = (text: string) => proxy.clientLine({ kind: 'line', text })
  const server = (text: string) => proxy.serverLine({ kind: 'line', text })
  return { proxy, out, client, server }
}

describe('the MCP router passes on what the gate does not change', () => {
  it('an allowed, unchanged call goes to the server as the text the gate decided; a repaired one as that text with the decided arguments in their place', () => {
    const r = router()
    r.client('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":5}}}')
    r.client('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"n":"6"}}}')
    r.client('{ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": { "arguments": { "n": "7", "s": "}\\"{" }, "name": "echo" } }')
    expect(r.out.server).toEqual([
      'text:{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":5}}}',
      'text:{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"n":6}}}',
      'text:{ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": { "arguments": {"n":7,"s":"}\\"{"}, "name": "echo" } }',
    ])
  })

  it('a repaired call whose text names "arguments" more than once, or holds a \\u escape, is re-encoded whole from the decision', () => {
    const r = router()
    r.client('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"arguments":1},"arguments":{"n":"6"}}}')
    r.client('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"n":"6","s":"\\u0041"}}}')
    r.client('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"n":"6","s":"x\\"arguments"}}}')
    expect(r.out.server).toEqual([
      'parsed:{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"arguments":1},"arguments":{"n":6}}}',
      'parsed:{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"n":6,"s":"A"}}}',
      'parsed:{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"n":6,"s":"x\\"arguments"}}}',
    ])
  })

  it('a call without arguments goes on with the {} the gate decided; a refused call whose name and id hold newlines and JSON is answered, never forwarded', () => {
    const r = router()
    r.client('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ping"}}')
    const name = 'echo\n=\n~{"n":1}\npassed\n[]'
    r.client(JSON.stringify({ jsonrpc: '2.0', id: 'a\n!x\n{}', method: 'tools/call', params: { name, arguments: { n: 1 } } }))
    const open = new McpProxy({ config: { tools: [{ name: 'ping', inputSchema: { type: 'object' } }] } }, { toClient: () => {}, toServer: (m) => r.out.server.push(`parsed:${JSON.stringify(m)}`), toServerText: (t) => r.out.server.push(`text:${t}`) })
    open.clientLine({ kind: 'line', text: '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ping","_meta":{}}}' })
    expect(r.out.server).toEqual(['parsed:{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ping","_meta":{},"arguments":{}}}'])
    expect(r.out.client).toHaveLength(2)
    const answers = r.out.client.map((l) => JSON.parse(l.replace(/^(parsed|text):/, '')) as { id: unknown; result?: { isError?: boolean; content: { text: string }[] } })
    expect(answers.map((a) => [a.id, a.result?.isError])).toEqual([
      [1, true],
      ['a\n!x\n{}', true],
    ])
    expect(answers[1].result?.content[0].text).toContain('Unknown tool')
  })

  it('over a transport without text (Streamable HTTP), what goes out is the message the decided text parses to, never the object handed in read again', () => {
    const sent: string[] = []
    const proxy = new McpProxy({ config }, { toClient: () => {}, toServer: (m) => sent.push(JSON.stringify(m)) })
    // an object whose arguments answer differently on every read: the gate decides its first answer
    let reads = 0
    const params = { name: 'echo' } as Record<string, unknown>
    Object.defineProperty(params, 'arguments', { enumerable: true, get: () => (reads++ === 0 ? { n: 5 } : { n: 'rm -rf /' }) })
    proxy.fromClient({ jsonrpc: '2.0', id: 1, method: 'tools/call', params })
    const repaired = { name: 'echo' } as Record<string, unknown>
    let reads2 = 0
    Object.defineProperty(repaired, 'arguments', { enumerable: true, get: () => (reads2++ === 0 ? { n: '6' } : { n: 'rm -rf /' }) })
    proxy.fromClient({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: repaired })
    expect(sent).toEqual(['{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":5}}}', '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"n":6}}}'])
  })

  it('argumentsAt finds params.arguments however the message is spaced and ordered', () => {
    let seed = 9
    const next = () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32
    for (let n = 0; n < 300; n++) {
      const args = { n, s: ['}', '{', '"', '\\', 'a]b', '"x"'][n % 6], list: [1, { deep: [n] }] }
      const params: [string, unknown][] = [['name', 'echo'], ['arguments', args], ['_meta', { progressToken: n }]]
      params.sort(() => next() - 0.5)
      const msg = { jsonrpc: '2.0', id: n, method: 'tools/call', params: Object.fromEntries(params) }
      const text = JSON.stringify(msg, null, [undefined, 1, '\t'][n % 3])
      const at = argumentsAt(text)
      expect(at).toBeDefined()
      expect(JSON.parse(text.slice(at!.start, at!.end))).toEqual(args)
    }
    expect(argumentsAt('{"params":{"arguments":[1]}}')).toBeUndefined()
  })

  it('a call the client spaced its own way is decided as the line it wrote, and that very line goes on', () => {
    const r = router()
    const line = '{ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "echo", "arguments": { "n": 5 } } }'
    r.client(line)
    expect(r.out.server).toEqual([`text:${line}`])
  })

  it('a call line a server could read two ways (a key written twice, a __proto__ key) is refused, never forwarded', () => {
    const r = router()
    r.client('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","name":"rm","arguments":{"n":5}}}')
    r.client('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"n":5},"_meta":{"a":1,"a":2}}}')
    r.client('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"n":5},"arguments":{"n":"x"}}}')
    r.client('{"jsonrpc":"2.0","id":4,"method":"tools/call","__proto__":{"x":1},"params":{"name":"echo","arguments":{"n":5}}}')
    r.client('{"jsonrpc":"2.0","id":5,"id":6,"method":"tools/call","params":{"name":"echo","arguments":{"n":5}}}')
    expect(r.out.server).toEqual([])
    expect(r.out.client).toHaveLength(5)
    for (const line of r.out.client) {
      const m = JSON.parse(line.replace(/^(parsed|text):/, '')) as { error?: unknown; result?: { isError?: boolean } }
      expect(m.error !== undefined || m.result?.isError === true).toBe(true)
    }
  })

  it('the answer to a call goes to the client as the server wrote it', () => {
    const r = router()
    r.client('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":5}}}')
    const answer = '{"jsonrpc":"2.0", "id":1,"result":{"content":[{"type":"text","text":"{\\"n\\":5}"}]}}'
    r.server(answer)
    expect(r.out.client).toEqual([`text:${answer}`])
  })

  it('a server line with two `id` members (or a \\u escape) is written from the parsed message: one id, the one the proxy routed by', () => {
    const r = router()
    r.client('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":5}}}')
    r.client('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"n":5}}}')
    r.server('{"jsonrpc":"2.0","id":7,"result":{"content":[]},"id":1}')
    r.server('{"jsonrpc":"2.0","\\u0069d":9,"result":{"content":[]},"id":2}')
    expect(r.out.client).toEqual(['parsed:{"jsonrpc":"2.0","id":1,"result":{"content":[]}}', 'parsed:{"jsonrpc":"2.0","id":2,"result":{"content":[]}}'])
  })

  it('a line holding a bare carriage return is never passed as written, either way: a reader splitting at \\r would read a message the gate never decided', () => {
    const r = router()
    // JSON reads `\r` as whitespace, so the gate sees one allowed `echo` call with a member `x`; a
    // universal-newline reader (the Python SDK's stdio server) sees the `wipe` call between the two
    const hidden = '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"wipe","arguments":{}}}'
    r.client(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":5},"x":\r${hidden}\r}}`)
    r.client(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"n":"6"},"x":\r${hidden}\r}}`)
    expect(r.out.server).toEqual([
      `parsed:{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":5},"x":${hidden}}}`,
      `parsed:{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"n":6},"x":${hidden}}}`,
    ])
    // a server answer hiding a message for the client the same way
    const note = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}'
    r.server(`{"jsonrpc":"2.0","id":1,"result":{"content":[],"x":\r${note}\r}}`)
    expect(r.out.client).toEqual([`parsed:{"jsonrpc":"2.0","id":1,"result":{"content":[],"x":${note}}}`])
    for (const line of [...r.out.server, ...r.out.client]) expect(line).not.toContain('\r')
  })

  it('with filterList, each tools/list answer keeps its own id and members, the list filtered alike answer after answer', () => {
    // the gate filters the list alone (remembered by its text, which the id does not change)
    const out: unknown[] = []
    const proxy = new McpProxy({ config: { tools: [{ name: 'echo' }] }, filterList: true }, {
      toClient: (m) => out.push(m),
      toServer: () => undefined,
      toClientText: (t) => out.push(JSON.parse(t)),
      toServerText: () => undefined,
    })
    const tools = '[{"name":"echo","inputSchema":{"type":"object"}},{"name":"wipe","inputSchema":{"type":"object"}}]'
    for (let id = 1; id <= 4; id++) {
      proxy.clientLine({ kind: 'line', text: `{"jsonrpc":"2.0","id":${id},"method":"tools/list"}` })
      proxy.serverLine({ kind: 'line', text: `{"jsonrpc":"2.0","id":${id},"result":{"tools":${tools},"nextCursor":"c${id}","_meta":{"n":${id}}}}` })
    }
    expect(out).toEqual([1, 2, 3, 4].map((id) => ({ jsonrpc: '2.0', id, result: { tools: [{ name: 'echo', inputSchema: { type: 'object' } }], nextCursor: `c${id}`, _meta: { n: id } } })))
  })

  it('a tools/list answer is never passed as written: the proxy reads it (and filters it with filterList)', () => {
    const r = router()
    r.client('{"jsonrpc":"2.0","id":3,"method":"tools/list"}')
    r.server('{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}')
    expect(r.out.server).toEqual(['parsed:{"jsonrpc":"2.0","id":3,"method":"tools/list"}'])
    expect(r.out.client).toEqual(['parsed:{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}'])
  })
})
