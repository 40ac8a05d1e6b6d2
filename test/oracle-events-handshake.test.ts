// Event channel handshakes on both transports, with real ucanto-signed artifacts: the native WebSocket at
// /ws (query or headers) and Socket.IO at /socket.io/ (auth object), refused at once without a session id,
// without a valid UCAN, or for a session that is not the user's; accepted ones hear `connected`.
import t from 'tap';
import type { Test } from 'tap';
import { INVALID_UCAN_MESSAGE, MISSING_UCAN_MESSAGE } from '../dist/src/oracle/auth/index.js';
import { MISSING_SESSION_ID } from '../dist/src/oracle/events/handshake.js';
import { generateKey, mintDelegation, mintInvocation } from '../dist/src/tools/mint-ucan.js';
import { invocationOf, NativeClient, SocketIoClient } from './helpers/events.js';
import { createSession, newUser, startOracleServer } from './helpers/oracle.js';

const now = () => Math.floor(Date.now() / 1000);

async function setup(t: Test, env: Record<string, string> = {}) {
  const server = await startOracleServer(t, { env });
  const ada = await newUser(server.oracleDid);
  const bob = await newUser(server.oracleDid);
  const adaSession = await createSession(server, ada);
  const bobSession = await createSession(server, bob);
  return { server, ada, bob, adaSession, bobSession };
}

/** The refusal of a native handshake: its HTTP status and JSON body. */
async function nativeRefusal(url: string, query: Record<string, string | undefined>, headers?: Record<string, string>) {
  try {
    const client = await NativeClient.connect(url, query, { headers });
    client.close();
  } catch (error) {
    return error as { status: number; body: { statusCode: number; message: string } };
  }
  throw new Error('the handshake was accepted');
}

/** The connect_error of a Socket.IO handshake. */
async function socketIoRefusal(
  url: string,
  query: Record<string, string | undefined>,
  auth: Record<string, string | undefined>,
) {
  try {
    const client = await SocketIoClient.connect(url, query, auth);
    client.close();
  } catch (error) {
    return error as Error & { data: { statusCode: number; message: string } };
  }
  throw new Error('the handshake was accepted');
}

// One server for the handshake checks (the rate-limit test has its own).
const shared = await setup(t);

t.test('native /ws: refused before the upgrade, with the HTTP answer of the routes', async (t) => {
  const { server, ada, adaSession, bobSession } = shared;
  const invocation = invocationOf(ada);

  const noSession = await nativeRefusal(server.url, { invocation });
  t.equal(noSession.status, 400);
  t.same(noSession.body, { statusCode: 400, message: MISSING_SESSION_ID, error: 'Bad Request' });
  t.equal((await nativeRefusal(server.url, { sessionId: '  ', invocation })).status, 400, 'a blank session id is none');
  t.equal(
    (await nativeRefusal(server.url, { sessionId: 'x'.repeat(200), invocation })).status,
    400,
    'an overlong session id',
  );

  const noUcan = await nativeRefusal(server.url, { sessionId: adaSession });
  t.equal(noUcan.status, 401);
  t.equal(noUcan.body.message, MISSING_UCAN_MESSAGE);

  const garbage = await nativeRefusal(server.url, { sessionId: adaSession, invocation: 'bm90IGEgVUNBTg==' });
  t.equal(garbage.status, 401);
  t.equal(garbage.body.message, INVALID_UCAN_MESSAGE);

  const user = await generateKey();
  const expired = await mintInvocation({ issuer: user, audience: server.oracleDid, expiration: now() - 60 });
  t.equal(
    (await nativeRefusal(server.url, { sessionId: adaSession, invocation: expired })).body.message,
    INVALID_UCAN_MESSAGE,
    'an expired invocation',
  );
  const elsewhere = await mintInvocation({ issuer: user, audience: (await generateKey()).did() });
  t.equal(
    (await nativeRefusal(server.url, { sessionId: adaSession, invocation: elsewhere })).status,
    401,
    'an invocation for another oracle',
  );

  const someoneElses = await nativeRefusal(server.url, { sessionId: bobSession, invocation });
  t.equal(someoneElses.status, 404, "someone else's session");
  t.same(someoneElses.body, { statusCode: 404, message: 'Session not found', error: 'Not Found' });
  t.equal(
    (await nativeRefusal(server.url, { sessionId: 'no-such-session', invocation })).status,
    404,
    'an unknown session',
  );

  // The identity is the validated issuer: a DID in the query changes nothing.
  const claimed = await nativeRefusal(server.url, {
    sessionId: bobSession,
    invocation,
    userDid: 'did:key:bob',
    did: 'did:key:bob',
  });
  t.equal(claimed.status, 404, 'a claimed DID in the query is ignored');
});

t.test('native /ws: credentials as headers or query parameters, invocation or delegation', async (t) => {
  const { server, ada, adaSession } = shared;
  const invocation = invocationOf(ada);
  const delegation = await mintDelegation({ issuer: ada.key, audience: server.oracleDid, ttlSeconds: 600 });

  const viaQuery = await NativeClient.connect(server.url, { sessionId: adaSession, invocation });
  t.pass('invocation as a query parameter');
  const viaHeaders = await NativeClient.connect(server.url, { sessionId: adaSession }, { headers: ada.headers() });
  t.pass('Authorization + X-Auth-Type: ucan headers');
  const viaDelegationHeader = await NativeClient.connect(
    server.url,
    { sessionId: adaSession },
    { headers: { 'x-ucan-delegation': delegation } },
  );
  t.pass('x-ucan-delegation header alone');
  const viaDelegationQuery = await NativeClient.connect(server.url, {
    sessionId: adaSession,
    ucanDelegation: delegation,
  });
  t.pass('ucanDelegation query parameter alone');
  for (const client of [viaQuery, viaHeaders, viaDelegationHeader, viaDelegationQuery]) {
    client.send('status');
    const status = await client.take('status');
    t.equal(status.sessionId, adaSession);
    client.close();
  }

  // A bearer without X-Auth-Type: ucan is not a UCAN (as on HTTP).
  const untyped = await nativeRefusal(server.url, { sessionId: adaSession }, { authorization: `Bearer ${invocation}` });
  t.equal(untyped.status, 401);
  t.equal(untyped.body.message, MISSING_UCAN_MESSAGE);

  // Base64 put into a URL without encoding turns `+` into spaces; the handshake reads it back.
  const url = new URL('/ws', server.url.replace('http', 'ws'));
  const loose = await NativeClient.open(`${url}?sessionId=${adaSession}&invocation=${invocation}`);
  t.pass('an unencoded invocation in the query');
  loose.close();
});

t.test(
  'Socket.IO: refused with connect_error and closed; accepted with auth { invocation, ucanDelegation }',
  async (t) => {
    const { server, ada, bob, adaSession, bobSession } = shared;
    const invocation = invocationOf(ada);

    const noSession = await socketIoRefusal(server.url, {}, { invocation });
    t.equal(noSession.message, MISSING_SESSION_ID);
    t.equal(noSession.data.statusCode, 400);
    const noUcan = await socketIoRefusal(server.url, { sessionId: adaSession }, {});
    t.equal(noUcan.message, MISSING_UCAN_MESSAGE);
    t.equal(noUcan.data.statusCode, 401);
    const bad = await socketIoRefusal(server.url, { sessionId: adaSession }, { invocation: 'bm90IGEgVUNBTg==' });
    t.equal(bad.message, INVALID_UCAN_MESSAGE);
    const someoneElses = await socketIoRefusal(server.url, { sessionId: bobSession }, { invocation });
    t.equal(someoneElses.message, 'Session not found');
    t.equal(someoneElses.data.statusCode, 404);

    const accepted = await SocketIoClient.connect(
      server.url,
      { sessionId: adaSession, userDid: bob.did },
      { invocation },
    );
    accepted.send('status');
    t.equal(
      (await accepted.take('status')).sessionId,
      adaSession,
      'connected to her session; the userDid in the query is ignored',
    );
    accepted.close();

    const delegation = await mintDelegation({ issuer: bob.key, audience: server.oracleDid, ttlSeconds: 600 });
    const delegated = await SocketIoClient.connect(
      server.url,
      { sessionId: bobSession },
      { ucanDelegation: delegation },
    );
    t.pass('a delegation alone, as older SDKs send');
    delegated.close();
    // The SDK sends both; a delegation of someone else beside a valid invocation is left out, not fatal.
    const both = await SocketIoClient.connect(
      server.url,
      { sessionId: adaSession },
      { invocation, ucanDelegation: delegation },
    );
    t.pass('invocation with a delegation');
    both.close();
  },
);

t.test('Socket.IO: a refused handshake is disconnected at once, not left to the connect timeout', async (t) => {
  const { server, adaSession } = shared;
  // Engine.IO v4 spoken by hand over a real WebSocket, so nothing on the client side closes the connection.
  const { default: WebSocket } = await import('ws');
  const socket = new WebSocket(
    `${server.url.replace('http', 'ws')}/socket.io/?EIO=4&transport=websocket&sessionId=${adaSession}`,
  );
  t.teardown(() => socket.terminate());
  const packets: string[] = [];
  const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
  socket.on('message', (raw) => {
    const packet = String(raw);
    packets.push(packet);
    // "0" = Engine.IO open; then "40" = Socket.IO CONNECT to namespace "/" with the auth object.
    if (packet.startsWith('0')) socket.send(`40${JSON.stringify({ invocation: 'bm90IGEgVUNBTg==' })}`);
  });
  await closed;
  const refusal = packets.find((packet) => packet.startsWith('44'));
  t.ok(refusal, 'a CONNECT_ERROR packet came before the close');
  t.equal(JSON.parse(refusal!.slice(2)).message, INVALID_UCAN_MESSAGE);
  t.notOk(
    packets.some((packet) => packet.startsWith('40')),
    'never connected',
  );
});

t.test('handshakes share the front door rate limit', async (t) => {
  const { server, ada, adaSession } = await setup(t, { RATE_LIMIT_MAX: '6', RATE_LIMIT_WINDOW_SECONDS: '60' });
  const invocation = invocationOf(ada);
  const statuses: number[] = [];
  for (let i = 0; i < 8; i++) {
    try {
      (await NativeClient.connect(server.url, { sessionId: adaSession, invocation })).close();
      statuses.push(101);
    } catch (error) {
      statuses.push((error as { status: number }).status);
    }
  }
  t.ok(statuses.includes(101), 'the first handshakes pass');
  t.equal(statuses.at(-1), 429, 'then the limit answers 429');
});
