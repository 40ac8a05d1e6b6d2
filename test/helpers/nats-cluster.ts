// A real 3-server NATS cluster with JetStream on loopback for a test file (one per file: starting one takes ~1 s).
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startNatsCluster, type NatsCluster } from '../../dist/src/tools/local-nats-cluster.js';
import { ensureSystemTool } from './system-tools.js';

export type { NatsCluster } from '../../dist/src/tools/local-nats-cluster.js';

const INSTALL = fileURLToPath(new URL('../../scripts/install-nats-server.sh', import.meta.url));
let ensured: string | undefined;

/**
 * nats-server >= 2.10.23 on PATH (cluster mode needs `sync_interval: always`): scripts/install-nats-server.sh
 * installs Debian trixie's when it is missing or older (as root; it says what to do otherwise).
 */
export function ensureNatsServer(): string {
  if (ensured) return ensured;
  try {
    execFileSync('bash', [INSTALL], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 900_000 });
  } catch (error) {
    throw new Error(
      `nats-server >= 2.10.23 is needed and ${INSTALL} failed: ${(error as { stderr?: Buffer }).stderr?.toString() ?? (error as Error).message}`,
    );
  }
  return (ensured = ensureSystemTool('nats-server', 'nats-server'));
}

/**
 * Starts the cluster and waits for its JetStream meta leader; `t.teardown` stops it and removes its store dirs. The
 * stores are thrown away, so teardown kills the servers (SIGKILL) instead of a graceful stop nothing waits for;
 * teardowns run last-registered first, so the file's nodes and clients are gone by then.
 */
export async function startTestNatsCluster(t: { teardown(fn: () => unknown): void }, size = 3): Promise<NatsCluster> {
  const binary = ensureNatsServer();
  const cluster = await startNatsCluster({ size, binary });
  t.teardown(async () => {
    await Promise.all(cluster.servers.map((_, index) => cluster.kill(index)));
    await cluster.stop();
  });
  return cluster;
}

/**
 * For a read through a server still catching up: the stream's follower that is not the meta leader (to pause:
 * readers must still be placed meanwhile), and the stream leader's URL (a connection there only is answered while
 * the follower is paused).
 */
export function laggingFollower(
  cluster: NatsCluster,
  metaLeader: string,
  streamLeader: string,
): { lagging: NatsCluster['servers'][number]; leaderUrl: string } {
  return {
    lagging: cluster.servers.find((server) => server.name !== metaLeader && server.name !== streamLeader)!,
    leaderUrl: cluster.servers.find((server) => server.name === streamLeader)!.url,
  };
}

/** Runs `work` with the servers' processes paused (SIGSTOP), and resumes them however `work` ends. */
export async function whilePaused<R>(
  servers: readonly { pid: number | undefined }[],
  work: () => Promise<R>,
): Promise<R> {
  for (const server of servers) process.kill(server.pid!, 'SIGSTOP');
  try {
    return await work();
  } finally {
    for (const server of servers) process.kill(server.pid!, 'SIGCONT');
  }
}
