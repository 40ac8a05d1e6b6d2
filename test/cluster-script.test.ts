// `npm run cluster` (scripts/cluster.mjs) as a person runs it: it says ready with three node URLs that answer
// /health in cluster mode, and Ctrl-C (SIGINT) ends it with every process it started (3 nats-server, 3 nodes),
// also when its output is piped through tee (which the same Ctrl-C ends) and Ctrl-C is pressed twice: nodes first,
// then NATS, data removed. Killed with SIGKILL, it takes them with it all the same.
import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processAlive, until } from './helpers/cluster-nodes.js';
import { ensureNatsServer } from './helpers/nats-cluster.js';

t.setTimeout(150_000);
// The first test's script takes the default ports (NATS 4222-4224, nodes 3001-3003); the others start once it holds
// them, so theirs pick free ports (as they would beside a running cluster) and each start overlaps the first's run.
t.jobs = 3;
let firstHoldsPorts = () => {};
const portsTaken = new Promise<void>((resolve) => (firstHoldsPorts = resolve));

/** Gone: no such process, or a zombie (dead, waiting for its new parent to reap it). */
function gone(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].startsWith('Z');
  } catch {
    return true;
  }
}

/** Process ids of the direct children of `pid` (those its main thread spawned, from /proc). */
function childrenOf(pid: number): number[] {
  const tasks = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8');
  return tasks.split(/\s+/).filter(Boolean).map(Number);
}

t.test('npm run cluster starts 3 NATS + 3 nodes, and SIGINT stops every one of them', async (t) => {
  ensureNatsServer();
  // However this test goes, the others run.
  t.teardown(firstHoldsPorts);
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
      if (ready) firstHoldsPorts();
    });
    void exited.then((code) => reject(new Error(`the script exited with ${code}:\n${output}`)));
  });
  t.equal(urls.length, 3, 'three node URLs');
  t.match(output, /NATS_URL=nats:\/\/127\.0\.0\.1:\d+,nats:\/\/127\.0\.0\.1:\d+,nats:\/\/127\.0\.0\.1:\d+/);
  t.match(output, /curl -X POST http:\/\/127\.0\.0\.1:\d+\/api\/ussd/, 'says how to try it');
  t.match(
    output,
    /npm run load -- --target http:\/\/127\.0\.0\.1:\d+ .*\n.*--metrics-target http:\/\/127\.0\.0\.1:\d+,http:\/\/127\.0\.0\.1:\d+ .*\n\s*(--nats-monitor http:\/\/127\.0\.0\.1:\d+ ?){3}\n/,
    'says how to load it with every process measured',
  );
  t.match(
    output,
    /RATE_LIMIT_ALLOWLIST=127\.0\.0\.1 npm run cluster/,
    'and that the rate limit would refuse that load',
  );
  t.notMatch(output, /\] listening on http/, "the nodes (at LOG_LEVEL warn) leave the start-up lines to the script's");

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
  t.equal(commands.filter((c) => /dist\/src\/app\/main\.js/.test(c)).length, 3, 'three node children');

  script.kill('SIGINT');
  t.equal(await exited, 0, 'exits 0 on Ctrl-C');
  t.match(output, /stopped, temp data removed/);
  t.same(children.filter(processAlive), [], 'no nats-server or node left behind');
});

t.test(
  'killed with SIGKILL (no handler runs), even before it is ready, the script takes every child with it',
  async (t) => {
    ensureNatsServer();
    await portsTaken;
    const script = spawn(process.execPath, ['scripts/cluster.mjs'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise((resolve) => script.once('exit', resolve));
    // What it said, shown if its children never all run.
    let said = '';
    script.stdout.setEncoding('utf8').on('data', (chunk: string) => (said += chunk));
    script.stderr.setEncoding('utf8').on('data', (chunk: string) => (said += chunk));
    let children: number[] = [];
    t.teardown(() => {
      script.kill('SIGKILL');
      for (const pid of children) if (!gone(pid)) process.kill(pid, 'SIGKILL');
    });
    const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
    // Its six children running their programs (past setpriv, which set their parent-death signal): the cluster need
    // not be ready (the nodes take seconds more), and a kill during start-up must take them too.
    const commands = await until(
      'three nats-server and three node children',
      async () => {
        children = childrenOf(script.pid!);
        const commands = children.map(cmdline).filter((c) => !c.startsWith('setpriv'));
        const nats = commands.filter((c) => /nats-server -c /.test(c)).length;
        const nodes = commands.filter((c) => c.includes('dist/src/app/main.js')).length;
        return nats === 3 && nodes === 3 ? commands : undefined;
      },
      60_000,
    ).catch((error: Error) => {
      t.fail(error.message, {
        said: said.trimEnd().split('\n').slice(-12).join('\n'),
        children: children.map((pid) => (gone(pid) ? `${pid} gone` : cmdline(pid))),
      });
      throw error;
    });
    // Nothing removes its temp data: the script dies before it could.
    const dataDir = /-c (\S+)\/nats\/n\d\.conf/.exec(commands.join('\n'))?.[1];
    t.teardown(() => dataDir && rmSync(dataDir, { recursive: true, force: true }));
    script.kill('SIGKILL');
    await exited;
    const killed = Date.now();
    await until('every child gone', async () => (children.every(gone) ? true : undefined), 5_000).catch(() => {});
    t.same(
      children.filter((pid) => !gone(pid)),
      [],
      `no nats-server or node left behind (${Date.now() - killed} ms after the script died)`,
    );
  },
);

t.test(
  'with its output piped (| tee), Ctrl-C at the terminal stops the nodes before NATS and removes the data',
  async (t) => {
    ensureNatsServer();
    await portsTaken;
    const dir = mkdtempSync(join(tmpdir(), 'cluster-pipe-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const log = join(dir, 'log');
    // A shell of its own process group, as a terminal runs a pipeline in the foreground: Ctrl-C is SIGINT to the group.
    const shell = spawn('sh', ['-c', `exec ${process.execPath} scripts/cluster.mjs 2>&1 | tee ${log} > /dev/null`], {
      stdio: 'ignore',
      detached: true,
    });
    const shellExited = new Promise((resolve) => shell.once('exit', resolve));
    let servers: number[] = [];
    t.teardown(() => {
      for (const pid of servers) if (processAlive(pid)) process.kill(pid, 'SIGKILL');
      try {
        process.kill(-shell.pid!, 'SIGKILL');
      } catch {
        // The group is gone already.
      }
    });
    const output = await until(
      'the script says ready in the piped log',
      async () => {
        const text = existsSync(log) ? readFileSync(log, 'utf8') : '';
        return /cluster ready: /.test(text) ? text : undefined;
      },
      120_000,
    );
    const dataDir = /Data \(removed on exit\): (\S+)/.exec(output)?.[1];
    t.ok(dataDir && existsSync(dataDir), 'the script names its data dir, which exists while it runs');
    const script = childrenOf(shell.pid!).find((pid) =>
      readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('cluster.mjs'),
    );
    t.ok(script, 'the script runs under the shell');
    const children = childrenOf(script!);
    const isNats = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('nats-server');
    const natsPids = children.filter(isNats);
    const nodePids = children.filter((pid) => !isNats(pid));
    servers = children;
    t.equal(natsPids.length, 3, 'three nats-server children');
    t.equal(nodePids.length, 3, 'three node children');

    // Ctrl-C: SIGINT to the foreground group (the shell, the script and tee; the servers are in groups of their own).
    process.kill(-shell.pid!, 'SIGINT');
    // An impatient second Ctrl-C while the nodes drain: its default action used to end the script there, NATS left.
    let pressedAgain = false;
    const again = setTimeout(() => {
      pressedAgain = processAlive(script!);
      if (pressedAgain) process.kill(script!, 'SIGINT');
    }, 300);
    t.teardown(() => clearTimeout(again));
    // Watch the order the servers go in. NATS is read before the nodes in each look, so a look that finds NATS gone
    // and a node still up proves NATS went first (a node's drain takes SHUTDOWN_QUIET_MS, so that order would show).
    let natsGoneBeforeNodes = false;
    const deadline = Date.now() + 60_000;
    while (children.some(processAlive) && Date.now() < deadline) {
      const natsGone = !natsPids.every(processAlive);
      if (natsGone && nodePids.some(processAlive)) natsGoneBeforeNodes = true;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    t.same(children.filter(processAlive), [], 'no nats-server or node left behind');
    t.ok(pressedAgain, 'the second Ctrl-C came while the script was stopping');
    t.equal(natsGoneBeforeNodes, false, 'no nats-server stopped while a node still ran');
    await until('the script exited', async () => (processAlive(script!) ? undefined : true), 30_000);
    await shellExited;
    t.notOk(existsSync(dataDir!), 'its data dir is removed');
  },
);
