// Thread: any
// Storage is a port. Each face declares its record families and their operations (oracle/repositories.ts,
// ussd/repositories.ts); this is the one place that picks the engine they live on: the node's LMDB, or in cluster
// mode (a NATS connection given) the JetStream buckets every node shares (src/cluster/records/). The composition
// roots (server.ts on the main thread, workers/actor-host.ts in each actor host) open it and hand it to the faces
// and the actor kinds.
import type { ClusterConnection } from '../cluster/connection.js';
import { openJetStreamOracleRepositories } from '../cluster/records/oracle/index.js';
import { jetStreamUssdRecords, type UssdRecordsConfig } from '../cluster/records/ussd/index.js';
import { openLmdbOracleRepositories, type OracleRepositories } from '../oracle/repositories.js';
import type { Store } from '../store/env.js';
import { lmdbUssdRecords, type UssdRecords } from '../ussd/repositories.js';

/** The record families of every face, each opened when its face asks (a JetStream opening creates buckets). */
export interface Records {
  oracle(): Promise<OracleRepositories>;
  readonly ussd: UssdRecords;
}

export function openRecords(store: Store, config: UssdRecordsConfig, cluster?: ClusterConnection): Records {
  if (cluster)
    return { oracle: () => openJetStreamOracleRepositories(cluster), ussd: jetStreamUssdRecords(cluster, config) };
  return { oracle: async () => openLmdbOracleRepositories(store), ussd: lmdbUssdRecords(store) };
}
