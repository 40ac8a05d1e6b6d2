// Thread: any holding a NATS connection, cluster mode
// The USSD record families on JetStream, the same UssdRecords the LMDB engine gives (ussd/repositories.ts): the
// sessions in the partition journal, the others in replicated KV buckets every node shares.
import type { Config } from '../../../app/config.js';
import { ENDED_RETENTION_MS } from '../../../ussd/session.js';
import type { UssdRecords } from '../../../ussd/repositories.js';
import { shardOf } from '../../../runtime/shard.js';
import type { ClusterConnection } from '../../connection.js';
import { DEFAULT_PARTITIONS, partitionOf } from '../../partition-leases.js';
import { JetStreamCustomerRepository } from './customers.js';
import { openJetStreamLanguageChoices } from './languages.js';
import { JetStreamPublished } from './published.js';
import { openJetStreamResumePoints } from './resume-points.js';
import { JournalUssdSessionRepository, LiveUssdSessions } from './sessions.js';

export type UssdRecordsConfig = Pick<Config, 'USSD_SESSION_TTL_SECONDS'> &
  Partial<Pick<Config, 'CLUSTER_JOURNAL_LINGER_MS'>>;

/**
 * An actor host appends its sessions' steps to the sessions journal and holds them; the front door keeps only the
 * cluster's live set (operator listing, gauge), read from the journal.
 */
export function jetStreamUssdRecords(connection: ClusterConnection, config: UssdRecordsConfig): UssdRecords {
  // The longest a record must outlive its last write: a live session's TTL, or an ended one's retention.
  const maxLifetimeMs = Math.max(config.USSD_SESSION_TTL_SECONDS * 1000, ENDED_RETENTION_MS);
  return {
    sessions: (host) =>
      JournalUssdSessionRepository.open(connection, {
        maxLifetimeMs,
        partitionOf: (sessionId) => partitionOf(sessionId, DEFAULT_PARTITIONS),
        serves: (sessionId) => shardOf(sessionId, host.count) === host.index,
        lingerMs: config.CLUSTER_JOURNAL_LINGER_MS,
      }),
    liveSessions: () => LiveUssdSessions.open(connection, { maxLifetimeMs }),
    customers: () => JetStreamCustomerRepository.open(connection),
    published: () => JetStreamPublished.open(connection),
    languages: () => openJetStreamLanguageChoices(connection),
    resumePoints: () => openJetStreamResumePoints(connection),
  };
}
