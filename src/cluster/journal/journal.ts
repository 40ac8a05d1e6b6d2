// Thread: any (an actor host in practice)
// A partition journal. Records keyed by id (a USSD session) are appended
// to one replicated stream, each writer on a subject of its own, many records per message: the records that arrive
// while the previous append waits for its quorum's fsync go out together in the next (group commit), so a busy
// writer pays one fsynced write for many steps. The writer holds the newest record of every key it serves in memory
// (image.ts), so a step reads nothing from NATS.
//
// Fencing. A writer appends with the expected last sequence of its own subject, where nobody else writes except a
// fence. To serve a partition, a writer first claims it on its own subject (the claim's stream sequence orders its
// load against every other), then appends a fence naming the partition and that claim to every other writer's
// subject, then reads the stream to its end. A writer that served the partition under an older claim fails its next
// append (its subject moved), reads the fence, and stops trusting what it holds for the partition: it loads it again
// the same way before it appends to it again; a fence from an older claim than its own is ignored. So of writers
// loading one partition at once the newest claim wins, and a record is appended only by a writer that holds every
// record of its key acknowledged before, however many nodes believe they own the partition (a pause, a network
// partition); the leases make that one node in practice. An append whose acknowledgement timed out may have landed:
// it is sent again as it was, and one that landed is found on the subject and counts as appended (own-append.ts).
import { tracedAppend, type Traced } from './append-tracing.js';
import type { Context } from '../../telemetry/index.js';
import { randomBytes } from 'node:crypto';
import { journalAppends, journalFenced, journalLoads, journalRecords } from '../../metrics/catalogue.js';
import type { Series } from '../../metrics/families.js';
import { RevisionConflictError, type Versioned } from '../../store/revision.js';
import type { ClusterConnection } from '../connection.js';
import { JournalImage, RECORDS_PER_MESSAGE, revisionOf } from './image.js';
import { appendOwn, firstMessage, type OwnSubject } from './own-append.js';
import {
  encodeMessage,
  type JournalMessage,
  journalState,
  lastOnSubject,
  openJournalStream,
  readJournal,
  type JournalRead,
  type JournalStream,
} from './stream.js';

export interface PartitionJournalOptions {
  /** The record family: the stream is `<prefix>_journal_<name>`. */
  name: string;
  /** A record not rewritten for this long is dropped (the stream's max age). */
  maxAgeMs: number;
  /** The partition of a key: the unit that is loaded and fenced (the leases' partition, so a takeover fences once). */
  partitionOf(key: string): number;
  /** Which keys this writer serves (an actor host's share); all when absent. */
  keeps?(key: string): boolean;
  /**
   * How long an append that follows straight on another (records queued while it was out: the writer is busy)
   * waits for more records before it leaves. Under load a step's latency grows by up to this and the fsynced
   * appends per step shrink; a record reaching an idle writer leaves at once. Default 0.
   */
  lingerMs?: number;
}

interface Pending<T> {
  partition: number;
  key: string;
  value: T;
  /** The revision the key must be at (0: no record). */
  expected: number;
  resolve(revision: number): void;
  reject(error: unknown): void;
}

/** How often a read loads a partition that is fenced again while it loads, before it gives up. */
const MAX_LOAD_ATTEMPTS = 5;

export class PartitionJournal<T> {
  readonly #image: JournalImage<T>;
  /** The partitions this writer has loaded and not been fenced from since, each with the sequence of its claim. */
  readonly #loaded = new Map<number, number>();
  /** The newest claim each partition was fenced with (by another writer's load). */
  readonly #newestFence = new Map<number, number>();
  readonly #wanted = new Set<number>();
  #loading: Promise<void> | undefined;
  /** The sequence of the newest message on this writer's subject, as far as it knows. */
  #last: number;
  #tailRead: Promise<void> | undefined;
  #queue: (Pending<T> & Traced)[] = [];
  #flushing = false;
  readonly #counted: { appends: Series; records: Series; loads: Series; fenced: Series };
  /** Appends to this writer's subject go one at a time (each expects the previous): claims wait here for records. */
  #appending: Promise<unknown> = Promise.resolve();
  /** This writer's subject as own-append.ts sees it. */
  readonly #writer: OwnSubject;

  private constructor(
    private readonly stream: JournalStream,
    /** This writer's subject. */
    readonly subject: string,
    opened: number,
    private readonly options: PartitionJournalOptions,
  ) {
    this.#image = new JournalImage<T>(stream, options.keeps);
    this.#last = opened;
    this.#writer = {
      stream,
      subject,
      last: () => this.#last,
      appended: (seq) => this.#appended(seq),
      readTail: (last) => this.#readTail(last),
    };
    this.#counted = {
      appends: journalAppends.with(options.name),
      records: journalRecords.with(options.name),
      loads: journalLoads.with(options.name),
      fenced: journalFenced.with(options.name),
    };
  }

  /** Opens the stream and a subject of this writer's own (a fresh one per process, so no two writers share one). */
  static async open<T>(connection: ClusterConnection, options: PartitionJournalOptions): Promise<PartitionJournal<T>> {
    const stream = await openJournalStream(connection, options);
    const subject = `${stream.base}.${randomBytes(8).toString('hex')}`;
    const opened = await firstMessage(connection, subject, encodeMessage({ o: 1 }));
    return new PartitionJournal<T>(stream, subject, opened, options);
  }

  /**
   * The newest record of `key`: every record acknowledged before this call, on any node, is seen (its partition
   * loaded if needed, and no fence waiting on this writer's subject: #confirm, one append).
   */
  async read(key: string): Promise<Versioned<T> | undefined> {
    const partition = this.options.partitionOf(key);
    for (let attempt = 1; ; attempt++) {
      await this.#load(partition);
      await this.#confirm();
      if (this.#loaded.has(partition)) return this.held(key);
      if (attempt >= MAX_LOAD_ATTEMPTS) throw this.#fencedAgain(partition);
    }
  }

  /**
   * Makes sure no fence waits unread on this writer's subject: an empty message ({ o: 1 }) appended to it, expecting
   * its last sequence, which only a quorum acknowledges; a fence found meanwhile is read (its partitions unloaded).
   * Asking the stream leader for the subject's last sequence is no proof: a leader cut from its peers answers as one
   * for 10-20 s (its lost-quorum check) after they elected another, without the fences acknowledged meanwhile
   * (test/cluster-journal-deposed-leader).
   */
  #confirm(): Promise<unknown> {
    return this.#exclusive(() => this.#appendOwn(() => ({ o: 1 })));
  }

  /**
   * What this writer holds for `key` once its partition is loaded, without asking whether another writer fenced it
   * since (an append would find that out and be refused): for a write that is checked anyway.
   */
  async holding(key: string): Promise<Versioned<T> | undefined> {
    await this.#load(this.options.partitionOf(key));
    return this.held(key);
  }

  /** Whether `key`'s partition is still this writer's (loaded, no newer fence: one request); never loads it. */
  async holds(key: string): Promise<boolean> {
    const partition = this.options.partitionOf(key);
    if (!this.#loaded.has(partition)) return false;
    await this.#readTail(await lastOnSubject(this.stream, this.subject));
    return this.#loaded.has(partition);
  }

  /** What this writer holds for `key` now (nothing loaded or checked). */
  held(key: string): Versioned<T> | undefined {
    const held = this.#image.get(key);
    return held && { value: held.value, revision: held.revision };
  }

  /**
   * Appends `value` for `key` if the key is still at revision `expected` (0: no record) and its partition is still
   * this writer's; resolves with the new revision once a quorum fsynced it. RevisionConflictError otherwise.
   * `trace`: the caller's context (tracing on, in a recorded trace), for the append's span.
   */
  append(key: string, value: T, expected: number, trace?: Context): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ partition: this.options.partitionOf(key), key, value, expected, resolve, reject, trace });
      if (!this.#flushing) void this.#flush();
    });
  }

  /** Appends what is queued, one message at a time: what queues meanwhile (or while it lingers) goes out together. */
  async #flush(): Promise<void> {
    this.#flushing = true;
    try {
      const lingerMs = this.options.lingerMs ?? 0;
      for (let following = false; this.#queue.length > 0; following = true) {
        // Records queued while the previous append was out: the writer is busy, so wait a moment for more of them
        // (fewer fsynced appends). A record reaching an idle writer leaves at once.
        if (following && lingerMs > 0 && this.#queue.length < RECORDS_PER_MESSAGE)
          await new Promise((resolve) => setTimeout(resolve, lingerMs));
        const batch = this.#queue.splice(0, RECORDS_PER_MESSAGE);
        await this.#exclusive(() => tracedAppend(batch, this.subject, () => this.#commit(batch)));
      }
    } finally {
      this.#flushing = false;
    }
  }

  /** Runs `append` after every append to this writer's subject started before it. */
  #exclusive<R>(append: () => Promise<R>): Promise<R> {
    const done = this.#appending.then(append, append);
    this.#appending = done.catch(() => {});
    return done;
  }

  /** Appends to this writer's subject (see own-append.ts); `prepare` decides before each attempt what to send. */
  #appendOwn(prepare: () => JournalMessage<T> | undefined): Promise<{ seq: number } | undefined> {
    return appendOwn(this.#writer, prepare);
  }

  /** An append of this writer's landed at `seq`. */
  #appended(seq: number): { seq: number } {
    this.#last = Math.max(this.#last, seq);
    return { seq };
  }

  async #commit(batch: Pending<T>[]): Promise<void> {
    let ready: Pending<T>[] = batch;
    try {
      const ack = await this.#appendOwn(() => {
        // Only records this writer may still append: their partition still its own, their key where the caller read it.
        ready = ready.filter((pending) => {
          const current = this.#image.get(pending.key)?.revision ?? 0;
          if (this.#loaded.has(pending.partition) && current === pending.expected) return true;
          pending.reject(new RevisionConflictError(pending.key, pending.expected || undefined));
          return false;
        });
        return ready.length > 0 ? { r: ready.map(({ partition, key, value }) => [partition, key, value]) } : undefined;
      });
      if (!ack) return;
      this.#counted.appends.inc();
      this.#counted.records.inc(ready.length);
      const at = Date.now();
      ready.forEach((pending, index) => {
        const revision = revisionOf(ack.seq, index);
        this.#image.hold(pending.key, { value: pending.value, revision, at });
        pending.resolve(revision);
      });
    } catch (error) {
      for (const pending of ready) pending.reject(error);
    }
  }

  /** Loads `partition` unless loaded: claimed, other writers fenced from it, then the stream read to its end. */
  async #load(partition: number): Promise<void> {
    for (let attempt = 1; !this.#loaded.has(partition); attempt++) {
      if (attempt > MAX_LOAD_ATTEMPTS) throw this.#fencedAgain(partition);
      this.#wanted.add(partition);
      this.#loading ??= this.#loadWanted().finally(() => {
        this.#loading = undefined;
      });
      await this.#loading;
    }
  }

  #fencedAgain(partition: number): Error {
    return new Error(
      `journal ${this.stream.name}: partition ${partition} is claimed by another writer again and again`,
    );
  }

  /**
   * Loads every partition wanted (those wanted while a load runs in the next one): claims them on this writer's
   * subject, fences every other subject with that claim, then reads the stream to its end.
   */
  async #loadWanted(): Promise<void> {
    while (this.#wanted.size > 0) {
      const partitions = [...this.#wanted];
      this.#wanted.clear();
      const claim = await this.#exclusive(() => this.#appendOwn(() => ({ c: partitions })));
      const by = claim!.seq;
      const { subjects } = await journalState(this.stream, true);
      const fence = encodeMessage<T>({ f: partitions, by });
      const fenced = await Promise.all(
        subjects
          .filter((subject) => subject !== this.subject)
          .map((subject) => this.stream.connection.js.publish(subject, fence)),
      );
      // Read through the claim and the fences at least (a quorum acknowledged them, so every record acknowledged
      // before lies below), whatever last sequence a deposed stream leader still answers with.
      await this.#image.catchUp(Math.max(by, ...fenced.map((ack) => ack.seq)));
      // A newer claim's fence read meanwhile wins: such a partition stays unloaded.
      for (const partition of partitions)
        if ((this.#newestFence.get(partition) ?? 0) < by) this.#loaded.set(partition, by);
      this.#counted.loads.inc(partitions.length);
    }
  }

  /**
   * Reads this writer's subject beyond what it knows, through `last`: fences unload their partitions, and an append
   * of its own it never heard acknowledged (a timeout) is held. Messages the max age removed cannot be read: then
   * nothing loaded is trusted.
   */
  async #readTail(last: number): Promise<void> {
    while (this.#tailRead) await this.#tailRead;
    if (last === this.#last || (last < this.#last && last > 0)) return;
    this.#tailRead = (async () => {
      if (last > this.#last) {
        await readJournal<T>(this.stream, { from: this.#last + 1, to: last, subject: this.subject }, (read) =>
          this.#own(read),
        );
      }
      // Still short of `last` (read past what the max age removed), or the subject emptied by it (0): a fence
      // may have been missed.
      if (this.#last < last || last === 0) {
        this.#loaded.clear();
        this.#last = last;
      }
    })().finally(() => {
      this.#tailRead = undefined;
    });
    await this.#tailRead;
  }

  /** A message on this writer's subject, read back: a fence from a newer claim unloads its partitions. */
  #own(read: JournalRead<T>): void {
    const { message } = read;
    if ('f' in message) {
      for (const partition of message.f) {
        this.#newestFence.set(partition, Math.max(this.#newestFence.get(partition) ?? 0, message.by));
        if ((this.#loaded.get(partition) ?? Infinity) < message.by) {
          this.#loaded.delete(partition);
          this.#counted.fenced.inc();
        }
      }
    } else if ('r' in message) {
      this.#image.apply(read);
    }
    this.#last = Math.max(this.#last, read.seq);
  }
}
