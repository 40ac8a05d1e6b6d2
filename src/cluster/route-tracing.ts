// Thread: main
// The spans of a call routed to another node (nats-router.ts). The caller's span covers the hop;
// its context travels in the NATS message's headers (traceparent, tracestate), or over the node link in the
// request's `trace` field, and the owner's span, and all it runs (the actor host's spans), join that trace.
import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';
import { type Context, type Span, tracing } from '../telemetry/index.js';

export interface RouteTrace {
  span: Span;
  context: Context;
}

export type Hop = RouteTrace | undefined;
/** Says which way the hop went (an attribute of its span). */
export type Took = (via: 'nats' | 'link') => void;

/** Runs one hop to `owner` inside a span under the caller's context `parent` (off, or none: no span). */
export async function tracedHop<T>(
  partition: number,
  owner: string | undefined,
  op: string,
  parent: Context | undefined,
  hop: (trace: Hop, took: Took) => Promise<T>,
): Promise<T> {
  const trace = parent && startRouteSpan(partition, owner, op, parent);
  let via: 'nats' | 'link' = 'nats';
  try {
    const answer = await hop(trace, (used) => void (via = used));
    endRouteSpan(trace, via);
    return answer;
  } catch (error) {
    endRouteSpan(trace, via, error);
    throw error;
  }
}

/** The caller's span of one hop (off: undefined). */
function startRouteSpan(partition: number, owner: string | undefined, op: string, parent: Context): Hop {
  const t = tracing;
  if (!t) return undefined;
  const span = t.start(
    `cluster.route ${op}`,
    'client',
    { 'cluster.partition': partition, 'cluster.owner': owner ?? '' },
    parent,
  );
  return { span, context: t.contextOf(span, parent) };
}

/** The hop's context as NATS message headers. */
export function natsHeadersOf(trace: RouteTrace): MsgHdrs {
  const carrier: Record<string, string> = {};
  tracing?.inject(carrier, trace.context);
  const headers = natsHeaders();
  for (const [name, value] of Object.entries(carrier)) headers.set(name, value);
  return headers;
}

/** The hop's context as the node link's carrier string. */
export function carrierOf(trace: RouteTrace): string | undefined {
  return tracing?.carrier(trace.context);
}

function endRouteSpan(trace: RouteTrace | undefined, via: 'nats' | 'link', error?: unknown): void {
  if (!trace) return;
  trace.span.setAttribute('cluster.via', via);
  if (error !== undefined) tracing?.failed(trace.span, error);
  trace.span.end();
}

/** The caller's context on the owner's side: from the NATS headers, else from the link request's carrier. */
function callerContext(headers: MsgHdrs | undefined, carrier: string | undefined): Context | undefined {
  const t = tracing;
  if (!t) return undefined;
  if (headers?.has('traceparent')) return t.extract((name) => (headers.has(name) ? headers.get(name) : undefined));
  return carrier ? t.fromCarrier(carrier) : undefined;
}

/**
 * Runs the owner's side of a routed call in a span under the caller's context, `run` given the span's context
 * for the calls it makes (off, or the caller sent none: `run(undefined)`); an answer that carries an error marks
 * the span failed.
 */
export async function inServeSpan<T extends object>(
  request: { kind: string; op: string; actorId: string; trace?: string },
  headers: MsgHdrs | undefined,
  run: (trace: Context | undefined) => Promise<T>,
): Promise<T> {
  const t = tracing;
  const caller = callerContext(headers, request.trace);
  if (!t || !caller) return run(undefined);
  const attributes = { 'actor.kind': request.kind, 'actor.id': request.actorId, 'cluster.op': request.op };
  const span = t.start('cluster.serve', 'server', attributes, caller);
  try {
    const answer = await run(t.contextOf(span, caller));
    if ('error' in answer) t.failed(span, (answer as { error: { message: string } }).error.message);
    return answer;
  } finally {
    span.end();
  }
}
