// A real 3-server NATS cluster with JetStream on loopback for a test file (one per file: starting one takes ~1 s).
import { startNatsCluster, type NatsCluster } from '../../dist/src/tools/local-nats-cluster.js';
import { ensureSystemTool } from './system-tools.js';

export type { NatsCluster } from '../../dist/src/tools/local-nats-cluster.js';

/** Starts the cluster and waits for its JetStream meta leader; `t.teardown` stops it and removes its store dirs. */
export async function startTestNatsCluster(t: { teardown(fn: () => unknown): void }, size = 3): Promise<NatsCluster> {
  const binary = ensureSystemTool('nats-server', 'nats-server');
  const cluster = await startNatsCluster({ size, binary });
  t.teardown(() => cluster.stop());
  return cluster;
}
