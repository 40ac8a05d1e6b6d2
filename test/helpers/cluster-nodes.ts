// Real server processes in cluster mode on loopback for a test file, on a NATS cluster the file started
// (test/helpers/nats-cluster.ts). Every process is stopped and every data dir removed in teardown.
import { startLocalNodes, type LocalNodes, type LocalNodesOptions } from '../../dist/src/tools/local-nodes.js';
import type { NatsCluster } from './nats-cluster.js';

export type { LocalNode, LocalNodes } from '../../dist/src/tools/local-nodes.js';

/**
 * Starts `options.count` (default 3) nodes on `nats` and waits until each answers /health with 200. Nodes get one
 * actor host each (ACTOR_THREADS=1: the machine runs three NATS servers besides), no chain (GATEWAY_GRPC_TARGET
 * never dialled) and stop without waiting for a quiet second (SHUTDOWN_QUIET_MS=0) unless `env` says otherwise. Teardown kills them (SIGKILL) and removes their
 * data dirs: a test of the drain stops its nodes itself.
 */
export async function startTestNodes(
  t: { teardown(fn: () => unknown): void },
  nats: NatsCluster,
  options: Omit<LocalNodesOptions, 'natsUrl'> = {},
): Promise<LocalNodes> {
  const cluster = await startLocalNodes({
    natsMonitorUrl: nats.monitorUrls,
    ...options,
    natsUrl: nats.urls,
    // Nothing sends to a node while a test stops or restarts it: no second of quiet to wait for (SHUTDOWN_QUIET_MS).
    // No chain either (no cluster test queries one): a target never dialled and the bundled descriptors instead of
    // an embedded query node asked for reflection, about a second of CPU less per node start.
    env: {
      ACTOR_THREADS: '1',
      SHUTDOWN_QUIET_MS: '0',
      GATEWAY_GRPC_TARGET: '127.0.0.1:9',
      GATEWAY_DESCRIPTORS: 'bundled',
      ...options.env,
    },
  });
  // The file is done with them and their data dirs go: kill -9 instead of a drain nothing waits for.
  t.teardown(async () => {
    await Promise.all(cluster.nodes.map((node) => node.kill('SIGKILL')));
    await cluster.stop();
  });
  return cluster;
}

/** True while a process with this id exists (a zombie not yet reaped counts as alive). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A node's /health answer (the fields the cluster tests read). */
export async function health(node: { url: string }) {
  const response = await fetch(`${node.url}/health`, { signal: AbortSignal.timeout(5_000) });
  return (await response.json()) as {
    status: string;
    database: string;
    cluster: { partitions: { owned: number; total: number }; liveNodes: string[] };
  };
}

/** Polls `probe` every 100 ms until it answers something other than undefined (a throw counts as undefined). */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
