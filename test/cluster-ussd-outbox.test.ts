// USSD actions that call out, in cluster mode, when a session's partition owner dies (docs/ussd-actions.md): three
// real server processes on a real 3-server NATS cluster, with real local HTTP servers for the operator's backend
// and SMS service. The owner killed (kill -9) during an `http` call: the gateway's retry through another node calls
// again with the same key, and once committed never again. The owner killed between a step's commit and its
// notification's delivery: the node that inherits the partition delivers it, once; and once that delivery is
// recorded, a later takeover does not send it again.
import t from 'tap';
import { connectCluster } from '../dist/src/cluster/connection.js';
import { partitionOf } from '../dist/src/cluster/partition-leases.js';
import { KvRecordStore } from '../dist/src/cluster/record-store.js';
import { LiveUssdSessions } from '../dist/src/cluster/records/ussd/sessions.js';
import { health, startTestNodes, until, type LocalNode } from './helpers/cluster-nodes.js';
import { scrape } from './helpers/metrics.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';
import { freePort, json, serviceDir, startBackend, type Handler } from './helpers/ussd-backend.js';
import { dialShop, shopService } from './helpers/ussd-shop.js';

t.setTimeout(120_000);

const balance: Handler = (_req, res) => json(res, 200, { account: { balance: '9', holder: 'Zawadi' } });
const BALANCE_SCREEN = 'CON Balance 9 for Zawadi\n0. Back';
const SENT = 'END We will send you an SMS.';
let hold = true;
const backend = await startBackend(t, {
  // The first call is held (never answered) until its node is dead; the next ones are answered.
  '/slow': (req, res, call) => (hold ? void (hold = false) : balance(req, res, call)),
});
// The SMS service is down until the owner of the notification's session has died.
const smsPort = await freePort();
const resumed: string[] = [];
const nats = await startTestNatsCluster(t);
const cluster = await startTestNodes(t, nats, {
  env: {
    RATE_LIMIT_ALLOWLIST: '127.0.0.1',
    OPERATOR_TOKEN: 'op',
    LOG_LEVEL: 'info',
    H41_TOKEN: 'sms-key',
    USSD_SERVICES_DIR: serviceDir(t, shopService(backend.url, `http://127.0.0.1:${smsPort}`)),
    // A failed delivery waits a minute: within the test only a takeover delivers it.
    USSD_OUTBOX_BACKOFF_MS: '60000',
  },
  onLog: (nodeId, line) => {
    if (line.includes('pending USSD notifications resumed')) resumed.push(`${nodeId} ${line}`);
  },
});
const nodes = cluster.nodes;

const connection = await connectCluster({ NATS_URL: nats.urls.split(','), NATS_PREFIX: 'sar' }, 'outbox-observer');
t.teardown(() => connection.nc.close());
const leases = await KvRecordStore.open<{ owner: string | null }>(connection, { name: 'leases' });
// The sessions journal, read as a front door reads it (never taking a partition over).
const journal = await LiveUssdSessions.open(connection, { maxLifetimeMs: 300_000 });
const pendingIn = async (sessionId: string) => (await journal.read(sessionId))?.value.outbox?.map(({ id }) => id);
const ownerOf = async (sessionId: string) =>
  (await leases.get(['partition', String(partitionOf(sessionId, 128))]))?.value.owner ?? undefined;
/** A session id whose partition `nodeId` owns now (from the lease table). */
async function sessionOwnedBy(nodeId: string, prefix: string): Promise<string> {
  for (let i = 0; ; i++) if ((await ownerOf(`${prefix}-${i}`)) === nodeId) return `${prefix}-${i}`;
}
/** The node's counter or gauge (host metrics reach /metrics once a second). */
const metric = async (node: LocalNode, name: string) =>
  (await scrape(node.url, { authorization: 'Bearer op' })).value(name);
/** A step through `node`, sent again while the partition has no live owner yet (its owner just died). */
const answered = (node: LocalNode, sessionId: string, text: string) =>
  until(`${node.nodeId} to answer`, async () => {
    const { text: screen } = await dialShop(node.url, sessionId, text);
    return screen.startsWith('END Service temporarily unavailable') ? undefined : screen;
  });

t.test('the owner killed during an http call: the retry calls again with the same key, then never', async (t) => {
  const sessionId = await sessionOwnedBy('node-3', 'h-kill');
  const [via, retry] = [nodes[0], nodes[1]];
  t.match((await dialShop(via.url, sessionId, '')).text, /^CON Shop\n/);
  const inFlight = dialShop(via.url, sessionId, '6').catch((error: Error) => error);
  await backend.nextCall('/slow');
  await nodes[2].kill('SIGKILL');
  const ended = await inFlight;
  t.ok(ended instanceof Error || !ended.text.startsWith('CON Balance'), 'the step in flight got no balance');

  t.equal(await answered(retry, sessionId, '6'), BALANCE_SCREEN, 'the retry through another node is answered');
  t.equal(await answered(via, sessionId, '6'), BALANCE_SCREEN, 'a later retry: the committed screen');
  const keys = backend.callsTo('/slow').map((call) => call.headers['idempotency-key']);
  t.same(keys, [`${sessionId}:2`, `${sessionId}:2`], 'called again once, with the same key, and not after the commit');
});

t.test('the owner killed between the commit and the delivery: delivered once by the next owner', async (t) => {
  const [first, second] = [nodes[0], nodes[1]];
  await until('the two survivors to own every partition', async () => {
    const owned = await Promise.all([first, second].map(async (node) => (await health(node)).cluster.partitions.owned));
    return owned[0]! + owned[1]! === 128 || undefined;
  });
  const owner = first;
  const sessionId = await sessionOwnedBy(owner.nodeId, 'n-kill');
  await dialShop(second.url, sessionId, '');
  t.equal((await dialShop(second.url, sessionId, '7')).text, SENT, 'the step is committed and answered');
  t.equal(
    await until('the owner to hold it', async () => (await metric(owner, 'ussd_outbox_pending')) || undefined),
    1,
  );
  t.same(await pendingIn(sessionId), [`${sessionId}:2:1`], "the notification is in the step's record");
  await owner.kill('SIGKILL');

  const sms = await startBackend(t, { '/sms': (_req, res) => json(res, 202, { queued: true }) }, smsPort);
  const delivered = await sms.nextCall('/sms');
  t.equal(delivered.headers['idempotency-key'], `${sessionId}:2:1`, 'the same key');
  t.equal(delivered.headers['x-api-key'], 'sms-key');
  t.match(delivered.body, { service: 'shop', state: 'sms', sessionId, step: 2 });
  const counted = await until('the survivor to count it', async () => {
    const [done, pending] = [
      await metric(second, 'ussd_outbox_delivered_total'),
      await metric(second, 'ussd_outbox_pending'),
    ];
    return done === 1 && pending === 0 ? { done, pending } : undefined;
  });
  t.same(counted, { done: 1, pending: 0 }, 'delivered counted by the node that delivered it; nothing pending');
  t.ok(
    await until('the delivery to be recorded', async () => (await pendingIn(sessionId)) === undefined || undefined),
    'its delivery is recorded: the record holds it no more',
  );

  // The delivery is recorded: the node that inherits the partition next finds nothing to send.
  await owner.restart();
  const before = resumed.length;
  await second.kill('SIGKILL');
  const line = await until('the restarted node to resume what is pending', async () =>
    resumed.slice(before).find((each) => each.startsWith(owner.nodeId)),
  );
  t.match(line, /"sessions":0/, 'no session with a pending notification');
  t.equal(sms.callsTo('/sms').length, 1, 'delivered once');
  t.equal(await metric(owner, 'ussd_outbox_pending'), 0);
});
