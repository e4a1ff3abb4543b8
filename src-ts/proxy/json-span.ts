// Where a member's array or object value lies in JSON text, found without parsing it: what both
// proxies use to send on the very text a client wrote with one part replaced (the HTTP proxy's
// `tools`, the MCP proxy's `params.arguments`). Each caller first makes sure the key occurs once
// in the text, so the occurrence found is that member's key.

/**
 * Where the value after the key ending at `keyEnd` (the index after its closing quote) opens,
 * when it opens with `open` (`[` or `{`) after whitespace, a `:` and whitespace; `-1` otherwise.
 */
export function valueOpen(text: string, keyEnd: number, open: '[' | '{'): number {
  let i = keyEnd
  let c = text.charCodeAt(i)
  while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = text.charCodeAt(++i)
  if (c !== 0x3a) return -1 // ':'
  c = text.charCodeAt(++i)
  while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = text.charCodeAt(++i)
  return c === open.charCodeAt(0) ? i : -1
}

/**
 * The value after the key ending at `keyEnd` (the index after its closing quote), when it opens
 * with `open` (`[` or `{`): from that bracket to its matching close, strings skipped (a quote
 * escaped by an odd run of backslashes does not end one). `undefined` when no `:` and `open`
 * follow (whitespace aside) or the value does not close.
 */
export function valueSpan(text: string, keyEnd: number, open: '[' | '{'): { start: number; end: number } | undefined {
  const start = valueOpen(text, keyEnd, open)
  if (start < 0) return undefined
  let i = start
  let c: number
  let depth = 0
  while (i < text.length) {
    c = text.charCodeAt(i)
    if (c === 0x22) {
      // a string: on to its closing quote, the first not escaped by an odd run of backslashes
      let j = i
      for (;;) {
        j = text.indexOf('"', j + 1)
        if (j < 0) return undefined
        let k = j - 1
        while (text.charCodeAt(k) === 0x5c) k--
        if ((j - 1 - k) % 2 === 0) break
      }
      i = j + 1
      continue
    }
    if (c === 0x5b || c === 0x7b) depth++
    else if ((c === 0x5d || c === 0x7d) && --depth === 0) return { start, end: i + 1 }
    i++
  }
  return undefined
}
