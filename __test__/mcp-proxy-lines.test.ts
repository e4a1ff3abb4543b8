// The MCP stdio framing (proxy/mcp/jsonrpc-lines.ts `readLines`): whole lines of plain ASCII are
// split from one decode of the chunk, anything else byte by byte. Either way the lines, the
// oversized reports and their order must be exactly what a naive reader of the whole byte stream
// finds, however the stream is cut into chunks.
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'

import { readLines, sniffOversized, type LineEvent } from '../src-ts/proxy/mcp/jsonrpc-lines'
import { rng } from './helpers/rng'

const KEEP = 4096

/** Every event `readLines` reports for `chunks` written one by one. */
function read(chunks: Buffer[], max: number): Promise<LineEvent[]> {
  const input = new PassThrough()
  const got: LineEvent[] = []
  const done = new Promise<LineEvent[]>((resolve, reject) => readLines(input, max, (e) => got.push(e), (err) => (err ? reject(err) : resolve(got))))
  for (const c of chunks) input.write(c)
  input.end()
  return done
}

/** The reference: the whole stream split at `\n`, a trailing `\r` dropped, blank lines skipped. */
function naive(all: Buffer, max: number): LineEvent[] {
  const out: LineEvent[] = []
  let start = 0
  while (start < all.length) {
    let nl = all.indexOf(0x0a, start)
    if (nl < 0) nl = all.length
    let line = all.subarray(start, nl)
    if (line.length > 0 && line[line.length - 1] === 0x0d) line = line.subarray(0, line.length - 1)
    if (line.length > max) {
      out.push({ kind: 'oversized', bytes: line.length, head: line.subarray(0, KEEP).toString('utf8'), tail: line.subarray(Math.max(0, line.length - KEEP)).toString('utf8') })
    } else {
      const text = line.toString('utf8')
      if (text.trim() !== '') out.push({ kind: 'line', text })
    }
    start = nl + 1
  }
  return out
}


function cut(all: Buffer, next: () => number, maxChunk: number): Buffer[] {
  const chunks: Buffer[] = []
  for (let i = 0; i < all.length; ) {
    const n = 1 + Math.floor(next() * maxChunk)
    chunks.push(all.subarray(i, i + n))
    i += n
  }
  return chunks
}

describe('readLines', () => {
  it('splits plain ASCII lines (CRLF, blank and space-only lines) as the naive reader does', async () => {
    const all = Buffer.from('{"a":1}\n\n  \r\n{"b":2}\r\n{"c":"x"}\n{"d":3}')
    const max = 100
    expect(await read([all], max)).toEqual(naive(all, max))
    expect((await read([all], max)).map((e) => (e.kind === 'line' ? e.text : e.kind))).toEqual(['{"a":1}', '{"b":2}', '{"c":"x"}', '{"d":3}'])
  })

  it('reports a line over the limit with its size, head and tail, in order with the lines around it', async () => {
    const big = `{"id":7,"pad":"${'x'.repeat(10_000)}","end":"y"}`
    const all = Buffer.from(`{"a":1}\n${big}\r\n{"b":2}\n`)
    const events = await read([all], 2048)
    expect(events).toEqual(naive(all, 2048))
    expect(events.map((e) => e.kind)).toEqual(['line', 'oversized', 'line'])
    expect(events[1]).toMatchObject({ kind: 'oversized', bytes: big.length })
  })

  it('lines with UTF-8 (and bytes that are not UTF-8) read as the naive reader reads them', async () => {
    const all = Buffer.concat([Buffer.from('{"t":"héllo ✓ 😀"}\n{"a":1}\n'), Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d, 0x0a]), Buffer.from('{"z":0}\n')])
    expect(await read([all], 1000)).toEqual(naive(all, 1000))
  })

  it('any cut of a mixed stream into chunks gives the same events', async () => {
    const next = rng(20)
    const parts: string[] = []
    for (let i = 0; i < 400; i++) {
      const r = next()
      if (r < 0.6) parts.push(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { n: i } } }))
      else if (r < 0.7) parts.push(JSON.stringify({ id: i, text: 'é✓😀'.repeat(1 + Math.floor(next() * 5)) }))
      else if (r < 0.78) parts.push(`{"id":${i},"pad":"${'p'.repeat(Math.floor(next() * 3000))}"}`)
      else if (r < 0.84) parts.push('')
      else if (r < 0.9) parts.push(`{"id":${i}}\r`)
      else parts.push(' \t ')
    }
    const all = Buffer.from(`${parts.join('\n')}\n`)
    for (const [max, maxChunk] of [[2048, 7], [2048, 300], [1000, 5000], [2048, 70_000], [100_000, 64 * 1024]]) {
      expect(await read(cut(all, next, maxChunk), max)).toEqual(naive(all, max))
    }
  })

  it('an oversized line shorter than the kept head (a limit under 4 KiB) keeps only its own bytes, never the lines after it', async () => {
    // with `--max-message-bytes 2048` a 3,000-byte line is oversized yet shorter than the 4 KiB
    // head kept of it: its head ran on into the next messages of the same chunk, which the
    // proxy then read for the oversized message's id and method
    const big = `{"pad":"${'p'.repeat(3000)}"`
    const next = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"n":1}}}'
    const events = await read([Buffer.from(`${big}\n${next}\n`)], 2048)
    expect(events).toEqual([
      { kind: 'oversized', bytes: big.length, head: big, tail: big },
      { kind: 'line', text: next },
    ])
    expect(sniffOversized(events[0].kind === 'oversized' ? events[0].head : '', '')).toEqual({ isResponse: false })
  })

  it('an oversized line spread over many chunks is reported once, with its true size', async () => {
    const big = `{"id":"big","pad":"${'z'.repeat(50_000)}"}`
    const all = Buffer.from(`{"a":1}\n${big}\n{"b":2}\n`)
    const events = await read(cut(all, rng(3), 1500), 2048)
    expect(events).toEqual(naive(all, 2048))
    expect(events[1]).toMatchObject({ kind: 'oversized', bytes: big.length })
  })
})
