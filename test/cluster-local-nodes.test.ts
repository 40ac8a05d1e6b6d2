// startLocalNodes: real server processes in cluster mode on a real 3-server NATS cluster; kill -9, SIGSTOP and
// restart as the cluster tests use them; stop leaves no process and no data behind.
import t from 'tap';
import { existsSync } from 'node:fs';
import { processAlive, startTestNodes } from './helpers/cluster-nodes.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';

t.setTimeout(120_000);

async function health(url: string, timeoutMs = 5_000) {
  const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(timeoutMs) });
  return {
    status: response.status,
    body: (await response.json()) as { status: string; cluster?: { nodeId: string; nats: string; jetstream: string } },
  };
}

t.test('nodes start healthy on the NATS cluster, die by kill -9, pause by SIGSTOP, come back by restart', async (t) => {
  const nats = await startTestNatsCluster(t);
  const cluster = await startTestNodes(t, nats, { count: 2 });
  const [a, b] = cluster.nodes;
  t.not(a.port, b.port, 'own ports');
  t.not(a.dataDir, b.dataDir, 'own data dirs');
  for (const node of cluster.nodes) {
    const { status, body } = await health(node.url);
    t.equal(status, 200, `${node.nodeId} healthy`);
    t.match(body, { status: 'ok', cluster: { nodeId: node.nodeId, nats: 'connected', jetstream: 'available' } });
  }
  t.match(cluster.keys.PIN_ENCRYPTION_KEY, /^[0-9a-f]{64}$/, 'a shared PIN key was generated');

  const oldPid = a.pid;
  await a.kill();
  t.same(await a.exited, { code: null, signal: 'SIGKILL' }, 'kill -9 is an exit by signal');
  t.equal(a.running, false, 'not running');
  await t.rejects(health(a.url), 'nothing answers on its port');
  t.equal((await health(b.url)).status, 200, 'the other node is unaffected');

  await a.restart();
  t.not(a.pid, oldPid, 'a new process');
  t.match(
    (await health(a.url)).body,
    { status: 'ok', cluster: { nodeId: 'node-1' } },
    'same id and port after restart',
  );

  await b.kill('SIGSTOP');
  await t.rejects(health(b.url, 500), 'a stopped node does not answer');
  await b.kill('SIGCONT');
  t.equal((await health(b.url)).status, 200, 'it answers again after SIGCONT');

  const pids = cluster.nodes.map((node) => node.pid);
  const dirs = cluster.nodes.map((node) => node.dataDir);
  await cluster.stop();
  t.same(pids.filter(processAlive), [], 'stop ends every node process');
  t.same(
    dirs.filter((dir) => existsSync(dir)),
    [],
    'stop removes their data dirs',
  );
});
