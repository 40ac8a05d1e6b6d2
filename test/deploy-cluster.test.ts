// deploy/cluster/nats-server.conf, shared by compose.yaml and sar-nats.service: the real nats-server accepts it
// with a machine's values from nats.env.example, and names the variable that is missing without them.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import t from 'tap';
import { ensureNatsServer } from './helpers/nats-cluster.js';

const CONF = 'deploy/cluster/nats-server.conf';

function testConfig(env: Record<string, string>) {
  const binary = ensureNatsServer();
  const run = spawnSync(binary, ['-c', CONF, '-t'], {
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
  });
  return { code: run.status, output: run.stdout + run.stderr };
}

t.test("the NATS config is valid with a machine's environment and refused without it", async (t) => {
  const example = Object.fromEntries(
    readFileSync('deploy/cluster/nats.env.example', 'utf8')
      .split('\n')
      .filter((line) => /^[A-Z_]+=/.test(line))
      .map((line) => line.split(/=(.*)/s).slice(0, 2)),
  );
  t.same(
    Object.keys(example).sort(),
    ['NATS_ROUTE_A', 'NATS_ROUTE_B', 'NATS_SERVER_NAME', 'NATS_STORE_DIR'],
    'the example sets every variable the config reads',
  );
  const valid = testConfig({ ...example, NATS_STORE_DIR: t.testdir() });
  t.equal(valid.code, 0, valid.output);
  t.match(valid.output, /configuration file .* is valid/);

  const missing = testConfig({});
  t.not(missing.code, 0);
  t.match(missing.output, /variable reference for 'NATS_SERVER_NAME'/);
});
