// USSD in cluster mode while one of three NATS servers is dead (kill -9 of the server leading the sessions
// journal): every step is still answered with its screen, not the END text. Two things made steps fail here
// before: an append made while the journal's stream elects a new leader has no responder (it now waits for the
// election), and nats-server 2.10.27 places about a third of new readers (R1 consumers) on the dead server, where
// their creation is never answered (a reader is now created again after 1 s). A node restarted meanwhile loads
// every partition anew, with one reader each.
import t from 'tap';
import { connectCluster } from '../dist/src/cluster/connection.js';
import { startTestNodes } from './helpers/cluster-nodes.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';

const nats = await startTestNatsCluster(t);
const { nodes } = await startTestNodes(t, nats, { count: 1 });
const node = nodes[0];

/** One new session's dial: its answer and how long it took. */
const dial = async (name: string) => {
  const started = Date.now();
  const response = await fetch(`${node.url}/api/ussd`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      sessionId: `${name}-${Date.now()}-${Math.random()}`,
      serviceCode: '*384#',
      phoneNumber: `+2547${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`,
      text: '',
    }),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: response.status, text: await response.text(), ms: Date.now() - started };
};

// The journal stream's leader, as any node reads the cluster.
const observer = await connectCluster({ NATS_URL: nats.urls.split(','), NATS_PREFIX: 'sar' }, 'test-observer');
t.teardown(() => observer.close());
const journalLeader = async () => (await observer.jsm.streams.info('sar_journal_ussd')).cluster?.leader;

t.test(
  'with the journal leader killed, every USSD step answers its screen, before and after a node restart',
  async (t) => {
    t.match((await dial('before')).text, /^CON /, 'with every server up');
    const leader = await journalLeader();
    const index = nats.servers.findIndex((server) => server.name === leader);
    t.ok(index >= 0, `the journal's leader is ${leader}`);
    await nats.kill(index);

    const steps = [];
    for (let i = 0; i < 6; i++) steps.push(await dial(`during-${i}`));
    await node.restart();
    for (let i = 0; i < 8; i++) steps.push(await dial(`restarted-${i}`));
    for (const [i, step] of steps.entries()) {
      t.equal(step.status, 200, `step ${i}: 200`);
      t.match(step.text, /^CON /, `step ${i}: its screen, not END (${step.ms} ms)`);
    }
    t.comment(`step times with ${leader} dead: ${steps.map((step) => step.ms).join(', ')} ms`);
  },
);
