// normalizeToolSchemas: tool schemas as TypeScript users write them (zod 4, zod/mini, the AI SDK's
// jsonSchema() / zodSchema(), Standard JSON Schema), converted once with the library's own exporter
// into the JSON Schema the gate compiles, checked through the real native addon; and everything
// that is not JSON Schema and cannot be converted is E_CONFIG naming the tool, never read as an
// allow-anything schema.
import { describe, expect, expectTypeOf, it } from 'vitest'
import { z } from 'zod'
import * as zm from 'zod/mini'
import * as z3 from 'zod/v3'

import { jsonSchema, zodSchema, type JSONSchema7, type Schema } from 'ai'

import { ToolGate, ToolGateError, type ToolGateConfig } from '../src-ts/index'
import { normalizeToolSchemas, type ToolGateConfigInput, type ToolInputSchema } from '../src-ts/schema-input'
import { thrownToolGateError } from './helpers/thrown'

// Compile-time (checked by `npm run typecheck`): what users write is a ToolInputSchema.
expectTypeOf<z.ZodObject<{ city: z.ZodString }>>().toExtend<ToolInputSchema>()
expectTypeOf<zm.ZodMiniObject<{ city: zm.ZodMiniString }>>().toExtend<ToolInputSchema>()
expectTypeOf<Schema<{ city: string }>>().toExtend<ToolInputSchema>()
expectTypeOf<() => Schema<{ city: string }>>().toExtend<ToolInputSchema>()
expectTypeOf<ToolGateConfig>().toExtend<ToolGateConfigInput>()
expectTypeOf(normalizeToolSchemas).returns.toEqualTypeOf<ToolGateConfig>()

const weather = z.object({
  city: z.string().min(1),
  days: z.number().int().min(1).max(7).optional(),
  unit: z.enum(['celsius', 'fahrenheit']).default('celsius'),
  tags: z.array(z.string()).optional(),
  filter: z.strictObject({ q: z.string() }).optional(),
})

describe('zod 4', () => {
  it('is converted with zod’s own exporter, as z.toJSONSchema(schema, { io: "input" })', () => {
    const cfg = normalizeToolSchemas({ tools: [{ name: 'get_weather', inputSchema: weather }] })
    expect(cfg.tools[0].inputSchema).toEqual(z.toJSONSchema(weather, { io: 'input' }))
    expect(JSON.parse(JSON.stringify(cfg)).tools[0].inputSchema).toEqual(z.toJSONSchema(weather, { io: 'input' }))
  })

  it('the gate then repairs and refuses against it', () => {
    const gate = new ToolGate(normalizeToolSchemas({ tools: [{ name: 'get_weather', inputSchema: weather }] }))
    const v = gate.check('get_weather', '{"city":"Oslo","days":"3","unit":"CELSIUS","tags":"rain","filter":{"q":"a","x":1}}')
    expect(v.outcome).toBe('repaired')
    expect(v.arguments).toEqual({ city: 'Oslo', days: 3, unit: 'celsius', tags: ['rain'], filter: { q: 'a' } })
    // and what the gate lets through, zod accepts
    expect(weather.safeParse(v.arguments).success).toBe(true)
    expect(gate.check('get_weather', '{"days":9}')).toMatchObject({ outcome: 'rejected', reason: 'invalid' })
    // a default zod would add is injected by the gate too
    expect(gate.check('get_weather', '{"city":"Oslo"}').arguments).toEqual({ city: 'Oslo', unit: 'celsius' })
  })

  it('recursive schemas become $ref, which the gate follows', () => {
    const Node: z.ZodType<{ name: string; children?: unknown[] }> = z.object({
      name: z.string(),
      get children() {
        return z.array(Node).optional()
      },
    })
    const gate = new ToolGate(normalizeToolSchemas({ tools: [{ name: 'tree', inputSchema: Node }] }))
    expect(gate.check('tree', '{"name":"a","children":[{"name":"b","children":[{"name":7}]}]}')).toMatchObject({
      outcome: 'repaired',
      arguments: { name: 'a', children: [{ name: 'b', children: [{ name: '7' }] }] },
    })
  })

  it('zod/mini schemas (no Standard JSON Schema face) go through zod’s own toJSONSchema', () => {
    const mini = zm.object({ city: zm.string(), days: zm.optional(zm.number()) })
    const cfg = normalizeToolSchemas({ tools: [{ name: 'get_weather', inputSchema: mini }] })
    expect(cfg.tools[0].inputSchema).toEqual(z.toJSONSchema(mini, { io: 'input' }))
    expect(new ToolGate(cfg).check('get_weather', '{"city":"Oslo","days":"2"}').arguments).toEqual({ city: 'Oslo', days: 2 })
  })

  it('what JSON Schema cannot carry: a transform keeps its input side, a refinement is left to the tool', () => {
    const schema = z.object({
      count: z.string().transform((s) => s.length), // the model sends a string
      path: z.string().refine((p) => !p.includes('..'), 'no parent segments'),
    })
    const gate = new ToolGate(normalizeToolSchemas({ tools: [{ name: 'read', inputSchema: schema }] }))
    const v = gate.check('read', '{"count":"abc","path":"../etc"}')
    expect(v.outcome).toBe('passed') // the gate cannot see the refinement…
    expect(schema.safeParse(v.arguments).success).toBe(false) // …the tool's own parse still refuses
  })

  it('a type JSON Schema cannot represent is E_CONFIG naming the tool', () => {
    const cases: [string, z.ZodType][] = [
      ['when', z.object({ at: z.date() })],
      ['big', z.object({ n: z.bigint() })],
      ['transformed', z.object({ n: z.transform((v) => String(v)) })],
    ]
    for (const [name, inputSchema] of cases) {
      const e = thrownToolGateError(() => normalizeToolSchemas({ tools: [{ name: 'ok', inputSchema: { type: 'object' } }, { name, inputSchema }] }))
      expect(e.code).toBe('E_CONFIG')
      expect(e.message).toMatch(new RegExp(`^tool \`${name}\`: inputSchema: zod cannot export it as JSON Schema \\(.+\\)$`))
    }
  })

  it('a zod 3 schema is refused with the way out, never read as an empty schema', () => {
    const e = thrownToolGateError(() => normalizeToolSchemas({ tools: [{ name: 'legacy', inputSchema: z3.z.object({ a: z3.z.string() }) as never }] }))
    expect(e.message).toBe("tool `legacy`: inputSchema: a zod 3 schema, which toolgate cannot convert: use zod 4, or wrap it with the AI SDK's zodSchema()")
    // the way out works
    const cfg = normalizeToolSchemas({ tools: [{ name: 'legacy', inputSchema: zodSchema(z3.z.object({ a: z3.z.string() })) }] })
    expect(new ToolGate(cfg).check('legacy', '{"a":1}').arguments).toEqual({ a: '1' })
  })
})

describe('AI SDK schemas', () => {
  it('jsonSchema(…) is read as it is; zodSchema(…) as the AI SDK converts it (what the model is shown)', async () => {
    const raw: JSONSchema7 = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] }
    const viaAi = zodSchema(z.object({ n: z.number() }))
    const cfg = normalizeToolSchemas({
      tools: [
        { name: 'a', inputSchema: jsonSchema(raw) },
        { name: 'b', inputSchema: viaAi },
        { name: 'c', inputSchema: jsonSchema(() => raw) },
        { name: 'd', inputSchema: () => jsonSchema(raw) }, // a lazy schema
      ],
    })
    expect(cfg.tools.map((t) => t.inputSchema)).toEqual([raw, await viaAi.jsonSchema, raw, raw])
    const gate = new ToolGate(cfg)
    expect(gate.check('a', '{"n":"4"}').arguments).toEqual({ n: 4 })
    expect(gate.check('b', '{"n":"4","extra":1}')).toMatchObject({ outcome: 'repaired', arguments: { n: 4 } }) // additionalProperties: false
  })

  it('a jsonSchema that is a promise cannot be waited for: E_CONFIG with the way out', () => {
    const e = thrownToolGateError(() => normalizeToolSchemas({ tools: [{ name: 'remote', inputSchema: jsonSchema(Promise.resolve({ type: 'object' })) }] }))
    expect(e.message).toBe("tool `remote`: inputSchema: the AI SDK schema's jsonSchema is a promise, which the gate cannot wait for when it is built: resolve it first and pass jsonSchema(await …)")
  })

  it('a lazy schema or conversion that throws, or a function that is no schema, is E_CONFIG', () => {
    expect(thrownToolGateError(() => normalizeToolSchemas({ tools: [{ name: 'x', inputSchema: zodSchema(z.object({ d: z.date() })) }] })).message).toMatch(
      /^tool `x`: inputSchema: the AI SDK schema's jsonSchema could not be made \(.*Date.*\)$/,
    )
    expect(thrownToolGateError(() => normalizeToolSchemas({ tools: [{ name: 'y', inputSchema: (() => ({ type: 'object' })) as never }] })).message).toBe(
      'tool `y`: inputSchema: a function that does not return an AI SDK Schema (jsonSchema() / zodSchema())',
    )
    expect(
      thrownToolGateError(() =>
        normalizeToolSchemas({
          tools: [
            {
              name: 'z',
              inputSchema: () => {
                throw new Error('boom')
              },
            } as never,
          ],
        }),
      ).message,
    ).toBe('tool `z`: inputSchema: the schema function threw (boom)')
  })
})

describe('Standard Schema', () => {
  const validate = (v: unknown) => ({ value: v })

  it('another vendor’s Standard JSON Schema export is used (draft 2020-12, else draft-07)', () => {
    const asked: string[] = []
    const only07 = {
      '~standard': {
        version: 1,
        vendor: 'arktype',
        validate,
        jsonSchema: {
          input: ({ target }: { target: string }) => {
            asked.push(target)
            if (target !== 'draft-07') throw new Error(`unsupported target ${target}`)
            return { type: 'object', properties: { id: { type: 'integer' } } }
          },
          output: () => ({}),
        },
      },
    }
    const cfg = normalizeToolSchemas({ tools: [{ name: 'get', inputSchema: only07 }] })
    expect(asked).toEqual(['draft-2020-12', 'draft-07'])
    expect(new ToolGate(cfg).check('get', '{"id":"5"}').arguments).toEqual({ id: 5 })
  })

  it('a Standard Schema without a JSON Schema export is E_CONFIG', () => {
    const bare = { '~standard': { version: 1, vendor: 'valibot', validate } }
    expect(thrownToolGateError(() => normalizeToolSchemas({ tools: [{ name: 'v', inputSchema: bare as never }] })).message).toBe(
      "tool `v`: inputSchema: a Standard Schema (vendor `valibot`) without a JSON Schema export: pass its JSON Schema instead, or wrap it with the AI SDK's jsonSchema()",
    )
  })
})

describe('JSON Schema and the config', () => {
  it('JSON Schema and booleans are kept; a config with nothing to convert is returned itself, unchanged', () => {
    const cfg = { tools: [{ name: 'a', inputSchema: { type: 'object' } }, { name: 'b', inputSchema: true }, { name: 'c' }] }
    expect(normalizeToolSchemas(cfg)).toBe(cfg)
    const nullProto = Object.assign(Object.create(null) as Record<string, unknown>, { type: 'object' })
    const withNull = { tools: [{ name: 'n', inputSchema: nullProto }] }
    expect(normalizeToolSchemas(withNull)).toBe(withNull)
  })

  it('is pure: the caller’s config and tools are not changed; untouched tools are shared', () => {
    const plain = { name: 'plain', inputSchema: { type: 'object' } }
    const zod = { name: 'zod', inputSchema: weather, description: 'w' }
    const cfg = { tools: [plain, zod], loop: { maxIdentical: 2, windowSeconds: 10 } }
    const out = normalizeToolSchemas(cfg)
    expect(out).not.toBe(cfg)
    expect(cfg.tools[1].inputSchema).toBe(weather)
    expect(out.tools[0]).toBe(plain)
    expect(out.tools[1]).toEqual({ name: 'zod', description: 'w', inputSchema: z.toJSONSchema(weather, { io: 'input' }) })
    expect(out.loop).toBe(cfg.loop)
    // converting again changes nothing
    expect(normalizeToolSchemas(out)).toBe(out)
  })

  it('a class instance or another non-JSON value is E_CONFIG, named by index when the tool has no name', () => {
    class Shape {
      type = 'object'
    }
    expect(thrownToolGateError(() => normalizeToolSchemas({ tools: [{ name: 's', inputSchema: new Shape() as never }] })).message).toBe(
      'tool `s`: inputSchema: expected JSON Schema (a plain object or a boolean), a zod 4 schema or an AI SDK Schema, got an instance of Shape',
    )
    expect(thrownToolGateError(() => normalizeToolSchemas({ tools: [{ inputSchema: [] } as never] })).message).toBe(
      'tools[0]: inputSchema: expected JSON Schema (an object or a boolean), a zod 4 schema or an AI SDK Schema, got an array',
    )
    expect(thrownToolGateError(() => normalizeToolSchemas({ tools: [{ name: 'q', inputSchema: 'object' as never }] })).message).toMatch(/got string$/)
  })

  it('what is not a config is returned as it is, for the gate to name', () => {
    for (const v of [null, 'text', { tools: 'x' }, {}]) expect(normalizeToolSchemas(v as never)).toBe(v)
    expect(() => new ToolGate(normalizeToolSchemas({ tools: 'x' } as never))).toThrow(ToolGateError)
  })
})
