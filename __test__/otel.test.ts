// toolgate/otel through the real binding: a ToolGate with an `audit` block whose records feed
// otelAudit(), read back from the OpenTelemetry SDK's own in-memory span exporter and a metric
// reader collected by hand. Also: telemetry failures never refuse calls, options are checked,
// @opentelemetry/api is loaded only by otelAudit() (and its absence is a clear E_CONFIG), and
// examples/otel.ts runs offline.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { metrics, SpanKind, SpanStatusCode, trace, type HrTime } from '@opentelemetry/api'
import { DataPointType, MeterProvider, MetricReader, type DataPoint, type Histogram } from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, } from '@opentelemetry/sdk-trace-base'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

import { otelAudit, withOtel, type OtelAuditOptions } from '../src-ts/adapters/otel'
import { ToolGate, ToolGateError, type CallContext, type ToolGateConfig } from '../src-ts/index'
import { runExample } from './helpers/tsx-child'
import { thrownConfigError } from './helpers/thrown'

const root = join(__dirname, '..')
const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version

const config: ToolGateConfig = {
  tools: [
    {
      name: 'search',
      inputSchema: { type: 'object', properties: { q: { type: 'string' }, limit: { type: 'integer' } }, required: ['q'], additionalProperties: false },
    },
    { name: 'read_file', inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }, resource: 'file:{path*}' },
    { name: 'admin', inputSchema: { type: 'object' } },
  ],
  policy: {
    rules: [
      { effect: 'allow', roles: ['analyst'], tools: ['search'] },
      { effect: 'allow', roles: ['analyst'], tools: ['read_file'], resources: ['file:reports/**'] },
    ],
  },
  audit: {},
}
const ana: CallContext = { subject: 'ana', roles: ['analyst'], session: 's-1' }

/** A metric reader the test collects by hand. */
class ManualReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/** A gate wired to real SDK providers; `records` are the decision / turn_error lines the gate wrote, parsed. */
function setup(options: Omit<OtelAuditOptions, 'tracerProvider' | 'meterProvider'> = {}, cfg: ToolGateConfig = config) {
  const exporter = new InMemorySpanExporter()
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const reader = new ManualReader()
  const meterProvider = new MeterProvider({ readers: [reader] })
  const onAudit = otelAudit({ tracerProvider, meterProvider, ...options })
  const lines: string[] = []
  const gate = new ToolGate(cfg, {
    onAudit: (line) => {
      lines.push(line)
      onAudit(line)
    },
  })
  const records = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => r.type !== 'open')
  return { gate, exporter, reader, records }
}

function hr(ms: number, plusUs = 0): HrTime {
  const ns = (ms % 1000) * 1e6 + plusUs * 1000
  return [Math.floor(ms / 1000) + Math.floor(ns / 1e9), ns % 1e9]
}

/** Attributes every decision span carries, from its record. */
function common(rec: Record<string, unknown>) {
  return {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': rec.tool,
    'toolgate.latency_us': rec.latencyUs,
    'toolgate.decision.id': rec.id,
    'toolgate.config.hash': rec.configHash,
  }
}

async function collect(reader: MetricReader) {
  const { resourceMetrics, errors } = await reader.collect()
  expect(errors).toEqual([])
  const scope = resourceMetrics.scopeMetrics.find((s) => s.scope.name === 'toolgate')!
  expect(scope.scope.version).toBe(version)
  const metric = (name: string) => scope.metrics.find((m) => m.descriptor.name === name)
  return { metric }
}

describe('one span per decision', () => {
  it('passed, repaired, invalid, no_rule and unknown_tool: exact attributes, placed at the record time for its latency', async () => {
    const { gate, exporter, records } = setup()
    expect(gate.check('search', '{"q":"x"}', { ...ana, callId: 'c-1' }).outcome).toBe('passed')
    expect(gate.check('search', { q: 'x', limit: '2' }, ana).outcome).toBe('repaired')
    expect(gate.check('search', { limit: 'many' }, ana).reason).toBe('invalid')
    expect(gate.check('admin', {}, ana).reason).toBe('no_rule')
    expect(gate.check('serch', {}, ana).reason).toBe('unknown_tool')
    expect(gate.check('read_file', { path: 'reports/q3.csv' }, ana).outcome).toBe('passed')
    expect(exporter.getFinishedSpans()).toHaveLength(0) // nothing on the hot path
    await gate.flush()

    const recs = records()
    const spans = exporter.getFinishedSpans()
    expect(spans).toHaveLength(6)
    expect(recs).toHaveLength(6)
    expect(spans.map((s) => s.name)).toEqual(Array(6).fill('toolgate.decision'))
    const [passed, repaired, invalid, noRule, unknown, read] = spans.map((s) => s.attributes)
    expect(passed).toEqual({
      ...common(recs[0]),
      'gen_ai.tool.call.id': 'c-1',
      'toolgate.outcome': 'passed',
      'toolgate.coercion_count': 0,
      'toolgate.validation_errors': 0,
      'toolgate.action': 'search',
    })
    expect(repaired).toEqual({
      ...common(recs[1]),
      'toolgate.outcome': 'repaired',
      'toolgate.coercion_count': 1,
      'toolgate.coercions': ['StringToInteger'],
      'toolgate.validation_errors': 0,
      'toolgate.action': 'search',
    })
    expect(invalid).toEqual({
      ...common(recs[2]),
      'toolgate.outcome': 'rejected',
      'toolgate.reason': 'invalid',
      'toolgate.coercion_count': 0,
      // two problems (`limit`, `q`), but the record says only "invalid": at least one
      'toolgate.validation_errors': 1,
    })
    expect(noRule).toEqual({
      ...common(recs[3]),
      'toolgate.outcome': 'denied',
      'toolgate.reason': 'no_rule',
      'toolgate.coercion_count': 0,
      'toolgate.validation_errors': 0,
      'toolgate.action': 'admin',
    })
    expect(unknown).toEqual({
      ...common(recs[4]),
      'toolgate.outcome': 'rejected',
      'toolgate.reason': 'unknown_tool',
      'toolgate.coercion_count': 0,
    })
    expect(read).toEqual({
      ...common(recs[5]),
      'toolgate.outcome': 'passed',
      'toolgate.coercion_count': 0,
      'toolgate.validation_errors': 0,
      'toolgate.action': 'read_file',
      'toolgate.resource': 'file:reports/q3.csv',
    })

    for (const [i, span] of spans.entries()) {
      const ms = Date.parse(recs[i].time as string)
      expect(span.kind).toBe(SpanKind.INTERNAL)
      expect(span.status).toEqual({ code: SpanStatusCode.UNSET }) // a refusal is the gate working, not an error
      expect(span.parentSpanContext).toBeUndefined()
      expect(span.startTime).toEqual(hr(ms))
      expect(span.endTime).toEqual(hr(ms, recs[i].latencyUs as number))
      expect(span.duration).toEqual(hr(0, recs[i].latencyUs as number))
      expect(span.instrumentationScope).toMatchObject({ name: 'toolgate', version })
    }
    // no subject and no session unless asked for
    expect(spans.some((s) => 'enduser.id' in s.attributes || 'session.id' in s.attributes)).toBe(false)
  })

  it('a guard turn: one span per call with the wire call id and the dialect; a broken turn is an ERROR span', async () => {
    const { gate, exporter, records } = setup()
    const turn = {
      choices: [{ message: { role: 'assistant', content: null, tool_calls: [
        { id: 'call_a', type: 'function', function: { name: 'search', arguments: '{"q":"y","limit":"3"}' } },
        { id: 'call_b', type: 'function', function: { name: 'admin', arguments: '{}' } },
      ] } }],
    }
    expect(gate.guard(turn, { dialect: 'openai', ...ana }).calls.map((c) => [c.callId, c.outcome])).toEqual([['call_a', 'repaired'], ['call_b', 'denied']])
    expect(() => gate.guard('{"choices":', { dialect: 'openai', ...ana })).toThrow(ToolGateError)
    await gate.flush()

    const recs = records()
    const spans = exporter.getFinishedSpans()
    expect(spans.map((s) => [s.name, s.attributes['gen_ai.tool.call.id'], s.attributes['toolgate.outcome'], s.attributes['toolgate.dialect']])).toEqual([
      ['toolgate.decision', 'call_a', 'repaired', 'openai'],
      ['toolgate.decision', 'call_b', 'denied', 'openai'],
      ['toolgate.decision', undefined, undefined, 'openai'],
    ])
    expect(spans[0].attributes).toMatchObject({ 'toolgate.coercion_count': 1, 'toolgate.coercions': ['StringToInteger'] })
    expect(spans[1].attributes).toMatchObject({ 'toolgate.reason': 'no_rule' })

    const err = spans[2]
    expect(recs[2]).toMatchObject({ type: 'turn_error', code: 'E_PAYLOAD' })
    expect(err.attributes).toEqual({
      'error.type': 'E_PAYLOAD',
      'toolgate.dialect': 'openai',
      'toolgate.decision.id': recs[2].id,
      'toolgate.config.hash': recs[2].configHash,
    })
    expect(err.status).toEqual({ code: SpanStatusCode.ERROR, message: recs[2].message })
    expect(err.status.message).toContain('openai payload: not valid JSON')
    expect(err.startTime).toEqual(hr(Date.parse(recs[2].time as string)))
    expect(err.endTime).toEqual(err.startTime)
  })

  it('shadow mode, receipts, the confirm step, and who acted when recordSubject is on', async () => {
    const cfg: ToolGateConfig = {
      ...config,
      tools: [...config.tools, { name: 'send', inputSchema: { type: 'object', properties: { to: { type: 'string' } } }, writes: true }],
      policy: { rules: [...config.policy!.rules!, { effect: 'allow', roles: ['analyst'], tools: ['send'] }] },
      mode: 'shadow',
      receipts: {},
    }
    const { gate, exporter, records } = setup({ recordSubject: true }, cfg)
    const shadow = gate.check('admin', {}, ana)
    expect([shadow.outcome, shadow.wouldBe]).toEqual(['passed', 'no_rule'])
    const ask = gate.check('send', { to: 'boss' }, ana)
    expect(ask.outcome).toBe('confirm')
    expect(gate.confirm(ask.confirmation!.token, ana).outcome).toBe('passed')
    await gate.flush()

    const recs = records()
    const [shadowSpan, askSpan, confirmSpan] = exporter.getFinishedSpans().map((s) => s.attributes)
    expect(shadowSpan).toEqual({
      ...common(recs[0]),
      'toolgate.outcome': 'passed',
      'toolgate.coercion_count': 0,
      'toolgate.validation_errors': 0,
      'toolgate.action': 'admin',
      'toolgate.shadow': true,
      'toolgate.would_be': 'no_rule',
      'toolgate.receipt.id': recs[0].jti,
      'enduser.id': 'ana',
      'session.id': 's-1',
    })
    expect(recs[0].jti).toEqual(expect.any(String))
    expect(askSpan).toMatchObject({ 'toolgate.outcome': 'confirm', 'toolgate.reason': 'confirm_required', 'toolgate.validation_errors': 0 })
    expect(askSpan['toolgate.step']).toBeUndefined()
    expect(confirmSpan).toMatchObject({ 'gen_ai.tool.name': 'send', 'toolgate.outcome': 'passed', 'toolgate.step': 'confirm', 'enduser.id': 'ana' })
  })
})

describe('metrics', () => {
  it('a counter and a latency histogram (seconds) by outcome and reason, and a counter of broken turns', async () => {
    const { gate, reader, records } = setup()
    gate.check('search', '{"q":"x"}', ana)
    gate.check('search', '{"q":"y"}', ana)
    gate.check('search', { q: 'x', limit: '2' }, ana)
    gate.check('search', { limit: 'many' }, ana)
    gate.check('admin', {}, ana)
    gate.check('admin', {}, ana)
    gate.check('admin', {}, ana)
    gate.check('serch', {}, ana)
    expect(() => gate.guard('{"choices":', { dialect: 'openai' })).toThrow(ToolGateError)
    expect(() => gate.guard('{"content":[{"type":"tool_use"}]}', { dialect: 'anthropic' })).toThrow(ToolGateError)
    expect(() => gate.guard('{"x":1}', { dialect: 'auto' })).toThrow(ToolGateError)
    await gate.flush()

    const decisions = records().filter((r) => r.type === 'decision')
    const key = (a: Record<string, unknown>) => [a['toolgate.outcome'], a['toolgate.reason'] ?? ''].join('/')
    const { metric } = await collect(reader)

    const counter = metric('toolgate.decisions')!
    expect(counter.descriptor).toMatchObject({ unit: '{decision}' })
    expect(counter.dataPointType).toBe(DataPointType.SUM)
    const counts = Object.fromEntries((counter.dataPoints as DataPoint<number>[]).map((p) => [key(p.attributes), p.value]))
    expect(counts).toEqual({ 'passed/': 2, 'repaired/': 1, 'rejected/invalid': 1, 'denied/no_rule': 3, 'rejected/unknown_tool': 1 })

    const histogram = metric('toolgate.decision.duration')!
    expect(histogram.descriptor).toMatchObject({ unit: 's' })
    expect(histogram.dataPointType).toBe(DataPointType.HISTOGRAM)
    const points = histogram.dataPoints as DataPoint<Histogram>[]
    expect(points.map((p) => key(p.attributes)).sort()).toEqual(Object.keys(counts).sort())
    for (const p of points) {
      const mine = decisions.filter((r) => key({ 'toolgate.outcome': r.outcome, 'toolgate.reason': r.reason }) === key(p.attributes))
      expect(p.value.count).toBe(mine.length)
      expect(p.value.sum).toBeCloseTo(mine.reduce((s, r) => s + (r.latencyUs as number) / 1e6, 0), 9)
      // microsecond-scale buckets, so a sub-millisecond decision does not land in one catch-all bucket
      expect(p.value.buckets.boundaries.slice(0, 3)).toEqual([0.000001, 0.0000025, 0.000005])
    }

    const broken = metric('toolgate.turn_errors')!
    expect(broken.descriptor).toMatchObject({ unit: '{turn}' })
    const byType = (broken.dataPoints as DataPoint<number>[]).map((p) => [p.attributes, p.value] as const)
    expect(byType.sort(([a], [b]) => String(a['error.type']).localeCompare(String(b['error.type'])))).toEqual([
      [{ 'error.type': 'E_DIALECT' }, 1],
      [{ 'error.type': 'E_PAYLOAD' }, 2],
    ])
  })

  it('shadow decisions are counted with what enforcement would have done', async () => {
    const { gate, reader } = setup({}, { ...config, mode: 'shadow' })
    gate.check('admin', {}, ana)
    await gate.flush()
    const { metric } = await collect(reader)
    expect((metric('toolgate.decisions')!.dataPoints as DataPoint<number>[]).map((p) => [p.attributes, p.value])).toEqual([
      [{ 'toolgate.outcome': 'passed', 'toolgate.would_be': 'no_rule' }, 1],
    ])
  })
})

describe('wiring', () => {
  it('withOtel is the onAudit fragment to spread into the gate options', async () => {
    const exporter = new InMemorySpanExporter()
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
    const fragment = withOtel({ tracerProvider, meterProvider: new MeterProvider() })
    expect(Object.keys(fragment)).toEqual(['onAudit'])
    const gate = new ToolGate(config, { ...fragment })
    gate.check('search', '{"q":"x"}', ana)
    await gate.flush()
    expect(exporter.getFinishedSpans().map((s) => s.attributes['toolgate.outcome'])).toEqual(['passed'])
  })

  it('accepts a tracer and a meter directly', async () => {
    const exporter = new InMemorySpanExporter()
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('mine')
    const reader = new ManualReader()
    const meter = new MeterProvider({ readers: [reader] }).getMeter('mine')
    const gate = new ToolGate(config, withOtel({ tracer, meter }))
    gate.check('admin', {}, ana)
    await gate.flush()
    expect(exporter.getFinishedSpans().map((s) => [s.instrumentationScope.name, s.attributes['toolgate.reason']])).toEqual([['mine', 'no_rule']])
    const { resourceMetrics } = await reader.collect()
    expect(resourceMetrics.scopeMetrics.map((s) => s.scope.name)).toEqual(['mine'])
  })

  it('with no options, the global providers', async () => {
    const exporter = new InMemorySpanExporter()
    const reader = new ManualReader()
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }))
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }))
    try {
      const gate = new ToolGate(config, withOtel())
      gate.check('serch', {}, ana)
      await gate.flush()
      expect(exporter.getFinishedSpans().map((s) => [s.instrumentationScope.name, s.attributes['toolgate.reason']])).toEqual([['toolgate', 'unknown_tool']])
      const { metric } = await collect(reader)
      expect((metric('toolgate.decisions')!.dataPoints as DataPoint<number>[]).map((p) => p.value)).toEqual([1])
    } finally {
      trace.disable()
      metrics.disable()
    }
  })

  it('a failing tracer never refuses calls: the trail sees no sink failure; one warning', async () => {
    const warnings: string[] = []
    const warn = process.emitWarning
    process.emitWarning = ((w: string) => void warnings.push(w)) as typeof process.emitWarning
    try {
      const tracer = { startSpan: () => { throw new Error('exporter exploded') } } as unknown as OtelAuditOptions['tracer']
      const gate = new ToolGate(config, withOtel({ tracer, meterProvider: new MeterProvider() }))
      gate.check('search', '{"q":"x"}', ana)
      await gate.flush()
      gate.check('search', '{"q":"x"}', ana)
      await gate.flush()
      expect(gate.check('search', '{"q":"x"}', ana).outcome).toBe('passed') // not audit_unavailable
      expect(gate.auditDropped).toBe(0)
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toContain('exporter exploded')
      expect(warnings[0]).toContain('audit trail itself is unaffected')
    } finally {
      process.emitWarning = warn
    }
  })

  it('ignores records it does not know (open, rotate, future types) and lines that are not JSON', () => {
    const exporter = new InMemorySpanExporter()
    const onAudit = otelAudit({ tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }), meterProvider: new MeterProvider() })
    const warn = process.emitWarning
    process.emitWarning = (() => {}) as typeof process.emitWarning
    try {
      onAudit('{"v":1,"type":"open","time":"2026-01-01T00:00:00.000Z"}')
      onAudit('{"v":1,"type":"rotate","time":"2026-01-01T00:00:00.000Z"}')
      onAudit('{"v":2,"type":"something_new"}')
      onAudit('not json')
    } finally {
      process.emitWarning = warn
    }
    expect(exporter.getFinishedSpans()).toHaveLength(0)
  })

  it('bad options are E_CONFIG naming the option', () => {
    const err = (f: () => unknown) => thrownConfigError(f).message
    const tracerProvider = new BasicTracerProvider()
    expect(err(() => otelAudit({ tracerProvder: tracerProvider } as never))).toContain('unknown option `tracerProvder`')
    expect(err(() => otelAudit({ tracerProvider, tracer: tracerProvider.getTracer('x') }))).toContain('not both')
    expect(err(() => otelAudit({ meterProvider: {} as never }))).toContain('`meterProvider`')
    expect(err(() => otelAudit({ recordSubject: 'yes' } as never))).toContain('recordSubject')
    expect(err(() => otelAudit(null as never))).toContain('options must be an object')
  })
})

describe('loading', () => {
  // The module as it ships: otel.ts and errors.ts compiled as `tsc` emits them (CommonJS), laid out
  // like the package (dist/adapters/otel.js, dist/errors.js, package.json), run in a fresh process.
  function compiledPackage(): string {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-otel-'))
    const { options } = ts.convertCompilerOptionsFromJson(JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8')).compilerOptions, root)
    for (const file of ['adapters/otel.ts', 'errors.ts']) {
      const out = ts.transpileModule(readFileSync(join(root, 'src-ts', file), 'utf8'), { compilerOptions: { ...options, noEmit: false }, fileName: file })
      mkdirSync(join(dir, 'dist', 'adapters'), { recursive: true })
      writeFileSync(join(dir, 'dist', file.replace(/\.ts$/, '.js')), out.outputText)
    }
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'toolgate', version }))
    return dir
  }
  const script = `
    const loaded = () => Object.keys(require.cache).filter((k) => k.includes('@opentelemetry')).length
    const otel = require('./dist/adapters/otel.js')
    const before = loaded()
    let error = null
    try { otel.otelAudit() } catch (e) { error = { name: e.name, code: e.code, message: e.message } }
    console.log(JSON.stringify({ exports: Object.keys(otel).sort(), before, after: loaded(), error }))`

  it('importing toolgate/otel loads nothing of OpenTelemetry; otelAudit() loads @opentelemetry/api', () => {
    const dir = compiledPackage()
    const out = execFileSync(process.execPath, ['-e', script], { cwd: dir, encoding: 'utf8', env: { ...process.env, NODE_PATH: join(root, 'node_modules') } })
    const r = JSON.parse(out)
    expect(r.exports).toEqual(['OTEL_SCOPE', 'otelAudit', 'withOtel'])
    expect(r.before).toBe(0)
    expect(r.error).toBeNull()
    expect(r.after).toBeGreaterThan(0)
  })

  it('without @opentelemetry/api installed, importing works and otelAudit() is E_CONFIG saying what to install', () => {
    const dir = compiledPackage()
    const env = { ...process.env }
    delete env.NODE_PATH
    const r = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: dir, encoding: 'utf8', env }))
    expect(r.before).toBe(0)
    expect(r.after).toBe(0)
    expect(r.error).toMatchObject({ name: 'ToolGateError', code: 'E_CONFIG' })
    expect(r.error.message).toContain('@opentelemetry/api is not installed')
    expect(r.error.message).toContain('npm install @opentelemetry/api')
  })
})

describe('the example', () => {
  it('examples/otel.ts runs offline and prints the spans and metrics it describes', () => {
    const out = runExample('otel.ts')
    const lines = out.trim().split('\n')
    expect(lines).toEqual([
      'toolgate.decision search passed coercions=0 call=call_1',
      'toolgate.decision get_weather repaired coercions=1 call=call_2',
      'toolgate.decision delete_repo denied (no_rule) coercions=0 call=call_3',
      'toolgate.decision get_weather rejected (invalid) coercions=0 validation_errors=1',
      'toolgate.decision drop_table rejected (unknown_tool) coercions=0',
      'toolgate.decisions{outcome=denied,reason=no_rule} 1',
      'toolgate.decisions{outcome=passed} 1',
      'toolgate.decisions{outcome=rejected,reason=invalid} 1',
      'toolgate.decisions{outcome=rejected,reason=unknown_tool} 1',
      'toolgate.decisions{outcome=repaired} 1',
      'toolgate.decision.duration{outcome=denied,reason=no_rule} count=1',
      'toolgate.decision.duration{outcome=passed} count=1',
      'toolgate.decision.duration{outcome=rejected,reason=invalid} count=1',
      'toolgate.decision.duration{outcome=rejected,reason=unknown_tool} count=1',
      'toolgate.decision.duration{outcome=repaired} count=1',
    ])
  })
})
