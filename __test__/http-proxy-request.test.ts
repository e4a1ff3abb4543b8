// The HTTP proxy's request side, cut for speed (issue 20) and held to what it did before: the
// `tools` the gate filters are the very text it reads from the client's body (a list holding a key
// written twice is refused whole: 400, nothing sent), a request whose tools all stay goes out as
// the client wrote it, and
// the shortcuts of the path normaliser and the log scrubber answer exactly what the long ways do.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { normalisePath } from '../src-ts/proxy/http/paths'
import { startHttpProxy, type HttpProxy } from '../src-ts/proxy/http/proxy'
import { RequestLayouts, toolsSpan } from '../src-ts/proxy/http/request-layout'
import { redactSecrets } from '../src-ts/proxy/redact-url'
import { startRawUpstream, type RawUpstream } from './helpers/http-proxy'
import { rng } from './helpers/rng'


const TOOLS = [
  { type: 'function', function: { name: 'read_file', description: 'Read a "file" [any] {size} \\ path', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } } },
  { type: 'function', function: { name: 'search', parameters: { type: 'object', properties: { q: { type: 'string', enum: ['a]', '{b', '"c"', 'd\\'] } } } } },
]

describe('toolsSpan', () => {
  it('finds the `tools` array of a body however it is spaced and wherever it stands', () => {
    const next = rng(7)
    const pick = <T>(xs: T[]) => xs[Math.floor(next() * xs.length)]
    for (let n = 0; n < 300; n++) {
      const members: [string, unknown][] = [['model', 'gpt-4.1'], ['messages', [{ role: 'user', content: pick(['hi', 'x "tools" y', '[{', '\\"']) }]], ['tools', TOOLS.slice(0, 1 + Math.floor(next() * 2))], ['stream', false]]
      members.sort(() => next() - 0.5)
      const body = Object.fromEntries(members)
      const indent = pick([undefined, 0, 1, 2, '\t'])
      const raw = JSON.stringify(body, null, indent)
      const span = toolsSpan(raw)
      if (raw.indexOf('"tools"') !== raw.lastIndexOf('"tools"')) continue // not for this function (onceTools)
      expect(span).toBeDefined()
      expect(JSON.parse(span!)).toEqual(body.tools)
      const at = raw.indexOf(span!)
      expect(raw.slice(at + span!.length).trimStart()[0]).toMatch(/[,}]/)
    }
  })

  it('is undefined for a body not laid out as a tools member with an array', () => {
    expect(toolsSpan('{"tools": {"a": 1}}')).toBeUndefined()
    expect(toolsSpan('{"tools" 1}')).toBeUndefined()
    expect(toolsSpan('{"tools":[1,2')).toBeUndefined()
  })
})

describe('shortcuts answer what the long ways answer', () => {
  it('RequestLayouts: a body holding the remembered tools text is laid out as scanning it whole lays it out', () => {
    const next = rng(11)
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]
    const dialects = ['openai', 'openai-responses', 'anthropic'] as const
    const lists = [TOOLS, TOOLS.slice(0, 1), [...TOOLS, { type: 'function', function: { name: 'functions', description: 'x "web_search_options" \\u0041' } }]]
    // what the text around the list may hold: a second `tools` key, one nested in a message,
    // a member outside `tools` (each dialect's), a `\u` escape, look-alikes inside strings
    const around: [string, unknown][] = [
      ['messages', [{ role: 'user', content: 'hi' }]],
      ['messages', [{ role: 'user', content: 'use the "tools" [now]' }]],
      ['messages', [{ role: 'user', content: 'caf\u00e9' }]],
      ['messages', [{ role: 'user', tools: TOOLS }]],
      ['web_search_options', {}],
      ['functions', [{ name: 'x' }]],
      ['mcp_servers', []],
      ['input', [{ type: 'function_call', name: 'x' }]],
      ['stream', true],
    ]
    const layouts = new RequestLayouts()
    let remembered = 0
    for (let n = 0; n < 600; n++) {
      const dialect = pick(dialects)
      const members: [string, unknown][] = [['model', 'm'], pick(around), pick(around), ['tools', pick(lists)]]
      members.sort(() => next() - 0.5)
      let raw = JSON.stringify(Object.fromEntries(members), null, pick([undefined, 0, 1, '\t']))
      // now and then the key written twice, or an escape in the raw text
      if (next() < 0.1) raw = raw.replace(/}\s*$/, ',"tools":[]}')
      if (next() < 0.1) raw = raw.replace('"model"', '"\\u006dodel"')
      const hasTools = true
      const got = layouts.layout(raw, dialect, hasTools)
      const whole = new RequestLayouts().layout(raw, dialect, hasTools)
      expect(got, raw).toEqual(whole)
      // parsed: JSON.parse's value, members in the same order (the remembered list put back)
      const parsed = layouts.parse(raw)
      expect(JSON.stringify(parsed), raw).toBe(JSON.stringify(JSON.parse(raw)))
      if (got.written !== undefined) remembered++
    }
    // the remembered way was taken, and answered lists as the whole scan does
    expect(remembered).toBeGreaterThan(50)
  })

  it('RequestLayouts.parse: the value or error of JSON.parse, never the remembered list where the body has another', () => {
    const layouts = new RequestLayouts()
    const list = JSON.stringify(TOOLS)
    layouts.layout(`{"model":"m","tools":${list}}`, 'openai', true)
    const cases = [
      `{"model":"m","messages":[],"tools":${list}}`,
      // the list nested in a message, the body without tools: the message keeps its own
      `{"model":"m","messages":[{"role":"user","tools":${list}}]}`,
      // a second tools key after: JSON.parse keeps the last
      `{"model":"m","tools":${list},"tools":[]}`,
      // an escape spelling the key
      `{"model":"m","tools":${list},"\\u0074ools":[1]}`,
      `{"model":"m","tools":${list},"\\u0074ools":[]}`,
      // broken around the list: the same error as JSON.parse
      `{"model":"m",,"tools":${list}}`,
      `{"model":"m","tools":${list}`,
    ]
    for (const raw of cases) {
      let want: unknown
      let wantErr: string | undefined
      try {
        want = JSON.parse(raw)
      } catch (err) {
        wantErr = (err as Error).message
      }
      if (wantErr !== undefined) expect(() => layouts.parse(raw), raw).toThrow(wantErr)
      else expect(JSON.stringify(layouts.parse(raw)), raw).toBe(JSON.stringify(want))
    }
    // the remembered value is frozen: a body sharing it cannot change it for the next one
    const body = layouts.parse(cases[0]) as { tools: { function: { name: string } }[] }
    expect(Object.isFrozen(body.tools)).toBe(true)
    expect(() => {
      body.tools[0].function.name = 'x'
    }).toThrow(TypeError)
    expect(Object.isFrozen(body)).toBe(false)
  })

  it('normalisePath: a plain path is its own normal form; anything else goes the long way', () => {
    const reference = (raw: string): string | { bad: string } => {
      const segs: string[] = []
      for (const part of raw.split('/')) {
        if (part === '') continue
        let seg: string
        try {
          seg = decodeURIComponent(part)
        } catch {
          return { bad: 'a malformed percent-escape in the path' }
        }
        // eslint-disable-next-line no-control-regex
        if (/[/\\\u0000-\u001f\u007f]/.test(seg)) return { bad: 'an encoded separator or control character in the path' }
        if (seg === '.' || seg === '..') return { bad: 'a dot segment in the path' }
        let out = ''
        for (const ch of seg) out += /[A-Za-z0-9\-._~!$&'()*+,;=:@]/.test(ch) ? ch : encodeURIComponent(ch)
        segs.push(out)
      }
      return `/${segs.join('/')}`
    }
    const next = rng(11)
    const alphabet = ['a', 'Z', '0', '.', '..', '/', '//', '%2F', '%41', '%', ' ', '~', '@', ':', 'é', '\\', '%00', 'v1', 'chat', 'completions', '-', '_']
    const samples = ['/v1/chat/completions', '/openai/deployments/x/chat/completions', '/', '', '/v1/', '//v1', '/./v1', '/../v1', '/v1/..', '/.../v1', '/.a/b.']
    for (let n = 0; n < 3000; n++) {
      let p = next() < 0.8 ? '/' : ''
      const len = Math.floor(next() * 8)
      for (let i = 0; i < len; i++) p += alphabet[Math.floor(next() * alphabet.length)]
      samples.push(p)
    }
    for (const p of samples) expect(normalisePath(p)).toEqual(reference(p))
  })

  it('redactSecrets: a line without `=` or `://` comes back as it is; any other is scrubbed as before', () => {
    const reference = (text: string) => text
      .replace(/([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^\s/?#@`'"]*@/g, '$1***@')
      .replace(/([?&;\s`'"]|^)([A-Za-z0-9_-]{1,40})=([^&#\s`'"]*)/g, (all, pre: string, name: string) => (/^(?:api-?key|key|token|access-?token|auth|authorization|password|passwd|pwd|secret|client-?secret|sig|signature|x-?api-?key|jwt|bearer|credential|credentials)$/i.test(name.replace(/_/g, '-')) ? `${pre}${name}=***` : all))
    const next = rng(5)
    const parts = ['https://', 'u:p@', 'host', '/x', '?', 'token', '=', 'abc', '&', 'key=', ' ', 'openai: 3 calls: a#b passed', '`', ':', '/', '@']
    const samples = ['openai: 3 calls: read_file#call_1 passed', 'upstream https://alice:s3cr3t@api.example.com/v1 failed', 'GET http://h/x?api_key=sk-123&limit=5']
    for (let n = 0; n < 3000; n++) {
      let s = ''
      const len = Math.floor(next() * 8)
      for (let i = 0; i < len; i++) s += parts[Math.floor(next() * parts.length)]
      samples.push(s)
    }
    for (const s of samples) expect(redactSecrets(s)).toBe(reference(s))
  })
})

describe('the body sent upstream', () => {
  let upstream: RawUpstream
  let proxy: HttpProxy
  const completion = JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] })
  beforeAll(async () => {
    upstream = await startRawUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(completion)
    })
    proxy = await startHttpProxy({ upstream: upstream.origin, port: 0 })
  })
  afterAll(async () => {
    await proxy?.close()
    await upstream?.close()
  })

  const post = async (body: string) => {
    const before = upstream.requests.length
    const res = await fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    return { status: res.status, text: await res.text(), sent: upstream.requests.length > before ? upstream.requests[upstream.requests.length - 1].body : undefined }
  }

  it('a body whose tools all stay goes upstream as the client wrote it, compact or spaced', async () => {
    const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: TOOLS }
    for (const text of [JSON.stringify(body), JSON.stringify(body, null, 2), JSON.stringify(body, null, '\t')]) {
      const r = await post(text)
      expect(r.status).toBe(200)
      expect(r.sent).toBe(text)
    }
  })

  it('a tool list holding a key written twice is refused whole (400), never sent upstream', async () => {
    // V8's parse (which the gate learns tools from) keeps the last copy, the gate's strict reader
    // sees both: read two ways, the list is refused rather than filtered one way and run another
    for (const body of [
      `{"model":"m","messages":[],"tools":[{"type":"function","function":{"name":"evil","name":"read_file","parameters":{"type":"object"}}},${JSON.stringify(TOOLS[1])}]}`,
      '{"model":"m","messages":[],"tools":[{"type":"function","function":{"name":"search","name":"search","parameters":{"type":"object"}}}]}',
      '{"model":"m","messages":[],"tools":[{"type":"function","function":{"name":"a","name":"b"}},{"type":"function","function":{"name":"a"}}]}',
    ]) {
      const r = await post(body)
      expect(r.status, body).toBe(400)
      expect(r.text).toMatch(/request `tools`: .*appears twice/)
      expect(r.sent, body).toBeUndefined()
    }
  })

  it('a body naming `tools` twice is sent re-encoded from what the proxy parsed: one `tools`, the one the gate filtered', async () => {
    const text = `{"model":"m","tools":[{"type":"function","function":{"name":"a"}}],"messages":[],"tools":${JSON.stringify(TOOLS)}}`
    const r = await post(text)
    expect(r.status).toBe(200)
    expect(r.sent).toBe(JSON.stringify({ model: 'm', tools: TOOLS, messages: [] }))
  })
})
