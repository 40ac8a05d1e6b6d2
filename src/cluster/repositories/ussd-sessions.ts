// Main thread or actor hosts (cluster mode): USSD sessions in a replicated JetStream KV bucket, the same
// UssdSessionRepository the LMDB store implements, held to the same contract (test/contracts/ussd-sessions.ts).
// One record per session (`session.<id>`); expiry is decided by each session's `expiresAt`, as on one node. The
// bucket's max age (`ttlMs`, e.g. twice USSD_SESSION_TTL_SECONDS) removes what nobody swept, so the bucket only
// ever holds recent sessions: `live` and `removeExpired` read those records (KV has no index by expiry time; a
// headers-only listing would avoid reading them and is the next step if the count grows).
import { RevisionConflictError, type Revision, type Versioned } from '../../store/revision.js';
import { ENDED_STATE, type UssdSession } from '../../ussd/session.js';
import type { LiveSession, UssdSessionRepository } from '../../ussd/sessions/repository.js';
import type { ClusterConnection } from '../connection.js';
import { KvRecordStore, type StoredRecord } from '../record-store.js';

export class JetStreamUssdSessionRepository implements UssdSessionRepository {
  private constructor(private readonly store: KvRecordStore<UssdSession>) {}

  static async open(connection: ClusterConnection, options: { bucket?: string; ttlMs?: number } = {}): Promise<JetStreamUssdSessionRepository> {
    const store = await KvRecordStore.open<UssdSession>(connection, { name: options.bucket ?? 'ussd_sessions', ttlMs: options.ttlMs });
    return new JetStreamUssdSessionRepository(store);
  }

  get(sessionId: string): Promise<Versioned<UssdSession> | undefined> {
    return this.store.get(['session', sessionId]);
  }

  async begin(session: UssdSession, now: number): Promise<Revision> {
    const key = ['session', session.sessionId];
    const current = await this.store.get(key);
    if (!current) return this.store.create(key, session);
    if (current.value.expiresAt > now) throw new RevisionConflictError(session.sessionId, undefined); // a live one is kept
    return this.store.update(key, session, current.revision);
  }

  update(session: UssdSession, expected: Revision): Promise<Revision> {
    return this.store.update(['session', session.sessionId], session, expected);
  }

  async live(now: number): Promise<LiveSession[]> {
    return (await this.#all())
      .filter(({ value }) => value.expiresAt > now && value.state !== ENDED_STATE)
      .map(({ value }) => ({ sessionId: value.sessionId, expiresAt: value.expiresAt }));
  }

  async removeExpired(now: number): Promise<number> {
    const due = (await this.#all()).filter(({ value }) => value.expiresAt <= now);
    // Revision-checked: a session its actor renewed since the listing is not removed.
    const results = await Promise.allSettled(due.map(({ key, revision }) => this.store.delete(key, revision)));
    return results.filter((result) => result.status === 'fulfilled').length;
  }

  async #all(): Promise<StoredRecord<UssdSession>[]> {
    return (await this.store.list(['session'], { limit: Number.MAX_SAFE_INTEGER })).records;
  }
}
