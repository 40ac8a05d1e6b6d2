// Thread: any, cluster mode
// USSD sessions in a partition journal (src/cluster/journal/): each actor host appends its sessions'
// steps to its own subject of the replicated stream `journal_ussd`, many steps per fsynced append, and holds the
// newest record of each of its sessions in memory, so a step reads nothing from NATS. The stream's max age does the
// expiry (a session's record is rewritten on every step). The front door keeps the live set by reading the stream
// (only while it is asked for, from where it last stopped).
import type { ClusterConnection } from '../../connection.js';
import { JournalImage } from '../../journal/image.js';
import { PartitionJournal } from '../../journal/journal.js';
import { openJournalStream } from '../../journal/stream.js';
import { RevisionConflictError, type Revision, type Versioned } from '../../../store/revision.js';
import { isLive, type UssdSession } from '../../../ussd/session.js';
import type { LiveSession, UssdLiveIndex, UssdSessionStore } from '../../../ussd/sessions/repository.js';
import type { Context } from '../../../telemetry/index.js';
import { carryOutbox } from './outbox.js';

/** Kept beyond a session's longest life before the stream drops it: covers clock differences between machines. */
export const SESSION_JOURNAL_MARGIN_MS = 60_000;
export const USSD_JOURNAL = 'ussd';

export interface JournalUssdSessionOptions {
  /** The longest a session lives after its last write (the session TTL, or an ended session's retention if longer). */
  maxLifetimeMs: number;
  /** Kept beyond that; default SESSION_JOURNAL_MARGIN_MS. */
  marginMs?: number;
  /** The partition of a session id (the leases' partition, so a takeover fences once). */
  partitionOf(sessionId: string): number;
  /** The sessions this host serves (its share of the ids); all when absent. */
  serves?(sessionId: string): boolean;
  /** How long an append under load waits for more steps (PartitionJournalOptions.lingerMs). */
  lingerMs?: number;
}

const maxAgeOf = (options: { maxLifetimeMs: number; marginMs?: number }) =>
  options.maxLifetimeMs + (options.marginMs ?? SESSION_JOURNAL_MARGIN_MS);

/**
 * An actor host's sessions: read, begun and moved on through its own writer of the journal. A copy (what the writer
 * holds) may be stale while a fence waits unread; a write on it is refused, a read (`get`) sees past it.
 */
export class JournalUssdSessionRepository implements UssdSessionStore {
  private constructor(private readonly journal: PartitionJournal<UssdSession>) {}

  static async open(
    connection: ClusterConnection,
    options: JournalUssdSessionOptions,
  ): Promise<JournalUssdSessionRepository> {
    const journal = await PartitionJournal.open<UssdSession>(connection, {
      name: USSD_JOURNAL,
      maxAgeMs: maxAgeOf(options),
      partitionOf: options.partitionOf,
      keeps: options.serves,
      lingerMs: options.lingerMs,
    });
    return new JournalUssdSessionRepository(journal);
  }

  get(sessionId: string): Promise<Versioned<UssdSession> | undefined> {
    return this.journal.read(sessionId);
  }

  /** What the writer holds, its partition loaded first (no append to prove no fence waits: a write checks). */
  copy(sessionId: string): Promise<Versioned<UssdSession> | undefined> {
    return this.journal.holding(sessionId);
  }

  /** Another node may have written the session since this host's writer last saw it (a partition moved). */
  readonly copyCurrent = false;

  /** The records are the outbox (outbox.ts): a step carries on what earlier steps left undelivered. */
  carried(before: UssdSession | undefined, next: UssdSession): UssdSession {
    return carryOutbox(before, next);
  }

  async begin(session: UssdSession, now: number, trace?: Context): Promise<Revision> {
    // What this host holds once the partition is loaded; if another writer fenced it since, the append is refused.
    const held = await this.journal.holding(session.sessionId);
    // Nor one whose steps it does not number on from (a step on a stale copy that saw none): redone from a read,
    // which carries on its notifications and numbers on from its steps (session-actor.ts).
    if (held && (held.value.expiresAt > now || (session.step ?? 0) <= (held.value.step ?? 0)))
      throw new RevisionConflictError(session.sessionId, undefined);
    return this.journal.append(session.sessionId, session, held?.revision ?? 0, trace);
  }

  update(session: UssdSession, read: Versioned<UssdSession>, trace?: Context): Promise<Revision> {
    return this.journal.append(session.sessionId, session, read.revision, trace);
  }

  /** Whether this host still writes the session's partition (no newer claim fenced it); never takes it over. */
  holds(sessionId: string): Promise<boolean> {
    return this.journal.holds(sessionId);
  }
}

/**
 * The front door's view of the journal: the live sessions of the whole cluster, read from the stream up to its
 * last write before each listing (so a listing includes every step acknowledged before it on any node). Reading
 * costs what was written since the last read; nothing runs between listings and scrapes.
 */
export class LiveUssdSessions implements UssdLiveIndex {
  private constructor(private readonly image: JournalImage<UssdSession>) {}

  static async open(
    connection: ClusterConnection,
    options: Pick<JournalUssdSessionOptions, 'maxLifetimeMs' | 'marginMs'>,
  ): Promise<LiveUssdSessions> {
    const stream = await openJournalStream(connection, { name: USSD_JOURNAL, maxAgeMs: maxAgeOf(options) });
    return new LiveUssdSessions(new JournalImage<UssdSession>(stream));
  }

  async live(now: number): Promise<LiveSession[]> {
    await this.image.catchUp();
    const live: LiveSession[] = [];
    for (const [sessionId, { value }] of this.image.records()) {
      if (isLive(value, now)) live.push({ sessionId, expiresAt: value.expiresAt });
    }
    return live;
  }

  /** A session as stored now (every step acknowledged before the call), without taking its partition over. */
  async read(sessionId: string): Promise<Versioned<UssdSession> | undefined> {
    await this.image.catchUp();
    const held = this.image.get(sessionId);
    return held && { value: held.value, revision: held.revision };
  }

  /** The sessions `test` picks whose record holds notifications not yet delivered (read to the stream's end). */
  async withPendingOutbox(test: (sessionId: string) => boolean): Promise<string[]> {
    await this.image.catchUp();
    const found: string[] = [];
    for (const [sessionId, { value }] of this.image.records())
      if (value.outbox?.length && test(sessionId)) found.push(sessionId);
    return found;
  }

  /**
   * Live sessions as last read (for a gauge read at scrape time); starts a read in the background, so the next
   * scrape counts what was written since.
   */
  liveCount(now: number): number {
    this.image.catchUp().catch(() => {}); // a failed read is retried by the next count or listing
    let count = 0;
    for (const [, { value }] of this.image.records()) if (isLive(value, now)) count++;
    return count;
  }

  /** The stream's max age removes expired records. Answers 0. */
  async removeExpired(): Promise<number> {
    return 0;
  }
}
