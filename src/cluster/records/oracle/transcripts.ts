// Thread: any holding a NATS connection, cluster mode
// Transcripts in the replicated JetStream KV bucket
// `oracle_transcripts`, one record per entry keyed `<sessionId>.<number>`. Why KV and not a plain stream: a number
// must be written once (create-only, which KV's per-key revision gives, with the record store's fencing on
// nats-server 2.9), and a page is a range of numbers, read by key (the length, then the page's keys at once, each
// answered by the stream leader): nothing reads a transcript whole.
// The length is the number after the newest write under the session (one request: a wildcard last-by-subject
// read). Entries are only ever removed from the top down (a refused append takes back what it wrote, newest
// first; a removal deletes newest first), so when that newest write is a deletion of entry d, every entry from d
// on is gone and the length is d.
// An append checks every number first (a taken one: refused, nothing written), then creates its entries, the first
// alone (writers racing from one number are decided by it); if a racing writer takes one of the others meanwhile,
// the entries it did create are deleted again before it is refused.
import type { ClusterConnection } from '../../connection.js';
import { KvRecordStore, type LatestWrite } from '../../record-store.js';
import { isRevisionConflict, RevisionConflictError, type Revision } from '../../../store/revision.js';
import type { TranscriptEntry } from '../../../oracle/sessions/transcript.js';
import type { TranscriptPage, TranscriptRepository } from '../../../oracle/sessions/transcript-repository.js';

/** Entry numbers are zero-padded so that key order is number order (for anyone listing the bucket). */
const WIDTH = 10;
const keyOf = (sessionId: string, n: number) => [sessionId, String(n).padStart(WIDTH, '0')];

/** Deletions sent at once by a removal. */
const REMOVE_BATCH = 64;

/** The entries an append wrote, with their revisions: what `takeBack` deletes if the append must be undone. */
export type Appended = { key: string[]; revision: Revision }[];

/** An append whose numbers were found free, with what each key last held (a create after a deletion expects it). */
export interface CheckedAppend {
  keys: string[][];
  latest: (LatestWrite<TranscriptEntry> | undefined)[];
  entries: readonly TranscriptEntry[];
}

export class JetStreamTranscriptRepository implements TranscriptRepository {
  private constructor(private readonly store: KvRecordStore<TranscriptEntry>) {}

  static async open(connection: ClusterConnection): Promise<JetStreamTranscriptRepository> {
    return new JetStreamTranscriptRepository(
      await KvRecordStore.open<TranscriptEntry>(connection, { name: 'oracle_transcripts' }),
    );
  }

  /** Two steps, `check` then `write`, which the turn commit runs apart (it checks the record at the same time). */
  async append(sessionId: string, from: number, entries: readonly TranscriptEntry[]): Promise<void> {
    await this.write(await this.check(sessionId, from, entries));
  }

  /** An append's first step: every number must be free (RevisionConflictError otherwise, nothing written). */
  async check(sessionId: string, from: number, entries: readonly TranscriptEntry[]): Promise<CheckedAppend> {
    const keys = entries.map((_, i) => keyOf(sessionId, from + i));
    const latest = await Promise.all(keys.map((key) => this.store.latest(key)));
    const taken = latest.findIndex((write) => write?.value !== undefined);
    if (taken >= 0) throw new RevisionConflictError(keys[taken].join('/'), undefined);
    return { keys, latest, entries };
  }

  /**
   * An append's second step: creates the checked entries; if one was taken meanwhile, takes the others back. The
   * first entry is created alone: writers racing from the same number are decided by it (the loser writes nothing),
   * where creating all at once could split the numbers between them and refuse both.
   */
  async write({ keys, latest, entries }: CheckedAppend): Promise<Appended> {
    const create = (i: number) => this.store.create(keys[i], entries[i], latest[i] ?? null);
    if (keys.length === 0) return [];
    const first = await create(0);
    const outcomes = [
      { status: 'fulfilled', value: first } as const,
      ...(await Promise.allSettled(keys.slice(1).map((_, i) => create(i + 1)))),
    ];
    const written = outcomes.flatMap((outcome, i) =>
      outcome.status === 'fulfilled' ? [{ key: keys[i], revision: outcome.value }] : [],
    );
    const failed = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    if (!failed) return written;
    await this.takeBack(written);
    throw failed.reason;
  }

  /** Deletes entries this writer appended (revision-checked: only if still its own), newest first. */
  async takeBack(appended: Appended): Promise<void> {
    for (const { key, revision } of [...appended].reverse()) {
      await this.store.delete(key, revision).catch((error: unknown) => {
        if (!isRevisionConflict(error)) throw error;
      });
    }
  }

  async read(sessionId: string, { from, limit }: { from: number; limit: number }): Promise<TranscriptPage> {
    const length = await this.length(sessionId);
    const end = Math.min(length, from + limit);
    const entries = await this.#entries(sessionId, from, end);
    return end < length ? { entries, next: end } : { entries };
  }

  async readNewest(sessionId: string, { before, limit }: { before?: number; limit: number }): Promise<TranscriptPage> {
    const length = await this.length(sessionId);
    const end = Math.min(length, before ?? length);
    if (end <= 0) return { entries: [] };
    const start = Math.max(0, end - limit);
    const entries = (await this.#entries(sessionId, start, end)).reverse();
    return start > 0 ? { entries, next: start } : { entries };
  }

  async length(sessionId: string): Promise<number> {
    const last = await this.store.lastWrite([sessionId]);
    if (!last) return 0;
    const n = Number(last.key[1]);
    return last.deleted ? n : n + 1;
  }

  async remove(sessionId: string): Promise<void> {
    // Newest first, in batches sent in that order (one connection keeps it), so the transcript is a prefix again
    // after every batch; a removal that failed mid-way is simply made again.
    for (let end = await this.length(sessionId); end > 0; end -= REMOVE_BATCH) {
      const numbers = Array.from({ length: Math.min(REMOVE_BATCH, end) }, (_, i) => end - 1 - i);
      await Promise.all(numbers.map((n) => this.store.delete(keyOf(sessionId, n))));
    }
  }

  /** The entries numbered start..end-1 that exist, oldest first, read at once. */
  async #entries(sessionId: string, start: number, end: number): Promise<TranscriptEntry[]> {
    if (end <= start) return [];
    const read = await Promise.all(
      Array.from({ length: end - start }, (_, i) => this.store.get(keyOf(sessionId, start + i))),
    );
    return read.flatMap((entry) => (entry ? [entry.value] : []));
  }
}
