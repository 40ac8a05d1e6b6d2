// Live calls across three real server processes in cluster mode on a real 3-server NATS JetStream cluster, through
// HTTP only: a call synced through one node is updated, listed and its key read through the others (the record is in
// the shared JetStream bucket, not in one node's LMDB), and updates racing through two nodes both land in order.
import t from 'tap';
import { parseKey } from '../dist/src/oracle/auth/mint.js';
import { startTestNodes } from './helpers/cluster-nodes.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';
import { call, createSession, newUser } from './helpers/oracle.js';

t.setTimeout(180_000);
const LIVE_KEY = 'cluster-live-agent-key-0123456789';
const nats = await startTestNatsCluster(t);
const cluster = await startTestNodes(t, nats, {
  env: { LOG_LEVEL: 'warn', LIVE_AGENT_AUTH_API_KEY: LIVE_KEY, RATE_LIMIT_MAX: '100000' },
});
const [nodeA, nodeB, nodeC] = cluster.nodes;
const oracleDid = parseKey(cluster.keys.ORACLE_PRIVATE_KEY).did();

t.test('synced through A; updated through B, listed through C, its key read through A', async (t) => {
  const ada = await newUser(oracleDid);
  const bob = await newUser(oracleDid);
  const sessionId = await createSession(nodeA, ada);
  const callId = '$clusterCall1:matrix.ixo.earth@!room1:matrix.ixo.earth';
  t.match(
    await call(nodeA, 'POST', `/calls/${callId}/sync`, {
      user: ada,
      body: { sessionId, callType: 'audio', encryptionKey: 'sealed' },
    }),
    { status: 201, body: { callId } },
  );
  t.match(await call(nodeB, 'POST', `/calls/${callId}/sync`, { user: bob }), { status: 409 }, 'taken on every node');
  t.match(await call(nodeC, 'PATCH', `/calls/${callId}/update`, { user: bob, body: { callStatus: 'active' } }), {
    status: 404,
  });
  t.match(await call(nodeB, 'PATCH', `/calls/${callId}/update`, { user: ada, body: { callStatus: 'active' } }), {
    status: 200,
    body: { callStatus: 'active' },
  });
  const listed = await call(nodeC, 'GET', `/calls/session/${sessionId}`, { user: ada });
  t.match(listed, { status: 200, body: { calls: [{ id: callId, callStatus: 'active', callType: 'audio' }] } });
  t.same((await call(nodeA, 'GET', `/calls/${callId}/key`, { headers: { 'x-api-key': LIVE_KEY } })).body, {
    encryptionKey: 'sealed',
    oracleDid,
    userDid: ada.did,
  });
});

t.test('an end and a repeated start racing through two nodes: the call ends, once', async (t) => {
  const ada = await newUser(oracleDid);
  const callId = '$clusterCall2:matrix.ixo.earth@!room2:matrix.ixo.earth';
  await call(nodeA, 'POST', `/calls/${callId}/sync`, { user: ada });
  await call(nodeA, 'PATCH', `/calls/${callId}/update`, { user: ada, body: { callStatus: 'active' } });
  const [ended, started] = await Promise.all([
    call(nodeB, 'PATCH', `/calls/${callId}/update`, { user: ada, body: { callStatus: 'ended' } }),
    call(nodeC, 'PATCH', `/calls/${callId}/update`, { user: ada, body: { callStatus: 'active' } }),
  ]);
  t.match(ended, { status: 200, body: { callStatus: 'ended' } });
  // The repeated start either came first (a no-op, 200 active) or after the end (409): never a lost end.
  t.ok(
    (started.status === 200 && started.body.callStatus === 'active') || started.status === 409,
    `start answered ${started.status}`,
  );
  const endedAt = ended.body.callEndedAt;
  t.match(await call(nodeA, 'PATCH', `/calls/${callId}/update`, { user: ada, body: { callStatus: 'ended' } }), {
    status: 200,
    body: { callStatus: 'ended', callEndedAt: endedAt },
  });
});
