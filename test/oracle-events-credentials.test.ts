// No event socket outlives its credential: DELETE /delegation closes the sockets authenticated with that
// delegation (native: close 4401 "credential revoked"; Socket.IO: an `error` event, then the server's
// disconnect), a reconnect with it is refused, and another user's socket keeps its feed. Expiry is checked at the
// handshake for a delegation alone (as the reference gateway: client SDK 1.4.0 never reconnects) and for a proof-less
// invocation; an invocation carrying a delegation closes when that delegation expires ("credential expired").
import t from 'tap';
import { createDelegation, encodeArtifact, generateKey, mintInvocation } from '../dist/src/tools/mint-ucan.js';
import { closeAll, NativeClient, SocketIoClient } from './helpers/events.js';
import { call, createSession, newUser, startOracleServer } from './helpers/oracle.js';

const server = await startOracleServer(t);

/** The reason Socket.IO's client gives for a disconnect. */
const disconnected = (client: SocketIoClient) =>
  new Promise<string>((resolve) => client.socket.once('disconnect', (reason) => resolve(reason)));

async function refusal(connect: () => Promise<{ close(): void }>): Promise<unknown> {
  try {
    (await connect()).close();
    return 'accepted';
  } catch (error) {
    const { status, data } = error as { status?: number; data?: { statusCode: number } };
    return status ?? data?.statusCode;
  }
}

t.test(
  'DELETE /delegation closes the sockets opened with it, on both transports; other users keep theirs',
  async (t) => {
    const ada = await newUser(server.oracleDid);
    const bob = await newUser(server.oracleDid);
    const [adaSession, bobSession] = [await createSession(server, ada), await createSession(server, bob)];
    // 700 s, not the 600 s of the users' invocations: same fields in the same second would be the same CID.
    const adaRaw = await encodeArtifact(
      await createDelegation({ issuer: ada.key, audience: server.oracleDid, ttlSeconds: 700 }),
    );
    const bobRaw = await encodeArtifact(
      await createDelegation({ issuer: bob.key, audience: server.oracleDid, ttlSeconds: 700 }),
    );
    t.equal(
      (await call(server, 'POST', '/delegation', { user: ada, body: { raw: adaRaw } })).status,
      200,
      "ada's delegation stored",
    );

    const ws = await NativeClient.connect(server.url, { sessionId: adaSession, ucanDelegation: adaRaw });
    const sio = await SocketIoClient.connect(server.url, { sessionId: adaSession }, { ucanDelegation: adaRaw });
    const bobWs = await NativeClient.connect(server.url, { sessionId: bobSession, ucanDelegation: bobRaw });
    const bobSio = await SocketIoClient.connect(server.url, { sessionId: bobSession }, { ucanDelegation: bobRaw });
    closeAll(t, ws, sio, bobWs, bobSio);
    const sioGone = disconnected(sio);

    t.same((await call(server, 'DELETE', '/delegation', { user: ada })).status, 200, 'revoked');

    t.same(await ws.closed, { code: 4401, reason: 'credential revoked' }, 'native: closed with 4401 and the reason');
    t.match(await ws.take('error'), { message: 'credential revoked' }, 'native: told first with an error event');
    t.equal(await sioGone, 'io server disconnect', 'Socket.IO: disconnected by the server');
    t.match(await sio.take('error'), { message: 'credential revoked' }, 'Socket.IO: told first with an error event');

    t.equal(
      await refusal(() => NativeClient.connect(server.url, { sessionId: adaSession, ucanDelegation: adaRaw })),
      401,
      'native reconnect refused',
    );
    t.equal(
      await refusal(() => SocketIoClient.connect(server.url, { sessionId: adaSession }, { ucanDelegation: adaRaw })),
      401,
      'Socket.IO reconnect refused',
    );

    // Bob's sockets are open and hear his session's events.
    t.equal(
      (await call(server, 'POST', `/messages/${bobSession}`, { user: bob, body: { message: 'hello' } })).status,
      200,
    );
    for (const client of [bobWs, bobSio])
      t.match(
        await client.take('message_cache_invalidation'),
        { sessionId: bobSession, status: 'done' },
        "bob's socket still gets events",
      );
    t.notOk(bobWs.inbox.names().includes('error'), 'nothing told to bob');
  },
);

t.test(
  'a delegation-only socket outlives its expiry (handshake-time check, as the reference); an invocation carrying it does not',
  async (t) => {
    const ada = await newUser(server.oracleDid);
    const sessionId = await createSession(server, ada);
    // Whole seconds (UCAN exp). The brief invocation expires first and its socket stays; the delegation a second later.
    const now = Math.floor(Date.now() / 1000);
    const delegation = await createDelegation({ issuer: ada.key, audience: server.oracleDid, expiration: now + 3 });
    const raw = await encodeArtifact(delegation);
    // Each proof addressed to the issuer above it: a grant to ada that ends with the delegation.
    const grant = await createDelegation({ issuer: await generateKey(), audience: ada.did, expiration: now + 3 });
    const carrying = await mintInvocation({
      issuer: ada.key,
      audience: server.oracleDid,
      ttlSeconds: 600,
      proofs: [grant],
    });
    const brief = await mintInvocation({ issuer: ada.key, audience: server.oracleDid, expiration: now + 2 });

    t.equal(
      (await call(server, 'POST', '/delegation', { user: ada, body: { raw } })).status,
      200,
      'stored while valid',
    );
    const ws = await NativeClient.connect(server.url, { sessionId, ucanDelegation: raw });
    // Client SDK 1.4.0's handshake: query sessionId and userDid, auth { ucanDelegation } (no invocation).
    const sdk = await SocketIoClient.connect(server.url, { sessionId, userDid: ada.did }, { ucanDelegation: raw });
    const sio = await SocketIoClient.connect(server.url, { sessionId }, { invocation: carrying });
    const invoked = await NativeClient.connect(server.url, { sessionId, invocation: brief });
    closeAll(t, ws, sdk, sio, invoked);
    const sioGone = disconnected(sio);

    t.equal(await sioGone, 'io server disconnect', 'an invocation carrying the delegation ends with it');
    t.ok(Date.now() / 1000 >= now + 3, 'not before it');
    t.match(await sio.take('error'), { message: 'credential expired' });

    // Past the delegation's exp and past the sweep that closed the other: the sockets opened with it alone stay.
    for (const client of [ws, sdk, invoked]) await client.sync();
    for (const client of [ws, sdk, invoked])
      t.notOk(client.inbox.names().includes('error'), 'still open, nothing told');
    // A browser tool called now reaches the SDK's socket, and its tool_result answers the turn.
    const answer = call(server, 'POST', `/messages/${sessionId}`, {
      user: ada,
      body: { message: 'use getPage {}', tools: [{ name: 'getPage', description: 'Reads the page', schema: {} }] },
    });
    const request = await sdk.take('browser_tool_call');
    sdk.send('tool_result', { toolCallId: request.toolCallId, sessionId, result: { title: 'Home' } });
    t.match(
      (await answer).body.message.content,
      'getPage returned: {"title":"Home"}',
      'the tool answered through the socket after the expiry',
    );

    t.equal(
      await refusal(() => NativeClient.connect(server.url, { sessionId, ucanDelegation: raw })),
      401,
      'the expired delegation is refused at a new handshake',
    );
    t.equal(
      await refusal(() => NativeClient.connect(server.url, { sessionId, invocation: brief })),
      401,
      'the expired invocation too',
    );

    // Revocation still ends them: DELETE /delegation revokes the stored one by CID.
    const wsGone = ws.closed;
    const sdkGone = disconnected(sdk);
    t.equal((await call(server, 'DELETE', '/delegation', { user: ada })).status, 200);
    t.same(await wsGone, { code: 4401, reason: 'credential revoked' });
    t.equal(await sdkGone, 'io server disconnect');
  },
);
