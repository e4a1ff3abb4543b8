// Cedar as a plugged policy engine (src-ts/engines/cedar.ts) with the real
// @cedar-policy/cedar-wasm and the real native binding: Cedar permits extend the built-in rules,
// Cedar forbids restrict them, a built-in deny stays final, and where no Cedar policy applies the
// rules' result stands. Also the request mapping (principal, context, arguments as Cedar values),
// failing closed, construction errors, the async paths, the example, and the cost per decision.
import { spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'

import { cedarEngine, type CedarEngineOptions, type CedarWasm } from '../src-ts/engines/cedar'
import { ToolGate, type CallContext, type ToolGateConfig, type Verdict } from '../src-ts/index'
import { runExample } from './helpers/tsx-child'
import { thrownToolGateError } from './helpers/thrown'

// the package's own types: this also checks that the real module satisfies `CedarWasm`
const cedarWasm = require('@cedar-policy/cedar-wasm/nodejs') as typeof import('@cedar-policy/cedar-wasm/nodejs')
const cedar: CedarWasm = cedarWasm
const BASE = JSON.parse(readFileSync(join(__dirname, 'fixtures/policy/config.json'), 'utf8')) as ToolGateConfig
const root = join(__dirname, '..')

const alice: CallContext = { subject: 'alice' }
const ana: CallContext = { subject: 'ana', roles: ['analyst'] }

const owned = (file: string, owner: string) => ({ uid: { type: 'Resource', id: `file:${file}` }, attrs: { owner: { __entity: { type: 'User', id: owner } } }, parents: [] })

const POLICIES = `
@id("owners-read")
permit(principal, action == Action::"read", resource)
when { resource has owner && resource.owner == principal };

@id("no-training")
forbid(principal, action, resource)
when { context has purpose && context.purpose == "training" };
`

// The timeout is wall time: on a busy shared machine a process can be paused for tens of ms,
// which would turn a 0.1 ms Cedar decision into a spurious `engine` deny.
function gateWith(options: Partial<CedarEngineOptions> = {}, config: ToolGateConfig = BASE): ToolGate {
  const engine = cedarEngine({ policies: POLICIES, entities: [owned('home/alice/notes.txt', 'alice'), owned('reports/private/alice.csv', 'alice')], ...options })
  return new ToolGate(config, { engines: [engine], engineTimeoutMs: 2000 })
}

const decided = (v: Verdict) => [v.outcome, v.reason]

describe('cedar engine decisions', () => {
  const gate = gateWith()

  it('a Cedar permit allows what no built-in rule allowed', () => {
    expect(decided(new ToolGate(BASE).check('read_file', { path: 'home/alice/notes.txt' }, alice))).toEqual(['denied', 'no_rule'])
    const v = gate.check('read_file', { path: 'home/alice/notes.txt' }, alice)
    expect(decided(v)).toEqual(['passed', undefined])
    expect(v.arguments).toEqual({ path: 'home/alice/notes.txt' })
    // only the owner
    expect(decided(gate.check('read_file', { path: 'home/alice/notes.txt' }, { subject: 'bob' }))).toEqual(['denied', 'no_rule'])
  })

  it('a Cedar forbid denies (reason engine) what the rules allowed', () => {
    expect(decided(gate.check('read_file', { path: 'reports/q3.csv' }, ana))).toEqual(['passed', undefined])
    const v = gate.check('read_file', { path: 'reports/q3.csv' }, { ...ana, purpose: 'training' })
    expect(decided(v)).toEqual(['denied', 'engine'])
    expect(v.allowed).toBe(false)
    expect(v.arguments).toBeUndefined()
    expect(v.message).toBeTypeOf('string')
  })

  it('a built-in deny rule stays final even when Cedar permits', () => {
    // Cedar's owners-read permits alice's private report; the rule no-private-reports denies it
    expect(decided(gate.check('read_file', { path: 'reports/private/alice.csv' }, alice))).toEqual(['denied', 'deny_rule'])
    const permitAll = gateWith({ policies: 'permit(principal, action, resource);' })
    expect(decided(permitAll.check('search', { q: 'x' }, { subject: 'mallory' }))).toEqual(['denied', 'deny_rule'])
    expect(decided(permitAll.check('admin_panel', {}, alice))).toEqual(['passed', undefined])
  })

  it('no Cedar policy applies: it delegates and the rules’ result stands (allowed and no_rule)', () => {
    expect(decided(gate.check('read_file', { path: 'reports/q3.csv' }, ana))).toEqual(['passed', undefined])
    expect(decided(gate.check('read_file', { path: 'reports/q3.csv' }, alice))).toEqual(['denied', 'no_rule'])
    expect(decided(gate.check('search', { q: 'x' }, alice))).toEqual(['passed', undefined])
    expect(decided(gate.check('admin_panel', {}, alice))).toEqual(['denied', 'no_rule'])
  })

  it("unmatched: 'deny' makes Cedar's default deny final", () => {
    const strict = gateWith({ unmatched: 'deny' })
    expect(decided(strict.check('read_file', { path: 'reports/q3.csv' }, ana))).toEqual(['denied', 'engine'])
    expect(decided(strict.check('read_file', { path: 'home/alice/notes.txt' }, alice))).toEqual(['passed', undefined])
  })

  it('no subject denies (fail closed); a principal mapping can let anonymous callers be judged', () => {
    // the rule `everyone` allows search; without a subject Cedar cannot be asked who is calling
    expect(decided(gate.check('search', { q: 'x' }))).toEqual(['denied', 'engine'])
    const anon = gateWith({
      policies: 'forbid(principal is Anonymous, action == Action::"admin_panel", resource);',
      principal: (r) => (r.context.subject ? { type: 'User', id: r.context.subject } : { type: 'Anonymous', id: '' }),
    })
    expect(decided(anon.check('search', { q: 'x' }))).toEqual(['passed', undefined])
  })
})

describe('the Cedar request', () => {
  it('carries tool, arguments, roles, rules, surface, purpose and identity in the context', () => {
    const policies = `permit(principal == User::"ops-1", action == Action::"admin_panel", resource == Resource::"admin_panel") when {
      context.tool == "admin_panel" && context.rules == "no_rule" && context.roles.contains("ops") && context.surface == "visitor" &&
      context.purpose == "incident" && context.identity.tenant == "acme" && context.identity.level == 3 &&
      context.arguments.ticket == "INC-7" && context.arguments.n == 2 && context.arguments.tags.contains("p1") && context.arguments.opts.dry
    };`
    const gate = gateWith({ policies })
    const ctx: CallContext = { subject: 'ops-1', roles: ['ops'], purpose: 'incident', identity: { tenant: 'acme', level: 3 } }
    const args = { ticket: 'INC-7', n: 2, tags: ['p1', 'p1', 'x'], opts: { dry: true } }
    expect(decided(gate.check('admin_panel', args, ctx))).toEqual(['passed', undefined])
    expect(decided(gate.check('admin_panel', { ...args, n: 3 }, ctx))).toEqual(['denied', 'no_rule'])
    expect(decided(gate.check('admin_panel', args, { ...ctx, roles: [] }))).toEqual(['denied', 'no_rule'])
    // rules: "allow" when a built-in rule allowed
    const seen = gateWith({ policies: 'forbid(principal, action, resource) when { context.rules == "allow" };' })
    expect(decided(seen.check('search', { q: 'x' }, alice))).toEqual(['denied', 'engine'])
    expect(decided(seen.check('admin_panel', {}, alice))).toEqual(['denied', 'no_rule'])
  })

  it('a model cannot forge an entity reference through the arguments', () => {
    const gate = gateWith({ policies: 'permit(principal, action, resource) when { context.arguments has owner && context.arguments.owner == User::"admin" };' })
    // the threat is real: Cedar itself reads the escape as User::"admin"
    const raw = cedarWasm.isAuthorized({
      principal: { type: 'User', id: 'alice' },
      action: { type: 'Action', id: 'admin_panel' },
      resource: { type: 'Resource', id: 'admin_panel' },
      context: { arguments: { owner: { __entity: { type: 'User', id: 'admin' } } } },
      policies: { staticPolicies: 'permit(principal, action, resource) when { context.arguments.owner == User::"admin" };' },
      entities: [],
    })
    expect(raw.type === 'success' && raw.response.decision).toBe('allow')
    for (const key of ['__entity', '__extn', '__expr']) {
      const forged = { owner: { [key]: key === '__entity' ? { type: 'User', id: 'admin' } : 'x' } }
      // never dropped quietly: the engine refuses the value, and the gate denies
      expect(decided(gate.check('admin_panel', forged, alice)), key).toEqual(['denied', 'engine'])
    }
  })

  it('a forbid that cannot be evaluated denies (fail closed), and so does a value Cedar cannot hold', () => {
    const gate = gateWith({ policies: 'permit(principal, action == Action::"admin_panel", resource);\nforbid(principal, action, resource) when { context.arguments.amount > 100 };' })
    expect(decided(gate.check('admin_panel', { amount: 50 }, alice))).toEqual(['passed', undefined])
    expect(decided(gate.check('admin_panel', { amount: 500 }, alice))).toEqual(['denied', 'engine'])
    // Cedar alone would skip the erroring forbid and allow through the permit
    expect(decided(gate.check('admin_panel', {}, alice))).toEqual(['denied', 'engine'])
    expect(decided(gate.check('admin_panel', { amount: 'lots' }, alice))).toEqual(['denied', 'engine'])
    // no Cedar value for a fraction, a huge integer or null: the engine refuses it (deny)
    for (const amount of [500.5, 1e20, null]) expect(decided(gate.check('admin_panel', { amount }, alice)), String(amount)).toEqual(['denied', 'engine'])
    // an erroring permit is only skipped
    const permits = gateWith({ policies: 'permit(principal, action, resource) when { context.arguments.amount < 100 };' })
    expect(decided(permits.check('admin_panel', {}, alice))).toEqual(['denied', 'no_rule'])
    expect(decided(permits.check('admin_panel', { amount: 5 }, alice))).toEqual(['passed', undefined])
  })

  it('with a schema: policies validated at construction, requests checked at call time', () => {
    const schema = `entity User; entity Resource { owner?: User };
      action read appliesTo { principal: User, resource: Resource, context: { tool: String, purpose?: String } };`
    const context = (_r: unknown, d: Record<string, unknown>) => ({ tool: d.tool, ...(d.purpose === undefined ? {} : { purpose: d.purpose }) })
    const gate = gateWith({ schema, context, policies: 'permit(principal, action == Action::"read", resource) when { resource has owner && resource.owner == principal };' })
    expect(decided(gate.check('read_file', { path: 'home/alice/notes.txt' }, alice))).toEqual(['passed', undefined])
    // an action the schema does not know: Cedar rejects the request, the gate denies
    expect(decided(gate.check('search', { q: 'x' }, alice))).toEqual(['denied', 'engine'])
    const bad = thrownToolGateError(() => cedarEngine({ schema, context, policies: 'permit(principal, action == Action::"read", resource) when { context.nope == 1 };' }))
    expect(bad.code).toBe('E_CONFIG')
    expect(bad.message).toMatch(/do not validate against the schema[\s\S]*policy "policy0":1:\d+: .*nope/)
  })
})

describe('construction', () => {
  it('a policy that does not parse is E_CONFIG naming the line and column', () => {
    const { code, message } = thrownToolGateError(() => cedarEngine({ cedar, policies: 'permit(principal, action, resource);\n\npermit(principal, action, resource) when { context.x ' }))
    expect(code).toBe('E_CONFIG')
    expect(message).toMatch(/^cedarEngine: the policies do not parse:\npolicies:3:\d+: unexpected end of input/)
  })

  it('duplicate ids, templates, bad entities, a bad schema, a wrong module: E_CONFIG', () => {
    const cases: [() => unknown, RegExp][] = [
      [() => cedarEngine({ policies: '@id("a") permit(principal, action, resource);\n@id("a") forbid(principal, action, resource);' }), /two policies have the id "a"/],
      [() => cedarEngine({ policies: 'permit(principal == ?principal, action, resource);' }), /templates/],
      [() => cedarEngine({ policies: '', entities: [{ uid: { type: 'R', id: 'x' } }] as never }), /entities are invalid:\nentities: .*attrs/],
      [() => cedarEngine({ policies: '', entities: 'x' as never }), /`entities` must be/],
      [() => cedarEngine({ policies: '', schema: 'entity User; entity' }), /schema/],
      [() => cedarEngine({ policies: '', unmatched: 'allow' as never }), /`unmatched`/],
      [() => cedarEngine({ policies: '', cedar: {} as CedarWasm }), /no `policySetTextToParts`.*4\.13\.0/],
      [() => cedarEngine(undefined as never), /`policies` must be Cedar policy text/],
    ]
    for (const [f, re] of cases) {
      const { code, message } = thrownToolGateError(f)
      expect(code).toBe('E_CONFIG')
      expect(message).toMatch(re)
    }
  })

  it('without the package installed: E_CONFIG saying how to install it', () => {
    // the adapter and its one import, copied where no node_modules can be found
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-cedar-missing-'))
    mkdirSync(join(dir, 'engines'))
    cpSync(join(root, 'src-ts', 'engines', 'cedar.ts'), join(dir, 'engines', 'cedar.ts'))
    cpSync(join(root, 'src-ts', 'errors.ts'), join(dir, 'errors.ts'))
    writeFileSync(join(dir, 'main.ts'), `import { cedarEngine } from './engines/cedar'
try { cedarEngine({ policies: '' }); console.log('loaded') } catch (e) { console.log(JSON.stringify({ code: (e as { code: string }).code, message: (e as Error).message })) }
`)
    const tsx = pathToFileURL(join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href
    const r = spawnSync(process.execPath, ['--import', tsx, join(dir, 'main.ts')], { cwd: dir, encoding: 'utf8' })
    expect(r.stderr).toBe('')
    const out = JSON.parse(r.stdout) as { code: string; message: string }
    expect(out.code).toBe('E_CONFIG')
    expect(out.message).toContain('npm install @cedar-policy/cedar-wasm')
    expect(out.message).toContain('pass the loaded module as `cedar`')
  })

  it('an empty policy set delegates everything', () => {
    const gate = gateWith({ policies: '' })
    expect(decided(gate.check('search', { q: 'x' }, alice))).toEqual(['passed', undefined])
    expect(decided(gate.check('admin_panel', {}, alice))).toEqual(['denied', 'no_rule'])
  })
})

describe('sync and async paths', () => {
  it('checkAsync and confirmAsync await the same decisions', async () => {
    const gate = gateWith({ policies: POLICIES + '\npermit(principal == User::"alice", action == Action::"send_email", resource);' })
    expect(decided(await gate.checkAsync('read_file', { path: 'home/alice/notes.txt' }, alice))).toEqual(['passed', undefined])
    expect(decided(await gate.checkAsync('read_file', { path: 'reports/q3.csv' }, { ...ana, purpose: 'training' }))).toEqual(['denied', 'engine'])
    // a fresh session: the read above tainted alice's, and send_email is a public sink
    const mailer = { subject: 'alice', session: 'mail' }
    const ask = await gate.checkAsync('send_email', { to: 'a@b.c', body: 'hi' }, mailer)
    expect(ask.outcome).toBe('confirm')
    expect(decided(await gate.confirmAsync(ask.confirmation!.token, mailer))).toEqual(['passed', undefined])
    expect(decided(await gate.checkAsync('send_email', { to: 'a@b.c', body: 'hi' }, { subject: 'bob', purpose: 'training' }))).toEqual(['denied', 'engine'])
  })

  it('entities from an async function make the engine async: check throws E_ASYNC, checkAsync decides', async () => {
    const lookups: string[] = []
    const gate = gateWith({
      entities: async (r) => {
        lookups.push(r.resource ?? r.tool)
        return [owned('home/alice/notes.txt', 'alice')]
      },
    })
    expect(thrownToolGateError(() => gate.check('read_file', { path: 'home/alice/notes.txt' }, alice)).code).toBe('E_ASYNC')
    expect(decided(await gate.checkAsync('read_file', { path: 'home/alice/notes.txt' }, alice))).toEqual(['passed', undefined])
    expect(decided(await gate.checkAsync('read_file', { path: 'home/bob/notes.txt' }, alice))).toEqual(['denied', 'no_rule'])
    expect(lookups.slice(-2)).toEqual(['file:home/alice/notes.txt', 'file:home/bob/notes.txt'])
  })

  it('guardAsync and guard: an OpenAI turn with one permitted and one forbidden call', async () => {
    const gate = gateWith()
    const turn = {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_own', type: 'function', function: { name: 'read_file', arguments: '{"path":"home/alice/notes.txt"}' } },
              { id: 'call_train', type: 'function', function: { name: 'read_file', arguments: '{"path":"reports/q3.csv"}' } },
            ],
          },
        },
      ],
    }
    const ctx = { subject: 'alice', roles: ['analyst'], purpose: 'training' }
    // alice owns her notes (permit), but the purpose is training (forbid wins for both)
    const both = await gate.guardAsync(turn, { dialect: 'openai', ...ctx })
    expect(both.calls.map((c) => [c.callId, c.outcome, c.reason])).toEqual([
      ['call_own', 'denied', 'engine'],
      ['call_train', 'denied', 'engine'],
    ])
    const r = await gate.guardAsync(JSON.stringify(turn), { dialect: 'openai', subject: 'alice', roles: ['intern'] })
    expect(r.calls.map((c) => [c.callId, c.outcome, c.reason])).toEqual([
      ['call_own', 'passed', undefined],
      ['call_train', 'denied', 'no_rule'],
    ])
    const mixed = await gate.guardAsync(turn, { dialect: 'openai', subject: 'ana', roles: ['analyst'] })
    expect(mixed.calls.map((c) => [c.callId, c.outcome, c.reason])).toEqual([
      ['call_own', 'denied', 'no_rule'],
      ['call_train', 'passed', undefined],
    ])
    // one permitted by Cedar, one forbidden by Cedar over a rule allow
    const forbidOne = gateWith({ policies: POLICIES + '\nforbid(principal, action, resource == Resource::"file:reports/q3.csv") when { context.roles.contains("analyst") };' })
    const report = await forbidOne.guardAsync(turn, { dialect: 'openai', subject: 'alice', roles: ['analyst'] })
    expect(report.calls.map((c) => [c.callId, c.outcome, c.reason])).toEqual([
      ['call_own', 'passed', undefined],
      ['call_train', 'denied', 'engine'],
    ])
    expect(report.allowed).toEqual([{ callId: 'call_own', tool: 'read_file', arguments: { path: 'home/alice/notes.txt' } }])
    expect(report.feedback).toHaveLength(1)
    expect(JSON.stringify(report.feedback)).toContain('call_train')
    expect(JSON.stringify(report.feedback)).not.toContain('call_own')
    // the engine is sync, so the sync guard gives the same report
    const sync = forbidOne.guard(turn, { dialect: 'openai', subject: 'alice', roles: ['analyst'] })
    expect(sync.calls.map((c) => [c.callId, c.outcome, c.reason])).toEqual(report.calls.map((c) => [c.callId, c.outcome, c.reason]))
  })
})

describe('the example and the cost', () => {
  it('examples/cedar.ts runs and prints what its labels say', () => {
    const out = runExample('cedar.ts')
    const lines = out.trim().split('\n').map((l) => l.replace(/\s+/g, ' ').trim())
    expect(lines).toEqual([
      'alice reads her own notes (Cedar permits) passed',
      'ana reads a report (no Cedar policy: rules allow) passed',
      'ana reads it for training (Cedar forbids) denied (engine)',
      'alice reads a report (no Cedar policy: no rule) denied (no_rule)',
      'alice reads her private report (built-in deny is final) denied (deny_rule)',
    ])
  })

  it('costs well under a millisecond per decision once warm (printed, not asserted)', () => {
    const engine = cedarEngine({ policies: POLICIES, entities: [owned('home/alice/notes.txt', 'alice')] })
    const withCedar = new ToolGate(BASE, { engines: [engine], engineTimeoutMs: 2000 })
    const without = new ToolGate(BASE)
    const delegating = new ToolGate(BASE, { engines: [() => 'delegate'], engineTimeoutMs: 2000 })
    const request = { tool: 'read_file', action: 'read', resource: 'file:home/alice/notes.txt', arguments: { path: 'home/alice/notes.txt' }, context: alice, rules: 'no_rule' as const }
    const N = 200
    const median = (f: (i: number) => unknown) => {
      for (let i = 0; i < 20; i++) f(i)
      const t: number[] = []
      for (let i = 0; i < N; i++) {
        const t0 = performance.now()
        f(i)
        t.push(performance.now() - t0)
      }
      t.sort((a, b) => a - b)
      return { median: t[N >> 1] * 1000, p99: t[Math.floor(N * 0.99)] * 1000 }
    }
    const fmt = (m: { median: number; p99: number }) => `median ${m.median.toFixed(1)} µs, p99 ${m.p99.toFixed(1)} µs`
    const engineOnly = median(() => engine(request))
    const gated = median((i) => withCedar.check('read_file', { path: i % 2 ? 'home/alice/notes.txt' : 'reports/q3.csv' }, i % 2 ? alice : ana))
    const bare = median((i) => without.check('read_file', { path: i % 2 ? 'home/alice/notes.txt' : 'reports/q3.csv' }, i % 2 ? alice : ana))
    console.log(`cedar engine alone, ${N} decisions: ${fmt(engineOnly)}`)
    console.log(`gate.check with cedar, ${N} calls: ${fmt(gated)}`)
    const twoStep = median((i) => delegating.check('read_file', { path: i % 2 ? 'home/alice/notes.txt' : 'reports/q3.csv' }, i % 2 ? alice : ana))
    console.log(`gate.check without engines, ${N} calls: ${fmt(bare)}`)
    console.log(`gate.check with an engine that only delegates, ${N} calls: ${fmt(twoStep)}`)
    expect(engine(request)).toBe('allow')
  })
})
