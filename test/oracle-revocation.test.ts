// DELETE /delegation revokes the delegation by its signature: sent again (x-ucan-delegation on HTTP, the /ws and
// Socket.IO handshakes) or carried as an invocation's proof, it is refused, though it was verified and
// cached before, and still after a restart on the same DATA_DIR. The user's other credentials keep working.
import t from 'tap';
import { createDelegation, encodeArtifact, formatKey, mintInvocation } from '../dist/src/tools/mint-ucan.js';
import { closeAll, NativeClient, SocketIoClient } from './helpers/events.js';
import { call, createSession, newUser, sharedOracleServer, startOracleServer } from './helpers/oracle.js';
import { startTestServer } from './helpers/server.js';
import { archiveOf, reEncodings, ucantoReadsSigned, viewOf } from './helpers/ucan-mutations.js';

// The tests of the default configuration have users and delegations of their own: one server serves them.
const oracle = sharedOracleServer(t);

const delegationHeaders = (raw: string) => ({ 'x-ucan-delegation': raw });
const invocationHeaders = (raw: string) => ({ authorization: `Bearer ${raw}`, 'x-auth-type': 'ucan' });

async function wsOutcome(url: string, query: Record<string, string>): Promise<number> {
  try {
    const client = await NativeClient.connect(url, query);
    client.close();
    return 101;
  } catch (error) {
    return (error as { status: number }).status;
  }
}

async function socketIoOutcome(
  url: string,
  sessionId: string,
  ucanDelegation: string,
  auth: Record<string, string> = { ucanDelegation },
): Promise<number> {
  try {
    const client = await SocketIoClient.connect(url, { sessionId }, auth);
    client.close();
    return 101;
  } catch (error) {
    return (error as { data: { statusCode: number } }).data.statusCode;
  }
}

t.test(
  'a revoked delegation is refused on HTTP, /ws and Socket.IO, with its invocations, across a restart',
  async (t) => {
    const server = await startOracleServer(t, { keepData: true });
    const ada = await newUser(server.oracleDid);
    const sessionId = await createSession(server, ada);
    // Not 600 s: the user's own invocation (newUser) lasts 600 s, and made in the same second with the same fields it
    // would be the very same UCAN (same CID), revoked with this one.
    const delegation = await createDelegation({ issuer: ada.key, audience: server.oracleDid, ttlSeconds: 700 });
    const raw = await encodeArtifact(delegation);
    // A chain that carries it as a proof, each proof addressed to the issuer above it: the oracle passes ada's
    // delegation on to bob, who invokes the oracle with it.
    const bob = await newUser(server.oracleDid);
    const passedOn = await createDelegation({
      issuer: server.oracleKey,
      audience: bob.did,
      ttlSeconds: 700,
      proofs: [delegation],
    });
    const carrying = await mintInvocation({ issuer: bob.key, audience: server.oracleDid, proofs: [passedOn] });

    // Verified (and cached) before the revocation.
    t.equal(
      (await call(server, 'GET', '/sessions', { headers: delegationHeaders(raw) })).status,
      200,
      'x-ucan-delegation authenticates',
    );
    t.equal(
      (await call(server, 'GET', '/sessions', { headers: invocationHeaders(carrying) })).status,
      200,
      'an invocation carrying it authenticates',
    );
    t.equal(await wsOutcome(server.url, { sessionId, ucanDelegation: raw }), 101, '/ws accepts it');
    t.equal(await socketIoOutcome(server.url, sessionId, raw), 101, 'Socket.IO accepts it');
    t.equal((await call(server, 'POST', '/delegation', { user: ada, body: { raw } })).status, 200, 'stored');

    const revoked = await call(server, 'DELETE', '/delegation', { user: ada });
    t.same([revoked.status, revoked.body], [200, { ok: true }]);

    const again = await call(server, 'GET', '/sessions', { headers: delegationHeaders(raw) });
    t.equal(again.status, 401, 'x-ucan-delegation is refused');
    t.equal(again.body.message, 'Invalid UCAN delegation', 'named as a delegation');
    t.match(again.body.reason, /was revoked/);
    const proof = await call(server, 'GET', '/sessions', { headers: invocationHeaders(carrying) });
    t.equal(proof.status, 401, 'an invocation carrying it is refused');
    t.match(proof.body.reason, /was revoked/);
    t.equal(await wsOutcome(server.url, { sessionId, ucanDelegation: raw }), 401, '/ws refuses it');
    t.equal(await socketIoOutcome(server.url, sessionId, raw), 401, 'Socket.IO refuses it');
    const restore = await call(server, 'POST', '/delegation', { user: ada, body: { raw } });
    t.equal(restore.status, 400, 'it cannot be stored again');
    t.match(restore.body.reason, /was revoked/);
    t.equal(
      (await call(server, 'GET', '/sessions', { user: ada })).status,
      200,
      "the user's own invocation still works",
    );
    // Another lifetime: the same fields would make the same CID.
    const fresh = await createDelegation({ issuer: ada.key, audience: server.oracleDid, ttlSeconds: 900 });
    t.equal(
      (await call(server, 'GET', '/sessions', { headers: delegationHeaders(await encodeArtifact(fresh)) })).status,
      200,
      'a new delegation works',
    );

    await server.shutdown();
    const restarted = await startTestServer(t, {
      dataDir: server.dataDir,
      env: { ORACLE_PRIVATE_KEY: formatKey(server.oracleKey), ORACLE_NAME: 'Test Oracle' },
    });
    t.equal(
      (await call(restarted, 'GET', '/sessions', { headers: delegationHeaders(raw) })).status,
      401,
      'still refused after a restart',
    );
    const ws = await NativeClient.connect(restarted.url, {
      sessionId,
      invocation: ada.headers().authorization.slice(7),
    });
    closeAll(t, ws);
    t.pass('the user reconnects with an invocation');
  },
);

t.test('DELETE /delegation also revokes the delegation it was authenticated with', async (t) => {
  const server = await oracle();
  const bob = await newUser(server.oracleDid);
  const raw = await encodeArtifact(
    await createDelegation({ issuer: bob.key, audience: server.oracleDid, ttlSeconds: 600 }),
  );
  t.equal(
    (await call(server, 'DELETE', '/delegation', { headers: delegationHeaders(raw) })).status,
    200,
    'nothing stored, still revoked',
  );
  t.equal((await call(server, 'GET', '/delegation', { headers: delegationHeaders(raw) })).status, 401);
});

t.test(
  'every re-encoding of a revoked delegation is refused on HTTP, /ws and Socket.IO, alone and as a proof',
  async (t) => {
    const server = await oracle();
    const ada = await newUser(server.oracleDid);
    const bob = await newUser(server.oracleDid);
    const adaSession = await createSession(server, ada);
    const bobSession = await createSession(server, bob);
    const delegation = await createDelegation({ issuer: ada.key, audience: server.oracleDid, ttlSeconds: 800 });
    const raw = await encodeArtifact(delegation);
    t.equal((await call(server, 'POST', '/delegation', { user: ada, body: { raw } })).status, 200, 'stored');
    t.equal((await call(server, 'DELETE', '/delegation', { user: ada })).status, 200, 'revoked');

    // The oracle passes the delegation on to bob, who invokes with it: each proof addressed to the issuer above it.
    const carrying = async (proof: Parameters<typeof viewOf>[0] | undefined) => {
      const passedOn = await createDelegation({
        issuer: server.oracleKey,
        audience: bob.did,
        ttlSeconds: 800,
        proofs: [proof ? viewOf(proof) : delegation],
      });
      return mintInvocation({ issuer: bob.key, audience: server.oracleDid, proofs: [passedOn] });
    };
    const outcomes = async (alone: string, chain: string) => [
      (await call(server, 'GET', '/sessions', { headers: delegationHeaders(alone) })).status,
      await wsOutcome(server.url, { sessionId: adaSession, ucanDelegation: alone }),
      await socketIoOutcome(server.url, adaSession, alone),
      (await call(server, 'GET', '/sessions', { headers: invocationHeaders(chain) })).status,
      await wsOutcome(server.url, { sessionId: bobSession, invocation: chain }),
      await socketIoOutcome(server.url, bobSession, '', { invocation: chain }),
    ];
    const refusedEverywhere = [401, 401, 401, 401, 401, 401];
    t.same(await outcomes(raw, await carrying(undefined)), refusedEverywhere, 'the delegation as signed');
    for (const [name, block] of Object.entries(reEncodings(delegation))) {
      const alone = await archiveOf(block);
      t.ok(await ucantoReadsSigned(alone), `${name}: ucanto reads the same signed delegation`);
      t.same(await outcomes(alone, await carrying(block)), refusedEverywhere, `${name}: refused on every channel`);
    }
    // The control: a chain of the same shape with a delegation that is not revoked opens everywhere.
    const fresh = await createDelegation({ issuer: ada.key, audience: server.oracleDid, ttlSeconds: 900 });
    const passedOn = await createDelegation({
      issuer: server.oracleKey,
      audience: bob.did,
      ttlSeconds: 800,
      proofs: [fresh],
    });
    const chain = await mintInvocation({ issuer: bob.key, audience: server.oracleDid, proofs: [passedOn] });
    t.same(
      await outcomes(await encodeArtifact(fresh), chain),
      [200, 101, 101, 200, 101, 101],
      'a delegation not revoked is accepted',
    );
  },
);
