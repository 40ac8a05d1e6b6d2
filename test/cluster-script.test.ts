// `npm run cluster` (scripts/cluster.mjs) as a person runs it: it says ready with three node URLs that answer
// /health in cluster mode, and Ctrl-C (SIGINT) ends it with every process it started (3 nats-server, 3 nodes).
import t from 'tap';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { processAlive } from './helpers/cluster-nodes.js';
import { ensureNatsServer } from './helpers/nats-cluster.js';

t.setTimeout(150_000);

/** Process ids of the direct children of `pid` (those its main thread spawned, from /proc). */
function childrenOf(pid: number): number[] {
  const tasks = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8');
  return tasks.split(/\s+/).filter(Boolean).map(Number);
}

t.test('npm run cluster starts 3 NATS + 3 nodes, and SIGINT stops every one of them', async (t) => {
  ensureNatsServer();
  const script = spawn(process.execPath, ['scripts/cluster.mjs'], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => {
    if (script.exitCode === null) script.kill('SIGKILL');
  });
  const exited = new Promise<number | null>((resolve) => script.once('exit', resolve));
  let output = '';
  script.stderr!.setEncoding('utf8').on('data', (chunk) => (output += chunk));
  const urls = await new Promise<string[]>((resolve, reject) => {
    script.stdout!.setEncoding('utf8').on('data', (chunk) => {
      output += chunk;
      const ready = /cluster ready: (.*) \(Ctrl-C/.exec(output);
      if (ready) resolve(ready[1].split(' '));
    });
    void exited.then((code) => reject(new Error(`the script exited with ${code}:\n${output}`)));
  });
  t.equal(urls.length, 3, 'three node URLs');
  t.match(output, /NATS_URL=nats:\/\/127\.0\.0\.1:\d+,nats:\/\/127\.0\.0\.1:\d+,nats:\/\/127\.0\.0\.1:\d+/);
  t.match(output, /curl -X POST http:\/\/127\.0\.0\.1:\d+\/api\/ussd/, 'says how to try it');

  const ids: (string | undefined)[] = [];
  for (const url of urls) {
    const response = await fetch(`${url}/health`);
    const body = (await response.json()) as { cluster?: { nodeId: string; jetstream: string } };
    t.equal(response.status, 200, `${url} healthy`);
    t.equal(body.cluster?.jetstream, 'available', 'in cluster mode with JetStream');
    ids.push(body.cluster?.nodeId);
  }
  t.same(ids, ['node-1', 'node-2', 'node-3']);

  const children = childrenOf(script.pid!);
  const commands = children.map((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' '));
  t.equal(commands.filter((c) => /nats-server/.test(c)).length, 3, 'three nats-server children');
  t.equal(commands.filter((c) => /dist\/src\/main\.js/.test(c)).length, 3, 'three node children');

  script.kill('SIGINT');
  t.equal(await exited, 0, 'exits 0 on Ctrl-C');
  t.match(output, /stopped, temp data removed/);
  t.same(children.filter(processAlive), [], 'no nats-server or node left behind');
});
