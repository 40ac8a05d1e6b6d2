// Thread: any
// Where the USSD record families live, chosen in one place: the node's LMDB, or in cluster mode
// (a NATS connection given) the replicated JetStream KV buckets every node shares.
import type { ClusterConnection } from '../cluster/connection.js';
import type { Config } from '../config.js';
import { shardOf } from '../runtime/shard.js';
import type { Store } from '../store/env.js';
import { JetStreamCustomerRepository } from './customers/jetstream-repository.js';
import { LmdbCustomerRepository } from './customers/lmdb-repository.js';
import type { CustomerRepository } from './customers/repository.js';
import { ENDED_RETENTION_MS } from './session.js';
import { DEFAULT_PARTITIONS, partitionOf } from '../cluster/partition-leases.js';
import { JournalUssdSessionRepository, LiveUssdSessions } from './sessions/journal-repository.js';
import { LmdbUssdSessionRepository } from './sessions/lmdb-repository.js';
import type { UssdSessionRepository } from './sessions/repository.js';

/**
 * The sessions. In cluster mode an actor host (`host`: its index and the hosts' count) appends its sessions' steps to
 * the sessions journal and holds them; the front door (no `host`) keeps only the cluster's live set (operator
 * listing, gauge), read from the journal.
 */
export async function openUssdSessions(
  store: Store,
  config: Pick<Config, 'USSD_SESSION_TTL_SECONDS'> & Partial<Pick<Config, 'CLUSTER_JOURNAL_LINGER_MS'>>,
  cluster: ClusterConnection | undefined,
  host?: { index: number; count: number },
): Promise<UssdSessionRepository> {
  if (!cluster) return new LmdbUssdSessionRepository(store);
  // The longest a record must outlive its last write: a live session's TTL, or an ended one's retention.
  const maxLifetimeMs = Math.max(config.USSD_SESSION_TTL_SECONDS * 1000, ENDED_RETENTION_MS);
  if (!host) return LiveUssdSessions.open(cluster, { maxLifetimeMs });
  return JournalUssdSessionRepository.open(cluster, {
    maxLifetimeMs,
    partitionOf: (sessionId) => partitionOf(sessionId, DEFAULT_PARTITIONS),
    serves: (sessionId) => shardOf(sessionId, host.count) === host.index,
    lingerMs: config.CLUSTER_JOURNAL_LINGER_MS,
  });
}

export async function openCustomers(store: Store, cluster: ClusterConnection | undefined): Promise<CustomerRepository> {
  return cluster ? JetStreamCustomerRepository.open(cluster) : new LmdbCustomerRepository(store);
}
