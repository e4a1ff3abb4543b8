// `gate.check` through the real native binding: every matrix row, never-rules, hostile input.
import { describe, expect, it } from 'vitest'

import { ToolGate, ToolGateError } from '../src-ts/index'

const gate = new ToolGate({
  version: 1,
  tools: [
    {
      name: 'search_db',
      inputSchema: {
        type: 'object',
        properties: {
          query: { type: 'string' },
          limit: { type: 'integer', minimum: 1 },
          ratio: { type: 'number' },
          exact: { type: 'boolean' },
          label: { type: 'string' },
          tags: { type: 'array', items: { type: 'string' } },
          status: { type: 'string', enum: ['active', 'inactive', 'archived'] },
          filter: { type: 'object', properties: { owner: { type: 'string' }, max: { type: 'integer' } }, additionalProperties: false },
          page: { type: 'integer', default: 1 },
        },
        required: ['query'],
        additionalProperties: false,
      },
    },
    {
      name: 'delete_file',
      destructive: true,
      inputSchema: { type: 'object', properties: { path: { type: 'string' }, force: { type: 'boolean', default: false } }, required: ['path'] },
    },
  ],
})

const q = (extra: string) => `{"query":"q","page":1${extra}}`

describe('passed', () => {
  it('keeps the caller’s own text and parses it once', () => {
    const text = q(',"limit":5')
    const v = gate.check('search_db', text)
    expect(v).toEqual({ outcome: 'passed', allowed: true, tool: 'search_db', arguments: { query: 'q', page: 1, limit: 5 }, argumentsJson: text, flags: [] })
    expect(v.argumentsJson).toBe(text)
  })

  it('accepts an object and serializes it', () => {
    const v = gate.check('search_db', { query: 'q', page: 2 })
    expect(v.outcome).toBe('passed')
    expect(v.argumentsJson).toBe('{"query":"q","page":2}')
  })
})

describe('every row of the coercion matrix', () => {
  const rows: [string, string, Record<string, unknown>, string, string][] = [
    ['StringToInteger', ',"limit":"42"', { limit: 42 }, '/limit', '"42"'],
    ['StringToInteger (negative)', ',"filter":{"max":"-7"}', { filter: { max: -7 } }, '/filter/max', '"-7"'],
    ['StringToFloat', ',"ratio":"1e3"', { ratio: 1000 }, '/ratio', '"1e3"'],
    ['StringToFloat (fraction)', ',"ratio":"3.14"', { ratio: 3.14 }, '/ratio', '"3.14"'],
    ['StringToBoolean', ',"exact":"False"', { exact: false }, '/exact', '"False"'],
    ['PrimitiveToString', ',"label":123', { label: '123' }, '/label', '123'],
    ['WrappedScalarInArray', ',"tags":"rust"', { tags: ['rust'] }, '/tags', '"rust"'],
    ['EnumCaseNormalized', ',"status":"ACTIVE"', { status: 'active' }, '/status', '"ACTIVE"'],
    ['EnumFuzzyMatched', ',"status":"actve"', { status: 'active' }, '/status', '"actve"'],
    ['PrunedUnknownProperty', ',"filter":{"owner":"me","x":1}', { filter: { owner: 'me' } }, '/filter/x', '1'],
    ['UnpackedStringifiedJson', ',"filter":"{\\"owner\\":\\"me\\"}"', { filter: { owner: 'me' } }, '/filter', '"{\\"owner\\":\\"me\\"}"'],
  ]
  for (const [name, extra, want, path, from] of rows) {
    it(name, () => {
      const v = gate.check('search_db', q(extra))
      expect(v.outcome).toBe('repaired')
      expect(v.allowed).toBe(true)
      expect(v.arguments).toEqual({ query: 'q', page: 1, ...want })
      expect(JSON.parse(v.argumentsJson!)).toEqual(v.arguments)
      const code = name.split(' ')[0]
      expect(v.flags).toContainEqual(expect.objectContaining({ code, path, from: JSON.parse(from) }))
      expect(v.reason).toBeUndefined()
      expect(v.message).toBeUndefined()
    })
  }

  it('InjectedDefaultValue', () => {
    const v = gate.check('search_db', '{"query":"q"}')
    expect(v.outcome).toBe('repaired')
    expect(v.arguments).toEqual({ query: 'q', page: 1 })
    expect(v.flags).toEqual([{ code: 'InjectedDefaultValue', path: '/page', to: 1 }])
  })

  it('unpacks a root string holding an object', () => {
    const v = gate.check('search_db', JSON.stringify(JSON.stringify({ query: 'q', page: 1 })))
    expect(v.outcome).toBe('repaired')
    expect(v.flags[0]).toMatchObject({ code: 'UnpackedStringifiedJson', path: '' })
  })

  it('treats empty and null arguments as {}', () => {
    for (const args of ['', 'null', null, undefined]) {
      const v = gate.check('delete_file', args)
      expect(v.reason).toBe('invalid')
      expect(v.message).toContain('`path`: required field is missing.')
    }
  })
})

describe('never-rules', () => {
  it.each([
    ['3.7 is not truncated', ',"limit":3.7'],
    ['null is not 0', ',"limit":null'],
    ['"+5" is not clean', ',"limit":"+5"'],
    ['"yes" is not a boolean', ',"exact":"yes"'],
    ['no enum value within one edit', ',"status":"paused"'],
  ])('%s', (_name, extra) => {
    const v = gate.check('search_db', q(extra))
    expect(v).toMatchObject({ outcome: 'rejected', allowed: false, reason: 'invalid' })
    expect(v.arguments).toBeUndefined()
    expect(v.argumentsJson).toBeUndefined()
  })

  it('never invents a required value', () => {
    const v = gate.check('search_db', '{"limit":"5"}')
    expect(v.reason).toBe('invalid')
    expect(v.message).toBe('Invalid arguments for tool `search_db`:\n- `query`: required field is missing.\nFix these arguments and call `search_db` again.')
  })

  it('destructive tools are strict: nothing changed, not even defaults', () => {
    expect(gate.check('delete_file', '{"path":"a","force":"true"}').reason).toBe('invalid')
    const v = gate.check('delete_file', '{"path":"a"}')
    expect(v.outcome).toBe('passed')
    expect(v.arguments).toEqual({ path: 'a' })
  })
})

describe('model-readable rejections', () => {
  it('lists every remaining problem with allowed values', () => {
    const v = gate.check('search_db', '{"query":"q","page":1,"limit":"ten","status":"paused"}')
    expect(v.message).toBe(
      'Invalid arguments for tool `search_db`:\n' +
        '- `limit`: expected integer, got "ten".\n' +
        '- `status`: must be one of "active", "inactive", "archived"; got "paused".\n' +
        'Fix these arguments and call `search_db` again.',
    )
  })

  it('bounds long values', () => {
    const v = gate.check('search_db', JSON.stringify({ query: 'q', page: 1, limit: 'x'.repeat(10_000) }))
    expect(v.message!.length).toBeLessThan(300)
  })

  it('names the closest tools for an unknown one', () => {
    const v = gate.check('serch_db', '{}')
    expect(v).toMatchObject({ outcome: 'rejected', allowed: false, reason: 'unknown_tool', tool: 'serch_db' })
    expect(v.message).toMatch(/^Unknown tool `serch_db`\. Did you mean `search_db`\?/)
  })
})

describe('hostile input never crashes and never reaches a tool', () => {
  const cases: [string, string][] = [
    ['duplicate key', '{"query":"a","query":"b"}'],
    ['escaped duplicate key', '{"query":"a","\\u0071uery":"b"}'],
    ['__proto__', '{"query":"a","__proto__":{"isAdmin":true}}'],
    ['constructor.prototype', '{"query":"a","constructor":{"prototype":{"x":1}}}'],
    ['truncated', '{"query":"x","limit":'],
    ['NaN', '{"query":NaN}'],
    ['beyond f64', '{"query":"x","limit":1e400}'],
    ['too deep', '{"query":' + '['.repeat(100) + ']'.repeat(100) + '}'],
    ['too large', JSON.stringify({ query: 'x'.repeat(1 << 20) })],
    ['lone surrogate text', '{"query":"\\ud800"}'],
    ['array root', '[1,2]'],
  ]
  it.each(cases)('%s', (name, args) => {
    const v = gate.check('search_db', args)
    if (name === 'lone surrogate text') {
      // JSON allows escaped lone surrogates; serde refuses them, so the call is refused, not mangled
      expect(v.allowed).toBe(false)
      return
    }
    expect(v).toMatchObject({ outcome: 'rejected', allowed: false, reason: 'bad_arguments' })
    expect(v.message).toMatch(/^Invalid arguments for tool `search_db`: /)
  })

  it('a raw lone surrogate is refused, never validated as U+FFFD and run as itself', () => {
    const v = gate.check('search_db', '{"query":"a\uD800b","page":1}')
    expect(v).toMatchObject({ outcome: 'rejected', reason: 'bad_arguments' })
    expect(gate.check('search_db', { query: 'x\uDFFF', page: 1 }).reason).toBe('bad_arguments')
  })

  it("a model's 1e999, parsed by an SDK into Infinity, is refused, never decided as null and run as Infinity", () => {
    // JSON.stringify writes Infinity and NaN as null: the gate would check null while the tool got Infinity
    const parsed = JSON.parse('{"query":"x","page":1e999}') as Record<string, unknown>
    expect(parsed.page).toBe(Number.POSITIVE_INFINITY)
    const v = gate.check('search_db', parsed)
    expect(v).toMatchObject({ outcome: 'rejected', allowed: false, reason: 'bad_arguments' })
    expect(v.message).toContain('Infinity or NaN')
    for (const bad of [Number.NEGATIVE_INFINITY, Number.NaN]) expect(gate.check('search_db', { query: 'x', nested: [{ n: bad }] }).reason).toBe('bad_arguments')
    const turn = JSON.parse('{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"search_db","arguments":"{}"}}]}') as Record<string, unknown>
    ;(turn as { extra?: unknown }).extra = Number.NaN
    expect(() => gate.guard(turn, { dialect: 'openai' })).toThrow(/Infinity or NaN/)
    // a real null is not refused
    expect(gate.check('search_db', { query: 'x', note: null }).reason).not.toBe('bad_arguments')
  })

  it('an object with a __proto__ own key is refused, not merged', () => {
    const args = JSON.parse('{"query":"a","__proto__":{"isAdmin":true}}')
    expect(gate.check('search_db', args).reason).toBe('bad_arguments')
  })

  it('unserializable objects are refused as bad_arguments', () => {
    const cyclic: Record<string, unknown> = { query: 'q' }
    cyclic.self = cyclic
    expect(gate.check('search_db', cyclic)).toMatchObject({ outcome: 'rejected', reason: 'bad_arguments' })
    expect(gate.check('search_db', { query: 1n })).toMatchObject({ reason: 'bad_arguments' })
    expect(gate.check('nope', { query: 1n })).toMatchObject({ reason: 'unknown_tool' })
  })

  it('random garbage never throws', () => {
    let seed = 42
    const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff)
    const alphabet = '{}[]":,0123456789.eE+-tfnrul\\ abcq_'
    for (let i = 0; i < 3000; i++) {
      const len = Math.floor(rnd() * 40)
      let s = ''
      for (let j = 0; j < len; j++) s += alphabet[Math.floor(rnd() * alphabet.length)]
      const v = gate.check('search_db', s)
      expect(['passed', 'repaired', 'rejected']).toContain(v.outcome)
      if (v.allowed) expect(JSON.parse(v.argumentsJson!)).toEqual(v.arguments)
    }
  })
})

describe('config errors', () => {
  it('throws ToolGateError E_CONFIG naming the place', () => {
    const bad: [unknown, RegExp][] = [
      [{ tools: [{ name: 'a', inputSchem: {} }] }, /tools\[0\].*inputSchem/],
      [{ tools: [{ name: 'a', inputSchema: { type: 'object', properties: { x: { type: 'strin' } } } }] }, /tool `a`.*\/properties\/x\/type/],
      [{ tools: [{ name: 'a', inputSchema: { type: 'object', properties: { x: { $ref: 'https://example.com/s.json' } } } }] }, /tool `a`/],
      [{ tools: [{ name: 'a', inputSchema: { type: 'object', properties: { x: { type: 'string', pattern: '(a)\\1' } } } }] }, /tool `a`/],
      [{ tools: [], audti: {} }, /audti/],
      ['{not json', /config/],
    ]
    for (const [config, re] of bad) {
      let err: unknown
      try {
        new ToolGate(config as never)
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(ToolGateError)
      expect((err as ToolGateError).code).toBe('E_CONFIG')
      expect((err as Error).message).toMatch(re)
    }
  })
})
