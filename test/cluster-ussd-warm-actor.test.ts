// A warm USSD actor in cluster mode answers from the session it last wrote, without reading it (docs/cluster-records.md,
// "Warm actors in cluster mode"). Here two real ActorRuntimes in cluster mode (own actor host and NATS connection each, one
// 3-server JetStream cluster) run one session's actor in turn, as when its partition moves away and back: the
// actor that kept an old copy must answer the next step from the newer state the other wrote, and a retry or a
// wrong phone answered on a stale copy must be answered from the stored session too; and a step with an `http`
// action that the other committed is replayed on the stale copy, its endpoint not called again.
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { connectCluster } from '../dist/src/cluster/connection.js';
import { loadConfig } from '../dist/src/app/config.js';
import { createLogger } from '../dist/src/base/log.js';
import { formatKey, generateKey } from '../dist/src/oracle/auth/mint.js';
import { ActorRuntime } from '../dist/src/runtime/actor-runtime.js';
import { INVALID_INPUT } from '../dist/src/ussd/answers.js';
import { USSD_ACTOR } from '../dist/src/ussd/protocol.js';
import { LiveUssdSessions } from '../dist/src/cluster/records/ussd/sessions.js';
import { JetStreamPublished } from '../dist/src/cluster/records/ussd/published.js';
import { startServedServices } from '../dist/src/ussd/services/served.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';
import { json, serviceDir, startBackend } from './helpers/ussd-backend.js';
import { shopService } from './helpers/ussd-shop.js';

t.setTimeout(120_000);
const nats = await startTestNatsCluster(t);
const keys = {
  PIN_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
  ORACLE_PRIVATE_KEY: formatKey(await generateKey()),
};
const PREFIX = 'warm';

async function startRuntime(name: string, server: number): Promise<ActorRuntime> {
  const dataDir = mkdtempSync(join(tmpdir(), `warm-${name}-`));
  const config = loadConfig({
    DATA_DIR: dataDir,
    ACTOR_THREADS: '1',
    LOG_LEVEL: 'silent',
    METRICS_ENABLED: 'false',
    NATS_URL: nats.servers[server].url,
    NATS_PREFIX: PREFIX,
    NODE_ID: name,
    ...keys,
  });
  const runtime = new ActorRuntime({ threads: 1, config, log: createLogger('silent') });
  t.teardown(async () => {
    await runtime.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  await runtime.start();
  return runtime;
}

// The built-in service and the shop (its `http` actions on a real local backend), published before any host reads.
process.env.H41_TOKEN = 'warm-token';
const backend = await startBackend(t, {
  '/balance': (_req, res) => json(res, 200, { account: { balance: '7', holder: 'Warm' } }),
});
const servicesDir = serviceDir(t, shopService(backend.url));
copyFileSync(join(process.cwd(), 'ussd-services', 'builtin.yaml'), join(servicesDir, 'builtin.yaml'));
const publisher = await connectCluster({ NATS_URL: [nats.servers[2].url], NATS_PREFIX: PREFIX }, 'warm-publisher');
t.teardown(() => publisher.close());
const served = await startServedServices(servicesDir, await JetStreamPublished.open(publisher), createLogger('silent'));
t.teardown(() => served.stop());

const [a, b] = [await startRuntime('node-a', 0), await startRuntime('node-b', 1)];
const PHONE = '+254700000001';
const dial = (runtime: ActorRuntime, sessionId: string, text: string, phoneNumber = PHONE, serviceCode = '*123#') =>
  runtime.send(USSD_ACTOR.kind, sessionId, {
    type: 'dial',
    sessionId,
    serviceCode,
    phoneNumber,
    text,
  }) as Promise<string>;

const connection = await connectCluster({ NATS_URL: [nats.servers[2].url], NATS_PREFIX: PREFIX }, 'warm-observer');
t.teardown(() => connection.close());
// Reads the sessions journal as a front door does: without taking a partition over.
const sessions = await LiveUssdSessions.open(connection, { maxLifetimeMs: 300_000 });

t.test(
  'a warm actor whose copy went stale answers from the newer state, and the cluster keeps one history',
  async (t) => {
    const id = 'warm-stale-1';
    const welcome = await dial(a, id, '');
    t.match(welcome, /^CON /, 'node A starts the session');
    const info = await dial(a, id, '1');
    const { revision: afterA } = (await sessions.read(id))!;

    // The partition moves: node B runs the actor (cold: it reads) and moves the session on.
    const onB = await dial(b, id, '1*1');
    t.not(onB, info, 'node B answers the next input');
    const { revision: afterB } = (await sessions.read(id))!;
    t.ok(afterB > afterA, 'node B wrote');

    // Back on node A, whose actor still holds the copy it wrote: the next input must apply after B's step.
    const expected = await (async () => {
      // What a fresh actor answers for that input: the same input through a third session walked the same way.
      const twin = 'warm-twin-1';
      for (const text of ['', '1', '1*1']) await dial(b, twin, text);
      return dial(b, twin, '1*1*0');
    })();
    t.equal(await dial(a, id, '1*1*0'), expected, 'node A answers from the state node B wrote, not from its own copy');
    const stored = (await sessions.read(id))!;
    t.ok(stored.revision > afterB, "and its write landed after node B's");

    // A gateway retry of node B's step, reaching node A after a newer write elsewhere: answered from the store.
    await dial(b, id, '1*1*0*2');
    t.equal(
      await dial(a, id, '1*1*0*2'),
      (await sessions.read(id))!.value.screen,
      'a retry is answered with the stored screen',
    );
  },
);

t.test('a retried dial reaching a cold actor answers the live session, and replaces nothing', async (t) => {
  const id = 'warm-redial-1';
  const first = await dial(a, id, '');
  t.match(first, /^CON /, 'node A starts the session');
  const started = (await sessions.read(id))!;
  // The gateway retries the dial through node B, which has never run this actor (it assumes a new session first).
  t.equal(await dial(b, id, ''), first, 'the retry gets the same screen');
  t.equal((await sessions.read(id))!.revision, started.revision, 'nothing replaced the live session');
  t.equal(await dial(b, id, '', '+254700000999'), INVALID_INPUT, 'another phone cannot take it over');
  t.equal((await sessions.read(id))!.revision, started.revision, 'nor write it');
});

t.test('a step whose http call another node committed is replayed on a stale copy, not called again', async (t) => {
  const id = 'warm-http-1';
  const shop = (runtime: ActorRuntime, text: string) => dial(runtime, id, text, PHONE, '*500#');
  t.match(await shop(a, ''), /^CON Shop\n/, 'node A starts the session: its actor holds step 1');
  const balance = await shop(b, '1');
  t.equal(balance, 'CON Balance 7 for Warm\n0. Back', 'node B runs the http step and commits it');
  t.equal(backend.callsTo('/balance').length, 1);
  // The gateway's retry of that step reaches node A, whose copy is still at step 1.
  t.equal(await shop(a, '1'), balance, 'node A answers the committed screen');
  t.same(
    backend.callsTo('/balance').map((call) => call.headers['idempotency-key']),
    [`${id}:2`],
    'the endpoint was called once, by node B',
  );
  // A new step on node A (its copy now fresh): Back, and Balance again, a new key.
  await shop(a, '1*0');
  await shop(a, '1*0*1');
  t.same(
    backend.callsTo('/balance').map((call) => call.headers['idempotency-key']),
    [`${id}:2`, `${id}:4`],
  );
});
