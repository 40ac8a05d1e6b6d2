// /metrics of the oracle face: UCAN cache hits and misses, event-channel sockets and the events they were sent,
// open SSE streams; each moved by exactly what the test did.
import t from 'tap';
import { closeAll, invocationOf, NativeClient } from './helpers/events.js';
import { scrape } from './helpers/metrics.js';
import {
  call,
  createSession,
  eventually,
  newUser,
  openStream,
  sseEvents,
  startOracleServer,
} from './helpers/oracle.js';
import { chunk, startLlmStandIn } from './oracle-agent-llm-stand-in.js';

t.test('UCAN verifications, event-channel sockets and SSE streams', async (t) => {
  const llm = await startLlmStandIn();
  t.teardown(() => llm.close());
  const server = await startOracleServer(t, { env: { LLM_BASE_URL: llm.baseUrl } });
  const ada = await newUser(server.oracleDid);
  const before = await scrape(server.url);
  const delta = async (name: string, labels: Record<string, string> = {}) =>
    (await scrape(server.url)).value(name, labels) - before.value(name, labels);

  // One invocation: verified once (a miss), then served from the cache.
  const sessionId = await createSession(server, ada);
  const GETS = 3;
  for (let i = 0; i < GETS; i++) t.equal((await call(server, 'GET', '/sessions', { user: ada })).status, 200);
  t.equal(await delta('ucan_verifications_total', { cache: 'miss' }), 1);
  t.equal(await delta('ucan_verifications_total', { cache: 'hit' }), GETS);

  // A WebSocket: `connected` and one `pong` sent to it.
  const socket = await NativeClient.connect(server.url, { sessionId, invocation: invocationOf(ada) });
  closeAll(t, socket);
  await socket.sync();
  t.equal(await delta('ws_connections_active', { transport: 'websocket' }), 1);
  t.equal(await delta('ws_events_sent_total', { transport: 'websocket' }), 2);
  t.equal(await delta('ucan_verifications_total', { cache: 'hit' }), GETS + 1, 'the handshake hit the cache');
  socket.close();
  await eventually(
    async () => (await delta('ws_connections_active', { transport: 'websocket' })) === 0,
    'the socket to be counted closed',
  );

  // An SSE stream held open by the model: counted while open, and as one request once answered.
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  llm.script(async (res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`data: ${JSON.stringify(chunk({ content: 'Hello ' }))}\n\n`);
    await released;
    res.end(`data: ${JSON.stringify(chunk({ content: 'world.' }, 'stop'))}\n\ndata: [DONE]\n\n`);
  });
  const events = sseEvents(await openStream(server, ada, sessionId, { message: 'hello' }));
  for (let next = await events.next(); next.value?.event !== 'message'; next = await events.next()) {
    if (next.done) throw new Error('the stream ended before its first message frame');
  }
  t.equal(await delta('sse_streams_active'), 1);
  t.equal(await delta('http_requests_total', { route: '/messages/:sessionId', method: 'POST', status: '200' }), 1);
  release();
  for await (const item of events) void item;
  await eventually(async () => (await delta('sse_streams_active')) === 0, 'the stream to be counted closed');
});
