// Main thread: what cluster mode does in the server today: connect to NATS JetStream at start-up (or refuse to
// start), report the connection and JetStream in /health with the node id, close on shutdown. Actors, state and
// events are still node-local (the rate limit is shared: http/server.ts): see docs/cluster.md, "Status".
import * as v from 'valibot';
import type { Logger } from '../log.js';
import { nodeIdOf, type ClusterEnv } from './config.js';
import { connectCluster, type ClusterConnection } from './connection.js';

/** A JetStream call slower than this counts as JetStream unavailable in /health. */
const PROBE_TIMEOUT_MS = 2_000;

export const ClusterHealthSchema = v.object({
  nodeId: v.pipe(v.string(), v.examples(['node-1:3000'])),
  nats: v.pipe(v.picklist(['connected', 'reconnecting', 'closed']), v.description('The NATS connection of this node')),
  server: v.optional(v.pipe(v.string(), v.description('The NATS server this node is connected to'))),
  jetstream: v.pipe(v.picklist(['available', 'unavailable']), v.description('JetStream answered an account-info request')),
  replicas: v.pipe(v.number(), v.description('Replicas of every bucket and stream this node creates')),
  state: v.pipe(v.literal('node-local'), v.description('Where sessions and records live today: the node\'s own LMDB (not yet in JetStream)')),
});

export type ClusterHealth = v.InferOutput<typeof ClusterHealthSchema>;

export interface ClusterNode {
  readonly connection: ClusterConnection;
  nodeId(): string;
  /** The cluster part of /health; healthy when NATS is connected and JetStream answers. */
  health(): Promise<{ healthy: boolean; report: ClusterHealth }>;
  close(): Promise<void>;
}

/** `port()` gives the HTTP port once listening (NODE_ID defaults to hostname:port, and PORT=0 picks one). */
export async function startClusterNode(config: ClusterEnv, log: Logger, port: () => number): Promise<ClusterNode> {
  const nodeId = () => nodeIdOf(config, port());
  const connection = await connectCluster(config, `sar ${config.NODE_ID ?? 'node'}`);
  let state: ClusterHealth['nats'] = 'connected';
  void (async () => {
    for await (const status of connection.nc.status()) {
      if (status.type === 'disconnect' || status.type === 'reconnecting') state = 'reconnecting';
      else if (status.type === 'reconnect') state = 'connected';
      if (status.type === 'disconnect' || status.type === 'reconnect') log.warn({ nats: status.type, server: status.server }, `NATS ${status.type}`);
    }
  })();
  void connection.nc.closed().then(() => (state = 'closed'));
  log.warn(
    { server: connection.nc.info?.server_name, replicas: connection.replicas, prefix: connection.prefix },
    'cluster mode: connected to NATS JetStream; the rate limit is cluster-wide, actors, state and events are still node-local (not wired yet, see docs/cluster.md)',
  );

  const jetstreamAnswers = () =>
    Promise.race([
      connection.jsm.getAccountInfo().then(() => true, () => false),
      new Promise<false>((resolve) => setTimeout(resolve, PROBE_TIMEOUT_MS, false).unref()),
    ]);

  return {
    connection,
    nodeId,
    async health() {
      const jetstream = state === 'connected' && (await jetstreamAnswers()) ? 'available' : 'unavailable';
      const server = state === 'connected' ? connection.nc.info?.server_name : undefined;
      return {
        healthy: state === 'connected' && jetstream === 'available',
        report: { nodeId: nodeId(), nats: state, ...(server ? { server } : {}), jetstream, replicas: connection.replicas, state: 'node-local' },
      };
    },
    // Draining needs a server to flush to: without one, close at once.
    close: () => (connection.nc.isClosed() ? Promise.resolve() : state === 'connected' ? connection.close() : connection.nc.close()),
  };
}
