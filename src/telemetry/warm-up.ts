// Thread: any
// Runs a sampled request's tracing calls some thousands of times when a thread's tracing starts, on a
// provider that exports nothing, so that V8 has optimized the SDK's code before real traffic. At 1% sampling a
// thread starts some tens of spans a second: too few for V8 to optimize startSpan and Span.end for minutes, and run
// that rarely and unoptimized a sampled USSD step's spans took about 20 times the CPU they take at 100% (profiled:
// tracing was 4.3-5.4% of the threads' samples at 1% against 22% at 100%). Warmed: 3.1-4.0% the same run. The
// functions are the ones the real provider runs: the SDK's classes, and tracingOf's closures (one site, one
// feedback). About 0.2 s of CPU per thread, once.
import { ExportResultCode } from '@opentelemetry/core';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Tracing } from './index.js';

/** Enough for V8 to optimize startSpan, Span.end, the contexts and the propagator (seen with --trace-opt). */
export const WARM_UP_ROUNDS = 2000;
/** Spans of a chunk stay within the batch processor's queue (2048), so none is dropped before it is exported. */
const CHUNK = 250;

/** An exporter that takes every batch and sends nothing. */
export function discardingExporter(): SpanExporter {
  return {
    export: (_spans, done) => done({ code: ExportResultCode.SUCCESS }),
    shutdown: () => Promise.resolve(),
  };
}

/** Runs `rounds` sampled requests' calls through `warm` (a Tracing on a discarding exporter), then shuts it down. */
export async function warmUp(warm: Tracing, rounds = WARM_UP_ROUNDS): Promise<void> {
  for (let done = 0; done < rounds; done += CHUNK) {
    for (let i = done; i < Math.min(rounds, done + CHUNK); i++) oneRequest(warm, i);
    await warm.flush();
  }
  await warm.shutdown();
}

/** What one sampled request does on both sides of the thread hop: spans, contexts, carrier, headers, a link. */
function oneRequest(t: Tracing, i: number): void {
  t.sampleRoot();
  const root = t.start('warm-up', 'server', { 'http.request.method': 'POST', 'http.route': '/warm-up' }, undefined);
  const context = t.contextOf(root);
  const remote = t.fromCarrier(t.carrier(context)!)!;
  const call = t.start('warm-up call', 'internal', { 'actor.kind': 'warm-up', 'actor.host': i }, remote);
  const inCall = t.contextOf(call, remote);
  const ended = Date.now();
  const commit = t.start('warm-up commit', 'internal', { 'lmdb.records': 1, 'lmdb.sync_ms': 0.5 }, inCall, ended - 1);
  const link = t.spanContextOf(context);
  if (link) commit.addLink({ context: link });
  commit.end(ended);
  const headers: Record<string, string> = {};
  t.inject(headers, inCall);
  t.extract((name) => headers[name]);
  call.setAttributes({ 'actor.queued_ms': 0.1, 'actor.running_ms': 0.2 });
  call.end();
  root.setAttribute('http.response.status_code', 200);
  root.end();
}
