// Thread: any holding a NATS connection, cluster mode
// The oracle's record families on JetStream KV, the same
// OracleRepositories the LMDB roots open (repositories.ts), so the composition roots choose one or the other.
// Buckets (each created with the connection's replicas, or opened when another node made it) and why each is
// shaped as it is: docs/cluster-records.md, "What is stored where".
import type { ClusterConnection } from '../../connection.js';
import { openJetStreamCalls } from './calls.js';
import { openJetStreamDelegations } from './delegations.js';
import { JetStreamRevocationRepository } from './revocations.js';
import { openJetStreamCredits } from './credits.js';
import { openJetStreamPreferences } from './preferences.js';
import type { OracleRepositories } from '../../../oracle/repositories.js';
import { openJetStreamSessionStores } from './turn-commit.js';
import { openJetStreamOpenRuns } from './open-runs.js';
import { jetStreamRunKeeping } from './runs/index.js';

/** Opens (or creates) every bucket; the revocations' watch ends with the connection. */
export async function openJetStreamOracleRepositories(connection: ClusterConnection): Promise<OracleRepositories> {
  // One after the other: nats-server 2.9 may leave concurrent bucket creations unanswered (record-store.ts).
  const stores = await openJetStreamSessionStores(connection);
  const revocations = await JetStreamRevocationRepository.open(connection);
  const delegations = await openJetStreamDelegations(connection);
  const preferences = await openJetStreamPreferences(connection);
  const credits = await openJetStreamCredits(connection);
  const calls = await openJetStreamCalls(connection);
  const openRuns = await openJetStreamOpenRuns(connection);
  const keptRuns = jetStreamRunKeeping(connection);
  return { ...stores, revocations, delegations, preferences, credits, calls, openRuns, keptRuns };
}
