// The HTTP proxy's per-request string work, cut for speed (issue 20) and held to what it did
// before: the shortcuts of the path normaliser and the log scrubber answer exactly what the long
// ways answer.
import { describe, expect, it } from 'vitest'

import { normalisePath } from '../src-ts/proxy/http/paths'
import { redactSecrets } from '../src-ts/proxy/redact-url'

/** A deterministic pseudo-random source. */
function rng(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

describe('shortcuts answer what the long ways answer', () => {
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
