// Sessions through HTTP: create, list (newest first, pagination, bad values), delete, isolation.
import t from 'tap';
import { call, createSession, newUser, sharedOracleServer } from './helpers/oracle.js';

// Every test has users of its own: one server serves them all. /user-preferences is public on it for the docs test,
// which reads how such a route is documented; no other test calls that route.
const oracle = sharedOracleServer(t, { env: { AUTH_EXCLUDED_ROUTES: '/user-preferences' } });

t.test('POST /sessions answers 201 with the session record', async (t) => {
  const server = await oracle();
  const ada = await newUser(server.oracleDid);
  const res = await call(server, 'POST', '/sessions', { user: ada, headers: { 'x-request-id': 'create-1' } });
  t.equal(res.status, 201);
  t.equal(res.headers.get('x-request-id'), 'create-1');
  t.match(res.body, {
    sessionId: /^[0-9a-f-]{36}$/,
    oracleName: 'Test Oracle',
    title: 'Untitled',
    oracleDid: server.oracleDid,
  });
  t.ok(Date.parse(res.body.createdAt));
  t.equal(res.body.createdAt, res.body.lastUpdatedAt);
  const again = await createSession(server, ada);
  t.not(again, res.body.sessionId, 'ids are unique');
});

t.test('GET /sessions: newest lastUpdatedAt first, paginated, limit capped at 100, 0 = default', async (t) => {
  const server = await oracle();
  const ada = await newUser(server.oracleDid);
  const ids: string[] = [];
  for (let i = 0; i < 25; i++) ids.push(await createSession(server, ada));
  const newestFirst = [...ids].reverse();

  const first = await call(server, 'GET', '/sessions', { user: ada });
  t.equal(first.status, 200);
  t.equal(first.body.total, 25);
  t.equal(first.body.sessions.length, 20, 'default page size 20');
  t.same(
    first.body.sessions.map((s: { sessionId: string }) => s.sessionId),
    newestFirst.slice(0, 20),
  );

  const page = await call(server, 'GET', '/sessions?limit=10&offset=20', { user: ada });
  t.same(
    page.body.sessions.map((s: { sessionId: string }) => s.sessionId),
    newestFirst.slice(20),
  );
  t.equal(page.body.total, 25);

  const zero = await call(server, 'GET', '/sessions?limit=0', { user: ada });
  t.equal(zero.body.sessions.length, 20, 'limit=0 means the default');
  const past = await call(server, 'GET', '/sessions?offset=500', { user: ada });
  t.same(past.body, { sessions: [], total: 25 });

  // A message moves its session to the top.
  const oldest = ids[0];
  const sent = await call(server, 'POST', `/messages/${oldest}`, {
    user: ada,
    body: { message: 'Plan my week, please' },
  });
  t.equal(sent.status, 200);
  const after = await call(server, 'GET', '/sessions?limit=1', { user: ada });
  t.equal(after.body.sessions[0].sessionId, oldest);
  t.equal(after.body.sessions[0].title, 'Plan my week, please', 'the first message names the session');
  t.ok(Date.parse(after.body.sessions[0].lastUpdatedAt) >= Date.parse(after.body.sessions[0].createdAt));
});

t.test('GET /sessions caps limit at 100', async (t) => {
  const server = await oracle();
  const ada = await newUser(server.oracleDid);
  await Promise.all(Array.from({ length: 105 }, () => createSession(server, ada)));
  const res = await call(server, 'GET', '/sessions?limit=1000', { user: ada });
  t.equal(res.status, 200);
  t.equal(res.body.sessions.length, 100);
  t.equal(res.body.total, 105);
});

t.test('GET /sessions refuses bad query values with a 400 naming them', async (t) => {
  const server = await oracle();
  const ada = await newUser(server.oracleDid);
  for (const [query, problem] of [
    ['limit=-1', 'limit must be a non-negative whole number'],
    ['limit=abc', 'limit must be a non-negative whole number'],
    ['offset=1.5', 'offset must be a non-negative whole number'],
    ['limit=', 'limit must be a non-negative whole number'],
  ]) {
    const res = await call(server, 'GET', `/sessions?${query}`, { user: ada });
    t.equal(res.status, 400, query);
    t.same(res.body, { statusCode: 400, message: [problem], error: 'Bad Request' }, query);
  }
});

t.test('two users are isolated: lists, deletes, messages', async (t) => {
  const server = await oracle();
  const ada = await newUser(server.oracleDid);
  const bob = await newUser(server.oracleDid);
  const adas = await createSession(server, ada);
  await call(server, 'POST', `/messages/${adas}`, { user: ada, body: { message: 'a secret' } });
  const bobs = await createSession(server, bob);

  t.same(
    (await call(server, 'GET', '/sessions', { user: bob })).body.sessions.map(
      (s: { sessionId: string }) => s.sessionId,
    ),
    [bobs],
  );
  const notFound = { statusCode: 404, message: 'Session not found', error: 'Not Found' };
  const read = await call(server, 'GET', `/messages/${adas}`, { user: bob });
  t.equal(read.status, 404);
  t.same(read.body, notFound);
  const send = await call(server, 'POST', `/messages/${adas}`, { user: bob, body: { message: 'hi' } });
  t.same([send.status, send.body], [404, notFound]);
  const stream = await call(server, 'POST', `/messages/${adas}`, { user: bob, body: { message: 'hi', stream: true } });
  t.same([stream.status, stream.body], [404, notFound], 'a stream request gets the JSON 404 before any stream opens');
  const del = await call(server, 'DELETE', `/sessions/${adas}`, { user: bob });
  t.same([del.status, del.body], [404, notFound]);
  const abort = await call(server, 'POST', '/messages/abort', { user: bob, body: { sessionId: adas } });
  t.same(abort.body, { success: false });

  // Ada's session is untouched.
  const mine = await call(server, 'GET', `/messages/${adas}`, { user: ada });
  t.equal(mine.body.messages.length, 2);
});

t.test('DELETE /sessions/:sessionId removes the session and its transcript', async (t) => {
  const server = await oracle();
  const ada = await newUser(server.oracleDid);
  const id = await createSession(server, ada);
  await call(server, 'POST', `/messages/${id}`, { user: ada, body: { message: 'hello' } });
  const res = await call(server, 'DELETE', `/sessions/${id}`, { user: ada });
  t.equal(res.status, 200);
  t.same(res.body, { message: 'Session deleted successfully' });
  t.same((await call(server, 'GET', '/sessions', { user: ada })).body, { sessions: [], total: 0 });
  t.equal((await call(server, 'GET', `/messages/${id}`, { user: ada })).status, 404, 'its transcript is gone');
  const gone = await call(server, 'POST', `/messages/${id}`, { user: ada, body: { message: 'still there?' } });
  t.equal(gone.status, 404);
  const twice = await call(server, 'DELETE', `/sessions/${id}`, { user: ada });
  t.equal(twice.status, 404);
  const tooLong = await call(server, 'DELETE', `/sessions/${'x'.repeat(200)}`, { user: ada });
  t.equal(tooLong.status, 400);
  t.same(tooLong.body.message, ['sessionId must be at most 128 characters']);
});

t.test('GET /sessions is never stale after a write was answered (it answers from a cache of the page)', async (t) => {
  const server = await oracle();
  const ada = await newUser(server.oracleDid);
  const list = async () => (await call(server, 'GET', '/sessions', { user: ada })).body;
  const ids = (body: { sessions: { sessionId: string }[] }) => body.sessions.map((s) => s.sessionId);
  const expected: string[] = [];
  t.same(await list(), { sessions: [], total: 0 });
  for (let i = 0; i < 3; i++) {
    expected.unshift(await createSession(server, ada));
    t.same(ids(await list()), expected, `listed at once after create ${i + 1}`);
    t.same(await list(), await list(), 'the same page again while nothing changed');
  }
  await call(server, 'POST', `/messages/${expected[2]}`, { user: ada, body: { message: 'Rename me' } });
  const renamed = await list();
  t.same(ids(renamed), [expected[2], expected[0], expected[1]], 'a turn moves its session to the top at once');
  t.equal(renamed.sessions[0].title, 'Rename me');
  for (const id of ids(renamed)) {
    t.equal((await call(server, 'DELETE', `/sessions/${id}`, { user: ada })).status, 200);
    t.notOk(ids(await list()).includes(id), 'gone from the list at once after delete');
  }
  t.same(await list(), { sessions: [], total: 0 });
});

t.test('GET /docs-json documents the oracle routes from the schemas that validate them', async (t) => {
  const server = await oracle();
  const doc: any = await (await fetch(`${server.url}/docs-json`)).json();
  const send = doc.paths['/messages/{sessionId}'].post;
  t.equal(send.requestBody.content['application/json'].schema.properties.attachments.maxItems, 10);
  t.same(send.requestBody.content['application/json'].schema.required, ['message']);
  t.ok(send.security, 'protected routes name the UCAN security schemes');
  t.match(doc.paths['/sessions'].get.parameters, [
    { name: 'limit', in: 'query' },
    { name: 'offset', in: 'query' },
  ]);
  t.ok(doc.paths['/messages/abort'].post);
  t.ok(doc.paths['/delegation'].delete);
  t.same(
    doc.paths['/user-preferences'].get.security,
    [],
    'a route named in AUTH_EXCLUDED_ROUTES is documented as public',
  );
});
