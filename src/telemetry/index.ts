// Thread: any
// Tracing's front: `tracing` is undefined when it is off (no OTLP endpoint), and every caller's
// fast path is that one check; the SDK (sdk.ts) is imported only when it is on. Each thread that makes spans
// starts its own (the main thread in server.ts, each actor host in workers/actor-host.ts), exporting to the same
// collector: finished spans are batched and sent from the thread that made them, so the front door's thread does
// not pay for the actor hosts' spans. Contexts cross threads as a compact carrier string inside the RPC message
// (`carrier` / `fromCarrier`), and nodes as W3C headers (`inject` / `extract`). Within a thread they are passed
// explicitly, as arguments (a request's `trace`, an actor call's `trace`): no context manager is registered, so
// no async hook runs on any promise, sampled or not. An undefined context means "not in a recorded trace":
// nothing is made for it.
import type { Attributes, Context, Span, SpanContext } from '@opentelemetry/api';
import { type TelemetryConfig, tracesUrl } from './config.js';

export type { Attributes, Context, Span } from '@opentelemetry/api';
export type SpanKindName = 'server' | 'client' | 'internal' | 'producer' | 'consumer';

/** Where this thread's spans come from (resource attributes). */
export interface TracingIdentity {
  /** `main`, or `actor-host-<n>`. */
  thread: string;
  /** Cluster mode: the node's id (service.instance.id). */
  node?: string;
}

export interface Tracing {
  /**
   * Whether a new trace (no caller context) starting now is recorded: the configured sampler's ratio, decided
   * before any span is made, so that an unsampled request makes none. Ask it before starting a root span.
   */
  sampleRoot(): boolean;
  /** Starts a span under `parent` (undefined or null: a new trace, recorded: ask sampleRoot first). */
  start(name: string, kind: SpanKindName, attributes?: Attributes, parent?: Context | null, startTime?: number): Span;
  /** `parent` (undefined: a new trace) with `span` as its current span: what the span's callees are given. */
  contextOf(span: Span, parent?: Context): Context;
  /** Writes the W3C headers (traceparent, tracestate) of `ctx` into `carrier`. */
  inject(carrier: Record<string, string>, ctx: Context): void;
  /** The remote context W3C headers name; undefined when there is none or it is malformed. */
  extract(get: (name: string) => string | undefined): Context | undefined;
  /** A thread hop's carrier: `traceparent[ tracestate]` of `ctx`. */
  carrier(ctx: Context): string | undefined;
  fromCarrier(carrier: string): Context | undefined;
  /** The span context `ctx` holds (for a link). */
  spanContextOf(ctx: Context): SpanContext | undefined;
  /** Marks `span` failed with `error`. */
  failed(span: Span, error: unknown): void;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** This thread's tracing; undefined when off. */
export let tracing: Tracing | undefined;
let users = 0;

/**
 * Turns tracing on for this thread when `config` names an endpoint (returns false, loading nothing, otherwise).
 * Started twice in one thread (two servers in one test process), the first start's tracing is shared.
 */
export async function startTracing(config: TelemetryConfig, identity: TracingIdentity): Promise<boolean> {
  const url = tracesUrl(config);
  if (!url) return false;
  if (!tracing) {
    const { createTracing } = await import('./sdk.js');
    const created = await createTracing(config, url, identity);
    // Another start of this thread finished first (its warm-up too): the one kept is that one.
    if (tracing) await created.shutdown();
    else tracing = created;
  }
  users++;
  return true;
}

/** Flushes this thread's spans; the last user's stop shuts the SDK down. */
export async function stopTracing(): Promise<void> {
  const current = tracing;
  if (!current || users === 0) return;
  if (--users > 0) return current.flush();
  tracing = undefined;
  await current.shutdown();
}

/**
 * Runs `fn` inside a child span of `parent`, ended when it settles (failed when it throws); `fn` is given the span
 * and the context its own callees take. Off, or no parent (outside any recorded trace): `fn` alone.
 */
export function inSpan<T>(
  name: string,
  parent: Context | undefined,
  attributes: Attributes | undefined,
  fn: (span: Span | undefined, trace: Context | undefined) => T,
  kind: SpanKindName = 'internal',
): T {
  const t = tracing;
  if (!t || !parent) return fn(undefined, undefined);
  const span = t.start(name, kind, attributes, parent);
  let result: T;
  try {
    result = fn(span, t.contextOf(span, parent));
  } catch (error) {
    t.failed(span, error);
    span.end();
    throw error;
  }
  if (result instanceof Promise) {
    return result.then(
      (value) => (span.end(), value),
      (error: unknown) => {
        t.failed(span, error);
        span.end();
        throw error;
      },
    ) as T;
  }
  span.end();
  return result;
}
