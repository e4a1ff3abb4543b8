#!/usr/bin/env node
// Regenerates the dialect fuzz seeds from the shared fixture corpus: every
// __test__/fixtures/dialects/<dialect>/<case>.json becomes fuzz/corpus/dialect_<dialect>/seed-fx-<case>
// holding the turn's exact text (`payloadText`, else `payload` serialized). The folder, not the
// fixture's `dialect` field (which may be "auto"), picks the target. Stale `seed-fx-*` files are
// removed; other seeds (`seed-doc-*`, written by hand) are left alone.
//
//   node fuzz/seeds.mjs          # from anywhere; prints what it wrote
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const fuzzDir = dirname(fileURLToPath(import.meta.url))
const fixtures = join(fuzzDir, '..', '__test__', 'fixtures', 'dialects')
const DIALECTS = ['openai', 'openai-responses', 'anthropic', 'langchain', 'pydantic-ai', 'mcp', 'ai-sdk', 'gemini', 'ai-sdk-ui']

let written = 0
for (const dialect of DIALECTS) {
  const target = `dialect_${dialect.replaceAll('-', '_')}`
  const out = join(fuzzDir, 'corpus', target)
  mkdirSync(out, { recursive: true })
  for (const f of readdirSync(out)) if (f.startsWith('seed-fx-')) rmSync(join(out, f))
  const dir = join(fixtures, dialect)
  const cases = statSync(dir, { throwIfNoEntry: false })?.isDirectory() ? readdirSync(dir).filter((f) => f.endsWith('.json')).sort() : []
  for (const f of cases) {
    const fx = JSON.parse(readFileSync(join(dir, f), 'utf8'))
    const text = typeof fx.payloadText === 'string' ? fx.payloadText : JSON.stringify(fx.payload)
    if (typeof text !== 'string') throw new Error(`${dialect}/${f}: neither payloadText nor payload`)
    writeFileSync(join(out, `seed-fx-${f.slice(0, -'.json'.length)}`), text)
    written++
  }
  const total = readdirSync(out).filter((f) => f.startsWith('seed-')).length
  console.log(`${target}: ${cases.length} from fixtures, ${total} seeds in all`)
}

// Stream seeds: every __test__/fixtures/streams/<dialect>/<case>.json becomes
// fuzz/corpus/stream_<dialect>/seed-fx-<case>: its events, one per line (strings as they are,
// objects as compact JSON), which is how the stream targets split their input.
const streams = join(fuzzDir, '..', '__test__', 'fixtures', 'streams')
for (const dialect of ['openai', 'openai-responses', 'anthropic', 'ai-sdk', 'gemini', 'ai-sdk-ui', 'pydantic-ai']) {
  const target = `stream_${dialect.replaceAll('-', '_')}`
  const out = join(fuzzDir, 'corpus', target)
  mkdirSync(out, { recursive: true })
  for (const f of readdirSync(out)) if (f.startsWith('seed-fx-')) rmSync(join(out, f))
  const dir = join(streams, dialect)
  const cases = statSync(dir, { throwIfNoEntry: false })?.isDirectory() ? readdirSync(dir).filter((f) => f.endsWith('.json')).sort() : []
  for (const f of cases) {
    const fx = JSON.parse(readFileSync(join(dir, f), 'utf8'))
    if (!Array.isArray(fx.events)) throw new Error(`streams/${dialect}/${f}: no events`)
    const lines = fx.events.map((e) => (typeof e === 'string' ? e : JSON.stringify(e)))
    writeFileSync(join(out, `seed-fx-${f.slice(0, -'.json'.length)}`), lines.join('\n'))
    written++
  }
  console.log(`${target}: ${cases.length} from fixtures`)
}

// Condition seeds: fuzz/corpus/condition/seed-cond-<name> — the documented examples of
// docs/conditions.md and every corner of the language (escapes, paths, lists, dates, limits,
// errors). The `condition` target also reads its input split at the first NUL as
// (glob pattern, text), so a few seeds are `pattern\0text`. Stale `seed-cond-*` files are removed.
const CONDITIONS = {
  'roles': "roles has 'verifier'",
  'roles-in': "'analyst' in roles and purpose == 'audit'",
  'tenant': 'identity.tenant == context.tenant',
  'amount': 'args.amount <= 100 and args.amount > -1.5e2',
  'resource-glob': "resource matches 'file:reports/**'",
  'business-hours': 'now.weekday in [1, 2, 3, 4, 5] and now.hour >= 9 and now.hour < 17',
  'dates': "now >= '2026-12-01T09:00:00Z' and now < '2027-01-01' or now > 1700000000.5",
  'offset-date': "now < '2026-03-04T11:30:00.25+01:00' and now.minute != 0",
  'kleene': "not (args.dry or resource == 'x') and (tool == 'read_file' or action != \"read\")",
  'paths': "identity.org['id'] == 'o-1' and args.nested.deep.list[1].k == 'v' and args['odd key'] matches '?'",
  'escapes': "purpose == 'a\\\\b\\'c\\\"d\\n\\t\\u{1F600}' or subject != \"\\u{e9}\"",
  'null-bool': 'identity.nothing == null and identity.admin == true and identity.admin',
  'lists': "args.tags has 3 and args.amount in [1, 50, 'x', true, null] and identity.org.teams has 'red'",
  'globs': "args.path matches 'reports/*.pdf' or tool matches 'read_?ile' or args.path matches '**\\\\*'",
  'temporary': "now < '2027-01-01' and not (context.env == 'prod')",
  'support': "identity.admin or (roles has 'support' and args.ticket != null)",
  'region': "args.region in ['eu-west-1', 'eu-central-1'] and identity.org.teams has 'platform'",
  'session': "now < identity.exp and identity['auth-level'] >= 2",
  'deep': '((((not (not (true))))))',
  'multiline': "roles has 'a'\n  and purpose == 'b'\r\n  or context.region == 'eu'",
  'error-name': "rolez has 'x'",
  'error-type': "purpose == 3 or now < 'tomorrow'",
  'error-string': "purpose == 'abc",
  'glob-adversarial': '*a*a*a*a*a*b\0' + 'a'.repeat(200),
  'glob-globstar': 'file:**/x/*?y\\*\0file:a/b/x/zy*',
  'glob-subject': 'home/{subject}/**\0home/ann/notes.txt',
}
{
  const out = join(fuzzDir, 'corpus', 'condition')
  mkdirSync(out, { recursive: true })
  for (const f of readdirSync(out)) if (f.startsWith('seed-cond-')) rmSync(join(out, f))
  for (const [name, text] of Object.entries(CONDITIONS)) {
    writeFileSync(join(out, `seed-cond-${name}`), text)
    written++
  }
  console.log(`condition: ${Object.keys(CONDITIONS).length} seeds`)
}
console.log(`wrote ${written} seeds`)
