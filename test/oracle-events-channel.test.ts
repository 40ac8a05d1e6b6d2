// The event channel's own events on both transports: connected, ping/pong, status, list-events /
// available-events, subscribe / subscribed (really following another of the user's sessions), the events of
// a reply (router_update, reasoning, tool_call, message_cache_invalidation), fan-out to every socket of a
// session and to no other, malformed frames answered with `error`, oversize frames and idle sockets closed,
// Socket.IO's long-polling transport beside the front door's routes.
import t from 'tap';
import { CLIENT_EVENTS, SERVER_EVENTS } from '../dist/src/oracle/events/catalogue.js';
import { closeAll, invocationOf, NativeClient, SocketIoClient } from './helpers/events.js';
import { call, createSession, newUser, openStream, readSse, startOracleServer } from './helpers/oracle.js';

// The shortest idle timeout uWS allows, so the idle test is quick; live clients answer the pings meanwhile.
const server = await startOracleServer(t, { env: { WS_MAX_PAYLOAD_BYTES: '4096', WS_IDLE_TIMEOUT_SECONDS: '8' } });
const ada = await newUser(server.oracleDid);
const bob = await newUser(server.oracleDid);
const adaInvocation = invocationOf(ada);

const native = (sessionId: string, invocation = adaInvocation) =>
  NativeClient.connect(server.url, { sessionId, invocation });
const socketIo = (sessionId: string, invocation = adaInvocation, transports?: ('websocket' | 'polling')[]) =>
  SocketIoClient.connect(server.url, { sessionId }, { invocation }, { transports });

t.test('connected, ping/pong, status, list-events on the native socket and on Socket.IO', async (t) => {
  const sessionId = await createSession(server, ada);
  const ws = await native(sessionId);
  const sio = await socketIo(sessionId);
  closeAll(t, ws, sio);
  t.match(
    ws.inbox.all[0],
    { event: 'connected', data: { message: 'Connected successfully', sessionId, timestamp: String } },
    'connected first',
  );
  t.match(sio.inbox.all[0], { event: 'connected', data: { message: 'Connected successfully', sessionId } });

  for (const client of [ws, sio]) {
    client.send('ping');
    t.match(await client.take('pong'), { sessionId, timestamp: String });

    client.send('status');
    const status = await client.take('status');
    t.match(status, { connected: true, sessionId, timestamp: String });
    t.ok(status.activeSessions >= 1 && status.totalConnections >= 2, 'counts both transports');

    client.send('list-events');
    const catalogue = await client.take('available-events');
    t.same(catalogue.clientEvents, CLIENT_EVENTS);
    t.same(catalogue.serverEvents, SERVER_EVENTS);
    t.equal(catalogue.sessionId, sessionId);
  }
  for (const name of [
    'tool_call',
    'action_call',
    'render_component',
    'browser_tool_call',
    'router_update',
    'message_cache_invalidation',
    'reasoning',
  ]) {
    t.ok(SERVER_EVENTS.includes(name as never), `${name} is in the catalogue`);
  }

  // Statistics follow the sockets: one more session with a socket.
  const other = await native(await createSession(server, ada));
  ws.send('status');
  const after = await ws.take('status');
  t.equal(after.totalConnections, 3);
  other.close();
  await other.closed;
  await ws.sync();
  ws.send('status');
  t.equal((await ws.take('status')).totalConnections, 2, 'a closed socket leaves the count');
});

t.test('a reply is told to every socket of its session, and to no other session', async (t) => {
  const sessionId = await createSession(server, ada);
  const otherSession = await createSession(server, ada);
  const [ws1, ws2, sio] = [await native(sessionId), await native(sessionId), await socketIo(sessionId)];
  const [elsewhereWs, elsewhereSio] = [await native(otherSession), await socketIo(otherSession)];
  closeAll(t, ws1, ws2, sio, elsewhereWs, elsewhereSio);

  // A server tool runs in the reply (set_user_preferences), so tool_call events are part of it.
  const res = await openStream(server, ada, sessionId, { message: 'call me Ada please' });
  const frames = await readSse(res);
  t.equal(frames.at(-1)!.event, 'done');
  const requestId = res.headers.get('x-request-id');

  for (const client of [ws1, ws2, sio]) {
    const invalidation = await client.take('message_cache_invalidation');
    t.match(invalidation, { sessionId, requestId, status: 'done' }, 'after the reply is stored');
    const names = client.inbox.names();
    t.ok(names.indexOf('router_update') < names.indexOf('tool_call'), 'the agent step is announced first');
    const [start, end] = [await client.take('tool_call'), await client.take('tool_call')];
    t.match(start, {
      sessionId,
      requestId,
      toolName: 'toolCall',
      args: { toolName: 'set_user_preferences', userName: 'Ada' },
      status: 'isRunning',
    });
    t.match(end, { status: 'done', eventId: start.eventId, output: String });
    t.match(await client.take('reasoning'), { sessionId, requestId, isComplete: false });
    const steps = [
      await client.take('router_update'),
      await client.take('router_update'),
      await client.take('router_update'),
    ].map((u) => u.step);
    t.same(steps, ['agent', 'tools', 'agent'], 'model, tools, model again');
  }
  // Everything sent to the other session's sockets so far has arrived after a round trip: none of it.
  await elsewhereWs.sync();
  await elsewhereSio.sync();
  t.same(elsewhereWs.inbox.names(), ['connected', 'pong'], "another session's native socket heard nothing");
  t.same(elsewhereSio.inbox.names(), ['connected', 'pong'], "another session's Socket.IO socket heard nothing");

  // A JSON (non-streamed) reply is told over the channel too.
  const json = await call(server, 'POST', `/messages/${sessionId}`, { user: ada, body: { message: 'hello' } });
  t.equal(json.status, 200);
  t.match(await ws1.take('message_cache_invalidation'), { sessionId, status: 'done' });
});

t.test("subscribe follows another of the user's sessions; never someone else's", async (t) => {
  const home = await createSession(server, ada);
  const second = await createSession(server, ada);
  const bobs = await createSession(server, bob);
  const ws = await native(home);
  const sio = await socketIo(home);
  closeAll(t, ws, sio);

  ws.send('subscribe');
  t.match(await ws.take('subscribed'), { sessionId: home, subscriptions: [home] }, 'its own session without data');
  for (const client of [ws, sio]) {
    client.send('subscribe', { sessionId: second });
    t.match(await client.take('subscribed'), { sessionId: second, subscriptions: [home, second] });
    client.send('subscribe', { sessionId: bobs });
    t.match(
      await client.take('error'),
      { message: 'Session not found', event: 'subscribe' },
      "Bob's session is refused",
    );
    client.send('subscribe', { sessionId: 42 });
    t.match(await client.take('error'), { message: /^Invalid subscribe: sessionId/, event: 'subscribe' });
  }

  await call(server, 'POST', `/messages/${second}`, { user: ada, body: { message: 'hi from the second session' } });
  t.match(
    await ws.take('message_cache_invalidation'),
    { sessionId: second },
    'the subscribed session reaches the native socket',
  );
  t.match(await sio.take('message_cache_invalidation'), { sessionId: second }, 'and the Socket.IO socket');

  await call(server, 'POST', `/messages/${bobs}`, { user: bob, body: { message: 'bob talks' } });
  await ws.sync();
  t.notOk(
    ws.inbox.all.some((item) => item.data?.sessionId === bobs),
    "nothing of Bob's session",
  );
});

t.test('malformed frames get an error event; the socket stays usable', async (t) => {
  const sessionId = await createSession(server, ada);
  const ws = await native(sessionId);
  const sio = await socketIo(sessionId);
  closeAll(t, ws, sio);

  ws.sendRaw('not json');
  t.match(await ws.take('error'), { message: /^Malformed frame: not JSON/ });
  ws.sendRaw(Buffer.from([1, 2, 3]));
  t.match(await ws.take('error'), { message: /^Frames must be JSON text/ });
  ws.sendRaw('[1,2]');
  t.match(await ws.take('error'), { message: /^Malformed frame/ });
  ws.sendRaw('{"data":{}}');
  t.match(await ws.take('error'), { message: /^Malformed frame: event/ });
  ws.sendRaw('{"event":""}');
  t.match(await ws.take('error'), { message: /^Malformed frame: event should not be empty/ });
  ws.send('teleport', { to: 'mars' });
  t.match(await ws.take('error'), { message: /^Unknown event "teleport"/, event: 'teleport' });
  ws.send('tool_result', { result: 1 });
  t.match(await ws.take('error'), { message: 'Invalid tool_result: toolCallId is required', event: 'tool_result' });
  ws.send('action_call_result', 'nope');
  t.match(await ws.take('error'), { message: /^Invalid action_call_result: data must be an object/ });

  sio.send('teleport');
  t.match(await sio.take('error'), { message: /^Unknown event "teleport"/ });
  sio.send('tool_result', { toolCallId: ['x'] });
  t.match(await sio.take('error'), { message: /^Invalid tool_result: toolCallId must be a string/ });

  for (const client of [ws, sio]) await client.sync();
  t.pass('both sockets still answer');
});

t.test('a frame over WS_MAX_PAYLOAD_BYTES closes the socket; the server goes on', async (t) => {
  const sessionId = await createSession(server, ada);
  const ws = await native(sessionId);
  const sio = await socketIo(sessionId);
  closeAll(t, ws, sio);

  ws.send('tool_result', { toolCallId: 'x', result: 'x'.repeat(5000) });
  const { code } = await ws.closed;
  t.not(code, 1000, `closed as an error (${code})`);

  const disconnected = new Promise<string>((resolve) => sio.socket.once('disconnect', resolve));
  sio.send('tool_result', { toolCallId: 'x', result: 'x'.repeat(5000) });
  t.match(await disconnected, /transport (close|error)/, 'Socket.IO closes the connection');

  const again = await native(sessionId);
  await again.sync();
  again.close();
  t.pass('new sockets are accepted');
});

t.test('Socket.IO over long-polling (through the front door, not its 404)', async (t) => {
  const sessionId = await createSession(server, ada);
  const polling = await socketIo(sessionId, adaInvocation, ['polling']);
  closeAll(t, polling);
  polling.send('ping');
  t.match(await polling.take('pong'), { sessionId });
  await call(server, 'POST', `/messages/${sessionId}`, { user: ada, body: { message: 'over polling' } });
  t.match(await polling.take('message_cache_invalidation'), { sessionId }, 'room events reach a polling socket');

  const preflight = await fetch(`${server.url}/socket.io/?EIO=4&transport=polling`, {
    method: 'OPTIONS',
    headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
  });
  t.equal(preflight.status, 204, 'preflight answered');
  t.equal(preflight.headers.get('access-control-allow-origin'), '*');
  const open = await fetch(`${server.url}/socket.io/?EIO=4&transport=polling`, {
    headers: { origin: 'https://app.example' },
  });
  t.equal(open.status, 200);
  t.match(await open.text(), /^0\{"sid":/, 'an Engine.IO open packet');
  t.equal(open.headers.get('access-control-allow-origin'), '*', 'CORS as CORS_ORIGIN says');
  const notFound = await fetch(`${server.url}/socket.io-nothing`);
  t.equal(notFound.status, 404, 'the catch-all still answers other paths');
});

t.test('a socket that answers no ping is closed after WS_IDLE_TIMEOUT_SECONDS; one that answers stays', async (t) => {
  const sessionId = await createSession(server, ada);
  const silent = await NativeClient.connect(server.url, { sessionId, invocation: adaInvocation }, { autoPong: false });
  const alive = await native(sessionId);
  closeAll(t, silent, alive);
  const pinged = new Promise<void>((resolve) => silent.socket.once('ping', () => resolve()));
  await pinged;
  t.pass('the server pings a quiet socket');
  await silent.closed;
  t.pass('the socket that never answered was closed');
  await alive.sync();
  t.equal(alive.socket.readyState, alive.socket.OPEN, 'the socket that answers pings is still open');
});
