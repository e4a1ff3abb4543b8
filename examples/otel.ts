// Every gate decision as an OpenTelemetry span and metric, in one line: `withOtel`.
//   npx tsx examples/otel.ts
// Runs offline: spans go to the SDK's in-memory exporter and metrics to its in-memory metric
// exporter. In production, hand `withOtel` nothing (it uses the global providers your
// OpenTelemetry setup registered) or your own providers with an OTLP exporter.
//
// The gate needs an `audit` block (`audit: {}` is enough): spans are built from its audit
// records, drained off the hot path, so `check` and `guard` pay nothing for telemetry.
import { InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader, AggregationTemporality, type DataPoint, type Histogram } from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'

import { withOtel } from '../src-ts/adapters/otel'
import { ToolGate } from '../src-ts/index'

const spans = new InMemorySpanExporter()
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] })
const metrics = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE)
const meterProvider = new MeterProvider({ readers: [new PeriodicExportingMetricReader({ exporter: metrics, exportIntervalMillis: 60_000 })] })

const gate = new ToolGate(
  {
    tools: [
      { name: 'search', inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } },
      { name: 'get_weather', inputSchema: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city'] } },
      { name: 'delete_repo', inputSchema: { type: 'object', properties: { repo: { type: 'string' } }, required: ['repo'] } },
    ],
    policy: { rules: [{ effect: 'allow', roles: ['support'], tools: ['search', 'get_weather'] }] },
    audit: {},
  },
  // the one line
  withOtel({ tracerProvider, meterProvider }),
)

async function main(): Promise<void> {
  const caller = { subject: 'u_42', roles: ['support'] }
  // a model's turn with three calls (OpenAI chat completions shape), then two single checks
  gate.guard(
    {
      choices: [{ message: { role: 'assistant', content: null, tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'search', arguments: '{"query":"toolgate"}' } },
        { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","days":"3"}' } },
        { id: 'call_3', type: 'function', function: { name: 'delete_repo', arguments: '{"repo":"old"}' } },
      ] } }],
    },
    { dialect: 'openai', ...caller },
  )
  gate.check('get_weather', { days: 'three' }, caller)
  gate.check('drop_table', {}, caller)

  await gate.flush() // the audit records (and so the spans) are written out now
  for (const s of spans.getFinishedSpans()) {
    const a = s.attributes
    const why = a['toolgate.reason'] === undefined ? '' : ` (${String(a['toolgate.reason'])})`
    const extra = [
      a['toolgate.validation_errors'] ? ` validation_errors=${String(a['toolgate.validation_errors'])}` : '',
      a['gen_ai.tool.call.id'] === undefined ? '' : ` call=${String(a['gen_ai.tool.call.id'])}`,
    ].join('')
    console.log(`${s.name} ${String(a['gen_ai.tool.name'])} ${String(a['toolgate.outcome'])}${why} coercions=${String(a['toolgate.coercion_count'])}${extra}`)
  }

  await meterProvider.forceFlush()
  const exported = metrics.getMetrics().at(-1)!.scopeMetrics.find((s) => s.scope.name === 'toolgate')!.metrics
  const label = (p: DataPoint<unknown>) => {
    const reason = p.attributes['toolgate.reason']
    return `{outcome=${String(p.attributes['toolgate.outcome'])}${reason === undefined ? '' : `,reason=${String(reason)}`}}`
  }
  for (const m of exported) {
    const points = (m.dataPoints as DataPoint<unknown>[]).map((p) =>
      m.descriptor.name === 'toolgate.decision.duration' ? `${m.descriptor.name}${label(p)} count=${(p as DataPoint<Histogram>).value.count}` : `${m.descriptor.name}${label(p)} ${String(p.value)}`,
    )
    for (const line of points.sort()) console.log(line)
  }
  await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()])
}

void main()
