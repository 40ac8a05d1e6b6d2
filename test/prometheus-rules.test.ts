// deploy/prometheus/alerts.yml and deploy/grafana/session-actor-runtime.json against the real thing: promtool checks
// and unit-tests the rules; a real Prometheus scrapes a real server (cluster mode on one NATS server, so the cluster
// figures exist too) under a little load, evaluates the rules and every dashboard expression. The alerts this load
// should raise (5xx and temporarily-unavailable answers from a chain node that is down, an actor host restart) are
// raised; the others stay quiet; every expression returns data; every metric they name is in /metrics.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parse } from 'yaml';
import { formatKey, generateKey } from '../dist/src/tools/mint-ucan.js';
import { scrape } from './helpers/metrics.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';
import { eventually } from './helpers/oracle.js';
import { metricNamesIn, startPrometheus } from './helpers/prometheus.js';
import { startChildServer } from './helpers/child-server.js';
import { startTestServer } from './helpers/server.js';
import { ensureSystemTool } from './helpers/system-tools.js';
import { GatewaySession } from './helpers/ussd-gateway.js';

t.setTimeout(120_000);

const RULES_DIR = fileURLToPath(new URL('../deploy/prometheus/', import.meta.url));
const RULES = `${RULES_DIR}alerts.yml`;
const DASHBOARD = fileURLToPath(new URL('../deploy/grafana/session-actor-runtime.json', import.meta.url));
const JOB = 'session-actor-runtime';

interface RuleState {
  state: string;
  health: string;
  lastError?: string;
}
interface Rule {
  alert: string;
  expr: string;
}
const rules: Rule[] = parse(readFileSync(RULES, 'utf8')).groups.flatMap((group: { rules: Rule[] }) => group.rules);
const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8'));
const panelExprs: { panel: string; expr: string }[] = dashboard.panels
  .filter((panel: any) => panel.targets)
  .flatMap((panel: any) => panel.targets.map((target: any) => ({ panel: panel.title, expr: target.expr })));
/** What Grafana puts in for its variables: every instance, a window of several 1 s scrapes, the last minutes. */
const asGrafanaWould = (expr: string) =>
  expr.replaceAll('$instance', '.*').replaceAll('$__rate_interval', '20s').replaceAll('$__range', '5m');

t.test('promtool: the rules are valid and their unit tests pass (each alert fires, and stays quiet)', async (t) => {
  const promtool = ensureSystemTool('promtool', 'prometheus');
  const check = spawnSync(promtool, ['check', 'rules', RULES], { encoding: 'utf8' });
  t.equal(check.status, 0, `${check.stdout}${check.stderr}`);
  const test = spawnSync(promtool, ['test', 'rules', 'alerts.test.yml'], { cwd: RULES_DIR, encoding: 'utf8' });
  t.equal(test.status, 0, `${test.stdout}${test.stderr}`);
  // Every alert has a unit test.
  const tested = readFileSync(`${RULES_DIR}alerts.test.yml`, 'utf8');
  for (const { alert } of rules) t.match(tested, new RegExp(`alertname: ${alert}\\n`), `${alert} is unit-tested`);
});

t.test('a real Prometheus scraping a real server: the right alerts, data for every panel', async (t) => {
  // A chain node that is not there: every gateway query answers 503 (UNAVAILABLE).
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const deadPort = (closed.address() as { port: number }).port;
  await new Promise((resolve) => closed.close(resolve));

  const gateway = {
    GATEWAY_GRPC_TARGET: `127.0.0.1:${deadPort}`,
    GATEWAY_DESCRIPTORS: 'bundled',
    GATEWAY_TIMEOUT_MS: '500',
  };
  // One node alone (LMDB) in this process, one in cluster mode (journal, NATS, partitions) as a process of its own
  // (so with a registry of its own).
  const nats = await startTestNatsCluster(t, 1);
  const [single, clustered] = await Promise.all([
    startTestServer(t, { env: gateway }),
    startChildServer(t, {
      ...gateway,
      NATS_URL: nats.urls,
      PIN_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      ORACLE_PRIVATE_KEY: formatKey(await generateKey()),
      RATE_LIMIT_ALLOWLIST: '127.0.0.1',
      ACTOR_THREADS: '1',
    }),
  ]);
  const urls = [single.url, clustered.url];
  const prometheus = await startPrometheus(t, {
    job: JOB,
    targets: urls.map((url) => new URL(url).host),
    ruleFiles: [RULES],
  });

  // A little load on both until the test has seen what it waits for: USSD sessions, gateway queries, chat turns
  // refused (no credentials).
  let loading = true;
  let sessions = 0;
  const load = (async () => {
    while (loading) {
      await Promise.all(
        urls.map(async (url) => {
          const session = new GatewaySession(url, `prom-${sessions++}`);
          for (const input of [undefined, '1', '1', '0']) await session.send(input);
          await fetch(`${url}/ixo/entity/params`).then((res) => res.arrayBuffer());
          await fetch(`${url}/messages/prom-chat`, { method: 'POST', body: '{}' }).then((res) => res.arrayBuffer());
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  t.teardown(async () => {
    loading = false;
    await load;
  });

  /** Rule name -> its state (inactive, pending, firing), its health and its last error, once `ready` holds. */
  const ruleStates = (what: string, ready: (states: Map<string, RuleState>) => boolean) =>
    eventually(
      async () => {
        const data = await prometheus.api('rules');
        const byName = new Map<string, RuleState>();
        for (const group of data.groups) for (const rule of group.rules) byName.set(rule.name, rule);
        return ready(byName) ? byName : undefined;
      },
      what,
      1200,
    );
  const raised = (states: Map<string, RuleState>, names: string[]) =>
    names.every((name) => states.has(name) && states.get(name)!.state !== 'inactive');

  // The chain node down: 5xx and 503 answers.
  await ruleStates('the 5xx alerts', (states) => raised(states, ['SarHttp5xx', 'SarTemporarilyUnavailable']));

  // Every dashboard expression returns a number while the load runs (the load above feeds each).
  // A rate over 20 s can be empty for a moment on a loaded machine (no commit in that window): each expression
  // gets a few seconds to show data, and its last answer is reported.
  for (const { panel, expr } of panelExprs) {
    let values: number[] = [];
    await eventually(
      async () => {
        const { result } = await prometheus.api('query', { query: asGrafanaWould(expr) });
        values = result.map((sample: { value: [number, string] }) => Number(sample.value[1]));
        return values.some((value) => !Number.isNaN(value)) || undefined;
      },
      `${panel}: data`,
      400,
    ).catch(() => undefined);
    t.ok(
      values.some((value: number) => !Number.isNaN(value)),
      `${panel}: ${expr} gives ${JSON.stringify(values)}`,
    );
  }

  // Actor host 0 dies (and is restarted).
  await single.runtime.terminateHost(0);
  const EXPECTED = ['SarHttp5xx', 'SarTemporarilyUnavailable', 'SarActorHostRestarted'];
  const states = await ruleStates('the host restart alert', (states) => raised(states, EXPECTED));
  t.equal(states.size, rules.length, 'Prometheus loaded every rule');
  // A commit's time is the disk's: on a disk shared with busy work (a loaded machine) commits are slow for real, and
  // the alert is right to be pending, as long as its expression holds in the data it judged.
  const DISK_BOUND = new Set(['SarStoreCommitSlow']);
  for (const [name, rule] of states) {
    t.equal(rule.health, 'ok', `${name} evaluates ${rule.lastError ?? ''}`);
    if (EXPECTED.includes(name)) t.not(rule.state, 'inactive', `${name} is ${rule.state}`);
    else if (DISK_BOUND.has(name) && rule.state !== 'inactive') {
      const { result } = await prometheus.api('query', { query: rules.find((r) => r.alert === name)!.expr });
      const values = result.map((sample: { value: [number, string] }) => sample.value[1]);
      t.ok(values.length > 0, `${name} is ${rule.state}, and its expression holds: ${JSON.stringify(values)}`);
    } else t.equal(rule.state, 'inactive', `${name} stays quiet`);
  }
  loading = false;
  await load;

  // Every metric named is one the server exports (HELP/TYPE lines show even a family without samples yet).
  const exported = await scrape(clustered.url);
  const named = new Set([...panelExprs, ...rules].flatMap(({ expr }) => metricNamesIn(expr)));
  t.ok(named.size > 20, `${named.size} metric names found`);
  for (const name of named) {
    if (name === 'up') continue; // Prometheus's own, per target
    const family = name.replace(/_(bucket|count|sum)$/, '');
    t.ok(exported.types.has(name) || exported.types.get(family) === 'histogram', `${name} is in the server's /metrics`);
  }
  t.ok(sessions > 0, `${sessions} USSD sessions during the test`);
});
