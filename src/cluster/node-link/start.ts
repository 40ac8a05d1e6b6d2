// Thread: main
// Where a node's link listens. HOST when it names one address; else the address this node reaches
// NATS from, which the other nodes (on the same network as NATS) can reach too.
import { randomBytes } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ClusterEnv } from '../config.js';
import { LinkServer, type LinkServerOptions } from './server.js';

const ANY_ADDRESS = new Set(['', '0.0.0.0', '::', '[::]']);

export function linkHostOf(config: Pick<ClusterEnv, 'CLUSTER_LINK_HOST' | 'HOST'>, nc: NatsConnection): string {
  if (config.CLUSTER_LINK_HOST) return config.CLUSTER_LINK_HOST;
  if (config.HOST && !ANY_ADDRESS.has(config.HOST)) return config.HOST;
  // The client's socket is not in its public API; a client without one (or a stranger transport) falls back.
  const socket = (nc as { protocol?: { transport?: { socket?: { localAddress?: string } } } }).protocol?.transport
    ?.socket;
  return socket?.localAddress?.replace(/^::ffff:/, '') ?? '127.0.0.1';
}

/** Listens with a fresh random token (a restarted node gets a new one: the old connections are of no more use). */
export function startLinkServer(
  config: Pick<ClusterEnv, 'CLUSTER_LINK_HOST' | 'CLUSTER_LINK_PORT' | 'HOST'>,
  nc: NatsConnection,
  options: Pick<LinkServerOptions, 'answer' | 'onRefused'>,
): Promise<LinkServer> {
  return LinkServer.listen({
    ...options,
    host: linkHostOf(config, nc),
    port: config.CLUSTER_LINK_PORT ?? 0,
    token: randomBytes(24).toString('base64url'),
  });
}
