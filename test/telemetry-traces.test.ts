// Tracing end to end on one node: a real server exporting OTLP/HTTP protobuf to a receiver that decodes it with the
// official protos (helpers/otlp-receiver.ts). A USSD step is one trace, HTTP -> actor -> LMDB commit, parented
// across the worker-thread boundary, on both engines; a caller's traceparent is continued; parent-based ratio
// sampling follows the caller's decision; a chat turn's trace holds its provider calls, its tool call and its SSE
// stream, and the LLM server receives the provider call's context.
import t from 'tap';
import { createRequire } from 'node:module';
import { OtlpReceiver, type ReceivedSpan } from './helpers/otlp-receiver.js';
import { startTestServer } from './helpers/server.js';
import { createSession, newUser, openStream, sseEvents, type SseItem, startOracleServer } from './helpers/oracle.js';
import { chunk, sse, startLlmStandIn } from './oracle-agent-llm-stand-in.js';

// The SDK's own variable (read from the process environment by every thread's BatchSpanProcessor): export soon.
process.env.OTEL_BSP_SCHEDULE_DELAY = '50';

const receiver = await OtlpReceiver.start();
t.teardown(() => receiver.close());

const tracingEnv = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'sar-test' };
const dial = (sessionId: string) => ({
  sessionId,
  serviceCode: '*384*123#',
  phoneNumber: '+254700000001',
  text: '',
});

async function postUssd(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}/api/ussd`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

const named = (spans: ReceivedSpan[], name: string) => spans.filter((span) => span.name === name);
const childOf = (spans: ReceivedSpan[], parent: ReceivedSpan) =>
  spans.filter((span) => span.parentSpanId === parent.spanId && span.traceId === parent.traceId);
/** The trace of the HTTP span whose request id is `requestId`, once its LMDB commit arrived. */
async function ussdTrace(requestId: string): Promise<ReceivedSpan[]> {
  const spans = await receiver.waitFor(`the trace of ${requestId}`, (spans) => {
    const http = spans.find((span) => span.attributes['http.request_id'] === requestId);
    return http !== undefined && receiver.trace(http.traceId).some((span) => span.name === 'lmdb.commit');
  });
  const http = spans.find((span) => span.attributes['http.request_id'] === requestId)!;
  return receiver.trace(http.traceId);
}

for (const engine of ['node', 'auto'] as const) {
  t.test(`a USSD step is one trace: HTTP -> actor -> LMDB commit (engine ${engine})`, async (t) => {
    const server = await startTestServer(t, { env: { ...tracingEnv, HTTP_ENGINE: engine } });
    const answer = await postUssd(server.url, dial(`trace-${engine}`), { 'x-request-id': `ussd-${engine}` });
    t.equal(answer.status, 200);
    t.match(answer.text, /^CON /);
    const trace = await ussdTrace(`ussd-${engine}`);

    const [http] = named(trace, 'POST /api/ussd');
    t.ok(http, 'the HTTP span');
    t.equal(http.parentSpanId, '', 'a new trace: the caller sent no traceparent');
    t.equal(http.kind, 2, 'SPAN_KIND_SERVER');
    t.match(http.attributes, {
      'http.route': '/api/ussd',
      'http.request.method': 'POST',
      'http.response.status_code': 200,
      'http.engine': server.http.engine.name,
    });
    t.match(http.resource, { 'service.name': 'sar-test', 'thread.name': 'main' });

    const [actor] = childOf(trace, http);
    t.ok(actor, 'the actor call is the HTTP span child, across the thread boundary');
    t.match(actor.name, /^actor send /);
    t.match(actor.resource, { 'thread.name': 'actor-host-0' });
    t.equal(actor.attributes['actor.host'], 0);
    t.equal(actor.attributes['actor.id'], `trace-${engine}`);
    t.type(actor.attributes['actor.queued_ms'], 'number');
    t.ok((actor.attributes['actor.running_ms'] as number) > 0, 'time running');
    t.ok(actor.startMs >= http.startMs && actor.endMs <= http.endMs, 'inside the request');

    const [commit] = named(trace, 'lmdb.commit');
    t.equal(commit.parentSpanId, actor.spanId, 'the commit is the actor call child');
    t.ok((commit.attributes['lmdb.records'] as number) >= 1);
    t.type(commit.attributes['lmdb.sync_ms'], 'number');
    t.ok(commit.endMs <= actor.endMs + 0.5, 'committed before the actor answered');
    // Each thread ran its warm-up's thousands of spans (telemetry/warm-up.ts) before this step: none was exported.
    t.same(
      receiver.spans.filter((span) => span.name.startsWith('warm-up')),
      [],
      'no warm-up span reaches the collector',
    );
  });
}

t.test('a caller traceparent is continued, its tracestate kept', async (t) => {
  const server = await startTestServer(t, { env: tracingEnv });
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const callerSpan = '00f067aa0ba902b7';
  await postUssd(server.url, dial('trace-parented'), {
    'x-request-id': 'ussd-parented',
    traceparent: `00-${traceId}-${callerSpan}-01`,
    tracestate: 'vendor=opaque',
  });
  const trace = await ussdTrace('ussd-parented');
  const [http] = named(trace, 'POST /api/ussd');
  t.equal(http.traceId, traceId, "the caller's trace");
  t.equal(http.parentSpanId, callerSpan, "the caller's span is the parent");
  t.ok(named(trace, 'lmdb.commit').length === 1, 'the actor host joined the same trace');
  t.same(
    trace.map((span) => span.traceState),
    trace.map(() => 'vendor=opaque'),
    'every span, on both threads, carries the caller tracestate',
  );
  // A malformed traceparent is ignored (a new trace), never an error.
  const bad = await postUssd(server.url, dial('trace-bad'), { traceparent: 'not-a-traceparent' });
  t.equal(bad.status, 200);
});

t.test('parent-based ratio sampling: ratio 0 samples nothing of its own, a sampled caller is followed', async (t) => {
  const server = await startTestServer(t, {
    env: { ...tracingEnv, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' },
  });
  const before = receiver.spans.length;
  await postUssd(server.url, dial('unsampled'), { 'x-request-id': 'ussd-unsampled' });
  const sampledTrace = '0af7651916cd43dd8448eb211c80319c';
  await postUssd(server.url, dial('sampled'), {
    'x-request-id': 'ussd-sampled',
    traceparent: `00-${sampledTrace}-b7ad6b7169203331-01`,
  });
  await ussdTrace('ussd-sampled');
  await server.shutdown(); // flushes every thread's spans
  const spans = receiver.spans.slice(before);
  t.same([...new Set(spans.map((span) => span.traceId))], [sampledTrace], 'only the sampled caller trace');
  t.notOk(
    spans.some((span) => span.attributes['http.request_id'] === 'ussd-unsampled'),
    'the unsampled step sent nothing',
  );
});

t.test('the SDK is loaded in this process once tracing is on', async (t) => {
  const cache = Object.keys(createRequire(import.meta.url).cache);
  t.ok(
    cache.some((path) => path.includes('sdk-trace-base')),
    'the check telemetry-off.test.ts relies on works',
  );
});

const toolCall = (id: string, name: string, args: string) =>
  chunk({ tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: args } }] });

t.test('a chat turn: provider calls, the tool call and the SSE stream in one trace', async (t) => {
  const llm = await startLlmStandIn();
  t.teardown(() => llm.close());
  const server = await startOracleServer(t, { env: { ...tracingEnv, LLM_BASE_URL: llm.baseUrl } });
  const ada = await newUser(server.oracleDid);
  const sessionId = await createSession(server, ada);
  llm.script(
    sse([toolCall('call_1', 'set_user_preferences', '{"userName":"Ada"}'), chunk({}, 'tool_calls')]),
    sse([chunk({ content: 'Hello ' }), chunk({ content: 'Ada.' }, 'stop')]),
  );
  // Every frame the client receives, the run's own (`run`, first) included.
  const items: SseItem[] = [];
  for await (const item of sseEvents(await openStream(server, ada, sessionId, { message: 'call me Ada' }), true))
    items.push(item);
  t.equal(items.at(-1)?.event, 'done');

  const spans = await receiver.waitFor('the chat turn', (spans) => {
    const stream = spans.find((span) => span.name === 'sse.stream');
    if (stream === undefined) return false;
    // The host thread and the main thread export on their own schedules: wait for both.
    const trace = receiver.trace(stream.traceId);
    return (
      trace.filter((s) => s.name === 'llm.call').length === 2 &&
      trace.some((s) => s.name.startsWith('actor stream ')) &&
      trace.some((s) => s.name.startsWith('actor signal '))
    );
  });
  const stream = spans.find((span) => span.name === 'sse.stream')!;
  const trace = receiver.trace(stream.traceId);
  const [http] = named(trace, 'POST /messages/:sessionId');
  t.ok(http, 'the HTTP span of the message');
  t.equal(stream.parentSpanId, http.spanId, 'the stream is the request child');
  t.match(stream.attributes, { 'sse.ended': 'server_end' });
  t.comment(`stream: ${JSON.stringify(stream.attributes)}, ${items.length} frames read`);
  t.equal(stream.attributes['sse.frames'], items.length, 'its frames, each one the client read (not its writes)');
  t.ok((stream.attributes['sse.bytes'] as number) > 0, 'its bytes');

  const [actor] = trace.filter((span) => span.name.startsWith('actor stream '));
  t.ok(actor, 'the actor stream span');
  t.equal(actor.parentSpanId, http.spanId);
  // The message first stops any turn in flight: a signal, outside the mailbox, with a span like a call's.
  const [signal] = trace.filter((span) => span.name.startsWith('actor signal '));
  t.ok(signal, 'the superseding signal has a span');
  t.equal(signal.parentSpanId, http.spanId, 'the request child, across the thread boundary');
  t.match(signal.resource, { 'thread.name': 'actor-host-0' });
  t.match(signal.attributes, { 'actor.id': sessionId, 'actor.host': 0, 'actor.delivered': true });
  t.ok(signal.startMs <= actor.startMs, 'it reached the host before the turn');
  const calls = named(trace, 'llm.call');
  t.same(calls.map((call) => call.attributes['llm.step']).sort(), [1, 2], 'two provider calls');
  const byId = new Map(trace.map((span) => [span.spanId, span]));
  const underActor = (span: ReceivedSpan) => {
    for (let up = byId.get(span.parentSpanId); up; up = byId.get(up.parentSpanId)) if (up === actor) return true;
    return false;
  };
  t.ok(calls.every(underActor), 'the provider calls run under the actor');
  const [tool] = named(trace, 'tool.call');
  t.match(tool.attributes, { 'tool.name': 'set_user_preferences', 'tool.status': 'done' });
  t.ok(underActor(tool), 'the tool call runs under the actor');

  // The LLM server received each provider call's context.
  const sent = llm.requests.map((request) => request.headers.traceparent as string);
  t.same(
    sent.map((header) => header?.split('-')[2]).sort(),
    calls.map((call) => call.spanId).sort(),
    "each request's traceparent names its provider call span",
  );
  t.ok(
    sent.every((header) => header.split('-')[1] === stream.traceId),
    'in the same trace',
  );
});
