// DELETE /delegation revokes the delegation by CID: sent again (x-ucan-delegation on HTTP, the /ws and
// Socket.IO handshakes) or carried as an invocation's proof, it is refused, though it was verified and
// cached before, and still after a restart on the same DATA_DIR. The user's other credentials keep working.
import t from 'tap';
import { createDelegation, encodeArtifact, formatKey, mintInvocation } from '../dist/src/tools/mint-ucan.js';
import { closeAll, NativeClient, SocketIoClient } from './helpers/events.js';
import { call, createSession, newUser, startOracleServer } from './helpers/oracle.js';
import { startTestServer } from './helpers/server.js';

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

async function socketIoOutcome(url: string, sessionId: string, ucanDelegation: string): Promise<number> {
  try {
    const client = await SocketIoClient.connect(url, { sessionId }, { ucanDelegation });
    client.close();
    return 101;
  } catch (error) {
    return (error as { data: { statusCode: number } }).data.statusCode;
  }
}

t.test('a revoked delegation is refused on HTTP, /ws and Socket.IO, with its invocations, across a restart', async (t) => {
  const server = await startOracleServer(t, { keepData: true });
  const ada = await newUser(server.oracleDid);
  const sessionId = await createSession(server, ada);
  // Not 600 s: the user's own invocation (newUser) lasts 600 s, and made in the same second with the same fields it
  // would be the very same UCAN (same CID), revoked with this one.
  const delegation = await createDelegation({ issuer: ada.key, audience: server.oracleDid, ttlSeconds: 700 });
  const raw = await encodeArtifact(delegation);
  const carrying = await mintInvocation({ issuer: ada.key, audience: server.oracleDid, proofs: [delegation] });

  // Verified (and cached) before the revocation.
  t.equal((await call(server, 'GET', '/sessions', { headers: delegationHeaders(raw) })).status, 200, 'x-ucan-delegation authenticates');
  t.equal((await call(server, 'GET', '/sessions', { headers: invocationHeaders(carrying) })).status, 200, 'an invocation carrying it authenticates');
  t.equal(await wsOutcome(server.url, { sessionId, ucanDelegation: raw }), 101, '/ws accepts it');
  t.equal(await socketIoOutcome(server.url, sessionId, raw), 101, 'Socket.IO accepts it');
  t.equal((await call(server, 'POST', '/delegation', { user: ada, body: { raw } })).status, 200, 'stored');

  const revoked = await call(server, 'DELETE', '/delegation', { user: ada });
  t.same([revoked.status, revoked.body], [200, { ok: true }]);

  const again = await call(server, 'GET', '/sessions', { headers: delegationHeaders(raw) });
  t.equal(again.status, 401, 'x-ucan-delegation is refused');
  t.equal(again.body.message, 'Invalid UCAN delegation', 'named as a delegation');
  t.match(again.body.reason, new RegExp(`delegation ${delegation.cid} was revoked`));
  const proof = await call(server, 'GET', '/sessions', { headers: invocationHeaders(carrying) });
  t.equal(proof.status, 401, 'an invocation carrying it is refused');
  t.match(proof.body.reason, /was revoked/);
  t.equal(await wsOutcome(server.url, { sessionId, ucanDelegation: raw }), 401, '/ws refuses it');
  t.equal(await socketIoOutcome(server.url, sessionId, raw), 401, 'Socket.IO refuses it');
  const restore = await call(server, 'POST', '/delegation', { user: ada, body: { raw } });
  t.equal(restore.status, 400, 'it cannot be stored again');
  t.match(restore.body.reason, /was revoked/);
  t.equal((await call(server, 'GET', '/sessions', { user: ada })).status, 200, "the user's own invocation still works");
  // Another lifetime: the same fields would make the same CID.
  const fresh = await createDelegation({ issuer: ada.key, audience: server.oracleDid, ttlSeconds: 900 });
  t.equal((await call(server, 'GET', '/sessions', { headers: delegationHeaders(await encodeArtifact(fresh)) })).status, 200, 'a new delegation works');

  await server.shutdown();
  const restarted = await startTestServer(t, { dataDir: server.dataDir, env: { ORACLE_PRIVATE_KEY: formatKey(server.oracleKey), ORACLE_NAME: 'Test Oracle' } });
  t.equal((await call(restarted, 'GET', '/sessions', { headers: delegationHeaders(raw) })).status, 401, 'still refused after a restart');
  const ws = await NativeClient.connect(restarted.url, { sessionId, invocation: ada.headers().authorization.slice(7) });
  closeAll(t, ws);
  t.pass('the user reconnects with an invocation');
});

t.test('DELETE /delegation also revokes the delegation it was authenticated with', async (t) => {
  const server = await startOracleServer(t);
  const bob = await newUser(server.oracleDid);
  const raw = await encodeArtifact(await createDelegation({ issuer: bob.key, audience: server.oracleDid, ttlSeconds: 600 }));
  t.equal((await call(server, 'DELETE', '/delegation', { headers: delegationHeaders(raw) })).status, 200, 'nothing stored, still revoked');
  t.equal((await call(server, 'GET', '/delegation', { headers: delegationHeaders(raw) })).status, 401);
});
