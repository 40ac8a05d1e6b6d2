// The credits plugin through HTTP: every message costs credits; an empty balance answers 402 with claims,
// as JSON even when a stream was asked for, and nothing is generated or recorded.
import t from 'tap';
import { call, createSession, newUser, openStream, readSse, startOracleServer } from './helpers/oracle.js';

t.test('running out of credits: 402 with claims and outstandingClaims', async (t) => {
  const server = await startOracleServer(t, {
    env: { CREDITS_ENABLED: 'true', CREDITS_INITIAL: '2', CREDITS_PER_MESSAGE: '1' },
  });
  const ada = await newUser(server.oracleDid);
  const id = await createSession(server, ada);
  t.equal((await call(server, 'POST', `/messages/${id}`, { user: ada, body: { message: 'one' } })).status, 200);
  const streamed = await readSse(await openStream(server, ada, id, { message: 'two' }));
  t.equal(streamed.at(-1)!.event, 'done');

  const refused = await call(server, 'POST', `/messages/${id}`, {
    user: ada,
    body: { message: 'three' },
    headers: { 'x-request-id': 'pay-1' },
  });
  t.equal(refused.status, 402);
  t.equal(refused.headers.get('x-request-id'), 'pay-1');
  t.match(refused.body, { statusCode: 402, error: 'Payment Required', message: /Insufficient credits/ });
  t.equal(refused.body.claims.length, 1);
  t.match(refused.body.claims[0], /^claim-/);
  t.same(refused.body.outstandingClaims, refused.body.claims);

  const asStream = await openStream(server, ada, id, { message: 'four' });
  t.equal(asStream.status, 402, 'a stream request is refused before the stream opens');
  t.match(asStream.headers.get('content-type'), /application\/json/);
  const body: any = await asStream.json();
  t.equal(body.outstandingClaims.length, 2, 'every unsettled claim is listed');
  t.same(body.outstandingClaims[0], refused.body.claims[0]);

  const transcript = (await call(server, 'GET', `/messages/${id}`, { user: ada })).body.messages;
  t.same(
    transcript.filter((m: { type: string }) => m.type === 'human').map((m: { content: string }) => m.content),
    ['one', 'two'],
    'refused messages are not recorded',
  );

  // Another user has their own balance.
  const bob = await newUser(server.oracleDid);
  const bobs = await createSession(server, bob);
  t.equal((await call(server, 'POST', `/messages/${bobs}`, { user: bob, body: { message: 'hi' } })).status, 200);
});

t.test('without CREDITS_ENABLED messages are free', async (t) => {
  const server = await startOracleServer(t, { env: { CREDITS_INITIAL: '0' } });
  const ada = await newUser(server.oracleDid);
  const id = await createSession(server, ada);
  t.equal((await call(server, 'POST', `/messages/${id}`, { user: ada, body: { message: 'free' } })).status, 200);
});
