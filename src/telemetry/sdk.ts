// Thread: any
// The OpenTelemetry SDK, loaded (dynamic import from index.ts) only when tracing is on: a tracer
// provider exporting OTLP/HTTP protobuf in batches, the sampler the OTEL_TRACES_SAMPLER variables name, W3C
// propagation. Nothing is registered globally, no context manager either: the spans this server makes go through
// this module's tracer only, and the contexts travel explicitly, as arguments within a thread, in the RPC message
// between threads and in NATS headers or the node link's request between nodes. (An AsyncLocalStorage would do
// it implicitly, but on Node 20 once a thread has entered one every promise it makes runs a hook, sampled or not.)
import {
  type Attributes,
  type Context,
  isSpanContextValid,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type TextMapSetter,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  SamplingDecision,
  type SamplingResult,
  type SpanExporter,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import type { TelemetryConfig } from './config.js';
import { discardingExporter, warmUp } from './warm-up.js';
import type { SpanKindName, Tracing, TracingIdentity } from './index.js';

const KINDS: Record<SpanKindName, SpanKind> = {
  internal: SpanKind.INTERNAL,
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
};

const setter: TextMapSetter<Record<string, string>> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};
const getter: TextMapGetter<(name: string) => string | undefined> = {
  get: (get, key) => get(key),
  keys: () => ['traceparent', 'tracestate'],
};

function samplerOf(config: TelemetryConfig): Sampler {
  const ratio = new TraceIdRatioBasedSampler(config.OTEL_TRACES_SAMPLER_ARG);
  switch (config.OTEL_TRACES_SAMPLER) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/** The share of new traces (no caller context) that the configured sampler keeps. */
function rootRatioOf(config: TelemetryConfig): number {
  switch (config.OTEL_TRACES_SAMPLER) {
    case 'always_off':
    case 'parentbased_always_off':
      return 0;
    case 'traceidratio':
    case 'parentbased_traceidratio':
      return config.OTEL_TRACES_SAMPLER_ARG;
    default:
      return 1;
  }
}

/**
 * The SDK's sampler: a new trace was already decided by `sampleRoot` before its span was asked for (so an
 * unsampled request makes no span, no ids, nothing): kept; a span with a parent goes to the configured sampler.
 */
class DecidedRoots implements Sampler {
  constructor(private readonly configured: Sampler) {}

  shouldSample(...args: Parameters<Sampler['shouldSample']>): SamplingResult {
    const parent = trace.getSpanContext(args[0]);
    if (parent && isSpanContextValid(parent)) return this.configured.shouldSample(...args);
    return { decision: SamplingDecision.RECORD_AND_SAMPLED };
  }

  toString(): string {
    return `DecidedRoots{${this.configured.toString()}}`;
  }
}

export async function createTracing(config: TelemetryConfig, url: string, identity: TracingIdentity): Promise<Tracing> {
  const resource = resourceFromAttributes({
    'service.name': config.OTEL_SERVICE_NAME,
    'thread.name': identity.thread,
    ...(identity.node ? { 'service.instance.id': identity.node } : {}),
  });
  const providerOf = (exporter: SpanExporter) =>
    new BasicTracerProvider({
      resource,
      sampler: new DecidedRoots(samplerOf(config)),
      spanProcessors: [new BatchSpanProcessor(exporter)],
    });
  const rootRatio = rootRatioOf(config);
  // The same code first on a provider that exports nothing, so that it is optimized before traffic (warm-up.ts).
  await warmUp(tracingOf(providerOf(discardingExporter()), rootRatio));
  return tracingOf(providerOf(new OTLPTraceExporter({ url })), rootRatio);
}

/** A provider's Tracing: the few functions every span of this thread goes through. */
function tracingOf(provider: BasicTracerProvider, rootRatio: number): Tracing {
  const tracer = provider.getTracer('session-actor-runtime');
  const propagator = new W3CTraceContextPropagator();
  const tracing: Tracing = {
    sampleRoot: () => rootRatio >= 1 || Math.random() < rootRatio,
    start(name, kind, attributes, parent, startTime) {
      return tracer.startSpan(name, { kind: KINDS[kind], attributes, startTime }, parent ?? ROOT_CONTEXT);
    },
    contextOf: (span, parent) => trace.setSpan(parent ?? ROOT_CONTEXT, span),
    inject: (carrier, ctx) => propagator.inject(ctx, carrier, setter),
    extract(get) {
      if (get('traceparent') === undefined) return undefined;
      const ctx = propagator.extract(ROOT_CONTEXT, get, getter);
      return trace.getSpanContext(ctx) ? ctx : undefined;
    },
    carrier(ctx) {
      const span = trace.getSpanContext(ctx);
      if (!span) return undefined;
      const parent = `00-${span.traceId}-${span.spanId}-0${span.traceFlags & 1}`;
      const state = span.traceState?.serialize();
      return state ? `${parent} ${state}` : parent;
    },
    fromCarrier(carrier) {
      const space = carrier.indexOf(' ');
      const parent = space < 0 ? carrier : carrier.slice(0, space);
      const state = space < 0 ? undefined : carrier.slice(space + 1);
      return tracing.extract((name) => (name === 'traceparent' ? parent : name === 'tracestate' ? state : undefined));
    },
    spanContextOf: (ctx) => trace.getSpanContext(ctx),
    failed(span, error) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    },
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
  return tracing;
}

export type { Attributes, Context, Span };
