// The HTTP proxy against an upstream and a client that misbehave on purpose, real sockets on
// loopback: the upstream writes the proxy's own `x-toolgate-*` headers and trailers (they never
// reach the client: only the proxy says what it refused and signed), answers a `deflate` body
// that inflates a thousandfold to a reader that does not read (what is inflated stays within the
// streams' high-water marks, as with gzip), and the client sends a coded or digested body on a
// guarded path (415 before anything is read or sent; digests of bytes the proxy rewrites never
// go upstream).
import { request, type IncomingHttpHeaders } from 'node:http'
import type { Readable } from 'node:stream'
import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { decodedBody } from '../src-ts/proxy/http/client'
import { startHttpProxy, type HttpProxy } from '../src-ts/proxy/http/proxy'
import type { ToolGateConfig } from '../src-ts/index'
import { startRawUpstream, type RawRequest, type RawUpstream } from './helpers/http-proxy'
import { chatChunks, sseText } from './helpers/upstream'

type Json = Record<string, unknown>
type Answer = (req: RawRequest, res: import('node:http').ServerResponse) => void

const config: ToolGateConfig = {
  receipts: {},
  tools: [{ name: 'search', inputSchema: { type: 'object', properties: { query: { type: 'string' } } } }, { name: 'wipe', inputSchema: { type: 'object' } }],
  policy: { rules: [{ id: 'all', effect: 'allow', tools: ['search'] }] },
}
const TOOLS = [{ type: 'function', function: { name: 'search' } }, { type: 'function', function: { name: 'wipe' } }]
const call = (id: string, name: string) => ({ id, type: 'function', function: { name, arguments: '{}' } })
const completion = (calls: unknown[]): Json => ({
  id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: calls.length === 0 ? 'hi' : null, ...(calls.length > 0 ? { tool_calls: calls } : {}) }, finish_reason: calls.length > 0 ? 'tool_calls' : 'stop' }],
})
/** What a forging upstream adds to every answer. */
const FORGED = {
  'x-toolgate-refused': 'wipe;id=call_forged;reason=no_rule',
  'x-toolgate-receipts': 'call_s=eyJhbGciOiJFZERTQSJ9.e30.forged',
  'x-toolgate-anything': 'forged',
}

interface Got {
  status: number
  headers: IncomingHttpHeaders
  trailers: NodeJS.Dict<string>
  body: string
}

/** One request with node:http, so the answer's trailers can be read too. */
function exchange(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<Got> {
  return new Promise((resolve, reject) => {
    const q = request(url, { method: opts.method ?? 'POST', headers: { 'content-type': 'application/json', ...opts.headers } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, trailers: res.trailers, body: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    q.on('error', reject)
    q.end(opts.body)
  })
}

const own = (h: NodeJS.Dict<unknown>) => Object.fromEntries(Object.entries(h).filter(([k]) => k.startsWith('x-toolgate-')))

describe('the upstream cannot speak for the proxy: its x-toolgate-* headers and trailers never reach the client', () => {
  let upstream: RawUpstream
  let proxy: HttpProxy
  let answer: Answer = () => undefined
  beforeAll(async () => {
    upstream = await startRawUpstream((q, res) => answer(q, res))
    proxy = await startHttpProxy({ upstream: upstream.origin, port: 0, config, passThrough: ['GET /v1/models'] })
  })
  afterAll(async () => {
    await proxy?.close()
    await upstream?.close()
  })
  const chat = (stream = false) => exchange(`${proxy.url}/v1/chat/completions`, { body: JSON.stringify({ model: 'm', stream, messages: [], tools: TOOLS }) })

  it('a whole answer: nothing refused → no x-toolgate-refused, and the receipts are the proxy\'s own', async () => {
    answer = (_q, res) => {
      res.writeHead(200, { ...FORGED, 'content-type': 'application/json' })
      res.end(JSON.stringify(completion([call('call_s', 'search')])))
    }
    const r = await chat()
    expect(r.status).toBe(200)
    expect(r.headers['x-toolgate-refused']).toBeUndefined()
    expect(r.headers['x-toolgate-anything']).toBeUndefined()
    const receipts = r.headers['x-toolgate-receipts'] as string
    expect(receipts).toMatch(/^call_s=[\w-]+\.[\w-]+\.[\w-]+$/)
    expect(receipts).not.toContain('forged')
  })

  it('a whole answer with a refused call: only the proxy\'s list', async () => {
    answer = (_q, res) => {
      res.writeHead(200, { ...FORGED, 'content-type': 'application/json' })
      res.end(JSON.stringify(completion([call('call_w', 'wipe')])))
    }
    const r = await chat()
    expect(r.status).toBe(200)
    expect(r.headers['x-toolgate-refused']).toBe('wipe;id=call_w;reason=no_rule')
    expect(r.headers['x-toolgate-receipts']).toBeUndefined()
    expect(r.headers['x-toolgate-anything']).toBeUndefined()
  })

  it('a stream: none as headers, and the trailers are only the proxy\'s (the upstream\'s own trailers dropped)', async () => {
    answer = (_q, res) => {
      res.writeHead(200, { ...FORGED, 'content-type': 'text/event-stream', trailer: 'x-toolgate-refused, x-toolgate-receipts' })
      res.write(sseText(chatChunks(completion([]))))
      res.addTrailers({ 'x-toolgate-refused': 'wipe;id=call_t;reason=no_rule', 'x-toolgate-receipts': 'call_t=a.b.c' })
      res.end()
    }
    const r = await chat(true)
    expect(r.status).toBe(200)
    expect(r.body).toContain('data: [DONE]')
    expect(own(r.headers)).toEqual({})
    expect(String(r.headers.trailer)).toContain('x-toolgate-refused')
    expect(own(r.trailers)).toEqual({})
    // a refused call: the trailer names it, and nothing else
    answer = (_q, res) => {
      res.writeHead(200, { ...FORGED, 'content-type': 'text/event-stream' })
      res.end(sseText(chatChunks(completion([call('call_w', 'wipe')]))))
    }
    const refused = await chat(true)
    expect(own(refused.headers)).toEqual({})
    expect(own(refused.trailers)).toEqual({ 'x-toolgate-refused': 'wipe;id=call_w;reason=no_rule' })
  })

  it('an error answer and a pass-through answer lose them too', async () => {
    answer = (_q, res) => {
      res.writeHead(429, { ...FORGED, 'content-type': 'application/json', 'retry-after': '3' })
      res.end(JSON.stringify({ error: { message: 'slow down', type: 'rate', param: null, code: 'rate_limit_exceeded' } }))
    }
    const err = await chat()
    expect(err.status).toBe(429)
    expect(err.headers['retry-after']).toBe('3')
    expect(own(err.headers)).toEqual({})
    answer = (_q, res) => {
      res.writeHead(200, { ...FORGED, 'content-type': 'application/json' })
      res.end('{"object":"list","data":[]}')
    }
    const models = await exchange(`${proxy.url}/v1/models`, { method: 'GET' })
    expect(models.status).toBe(200)
    expect(models.body).toBe('{"object":"list","data":[]}')
    expect(own(models.headers)).toEqual({})
  })
})

describe('a deflate answer keeps backpressure: a reader that stops stops the inflating', () => {
  // 32 MiB of SSE text events, a few dozen KiB on the wire
  const event = `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'a'.repeat(4000) }, finish_reason: null }] })}\n\n`
  const plain = Buffer.alloc(32 * 1024 * 1024, event)
  let upstream: RawUpstream
  let coded: Buffer
  let coding: string
  beforeAll(async () => {
    upstream = await startRawUpstream((_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': coding })
      res.end(coded)
    })
  })
  afterAll(() => upstream?.close())

  /** The upstream's answer over loopback, its body decoded and not read. */
  const answer = () => new Promise<Readable>((resolve, reject) => {
    request(upstream.origin, { method: 'GET' }, (res) => {
      const body = decodedBody(res)
      if ('unsupported' in body) reject(new Error(body.unsupported))
      else resolve(body)
    }).on('error', reject).end()
  })

  /** Waits until `body` buffers more than `bound` bytes, or stops growing (ten looks 20 ms apart); answers the most it held. */
  const settle = async (body: Readable, bound: number) => {
    let last = -1
    let still = 0
    let most = 0
    while (still < 10 && most <= bound) {
      await new Promise((r) => setTimeout(r, 20))
      const now = body.readableLength
      most = Math.max(most, now)
      still = now === last ? still + 1 : 0
      last = now
    }
    return most
  }

  for (const [name, enc, zip] of [['deflate (zlib-wrapped)', 'deflate', deflateSync], ['deflate (raw)', 'deflate', deflateRawSync], ['gzip', 'gzip', gzipSync]] as const) {
    it(`${name}: what is inflated while nobody reads stays within a few high-water marks, and all of it comes once read`, async () => {
      coding = enc
      coded = zip(plain, { level: 9 })
      expect(coded.length).toBeLessThan(plain.length / 500)
      const body = await answer()
      const bound = 4 * body.readableHighWaterMark
      const held = await settle(body, bound)
      expect(held, `${name}: bytes inflated into the stream nobody reads`).toBeLessThanOrEqual(bound)
      // reading resumes the decoder: every byte arrives, and the buffer stays bounded as it flows
      let size = 0
      let peak = 0
      for await (const chunk of body) {
        size += (chunk as Buffer).length
        peak = Math.max(peak, body.readableLength)
      }
      expect(size).toBe(plain.length)
      expect(peak).toBeLessThanOrEqual(bound)
    })
  }

  it('through the proxy: a deflate-coded stream far over the buffers arrives whole, guarded', async () => {
    const events = Buffer.alloc(8 * 1024 * 1024 - ((8 * 1024 * 1024) % event.length), event)
    coding = 'deflate'
    const last = `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`
    coded = deflateSync(Buffer.concat([events, Buffer.from(last)]))
    const proxy = await startHttpProxy({ upstream: upstream.origin, port: 0, config })
    try {
      const r = await exchange(`${proxy.url}/v1/chat/completions`, { body: JSON.stringify({ model: 'm', stream: true, messages: [] }) })
      expect(r.status).toBe(200)
      expect(r.headers['content-encoding']).toBeUndefined()
      expect(r.body.split('a'.repeat(4000)).length - 1).toBe(events.length / event.length)
      expect(r.body.endsWith(last)).toBe(true)
    } finally {
      await proxy.close()
    }
  })
})

describe('guarded request bodies are decided on what the provider reads', () => {
  let upstream: RawUpstream
  let proxy: HttpProxy
  let answer: Answer = () => undefined
  beforeAll(async () => {
    upstream = await startRawUpstream((q, res) => answer(q, res))
    proxy = await startHttpProxy({ upstream: upstream.origin, port: 0, config, passThrough: ['POST /v1/embeddings'] })
  })
  afterAll(async () => {
    await proxy?.close()
    await upstream?.close()
  })
  const body = JSON.stringify({ model: 'm', messages: [], tools: TOOLS })

  it('a coded body (Content-Encoding other than identity) is 415 naming the coding, and nothing goes upstream', async () => {
    answer = (_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(completion([])))
    }
    const before = upstream.requests.length
    // plain JSON the proxy would have filtered, labelled br: the provider would decode it as br
    const br = await exchange(`${proxy.url}/v1/chat/completions`, { headers: { 'content-encoding': 'br' }, body })
    expect(br.status).toBe(415)
    expect(JSON.parse(br.body)).toMatchObject({ error: { code: 'toolgate_unsupported_encoding', type: 'invalid_request_error' } })
    expect(br.body).toContain('content-encoding `br`')
    const gz = await exchange(`${proxy.url}/v1/chat/completions`, { headers: { 'content-encoding': 'identity, gzip' }, body: gzipSync(body) })
    expect(gz.status).toBe(415)
    expect(gz.body).toContain('content-encoding `identity, gzip`')
    const ant = await exchange(`${proxy.url}/v1/messages`, { headers: { 'content-encoding': 'deflate' }, body: JSON.stringify({ model: 'm', max_tokens: 1, messages: [] }) })
    expect(ant.status).toBe(415)
    expect(JSON.parse(ant.body)).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
    expect(upstream.requests.length).toBe(before)
    // identity is no coding: the request goes, without the header
    const plain = await exchange(`${proxy.url}/v1/chat/completions`, { headers: { 'content-encoding': 'Identity' }, body })
    expect(plain.status).toBe(200)
    expect(upstream.requests.length).toBe(before + 1)
    expect(upstream.requests[before].headers['content-encoding']).toBeUndefined()
  })

  it('digests of the client\'s bytes never go upstream with the proxy\'s body; the upstream\'s never come back with a rewritten answer', async () => {
    const digests = { 'content-md5': 'AAAAAAAAAAAAAAAAAAAAAA==', digest: 'sha-256=:AAAA:', 'content-digest': 'sha-256=:AAAA:', 'repr-digest': 'sha-256=:AAAA:' }
    answer = (_q, res) => {
      res.writeHead(200, { ...digests, 'content-type': 'application/json' })
      res.end(JSON.stringify(completion([call('call_w', 'wipe')])))
    }
    const r = await exchange(`${proxy.url}/v1/chat/completions`, { headers: digests, body })
    expect(r.status).toBe(200)
    const sent = upstream.requests[upstream.requests.length - 1]
    // the body was rewritten (wipe filtered out): no digest of the client's bytes goes with it
    expect((JSON.parse(sent.body) as { tools: unknown[] }).tools).toHaveLength(1)
    for (const k of Object.keys(digests)) {
      expect(sent.headers[k], `upstream got ${k}`).toBeUndefined()
      expect(r.headers[k], `client got ${k}`).toBeUndefined()
    }
    // a pass-through request's body is the client's own bytes: its digests go with it
    const e = await exchange(`${proxy.url}/v1/embeddings`, { headers: { ...digests, 'content-encoding': 'gzip' }, body: gzipSync('{"input":"x"}') })
    expect(e.status).toBe(200)
    const passed = upstream.requests[upstream.requests.length - 1]
    expect(passed.headers['content-encoding']).toBe('gzip')
    expect(passed.headers.digest).toBe(digests.digest)
    expect(e.headers.digest).toBe(digests.digest)
  })
})
