// Tracing through a 3-node cluster: three real server processes on a real 3-server NATS cluster, exporting to one
// OTLP receiver (official protos). A USSD step sent to a node that does not own its session's partition is one
// trace: the entry node's HTTP and hop spans, then the owner's serve span, its actor host's actor call and journal
// append, correctly parented. Node 3 has no node link, so calls from it travel over NATS with the context in the
// message headers; node 1 calls node 2 over node 2's link, the context in the request.
import t from 'tap';
import { OtlpReceiver, type ReceivedSpan } from './helpers/otlp-receiver.js';
import { startTestNodes } from './helpers/cluster-nodes.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';

t.setTimeout(240_000);

const receiver = await OtlpReceiver.start();
t.teardown(() => receiver.close());
const nats = await startTestNatsCluster(t);
const cluster = await startTestNodes(t, nats, {
  env: {
    RATE_LIMIT_ALLOWLIST: '127.0.0.1',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_SERVICE_NAME: 'sar-cluster',
    OTEL_BSP_SCHEDULE_DELAY: '50',
  },
  nodeEnv: (index): Record<string, string> => (index === 2 ? { CLUSTER_LINK: 'false' } : {}),
});
const [first, , third] = cluster.nodes;

const byName = (trace: ReceivedSpan[], name: string) => trace.find((span) => span.name.startsWith(name));
const nodeOf = (span: ReceivedSpan) => span.resource['service.instance.id'];

/**
 * Sends first screens of new sessions to `node` until one is routed `via` another node (a bounded number of tries:
 * each session's owner is one of three), and returns that step's whole trace once its journal append arrived.
 */
async function routedTrace(node: { url: string }, via: 'nats' | 'link', tag: string): Promise<ReceivedSpan[]> {
  for (let i = 0; i < 30; i++) {
    const requestId = `${tag}-${i}`;
    const res = await fetch(`${node.url}/api/ussd`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': requestId },
      body: JSON.stringify({ sessionId: requestId, serviceCode: '*384#', phoneNumber: '+254700000009', text: '' }),
    });
    t.equal(res.status, 200, `step ${requestId} answered`);
    await res.text();
    // Every step's HTTP span arrives (its trace then holds a hop, or a local actor call).
    const spans = await receiver.waitFor(requestId, (spans) =>
      spans.some((span) => span.attributes['http.request_id'] === requestId),
    );
    const http = spans.find((span) => span.attributes['http.request_id'] === requestId)!;
    const hop = await receiver.waitFor(`${requestId}'s actor call`, () =>
      receiver.trace(http.traceId).some((span) => span.name.startsWith('actor send')),
    );
    const route = hop.find((span) => span.traceId === http.traceId && span.name.startsWith('cluster.route'));
    if (!route || route.attributes['cluster.via'] !== via) continue;
    await receiver.waitFor(`${requestId}'s journal append`, () =>
      receiver.trace(http.traceId).some((span) => span.name === 'journal.append'),
    );
    // Each thread and node exports on its own schedule: the owner's main-thread span may come after its host's.
    await receiver.waitFor(`${requestId}'s serve span`, () =>
      receiver.trace(http.traceId).some((span) => span.name.startsWith('cluster.serve')),
    );
    return receiver.trace(http.traceId);
  }
  throw new Error(`no step of 30 went ${via} to another node`);
}

for (const [via, entry] of [
  ['nats', third],
  ['link', first],
] as const) {
  t.test(`a step sent to a non-owner is one trace across two nodes (${via})`, async (t) => {
    const trace = await routedTrace(entry, via, `trace-${via}`);
    const http = byName(trace, 'POST /api/ussd')!;
    const route = byName(trace, 'cluster.route')!;
    const serve = byName(trace, 'cluster.serve')!;
    const actor = byName(trace, 'actor send')!;
    const append = byName(trace, 'journal.append')!;
    t.equal(http.parentSpanId, '', 'the trace starts at the entry node');
    t.equal(nodeOf(http), entry.nodeId);
    t.equal(route.parentSpanId, http.spanId, 'the hop is the request child');
    t.equal(nodeOf(route), entry.nodeId);
    t.equal(route.kind, 3, 'SPAN_KIND_CLIENT');
    t.equal(serve.parentSpanId, route.spanId, "the owner's span joins the caller's trace");
    t.not(nodeOf(serve), entry.nodeId, 'on another node');
    t.equal(serve.resource['thread.name'], 'main');
    t.equal(actor.parentSpanId, serve.spanId, "the owner's actor call is its serve span child");
    t.equal(nodeOf(actor), nodeOf(serve));
    t.equal(actor.resource['thread.name'], 'actor-host-0');
    t.equal(append.parentSpanId, actor.spanId, 'the journal append is the actor call child');
    t.ok((append.attributes['journal.records'] as number) >= 1);
    t.equal(new Set(trace.map(nodeOf)).size, 2, 'spans from two nodes');
    const start = http.startMs;
    const row = (span: ReceivedSpan) =>
      `+${(span.startMs - start).toFixed(2)} ${(span.endMs - span.startMs).toFixed(2)} ms ${nodeOf(span)} ` +
      `${span.resource['thread.name']} ${span.name} ${JSON.stringify(span.attributes)}`;
    t.comment(
      [...trace]
        .sort((a, b) => a.startMs - b.startMs)
        .map(row)
        .join('\n'),
    );
  });
}
