// Generates docs/api.md, the API reference, from the published type declarations: every name
// dist/index.d.ts exports (following its re-exports), with its JSDoc and its declaration.
// Run `npm run build:ts` first, then `npm run docs:api`. Uses the TypeScript compiler API
// (a devDependency already), so the reference is exactly what users' editors show.
//
//   node scripts/api-docs.mjs            write docs/api.md
//   node scripts/api-docs.mjs --stdout   print it instead
//   node scripts/api-docs.mjs --check    exit 1 when docs/api.md is not what would be written
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const ts = require('typescript')

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const entry = join(root, 'dist', 'index.d.ts')
const outFile = join(root, 'docs', 'api.md')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))

if (!existsSync(entry)) {
  console.error('api-docs: dist/index.d.ts is missing; run `npm run build:ts` first')
  process.exit(1)
}

const program = ts.createProgram([entry], {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.CommonJS,
  moduleResolution: ts.ModuleResolutionKind.Node10,
  strict: true,
  noEmit: true,
  types: [],
})
const checker = program.getTypeChecker()
const entryFile = program.getSourceFile(entry)
const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed })

/** `{@link X}` / `{@link X | label}` become code spans (or the label). */
const links = (s) => s.replace(/\{@link(?:code|plain)?\s+([^}\s|]+)(?:\s*\|\s*|\s+)?([^}]*)\}/g, (_, name, label) => (label.trim() ? label.trim() : `\`${name}\``))
const docText = (sym) => links(ts.displayPartsToString(sym.getDocumentationComment(checker)).trim())
const tagText = (tag) => links(ts.displayPartsToString(tag.text ?? []).trim())
const modifiers = (node) => (ts.canHaveModifiers(node) ? (ts.getModifiers(node) ?? []) : [])
const isPrivate = (m) =>
  (m.name && ts.isPrivateIdentifier(m.name)) || modifiers(m).some((x) => x.kind === ts.SyntaxKind.PrivateKeyword || x.kind === ts.SyntaxKind.ProtectedKeyword)

function print(node, file) {
  return printer.printNode(ts.EmitHint.Unspecified, node, file).replace(/ {4}/g, '  ')
}

/** Long unions read better one member a line. */
function printAlias(node, file) {
  const text = print(node, file)
  if (!ts.isUnionTypeNode(node.type) || text.length <= 100) return text
  const head = text.slice(0, text.indexOf('=') + 1)
  return `${head}\n${node.type.types.map((t) => `  | ${print(t, file)}`).join('\n')};`
}

/** The declaration as users see it in the .d.ts, without comments and private members. */
function signature(decl) {
  const file = decl.getSourceFile()
  if (ts.isClassDeclaration(decl)) {
    const members = decl.members.filter((m) => !isPrivate(m))
    const heritage = (decl.heritageClauses ?? []).map((h) => ` ${print(h, file).trim()}`).join('')
    const body = members.map((m) => `  ${print(m, file).replace(/\n/g, '\n  ')}`).join('\n')
    return `declare class ${decl.name.text}${heritage} {\n${body}\n}`
  }
  if (ts.isTypeAliasDeclaration(decl)) return printAlias(decl, file).replace(/^export /, '')
  return print(decl, file).replace(/^export /, '')
}

function anchor(name) {
  return name.toLowerCase().replace(/[^a-z0-9_-]/g, '')
}

function tagsBlock(sym) {
  const out = []
  for (const tag of sym.getJsDocTags(checker)) {
    const text = tagText(tag)
    if (tag.name === 'example') out.push('Example:', '', '```ts', text.replace(/^```\w*\n?|```$/g, '').trim(), '```', '')
    else if (tag.name === 'deprecated') out.push(`**Deprecated.** ${text}`, '')
    else if (tag.name === 'see') out.push(`See ${text}.`, '')
    else if (tag.name !== 'packageDocumentation') out.push(`- \`@${tag.name}\` ${text}`, '')
  }
  return out
}

function kindOf(decl) {
  if (ts.isClassDeclaration(decl)) return 'class'
  if (ts.isFunctionDeclaration(decl)) return 'function'
  if (ts.isInterfaceDeclaration(decl)) return 'interface'
  if (ts.isTypeAliasDeclaration(decl)) return 'type'
  if (ts.isVariableDeclaration(decl)) return 'const'
  if (ts.isEnumDeclaration(decl)) return 'enum'
  return ts.SyntaxKind[decl.kind]
}

function memberTitle(owner, m, file) {
  const name = m.name ? m.name.getText(file) : ''
  const isStatic = modifiers(m).some((x) => x.kind === ts.SyntaxKind.StaticKeyword)
  const params = (m.parameters ?? []).map((p) => `${p.name.getText(file)}${p.questionToken ? '?' : ''}`).join(', ')
  if (ts.isConstructorDeclaration(m)) return `new ${owner}(${params})`
  // an instance is named by the class's last word: `gate.check`, `error.code`
  const base = isStatic ? owner : (owner.match(/[A-Z][a-z0-9]*$/)?.[0] ?? owner).toLowerCase()
  if (ts.isMethodDeclaration(m)) return `${base}.${name}(${params})`
  return `${base}.${name}`
}

function membersBlock(owner, decl) {
  const file = decl.getSourceFile()
  const out = []
  const members = decl.members.filter((m) => !isPrivate(m) && !ts.isIndexSignatureDeclaration(m))
  if (members.length === 0) return out
  if (ts.isInterfaceDeclaration(decl)) {
    out.push('| member | type | |', '|---|---|---|')
    for (const m of members) {
      const sym = m.name ? checker.getSymbolAtLocation(m.name) : undefined
      const name = `${m.name.getText(file)}${m.questionToken ? '?' : ''}`
      const type = m.type ? print(m.type, file).replace(/\s*\n\s*/g, ' ') : ''
      const doc = sym ? docText(sym).replace(/\n+/g, ' ') : ''
      out.push(`| \`${name}\` | \`${type.replace(/\|/g, '\\|')}\` | ${doc.replace(/\|/g, '\\|')} |`)
    }
    out.push('')
    return out
  }
  for (const m of members) {
    const sym = m.name ? checker.getSymbolAtLocation(m.name) : (m.symbol ?? undefined)
    // an overloaded method: each signature with its own doc (the symbol's joins them all)
    const overloaded = ts.isMethodDeclaration(m) && (sym?.declarations?.length ?? 0) > 1
    const sig = overloaded ? checker.getSignatureFromDeclaration(m) : undefined
    const doc = sig ? links(ts.displayPartsToString(sig.getDocumentationComment(checker)).trim()) : sym ? docText(sym) : ''
    out.push(`### \`${memberTitle(owner, m, file)}\``, '')
    out.push('```ts', print(m, file), '```', '')
    if (doc) out.push(doc, '')
    if (sym) out.push(...tagsBlock(sym))
  }
  return out
}

// Every exported name, in the order dist/index.d.ts lists them.
const moduleSymbol = checker.getSymbolAtLocation(entryFile)
const order = new Map()
for (const stmt of entryFile.statements) {
  if (ts.isExportDeclaration(stmt) && stmt.exportClause && ts.isNamedExports(stmt.exportClause)) {
    for (const el of stmt.exportClause.elements) order.set(el.name.text, order.size)
  }
}
const exported = checker
  .getExportsOfModule(moduleSymbol)
  .map((sym) => {
    const target = sym.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(sym) : sym
    const decl = target.declarations?.[0]
    return { name: sym.name, sym: target, decl }
  })
  .filter((e) => e.decl)
  .sort((a, b) => (order.get(a.name) ?? Infinity) - (order.get(b.name) ?? Infinity) || a.name.localeCompare(b.name))

const intro = ts
  .getJSDocCommentsAndTags(entryFile.statements[0] ?? entryFile)
  .filter(ts.isJSDoc)
  .map((d) => (typeof d.comment === 'string' ? d.comment : ts.getTextOfJSDocComment(d.comment) ?? ''))
  .join('\n')
  .trim()

const lines = [
  '# API reference',
  '',
  `<!-- Generated by scripts/api-docs.mjs from dist/index.d.ts (${pkg.name} ${pkg.version}); do not edit. Regenerate: npm run build:ts && npm run docs:api -->`,
  '',
  intro,
  '',
  '```ts',
  `import { ${exported.filter((e) => kindOf(e.decl) !== 'type' && kindOf(e.decl) !== 'interface').map((e) => e.name).join(', ')} } from '${pkg.name}'`,
  `import type { ${exported.filter((e) => kindOf(e.decl) === 'type' || kindOf(e.decl) === 'interface').map((e) => e.name).join(', ')} } from '${pkg.name}'`,
  '```',
  '',
  '| export | kind | declared in | summary |',
  '|---|---|---|---|',
  ...exported.map((e) => {
    const summary = docText(e.sym).split(/\n\s*\n|(?<=\.)\s/)[0].replace(/\n/g, ' ').replace(/\|/g, '\\|')
    const file = relative(root, e.decl.getSourceFile().fileName).replace(/\\/g, '/')
    return `| [\`${e.name}\`](#${anchor(e.name)}) | ${kindOf(e.decl)} | \`${file}\` | ${summary} |`
  }),
  '',
]

for (const e of exported) {
  lines.push(`## ${e.name}`, '')
  const doc = docText(e.sym)
  if (doc) lines.push(doc, '')
  lines.push('```ts', signature(e.decl), '```', '')
  lines.push(...tagsBlock(e.sym))
  if (ts.isClassDeclaration(e.decl) || ts.isInterfaceDeclaration(e.decl)) lines.push(...membersBlock(e.name, e.decl))
}

const markdown = `${lines.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd()}\n`

const args = new Set(process.argv.slice(2))
if (args.has('--stdout')) {
  process.stdout.write(markdown)
} else if (args.has('--check')) {
  const current = existsSync(outFile) ? readFileSync(outFile, 'utf8') : ''
  if (current !== markdown) {
    console.error('api-docs: docs/api.md is stale; run `npm run build:ts && npm run docs:api`')
    process.exit(1)
  }
} else {
  mkdirSync(dirname(outFile), { recursive: true })
  writeFileSync(outFile, markdown)
  console.log(`api-docs: wrote ${relative(root, outFile)} (${exported.length} exports)`)
}
