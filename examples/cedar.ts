// A gate with built-in rules plus Cedar policies as a plugged engine.
//   npx tsx examples/cedar.ts        (needs `npm install @cedar-policy/cedar-wasm`)
// The built-in rules let analysts read reports and never the private ones. Cedar adds an
// exception (owners read their own files) and a restriction (nothing is read for training);
// where no Cedar policy applies, it delegates and the rules' result stands.
import { cedarEngine } from '../src-ts/engines/cedar'
import { ToolGate, type CallContext, type ToolGateConfig } from '../src-ts/index'

const config: ToolGateConfig = {
  tools: [
    {
      name: 'read_file',
      action: 'read',
      resource: 'file:{path*}',
      inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
    },
  ],
  policy: {
    rules: [
      { id: 'analysts-read-reports', effect: 'allow', roles: ['analyst'], tools: ['read_file'], resources: ['file:reports/**'] },
      { id: 'no-private-reports', effect: 'deny', tools: ['read_file'], resources: ['file:reports/private/**'] },
    ],
  },
}

const policies = `
// owners read their own files, which no built-in rule covers
@id("owners-read")
permit(principal, action == Action::"read", resource)
when { resource has owner && resource.owner == principal };

// nothing is read to train a model, whatever the rules say
@id("no-training")
forbid(principal, action, resource)
when { context has purpose && context.purpose == "training" };
`

const owned = (file: string, owner: string) => ({ uid: { type: 'Resource', id: `file:${file}` }, attrs: { owner: { __entity: { type: 'User', id: owner } } }, parents: [] })

const gate = new ToolGate(config, {
  engines: [cedarEngine({ policies, entities: [owned('home/alice/notes.txt', 'alice'), owned('reports/private/alice.csv', 'alice')] })],
  // A warm Cedar decision takes well under a millisecond; the bound is wall time, which a busy
  // machine can stretch by tens of milliseconds, so give it room.
  engineTimeoutMs: 250,
})

const alice: CallContext = { subject: 'alice' }
const ana: CallContext = { subject: 'ana', roles: ['analyst'] }
const cases: [string, string, CallContext][] = [
  ['alice reads her own notes (Cedar permits)', 'home/alice/notes.txt', alice],
  ['ana reads a report (no Cedar policy: rules allow)', 'reports/q3.csv', ana],
  ['ana reads it for training (Cedar forbids)', 'reports/q3.csv', { ...ana, purpose: 'training' }],
  ['alice reads a report (no Cedar policy: no rule)', 'reports/q3.csv', alice],
  ['alice reads her private report (built-in deny is final)', 'reports/private/alice.csv', alice],
]
for (const [label, path, ctx] of cases) {
  // the Cedar engine is synchronous, so the sync `check` works; `checkAsync` would too
  const v = gate.check('read_file', { path }, ctx)
  console.log(`${label.padEnd(58)} ${v.outcome}${v.reason === undefined ? '' : ` (${v.reason})`}`)
}

export {} // a module, so the tests can type-check this file
