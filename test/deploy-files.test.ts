// Every file in deploy/ against the server it deploys (no Docker engine or cluster runs here: the files are read,
// not run): the variables each sets are the configuration schema's and pass its validation as a production start;
// ports, probes and health checks name the routes and port the server serves (a real server answers them); every
// stop grace covers the drain; versions are those the server needs; the units never restart a configuration error.
import { spawnSync, execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import type { Test } from 'tap';
import { coreEnv, loadConfig, type Config } from '../dist/src/app/config.js';
import { ussdEnv } from '../dist/src/ussd/config.js';
import { oracleEnv } from '../dist/src/oracle/config.js';
import { gatewayEnv } from '../dist/src/gateway/config.js';
import { metricsEnv } from '../dist/src/metrics/config.js';
import { playgroundEnv } from '../dist/src/playground/config.js';
import { clusterEnv } from '../dist/src/cluster/config.js';
import { formatKey, generateKey } from '../dist/src/tools/mint-ucan.js';
import {
  atLeast,
  composeEnv,
  composeSeconds,
  containerEnv,
  enginesAllow,
  imageVersion,
  objectOf,
  parseEnvFile,
  parseUnit,
  unitValue,
  yamlDocuments,
  type EnvSource,
  type Secrets,
} from './helpers/deploy-files.js';
import { ensureNatsServer } from './helpers/nats-cluster.js';
import { startTestServer } from './helpers/server.js';
import { parse } from 'yaml';

const VARIABLES = new Set(
  [coreEnv, ussdEnv, oracleEnv, gatewayEnv, metricsEnv, playgroundEnv, clusterEnv].flatMap(Object.keys),
);
const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const SERVER_IMAGE = `session-actor-runtime:${pkg.version}`;
/** nats-server that fsyncs before acknowledging (docs/cluster.md, "What acknowledged means"). */
const NATS_FLOOR = [2, 10, 23];
/** src/app/main.ts: a drain that outlasts SHUTDOWN_TIMEOUT_MS is ended this long after it. */
const HARD_EXIT_SECONDS = 5;
const HEALTH_CHECK = ['node', 'dist/src/tools/health-check.js', '--path', '/health'];

const secrets: Secrets = {
  PIN_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
  ORACLE_PRIVATE_KEY: formatKey(await generateKey()),
  OPERATOR_TOKEN: randomBytes(24).toString('hex'),
};
const checked = new Set<string>();
const read = (path: string) => (checked.add(path), path);
const filesIn = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesIn(join(dir, entry.name)) : [join(dir, entry.name)],
  );

/** The file's server variables: each one the schema declares, together a valid production configuration. */
function serverConfig(t: Test, where: string, env: Record<string, string>): Config {
  for (const name of Object.keys(env)) t.ok(VARIABLES.has(name), `${where}: ${name} is a variable of the server`);
  const config = loadConfig(env);
  t.equal(config.NODE_ENV, 'production', `${where}: a production start`);
  return config;
}
const stopNeeds = (config: Config, preStop = 0) => preStop + config.SHUTDOWN_TIMEOUT_MS / 1000 + HARD_EXIT_SECONDS;

/** An env example's variables, its empty placeholders given the secrets' values. */
function exampleEnv(path: string): Record<string, string> {
  const { set, commented } = parseEnvFile(read(path));
  const env: Record<string, string> = { ...set };
  for (const [name, value] of Object.entries(set)) {
    if (value !== '') continue;
    if (!(name in secrets)) throw new Error(`${path}: ${name} is left empty and is no secret`);
    env[name] = secrets[name as keyof Secrets];
  }
  // What it shows commented out must be valid as written too.
  return { ...commented, ...env };
}

const natsImages = new Set<string>();
/** The server image's own ENV (NODE_ENV, PORT, DATA_DIR), under what compose and Kubernetes set. */
const IMAGE_ENV = Object.fromEntries(
  [...readFileSync('deploy/cluster/Dockerfile', 'utf8').matchAll(/^ENV (.+)$/gm)].flatMap((m) =>
    m[1].split(/\s+/).map((pair) => pair.split('=') as [string, string]),
  ),
);

t.test('the systemd units: exit 78 is never restarted, the drain fits the stop timeout', async (t) => {
  for (const path of filesIn('deploy').filter((p) => p.endsWith('.service'))) {
    const unit = parseUnit(read(path));
    const start = unitValue(unit, 'Service', 'ExecStart') ?? '';
    const envFile = unitValue(unit, 'Service', 'EnvironmentFile') ?? '';
    const example = join(dirname(path), `${basename(envFile)}.example`);
    t.equal(unitValue(unit, 'Service', 'Restart'), 'on-failure', `${path} restarts on failure`);
    if (start.includes('nats-server')) {
      t.match(start, /nats-server -c \/etc\/sar\/nats-server\.conf$/, `${path} runs the shared NATS config`);
      exampleEnv(example);
      continue;
    }
    t.match(start, / dist\/src\/app\/main\.js$/, `${path} runs the server`);
    t.same(unit.get('Service')?.get('RestartPreventExitStatus'), ['78'], `${path}: a configuration error stays down`);
    t.equal(unitValue(unit, 'Service', 'KillSignal'), 'SIGTERM', `${path} drains on stop`);
    const config = serverConfig(t, example, exampleEnv(example));
    const timeout = Number(unitValue(unit, 'Service', 'TimeoutStopSec'));
    t.ok(timeout >= stopNeeds(config), `${path}: TimeoutStopSec=${timeout} covers the drain`);
    const post = unitValue(unit, 'Service', 'ExecStartPost');
    if (path.startsWith('deploy/single/')) {
      t.equal(post, `/usr/bin/${HEALTH_CHECK.join(' ')} --wait 60`, `${path} starts once /health answers`);
      t.ok(Number(unitValue(unit, 'Service', 'TimeoutStartSec')) > 60, `${path}: the start timeout covers the wait`);
    }
  }
});

t.test('the compose files: variables, ports, health checks, stop grace and images', async (t) => {
  for (const path of filesIn('deploy').filter((p) => p.endsWith('compose.yaml'))) {
    const [compose] = yamlDocuments(read(path));
    for (const [name, service] of Object.entries<any>(compose.services)) {
      if (String(service.image).startsWith('nats:')) {
        natsImages.add(service.image);
        continue;
      }
      const where = `${path} ${name}`;
      t.equal(service.image, SERVER_IMAGE, `${where}: the package's version`);
      t.equal(service.build.dockerfile, 'deploy/cluster/Dockerfile');
      const config = serverConfig(t, where, { ...IMAGE_ENV, ...composeEnv(service.environment, secrets) });
      for (const mapping of service.ports ?? [])
        t.equal(Number(String(mapping).split(':').at(-1)), config.PORT, `${where}: publishes PORT (${mapping})`);
      t.same(service.healthcheck?.test, ['CMD', ...HEALTH_CHECK], `${where}: the health check asks /health`);
      const grace = composeSeconds(service.stop_grace_period ?? '10s');
      t.ok(grace >= stopNeeds(config), `${where}: stop_grace_period ${grace} s covers the drain`);
      t.ok(
        service.volumes.some((volume: string) => volume.endsWith(`:${config.DATA_DIR}`)),
        `${where}: DATA_DIR on a volume`,
      );
    }
  }
});

t.test('the Kubernetes manifests: StatefulSets, probes, grace, Secrets, NATS', async (t) => {
  const dir = 'deploy/kubernetes';
  const secret = objectOf(yamlDocuments(read(`${dir}/secret.example.yaml`)), 'Secret');
  t.same(Object.keys(secret.stringData).sort(), Object.keys(secrets).sort(), 'the Secret holds the three keys');
  const nats = yamlDocuments(read(`${dir}/nats.yaml`));
  const natsSet = objectOf(nats, 'StatefulSet', 'nats');
  const natsPorts = Object.fromEntries(
    natsSet.spec.template.spec.containers[0].ports.map((p: any) => [p.name, p.containerPort]),
  );
  const headless = objectOf(nats, 'Service', natsSet.spec.serviceName);
  t.equal(headless.spec.clusterIP, 'None', 'the NATS servers have stable names');
  const natsHosts = Array.from({ length: natsSet.spec.replicas }, (_, i) => `nats-${i}.${headless.metadata.name}`);

  for (const [file, replicas] of [
    ['single.yaml', 1],
    ['cluster.yaml', 3],
  ] as const) {
    const documents = yamlDocuments(read(`${dir}/${file}`));
    const set = objectOf(documents, 'StatefulSet');
    const where = `${file} ${set.metadata.name}`;
    const pod = set.spec.template.spec;
    const [container] = pod.containers;
    t.equal(set.spec.replicas, replicas, `${where}: ${replicas} replica(s)`);
    t.equal(container.image, SERVER_IMAGE, `${where}: the package's version`);
    const resolve = (source: EnvSource) => {
      if ('field' in source) {
        t.equal(source.field, 'metadata.name', `${where}: only the pod's name comes from the pod`);
        return `${set.metadata.name}-0`;
      }
      t.equal(source.secret.name, secret.metadata.name, `${where}: keys from the Secret`);
      t.ok(source.secret.key in secret.stringData, `${where}: the Secret has ${source.secret.key}`);
      return secrets[source.secret.key as keyof Secrets];
    };
    const env = { ...IMAGE_ENV, ...containerEnv(container, resolve) };
    for (const key of Object.keys(secrets))
      t.ok(container.env.find((e: any) => e.name === key)?.valueFrom, `${key} from a Secret`);
    const config = serverConfig(t, where, env);

    const ports = Object.fromEntries(container.ports.map((p: any) => [p.name, p.containerPort]));
    t.equal(ports.http, config.PORT, `${where}: the http port is PORT`);
    for (const service of documents.filter((d) => d.kind === 'Service'))
      for (const port of service.spec.ports)
        t.ok(port.targetPort in ports, `${service.metadata.name} targets ${port.targetPort}`);
    t.match(container.livenessProbe, { httpGet: { path: '/', port: 'http' } }, `${where}: liveness is /`);
    t.match(container.readinessProbe, { httpGet: { path: '/health', port: 'http' } }, `${where}: readiness is /health`);
    t.match(container.startupProbe, { httpGet: { path: '/', port: 'http' } }, `${where}: liveness waits for the start`);
    const preStop = container.lifecycle.preStop.exec.command;
    t.equal(preStop[0], 'sleep');
    const grace = pod.terminationGracePeriodSeconds;
    t.ok(
      grace >= stopNeeds(config, Number(preStop[1])),
      `${where}: a grace of ${grace} s covers preStop and the drain`,
    );
    t.ok(Number(container.resources.requests.cpu) >= config.ACTOR_THREADS, `${where}: a core per actor host`);
    const mount = container.volumeMounts.find((m: any) => m.mountPath === config.DATA_DIR);
    t.ok(mount, `${where}: DATA_DIR is a mounted volume`);
    t.ok(
      set.spec.volumeClaimTemplates.some((claim: any) => claim.metadata.name === mount?.name),
      `${where}: the volume is the pod's own claim`,
    );
    if (replicas === 1) continue;

    t.equal(set.spec.podManagementPolicy, 'Parallel', `${where}: nodes start without waiting for each other`);
    t.same(
      config.NATS_URL,
      natsHosts.map((host) => `nats://${host}:${natsPorts.client}`),
      `${where}: every NATS server`,
    );
    t.same(
      config.NATS_MONITOR_URL,
      natsHosts.map((host) => `http://${host}:${natsPorts.monitor}`),
      `${where}: every server's monitor, so unsynced ones are refused`,
    );
    t.equal(config.CLUSTER_LINK_PORT, ports.link, `${where}: the node link's port is open`);
    t.equal(config.NODE_ID, `${set.metadata.name}-0`);
  }

  const conf: string = objectOf(nats, 'ConfigMap').data['nats.conf'];
  t.equal(natsSet.spec.replicas, 3, 'three NATS servers');
  t.equal(natsSet.spec.podManagementPolicy, 'Parallel', 'started together: a quorum needs two');
  const lameDuck = (name: string) => Number(new RegExp(`^${name}: (\\d+)s$`, 'm').exec(conf)?.[1]);
  t.ok(
    natsSet.spec.template.spec.terminationGracePeriodSeconds >=
      lameDuck('lame_duck_duration') + lameDuck('lame_duck_grace_period'),
    'the grace covers the lame-duck period',
  );
  natsImages.add(natsSet.spec.template.spec.containers[0].image);
  t.match(conf, /^\s*sync_interval: always$/m, 'JetStream fsyncs before it acknowledges');
  t.same(
    [...conf.matchAll(/nats-route:\/\/([^\s\]]+)/g)].map((m) => m[1]),
    natsHosts.map((host) => `${host}:${natsPorts.cluster}`),
    'routes to every server',
  );
  t.equal(Number(/^listen: [\d.]+:(\d+)$/m.exec(conf)?.[1]), natsPorts.client, 'clients on the client port');
  t.equal(Number(/^http: [\d.]+:(\d+)$/m.exec(conf)?.[1]), natsPorts.monitor, 'monitoring on the monitor port');
  const confFile = join(t.testdir(), 'nats.conf');
  writeFileSync(confFile, conf);
  const tried = spawnSync(ensureNatsServer(), ['-c', confFile, '-t'], {
    env: { PATH: process.env.PATH ?? '', POD_NAME: 'nats-0' },
    encoding: 'utf8',
  });
  t.equal(tried.status, 0, tried.stdout + tried.stderr);
});

t.test('the NATS images are one version, one that fsyncs before acknowledging', async (t) => {
  t.equal(natsImages.size, 1, [...natsImages].join(', '));
  for (const image of natsImages) t.ok(atLeast(imageVersion(image), NATS_FLOOR), `${image} >= 2.10.23`);
});

t.test("the image's Node.js line is one the package supports, and it carries the health check", async (t) => {
  const dockerfile = readFileSync(read('deploy/cluster/Dockerfile'), 'utf8');
  read('deploy/cluster/Dockerfile.dockerignore');
  read('deploy/cluster/nats-server.conf'); // run through nats-server -t by test/deploy-cluster.test.ts
  const majors = [...dockerfile.matchAll(/^FROM node:(\d+)/gm)].map((m) => Number(m[1]));
  t.ok(majors.length > 0);
  for (const major of majors) t.ok(enginesAllow(pkg.engines.node, major), `node ${major} in ${pkg.engines.node}`);
  t.match(dockerfile, /^COPY --from=build \/app\/dist dist$/m, 'dist/ (with dist/src/tools/health-check.js) is in it');
});

t.test('the probes and the health check answer as the files expect them to', async (t) => {
  const server = await startTestServer(t);
  for (const path of ['/', '/health']) t.equal((await fetch(`${server.url}${path}`)).status, 200, `GET ${path}`);
  const check = (port: number, args: string[]) =>
    promisify(execFile)(process.execPath, [HEALTH_CHECK[1], ...args], {
      env: { ...process.env, PORT: String(port) },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
  const closed = await closedPort();
  const [ready, alive, down] = await Promise.all([
    check(server.port, HEALTH_CHECK.slice(2)),
    check(server.port, ['--path', '/']),
    check(closed, HEALTH_CHECK.slice(2)),
  ]);
  t.equal(ready.code, 0, `the health check passes on a serving server ${ready.stderr}`);
  t.equal(alive.code, 0, 'and on its liveness route');
  t.equal(down.code, 1, 'and fails where nothing listens');
  t.match(down.stderr, `health check failed: http://127.0.0.1:${closed}/health: ECONNREFUSED`);
  const missing = await check(server.port, ['--path', '/no-such-route']);
  t.equal(missing.code, 1);
  t.match(missing.stderr, /answered 404/);
});

/** A port nothing listens on: one the kernel just gave out and took back. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

t.test('the dashboard and the alert rules parse', async (t) => {
  // Evaluated by a real Prometheus against a real server, and unit-tested by promtool: test/prometheus-rules.test.ts.
  const dashboard = JSON.parse(readFileSync(read('deploy/grafana/session-actor-runtime.json'), 'utf8'));
  t.equal(dashboard.uid, 'session-actor-runtime');
  for (const file of ['alerts.yml', 'alerts.test.yml']) {
    t.ok(parse(readFileSync(read(`deploy/prometheus/${file}`), 'utf8')), `deploy/prometheus/${file}`);
  }
});

t.test('every file in deploy/ was read by a check above', async (t) => {
  t.same(
    filesIn('deploy').filter((path) => !checked.has(path)),
    [],
  );
});
