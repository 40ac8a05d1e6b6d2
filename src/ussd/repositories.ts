// Both threads: where the USSD record families live, chosen in one place: the node's LMDB, or in cluster mode
// (a NATS connection given) the replicated JetStream KV buckets every node shares.
import type { ClusterConnection } from '../cluster/connection.js';
import type { Config } from '../config.js';
import type { Store } from '../store/env.js';
import { JetStreamCustomerRepository } from './customers/jetstream-repository.js';
import { LmdbCustomerRepository } from './customers/lmdb-repository.js';
import type { CustomerRepository } from './customers/repository.js';
import { ENDED_RETENTION_MS } from './session.js';
import { JetStreamUssdSessionRepository } from './sessions/jetstream-repository.js';
import { LmdbUssdSessionRepository } from './sessions/lmdb-repository.js';
import type { UssdSessionRepository } from './sessions/repository.js';

/**
 * The sessions. `watchLive`: keep the live set (operator listing, gauge); in cluster mode that is a watch of the
 * whole bucket, which the front door keeps and the actor hosts (reads and writes by id only) do not.
 */
export async function openUssdSessions(
  store: Store,
  config: Pick<Config, 'USSD_SESSION_TTL_SECONDS'>,
  cluster: ClusterConnection | undefined,
  options: { watchLive: boolean },
): Promise<UssdSessionRepository> {
  if (!cluster) return new LmdbUssdSessionRepository(store);
  // The longest a record must outlive its last write: a live session's TTL, or an ended one's retention.
  const maxLifetimeMs = Math.max(config.USSD_SESSION_TTL_SECONDS * 1000, ENDED_RETENTION_MS);
  return JetStreamUssdSessionRepository.open(cluster, { maxLifetimeMs, watchLive: options.watchLive });
}

export async function openCustomers(store: Store, cluster: ClusterConnection | undefined): Promise<CustomerRepository> {
  return cluster ? JetStreamCustomerRepository.open(cluster) : new LmdbCustomerRepository(store);
}
