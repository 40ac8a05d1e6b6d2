// Thread: any
// Where the outbox keeps the notifications of committed steps, the port the face declares. One node: LMDB, beside
// the steps (src/records/lmdb/ussd/outbox.ts). A cluster: each session's own record, every change a message to the
// session's actor (src/cluster/records/ussd/outbox.ts), so a node taking the partition over finds what is left.
import type { OutboxNotification } from '../session.js';

/** A notification as the outbox keeps it: which session it came from and the deliveries tried so far. */
export interface QueuedNotification {
  notification: OutboxNotification;
  sessionId: string;
  tried: number;
}

export interface OutboxStore {
  /** The notifications not yet delivered (at start). */
  pending(): QueuedNotification[];
  /** Records a failed delivery; false: the store no longer holds it for this host (left to another). */
  tried(queued: QueuedNotification): Promise<boolean | undefined>;
  /** Removes a delivered (or given up) notification. */
  remove(queued: QueuedNotification): Promise<boolean | undefined>;
}

/**
 * Records what became of a notification (`done`: delivered or given up; else a failed try) in its session's record,
 * through the session's actor; false when the record no longer holds it for this host.
 */
export type RecordInSession = (queued: QueuedNotification, done: boolean) => Promise<boolean>;
