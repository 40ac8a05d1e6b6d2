// startLocalNodes on ports another server holds, one answering /health with 200 as a node would (nodes left
// running, a second `npm run cluster` on the first's ports): the nodes it launched cannot listen and exit, and the
// start fails at once saying so. It used to take the other server's 200 for its own nodes being up.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { freePorts } from '../dist/src/tools/local-processes.js';
import { startLocalNodes } from '../dist/src/tools/local-nodes.js';

t.setTimeout(60_000);

t.test('nodes on ports another /health answers 200 on: the start fails fast with the exit and log', async (t) => {
  const [natsPort, ...ports] = await freePorts(3);
  let probes = 0;
  const servers: Server[] = [];
  for (const port of ports) {
    // What a node of another set answers: ok, its own pid and the node id the new node would have.
    const server = createServer((request, response) => {
      if (request.url === '/health') probes++;
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ status: 'ok', pid: process.pid, cluster: { nodeId: 'node-1', jetstream: 'available' } }));
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    servers.push(server);
  }
  t.teardown(() => Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve)))));

  const started = Date.now();
  // Nothing listens on natsPort: a node that could listen would wait for NATS (/health 503), never answer 200.
  const error = await startLocalNodes({ natsUrl: `nats://127.0.0.1:${natsPort}`, count: 2, ports }).then(
    // Reported started: stop them, or they would listen once the other server is gone, and wait for NATS.
    (nodes) => nodes.stop(),
    (error: Error) => error,
  );
  t.ok(error instanceof Error, 'the start fails');
  t.match(String(error), /node node-\d exited while starting/, 'because a node it launched exited');
  t.match(String(error), /EADDRINUSE|Cannot listen on/, "the node's log tail says why");
  t.match(
    String(error),
    /\/health answered 200 by another process \(pid \d+\), not this node \(pid \d+\)/,
    'and names the other answer',
  );
  const elapsed = Date.now() - started;
  t.ok(elapsed < 20_000, `over in ${elapsed} ms, not after the 60 s start timeout`);
  t.ok(probes > 0, 'the other server was asked and answered 200');
  const self = process.pid;
  const children = readFileSync(`/proc/${self}/task/${self}/children`, 'utf8').split(/\s+/).filter(Boolean);
  const nodes = children.filter((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('main.js'));
  t.same(nodes, [], 'no launched node left running');
});
