// Thread: any holding a NATS connection, cluster mode
// Chat session records in the replicated JetStream KV bucket
// `oracle_sessions`, with one index entry per session under its user:
//   s.<sessionId>          -> SessionRecord (the KV revision is the record's revision)
//   u.<userDid>.<sessionId> -> IndexEntry (the view GET /sessions lists, and the precise lastUpdatedAt to order by)
//   c.<userDid>             -> the user's session counter, for the cap on sessions (jetstream-session-count.ts)
// KV has no transaction over two keys, so the list is derived from what is stored, never counted apart:
// - the total is the number of the user's index entries, so two nodes creating sessions for one user cannot
//   lose a count (no counter to race on);
// - listVersion is the bucket sequence of the newest write under `u.<userDid>.` (one request), so the index write
//   *is* the version bump: a page read after it is at least as new as the version read before it.
// Order of writes, each safe to be the last one a dying node makes:
// - create: with a cap, a place on the user's counter first (given back if the record is not written); the record
//   (create-only: a taken id writes nothing), then its index entry. A crash between leaves a record not listed yet;
//   its next update (a turn) or removal writes or removes the entry.
// - update: the record (revision-checked: a stale revision writes nothing), then the entry. A crash between leaves
//   the list showing the previous title and time until the next write.
// - remove: the revision is checked on a read first (a stale one writes nothing), then the entry goes, then the
//   record (revision-checked). A crash between leaves an unlisted record, as a crashed create does, so a list never
//   names a deleted session. If the record moved between the check and its delete (a stale writer, since a
//   session's actor is its only writer), its entry is written back and the removal refused. Last, the user's
//   place on the counter is given back.
import type { ClusterConnection } from '../../connection.js';
import { KvRecordStore } from '../../record-store.js';
import { isRevisionConflict, RevisionConflictError, type Revision, type Versioned } from '../../../store/revision.js';
import { viewOf, type SessionRecord, type SessionView } from '../../../oracle/sessions/records.js';
import type { SessionPage, SessionRepository } from '../../../oracle/sessions/repository.js';
import { UserSessionCount, type SessionCounter } from './session-count.js';

interface IndexEntry {
  /** lastUpdatedAt with its sub-millisecond part (the view's ISO string has milliseconds only). */
  at: number;
  view: SessionView;
}

type Stored = SessionRecord | IndexEntry | SessionCounter;

const recordKey = (sessionId: string) => ['s', sessionId];
const userPrefix = (userDid: string) => ['u', userDid];
const indexKey = (userDid: string, sessionId: string) => ['u', userDid, sessionId];
const entryOf = (record: SessionRecord): IndexEntry => ({ at: record.lastUpdatedAt, view: viewOf(record) });

export class JetStreamSessionRepository implements SessionRepository {
  readonly #counts: UserSessionCount;

  private constructor(private readonly store: KvRecordStore<Stored>) {
    this.#counts = new UserSessionCount(store as KvRecordStore<unknown>, async (userDid) => {
      return (await this.store.all(userPrefix(userDid))).length;
    });
  }

  static async open(connection: ClusterConnection): Promise<JetStreamSessionRepository> {
    return new JetStreamSessionRepository(await KvRecordStore.open<Stored>(connection, { name: 'oracle_sessions' }));
  }

  get(sessionId: string): Promise<Versioned<SessionRecord> | undefined> {
    return this.store.get(recordKey(sessionId)) as Promise<Versioned<SessionRecord> | undefined>;
  }

  /** Another node may have written since: only a read tells. */
  vouchesFor(): boolean {
    return false;
  }

  async create(record: SessionRecord, maxPerUser?: number): Promise<Versioned<SessionRecord>> {
    if (maxPerUser !== undefined) await this.#counts.take(record.userDid, maxPerUser);
    let revision: Revision;
    try {
      revision = await this.store.create(recordKey(record.sessionId), record);
    } catch (error) {
      // Nothing was written: the place is given back (a crash before this leaves it taken, see the counter).
      if (maxPerUser !== undefined) await this.#counts.release(record.userDid).catch(() => undefined);
      throw error;
    }
    await this.store.put(indexKey(record.userDid, record.sessionId), entryOf(record));
    return { value: record, revision };
  }

  async update(record: SessionRecord, revision: Revision): Promise<Versioned<SessionRecord>> {
    return this.updateFrom(await this.expect(record.sessionId, revision), record);
  }

  /** The update once the current record was read (`expect`): the record keeps its user; revision-checked. */
  async updateFrom(current: Versioned<SessionRecord>, record: SessionRecord): Promise<Versioned<SessionRecord>> {
    const next = { ...record, userDid: current.value.userDid };
    const written = await this.store.update(recordKey(record.sessionId), next, current.revision);
    await this.store.put(indexKey(next.userDid, next.sessionId), entryOf(next));
    return { value: next, revision: written };
  }

  async remove(sessionId: string, revision: Revision): Promise<void> {
    const { value } = await this.expect(sessionId, revision);
    const index = indexKey(value.userDid, sessionId);
    await this.store.delete(index);
    try {
      await this.store.delete(recordKey(sessionId), revision);
    } catch (error) {
      if (!isRevisionConflict(error)) throw error;
      const now = await this.get(sessionId);
      if (now) await this.store.put(index, entryOf(now.value));
      throw error;
    }
    await this.#counts.release(value.userDid);
  }

  async listByUser(userDid: string, { offset, limit }: { offset: number; limit: number }): Promise<SessionPage> {
    // Every index entry of the user is read to order them (KV keeps keys, not an order by time): one pass over a
    // user's sessions, as bounded as the user's list; the front door caches pages by listVersion.
    const entries = (await this.store.all(userPrefix(userDid))).map(({ value }) => value as IndexEntry);
    entries.sort((a, b) => b.at - a.at || (b.view.sessionId < a.view.sessionId ? -1 : 1));
    return { sessions: entries.slice(offset, offset + limit).map((entry) => entry.view), total: entries.length };
  }

  async listVersion(userDid: string): Promise<number> {
    return (await this.store.lastWrite(userPrefix(userDid)))?.revision ?? 0;
  }

  /** The current record, which must be at `revision` (RevisionConflictError otherwise, nothing written). */
  async expect(sessionId: string, revision: Revision): Promise<Versioned<SessionRecord>> {
    const current = await this.get(sessionId);
    if (current?.revision !== revision) throw new RevisionConflictError(recordKey(sessionId).join('/'), revision);
    return current;
  }
}
