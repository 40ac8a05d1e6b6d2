// A session's own state is read through its chat actor, not from the store on the main thread: while a turn
// runs (its actor busy, waiting for a browser tool), the owner's GET /messages, DELETE check and socket
// handshakes are answered at once by the actor beside its mailbox, and another user still gets `404 Session
// not found` everywhere, as for an unknown id. Cold actors (not in memory) are woken by the read.
import t from 'tap';
import { closeAll, invocationOf, NativeClient } from './helpers/events.js';
import { call, createSession, eventually, newUser, openStream, readSse, startOracleServer } from './helpers/oracle.js';

const server = await startOracleServer(t, { env: { BROWSER_TOOL_TIMEOUT_MS: '20000', ACTOR_IDLE_SECONDS: '1' } });
const ada = await newUser(server.oracleDid);
const bob = await newUser(server.oracleDid);
const NOT_FOUND = { statusCode: 404, message: 'Session not found', error: 'Not Found' };
const getPage = { name: 'getPage', description: 'Reads the page', schema: { type: 'object' } };

t.test("while the owner's turn waits in its actor, reads go through the actor", async (t) => {
  const sessionId = await createSession(server, ada);
  t.equal(
    (await call(server, 'POST', `/messages/${sessionId}`, { user: ada, body: { message: 'hello there' } })).status,
    200,
  );
  const ws = await NativeClient.connect(server.url, { sessionId, invocation: invocationOf(ada) });
  closeAll(t, ws);

  // A turn that waits for the browser tool's result: the actor's mailbox is busy until it comes.
  const reply = openStream(server, ada, sessionId, { message: 'use getPage {}', tools: [getPage] }).then(readSse);
  const request = await ws.take('browser_tool_call');

  const listed = await call(server, 'GET', `/messages/${sessionId}`, { user: ada });
  t.equal(listed.status, 200, 'the owner reads the transcript while the turn runs');
  t.same(
    listed.body.messages.map((m: { type: string }) => m.type),
    ['human', 'ai'],
    'what is committed',
  );

  const foreign = await call(server, 'GET', `/messages/${sessionId}`, { user: bob });
  t.same([foreign.status, foreign.body], [404, NOT_FOUND], "another user's read: the actor says not theirs");
  const deleted = await call(server, 'DELETE', `/sessions/${sessionId}`, { user: bob });
  t.same([deleted.status, deleted.body], [404, NOT_FOUND], "another user's delete is refused at once");
  t.same(
    (await call(server, 'POST', '/messages/abort', { user: bob, body: { sessionId } })).body,
    { success: false },
    'nor can they stop it',
  );
  const refused = await NativeClient.connect(server.url, { sessionId, invocation: invocationOf(bob) }).catch(
    (error: { status: number; body: unknown }) => error,
  );
  t.match(refused, { status: 404, body: NOT_FOUND }, "another user's socket handshake is refused");
  const bobs = await createSession(server, bob);
  const bobWs = await NativeClient.connect(server.url, { sessionId: bobs, invocation: invocationOf(bob) });
  closeAll(t, bobWs);
  bobWs.send('subscribe', { sessionId });
  t.match(
    await bobWs.take('error'),
    { event: 'subscribe', message: 'Session not found' },
    'nor can a socket of theirs subscribe',
  );

  ws.send('tool_result', { toolCallId: request.toolCallId, result: { title: 'Home' } });
  t.equal((await reply).at(-1)?.event, 'done');
  const after = await call(server, 'GET', `/messages/${sessionId}`, { user: ada });
  t.equal(after.body.messages.length, 4, 'the turn is listed once committed');
  t.equal(after.body.messages[3].content, 'getPage returned: {"title":"Home"}');
});

t.test(
  'a cold session (its actor not in memory) is woken by the read; unknown ids answer like foreign ones',
  async (t) => {
    const sessionId = await createSession(server, ada);
    for (let i = 0; i < 3; i++)
      await call(server, 'POST', `/messages/${sessionId}`, { user: ada, body: { message: `message ${i}` } });
    // ACTOR_IDLE_SECONDS=1: wait until the actor has left memory (the hosts' count of actors is the witness).
    // Asked of the hosts themselves, not read from /metrics: actors_active is the hosts' report of up to a second
    // ago (REPORT_INTERVAL_MS), and read 0 before their first report while this session's actor was in memory,
    // so the wait passed at once and the check after it failed when that report came in between. Only chat
    // actors run in this file, so the hosts' count is the chat actors'.
    const actorsOf = async () => (await server.runtime.stats()).reduce((sum, host) => sum + host.actors, 0);
    await eventually(async () => (await actorsOf()) === 0, 'the chat actor to leave memory', 600);
    t.equal(await actorsOf(), 0, 'no chat actor in memory');
    const listed = await call(server, 'GET', `/messages/${sessionId}`, { user: ada });
    t.same([listed.status, listed.body.messages.length], [200, 6]);
    t.same(
      listed.body.messages
        .filter((m: { type: string }) => m.type === 'human')
        .map((m: { content: string }) => m.content),
      ['message 0', 'message 1', 'message 2'],
    );
    for (const [user, id] of [
      [bob, sessionId],
      [ada, '00000000-0000-4000-8000-000000000000'],
    ] as const) {
      const answer = await call(server, 'GET', `/messages/${id}`, { user });
      t.same([answer.status, answer.body], [404, NOT_FOUND]);
    }
    t.same((await call(server, 'DELETE', `/sessions/${sessionId}`, { user: ada })).status, 200);
    t.same((await call(server, 'GET', `/messages/${sessionId}`, { user: ada })).status, 404, 'deleted');
  },
);
