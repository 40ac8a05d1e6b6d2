// `npm run cluster`: a local 3-server NATS JetStream cluster on loopback to try cluster mode with, until Ctrl-C.
// Today it starts the NATS part only: the server does not yet route actors or keep state in JetStream (see
// docs/cluster.md, "Status"), so starting three nodes on it would show three independent servers.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { startNatsCluster } from '../dist/src/cluster/local-nats-cluster.js';

function natsServerBinary() {
  try {
    return execFileSync('sh', ['-c', 'command -v nats-server'], { encoding: 'utf8' }).trim();
  } catch {
    // Debian installs it in /usr/sbin, which is not on every user's PATH.
    if (existsSync('/usr/sbin/nats-server')) return '/usr/sbin/nats-server';
    console.error('nats-server is not installed: apt-get install -y nats-server');
    process.exit(1);
  }
}

const basePorts = { client: 4222, cluster: 6222, monitor: 8222 };
console.log('starting 3 nats-server processes with JetStream on 127.0.0.1 ...');
const cluster = await startNatsCluster({ binary: natsServerBinary(), basePorts }).catch((error) => {
  console.error(`could not start the NATS cluster (are ports ${basePorts.client}-${basePorts.client + 2} free?):\n${error.message}`);
  process.exit(1);
});
const leader = await cluster.waitForMetaLeader();
console.log(`NATS cluster ready, JetStream meta leader ${leader}:`);
for (const server of cluster.servers) console.log(`  ${server.name}  ${server.url}  monitoring http://127.0.0.1:${server.monitorPort}/jsz`);
console.log(`
A node joins it with:
  NATS_URL=${cluster.urls} NODE_ID=node-1 PORT=3001 DATA_DIR=./data/node-1 \\
  PIN_ENCRYPTION_KEY=<64 hex, same on every node> ORACLE_PRIVATE_KEY=<same on every node> npm start

NOT WIRED YET: a node started like this connects to NATS and reports it in /health, but its actors, sessions,
records, rate limits and events stay on that node (its own LMDB). Requests are not yet routed between nodes.
See docs/cluster.md ("Status").

Ctrl-C stops the cluster and removes its data.`);

let stopping = false;
const stop = async (signal) => {
  if (stopping) return;
  stopping = true;
  console.log(`\n${signal}: stopping the NATS cluster ...`);
  await cluster.stop();
  console.log('stopped');
  process.exit(0);
};
process.once('SIGINT', () => void stop('SIGINT'));
process.once('SIGTERM', () => void stop('SIGTERM'));
