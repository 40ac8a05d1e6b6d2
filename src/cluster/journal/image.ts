// Thread: any
// The newest record of each key as read from a journal's stream (or appended by this writer), in
// memory. Caught up by reading the stream from where the last catch-up stopped, so a catch-up costs what was written
// since. Records the stream's max age dropped are forgotten too.
import { readJournal, journalState, type JournalRead, type JournalStream } from './stream.js';

export interface HeldRecord<T> {
  value: T;
  /** The stream sequence of the message that carried it, times RECORDS_PER_MESSAGE, plus its place in it. */
  revision: number;
  /** When it was stored (ms since the epoch): it is dropped a max age later, as the stream drops its message. */
  at: number;
}

/** A message carries at most this many records, so a record's revision is unique: seq * this + its index. */
export const RECORDS_PER_MESSAGE = 256;
/** Expired records are forgotten after this many new ones (a pass over all: cheap per record). */
const FORGET_EVERY = 4_096;
export const revisionOf = (seq: number, index: number) => seq * RECORDS_PER_MESSAGE + index;

export class JournalImage<T> {
  readonly #records = new Map<string, HeldRecord<T>>();
  /** Every message up to this sequence has been read. */
  #readTo = 0;
  #catchingUp: Promise<void> | undefined;
  #wanted = false;
  /** The sequence the next read must reach at least (catchUp's `through`). */
  #through = 0;
  /** Records held since expired ones were last forgotten. */
  #heldSince = 0;

  constructor(
    readonly stream: JournalStream,
    /** Which keys are kept (an actor host keeps its own share); all when absent. */
    private readonly keeps: (key: string) => boolean = () => true,
  ) {}

  get(key: string): HeldRecord<T> | undefined {
    const held = this.#records.get(key);
    if (held && held.at < Date.now() - this.stream.maxAgeMs) {
      this.#records.delete(key);
      return undefined;
    }
    return held;
  }

  /** Records held now, expired ones excluded. */
  *records(): IterableIterator<[string, HeldRecord<T>]> {
    const oldest = Date.now() - this.stream.maxAgeMs;
    for (const entry of this.#records) if (entry[1].at >= oldest) yield entry;
  }

  /** Keeps `record` for `key` unless a newer one is held. */
  hold(key: string, record: HeldRecord<T>): void {
    const held = this.#records.get(key);
    if (!held || held.revision < record.revision) this.#records.set(key, record);
    // A writer that never catches up again (it keeps its partitions) forgets expired records as it goes.
    if (++this.#heldSince >= FORGET_EVERY) this.#forgetExpired();
  }

  /** Applies what a read message carries (records; fences and openings are the writers' business). */
  apply(read: JournalRead<T>): void {
    if (!('r' in read.message)) return;
    read.message.r.forEach(([, key, value], index) => {
      if (this.keeps(key)) this.hold(key, { value, at: read.at, revision: revisionOf(read.seq, index) });
    });
  }

  /**
   * Reads what the stream holds beyond what was read, through its last message as of this call and through
   * `through` (a sequence a quorum acknowledged) at least: afterwards every record acknowledged before the call is
   * held. Calls that arrive while one reads wait for the next read.
   */
  catchUp(through = 0): Promise<void> {
    this.#wanted = true;
    this.#through = Math.max(this.#through, through);
    this.#catchingUp ??= (async () => {
      try {
        while (this.#wanted) {
          this.#wanted = false;
          const { lastSeq, firstSeq } = await journalState(this.stream);
          const to = Math.max(lastSeq, this.#through);
          await readJournal<T>(this.stream, { from: Math.max(this.#readTo + 1, firstSeq), to }, (read) =>
            this.apply(read),
          );
          this.#readTo = Math.max(this.#readTo, to);
          this.#forgetExpired();
        }
      } finally {
        this.#catchingUp = undefined;
      }
    })();
    return this.#catchingUp;
  }

  #forgetExpired(): void {
    this.#heldSince = 0;
    const oldest = Date.now() - this.stream.maxAgeMs;
    for (const [key, held] of this.#records) if (held.at < oldest) this.#records.delete(key);
  }
}
