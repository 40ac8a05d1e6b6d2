// USSD services as data in cluster mode (issue 40): three real server processes on a real 3-server NATS cluster,
// each reading its own services directory. Two services, paging and a language choice across the nodes (a session's
// steps round-robin, the choice read on another node); a reload on any one node (file change, SIGHUP) published
// through JetStream and served by all, while a running session finishes on its version; a broken reload refused
// on its node with the cluster's version still served; kill -9 of a node mid-session; a sign-up left mid-way
// offered to continue on another node (the saved point in the KV bucket ussd_resume).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startTestNodes, until, type LocalNode } from './helpers/cluster-nodes.js';
import { Scrape } from './helpers/metrics.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';
import { GatewaySession } from './helpers/ussd-gateway.js';
import { SHOP_CODE, SHOP_PRODUCTS_CODE, servicesDir, shopVersion } from './helpers/ussd-services.js';

t.setTimeout(240_000);

const env = { RATE_LIMIT_ALLOWLIST: '127.0.0.1', OPERATOR_TOKEN: 'op', LOG_LEVEL: 'info' };
const dirs = [servicesDir(t), servicesDir(t), servicesDir(t)];
for (const dir of dirs)
  writeFileSync(join(dir, 'signup.yaml'), readFileSync('test/fixtures/ussd-services/signup.yaml'));
const refusals: string[] = [];
const nats = await startTestNatsCluster(t);
const cluster = await startTestNodes(t, nats, {
  env,
  nodeEnv: (index) => ({ USSD_SERVICES_DIR: dirs[index] }),
  onLog: (nodeId, line) => {
    if (line.includes('USSD services reload refused')) refusals.push(`${nodeId} ${line}`);
  },
});
const nodes = cluster.nodes;

/** A gateway session whose requests go round-robin over the nodes, starting at node `from`. */
class Spread extends GatewaySession {
  #next: number;

  constructor(sessionId: string, phone: string, code = SHOP_CODE, from = 0) {
    super('', sessionId, phone, code);
    this.#next = from;
  }

  override resend(url = nodes[this.#next++ % nodes.length].url): Promise<string> {
    return super.resend(url);
  }
}

/** The shop's version new dials get, as each node's /health and /metrics show it. */
async function shopVersions(node: LocalNode): Promise<{ health: string; metrics: string[] }> {
  const health = (await (await fetch(`${node.url}/health`)).json()) as {
    ussd: { services: { id: string; version: string }[] };
  };
  const text = await (await fetch(`${node.url}/metrics`, { headers: { authorization: 'Bearer op' } })).text();
  const loaded = new Scrape(text).samples.filter(
    (sample) => sample.name === 'ussd_services_loaded' && sample.labels.service === 'shop' && sample.value === 1,
  );
  return {
    health: health.ussd.services.find((service) => service.id === 'shop')?.version ?? 'none',
    metrics: loaded.map((sample) => sample.labels.version),
  };
}

/** Waits until every node serves `version` of the shop (in /health and /metrics). */
const everyNodeServes = (version: string) =>
  until(`every node to serve shop@${version}`, async () => {
    const seen = await Promise.all(nodes.map(shopVersions));
    return seen.every((each) => each.health === version && each.metrics.join() === version) ? seen : undefined;
  });

t.test('two services, paging and a language choice, each step on another node', async (t) => {
  await everyNodeServes('1.0.0');
  t.match(await new Spread('c-two-1', '+254733000001', '*384#', 2).send(), /^CON Welcome! Choose an option:/);
  const s = new Spread('c-page-1', '+254733000001');
  t.match(await s.send(), /^CON Welcome to Mama Mboga's shop\n/, 'node 1');
  await s.send('2');
  t.equal(await s.send('2'), 'CON Karibu duka la Mama Mboga\n1. Bidhaa\n2. Lugha\n*. Toka', 'Swahili, on node 3');
  const first = await s.send('1');
  t.match(first, /^CON Bidhaa \(bei kwa KES\):\n[\s\S]*\n5\. Maziwa 500ml 60\n98\. Zaidi\n/);
  const second = await s.send('98');
  t.match(second, /^CON 6\. Mkate 400g 65\n/, 'page 2, on node 3');
  t.equal(await s.send('98'), 'CON 12. Unga wa ngano 2kg 230\n0. Rudi\n*. Toka', 'page 3, on node 1');
  t.equal(await s.send('0'), second, 'Back: page 2, on node 2');
  t.equal(await s.send('11'), 'CON Ngapi? (1-20)\n0. Rudi', 'an option of page 2, on node 3');

  for (const [index, node] of nodes.entries()) {
    const again = new GatewaySession(node.url, `c-lang-${index}`, '+254733000001', SHOP_CODE);
    t.match(await again.send(), /^CON Karibu duka la Mama Mboga\n/, `the choice, read on ${node.nodeId}`);
  }
});

t.test('a sign-up left mid-way is offered on another node and continues with the name typed', async (t) => {
  const phone = '+254733000009';
  const left = new Spread('c-resume-1', phone, '*600#');
  t.equal(await left.send(), 'CON Sign-up. Choose:\n1. Sign up\n*. Exit', 'node 1');
  await left.send('1');
  t.equal(await left.send('Amina Juma'), 'CON Hi Amina Juma. Your town:\n0. Back', 'node 3');
  const again = new Spread('c-resume-2', phone, '*600#', 1);
  t.equal(await again.send(), 'CON You left your sign-up unfinished.\n1. Continue\n2. Start again', 'node 2');
  t.equal(await again.send('1'), 'CON Hi Amina Juma. Your town:\n0. Back', 'continued on node 3');
  t.equal(await again.send('Moshi'), 'CON Choose a 5-digit PIN:', 'the next step, on node 1');
  const other = new Spread('c-resume-3', '+254733000010', '*600#', 2);
  t.equal(await other.send(), 'CON Sign-up. Choose:\n1. Sign up\n*. Exit', 'another phone: not offered');
});

t.test('a reload on any node is published to all; a running session stays on its version', async (t) => {
  const running = new Spread('c-reload-1', '+254733000002', SHOP_PRODUCTS_CODE);
  await running.send();

  writeFileSync(join(dirs[1], 'shop.yaml'), shopVersion('1.1.0', 50));
  await everyNodeServes('1.1.0');
  t.pass('a file change on node 2: every node serves 1.1.0');
  for (const [index, node] of nodes.entries()) {
    const dial = new GatewaySession(node.url, `c-new-${index}`, '+254733000003', SHOP_CODE);
    t.match(await dial.send(), /\(v1\.1\.0\)/, `a new dial on ${node.nodeId}: 1.1.0`);
  }
  t.equal(await running.send('12'), 'CON How many? (1-20)\n0. Back', 'the running session: 1.0.0');
  t.match(await running.send('30'), /^CON Enter a number from 1 to 20\./, 'its rules, on the next node');
  t.match(await running.send('3'), /^CON Item 12: 3 at KES 230 each\n/);

  writeFileSync(join(dirs[2], 'shop.yaml'), shopVersion('1.2.0'));
  await nodes[2].kill('SIGHUP');
  await everyNodeServes('1.2.0');
  t.pass('a reload on node 3: every node serves 1.2.0');
  t.match(await running.send('1'), /^END Order received: item 12 x 3\./, 'the running session ends on 1.0.0');
});

t.test('a broken reload is refused on its node; the cluster serves what it served', async (t) => {
  writeFileSync(join(dirs[0], 'shop.yaml'), shopVersion('1.3.0').replace('next: placed', 'next: nowhere'));
  const refusal = await until('node 1 to refuse the reload', async () =>
    refusals.find((line) => line.startsWith('node-1')),
  );
  t.match(refusal, /shop\.yaml:\d+: states\.confirm\.options\.0\.next: no state named \\"nowhere\\"/);
  const seen = await Promise.all(nodes.map(shopVersions));
  t.same(
    seen.map((each) => each.health),
    ['1.2.0', '1.2.0', '1.2.0'],
  );
  t.match(await new Spread('c-broken-1', '+254733000004').send(), /\(v1\.2\.0\)/);
  writeFileSync(join(dirs[0], 'shop.yaml'), shopVersion('1.2.0'));
});

t.test('kill -9 of a node mid-session: its page and language go on from the other nodes', async (t) => {
  const s = new Spread('c-kill-1', '+254733000001', SHOP_PRODUCTS_CODE, 1);
  t.match(await s.send(), /^CON Bidhaa /, 'Swahili from the choice made before');
  const second = await s.send('98');
  await nodes[0].kill('SIGKILL');
  const survivors = [nodes[1], nodes[2]];
  const on = (i: number) => new GatewaySession(survivors[i % 2].url, s.sessionId, s.phoneNumber, s.serviceCode);
  // Until the dead node's partitions are taken over, a step may answer Service unavailable; the gateway retries.
  const answered = (session: GatewaySession) =>
    until('a survivor to answer', async () => {
      const screen = await session.resend();
      return screen.startsWith('END Service temporarily unavailable') ? undefined : screen;
    });
  const retry = on(0);
  retry.inputs.push(...s.inputs);
  t.equal(await answered(retry), second, 'the last answered step, again from a survivor');
  const next = on(1);
  next.inputs.push(...s.inputs, '98');
  t.equal(await answered(next), 'CON 12. Unga wa ngano 2kg 230\n0. Rudi\n*. Toka', 'its page went on: page 3');
  await nodes[0].restart();
  await everyNodeServes('1.2.0');
  t.pass('the restarted node publishes its directory (1.2.0): the cluster serves the same version');
});
