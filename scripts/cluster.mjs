// `npm run cluster`: a local cluster on loopback to try cluster mode with, until Ctrl-C: 3 nats-server processes
// with JetStream (client ports 4222-4224) and 3 server nodes (ports 3001-3003), each range used when free, else
// free ports are picked. Ctrl-C or SIGTERM stops the nodes, then NATS, and removes the temp data. How the nodes
// share actors, records and events: docs/cluster.md.
//
// The servers run in process groups of their own: a terminal's Ctrl-C goes to the whole foreground group, and NATS
// stopped together with the nodes would leave them failing their last writes. With the output piped (`| tee log`)
// the reader dies of the same Ctrl-C, so writes to stdout fail (EPIPE) and are dropped rather than ending the
// script before it cleaned up. Should the script die without stopping them (kill -9), the kernel kills every
// server it started (setpriv --pdeathsig: parentDeathCommand in src/tools/local-nats-cluster.ts); the temp data stays.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalNodes } from '../dist/src/tools/local-nodes.js';
import { findNatsServer, startNatsCluster } from '../dist/src/tools/local-nats-cluster.js';

for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});

const natsServer = findNatsServer();
if (!natsServer) {
  console.error('nats-server is not installed: sudo scripts/install-nats-server.sh (nats-server >= 2.10.23)');
  process.exit(1);
}

/** True when every port can be bound on 127.0.0.1 now. */
async function portsFree(ports) {
  const free = (port) =>
    new Promise((resolve) => {
      const probe = createServer();
      probe.once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
  return (await Promise.all(ports.map(free))).every(Boolean);
}

const range = (first, count = 3) => Array.from({ length: count }, (_, i) => first + i);

const dataDir = mkdtempSync(join(tmpdir(), 'sar-cluster-'));
let nats;
let nodes;
let stopping = false;
const stop = async (reason, code = 0) => {
  if (stopping) {
    console.log(`${reason}: already stopping (a node drains for up to 15 s)`);
    return;
  }
  stopping = true;
  console.log(`\n${reason}: stopping the nodes, then the NATS cluster ...`);
  try {
    await nodes?.stop();
    console.log('nodes stopped');
    await nats?.stop();
    console.log('NATS stopped');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(`stopped, temp data removed (${dataDir})`);
  process.exit(code);
};
// Kept for repeats: a second Ctrl-C's default action would end the script mid-stop, NATS not stopped, data left.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => void stop(signal));

const natsPorts = { client: 4222, cluster: 6222, monitor: 8222 };
const fixedNats = await portsFree([
  ...range(natsPorts.client),
  ...range(natsPorts.cluster),
  ...range(natsPorts.monitor),
]);
console.log(
  `starting 3 nats-server processes with JetStream on 127.0.0.1${fixedNats ? '' : ' (4222-4224 busy: picking free ports)'} ...`,
);
try {
  mkdirSync(join(dataDir, 'nats'));
  nats = await startNatsCluster({
    binary: natsServer,
    basePorts: fixedNats ? natsPorts : undefined,
    dataDir: join(dataDir, 'nats'),
    ownProcessGroup: true,
  });
  await nats.waitForMetaLeader();

  const nodePorts = (await portsFree(range(3001))) ? range(3001) : undefined;
  console.log(`starting 3 nodes${nodePorts ? '' : ' (3001-3003 busy: picking free ports)'} ...`);
  const startNodes = (ports, dir) =>
    startLocalNodes({
      natsUrl: nats.urls,
      natsMonitorUrl: nats.monitorUrls,
      ports,
      dataDir: join(dataDir, dir),
      ownProcessGroup: true,
      env: { LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' },
      // Warnings and errors of the nodes, one line each, so a person sees what goes wrong.
      onLog(nodeId, line) {
        try {
          const entry = JSON.parse(line);
          if (entry.level >= 40) console.log(`[${nodeId}] ${entry.level >= 50 ? 'ERROR' : 'WARN'} ${entry.msg}`);
        } catch {
          if (line.trim()) console.log(`[${nodeId}] ${line}`);
        }
      },
    });
  try {
    nodes = await startNodes(nodePorts, 'nodes');
  } catch (error) {
    // The ports were free when probed and something else took one before a node bound it: free ports instead.
    if (!nodePorts || !/Cannot listen on|EADDRINUSE/.test(error.message)) throw error;
    console.log('a port of 3001-3003 was taken meanwhile: starting the nodes on free ports ...');
    nodes = await startNodes(undefined, 'nodes-free-ports');
  }
} catch (error) {
  console.error(`could not start the cluster:\n${error.message}`);
  await stop('start-up failed', 1);
}

const [first, second] = nodes.nodes;
const otherNodes = nodes.nodes
  .slice(1)
  .map((n) => n.url)
  .join(',');
const natsMonitors = nats.servers.map((s) => `--nats-monitor http://127.0.0.1:${s.monitorPort}`).join(' ');
console.log(`
NATS (JetStream, 3 servers):
${nats.servers.map((s) => `  ${s.name}  ${s.url}  monitoring http://127.0.0.1:${s.monitorPort}/jsz`).join('\n')}
  NATS_URL=${nats.urls}

Data (removed on exit): ${dataDir}

Nodes (each its own process with its actor hosts):
${nodes.nodes.map((n) => `  ${n.nodeId}  ${n.url}  pid ${n.pid}`).join('\n')}

Try it:
  curl ${first.url}/health
  curl -X POST ${first.url}/api/ussd -H 'content-type: application/json' \\
    -d '{"sessionId":"try-1","serviceCode":"*384#","phoneNumber":"+254712345678","text":""}'
  curl -X POST ${second.url}/api/ussd -H 'content-type: application/json' \\
    -d '{"sessionId":"try-1","serviceCode":"*384#","phoneNumber":"+254712345678","text":"1"}'   # next step, other node
  npm run ussd -- --url ${first.url}/api/ussd
  (the same with the other nodes' URLs; API docs at ${first.url}/docs)

Load it, with the CPU and NATS messages per step of every process (docs/load.md):${
  process.env.RATE_LIMIT_ALLOWLIST
    ? ''
    : `
  (the rate limit, RATE_LIMIT_MAX requests a minute per address, would refuse most of it from here: start the
  cluster as RATE_LIMIT_ALLOWLIST=127.0.0.1 npm run cluster first)`
}
  npm run load -- --target ${first.url} --scenario ussd --connections 48 --think 0 --duration 30s \\
    --metrics-target ${otherNodes} \\
    ${natsMonitors}

A fourth node joins with:
  NATS_URL=${nats.urls} NATS_MONITOR_URL=${nats.monitorUrls} NODE_ID=node-4 PORT=3004 DATA_DIR=./data/node-4 \\
  PIN_ENCRYPTION_KEY=${nodes.keys.PIN_ENCRYPTION_KEY} ORACLE_PRIVATE_KEY=${nodes.keys.ORACLE_PRIVATE_KEY} npm start

Any node answers for any session (actors are routed by partition, records live in JetStream): send the steps
of one USSD session to different nodes, or kill -9 a node's pid and keep going on the others. docs/cluster.md
says how it works and what is not done yet ("Status").
cluster ready: ${nodes.nodes.map((n) => n.url).join(' ')} (Ctrl-C stops everything and removes its data)`);
