// Thread: any (wherever a NATS connection is)
// A revision-checked record store over a replicated JetStream KV
// bucket. Every write names what it expects (absent, or the revision it read), so two nodes racing on one record
// cannot both win: the loser gets a RevisionConflictError (the repositories' own, src/store/revision.ts) and
// re-reads. This is what makes a stale partition owner harmless.
//
// Why writes do not use the KV client's create/update: on nats-server 2.9.10 (what Debian ships; fixed upstream in
// mid-2023) the stream leader checks "expected last subject sequence" before proposing a write to its Raft group,
// not when the write is applied, so concurrent writes expecting the same revision can all be acknowledged
// (nats-server #4320; test/cluster-record-store.test.ts reproduces it). The leader does stage the message ids of
// in-flight writes under its lock, so each write also carries the id `<key>@<expected revision>`: of the writers
// expecting one revision, exactly one is stored and the others are answered `duplicate`, a conflict here. (So
// KV's own `update(key, value, revision)` is not enough on this server.)
import {
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { Kvm, type KV, type KvEntry } from '@nats-io/kv';
import { headers, type Payload } from '@nats-io/transport-node';
import { RevisionConflictError, type Revision, type Versioned } from '../store/revision.js';
import type { ClusterConnection } from './connection.js';
import { decodeKey, encodeKey, prefixFilter, type RecordKey } from './keys.js';
import { clusterUnreachable } from './out-of-reach.js';
import { PASSING_WAIT_MS, untilStreamLed, whilePassing } from './passing.js';
import { watchRecords, type RecordChange } from './record-watch.js';

export type { RecordChange } from './record-watch.js';

export interface StoredRecord<T> extends Versioned<T> {
  readonly key: string[];
}

export interface RecordPage<T> {
  records: StoredRecord<T>[];
  /** Pass as `after` for the next page; absent on the last page. */
  next?: string;
}

/** A key's newest write: its record, or a deletion (value undefined). */
export interface LatestWrite<T> {
  value: T | undefined;
  revision: Revision;
}

/** The newest write under a key prefix: a record's or a deletion's. */
export interface LastWrite {
  key: string[];
  deleted: boolean;
  /** The bucket sequence of that write. */
  revision: Revision;
}

export interface RecordStoreOptions {
  /** Bucket name after the deployment prefix ([A-Za-z0-9_-]). */
  name: string;
  /** Records not written for this long disappear (the bucket's max age); absent = kept. */
  ttlMs?: number;
}

const isConflict = (error: unknown) =>
  error instanceof JetStreamApiError &&
  (error.code === JetStreamApiCodes.StreamWrongLastSequence ||
    error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown);

const encoder = new TextEncoder();

/** The repositories' conflict: `expected` undefined means the write expected no record (create-only). */
const conflict = (key: RecordKey, expected: number | undefined) =>
  new RevisionConflictError(key.join('/'), expected ? expected : undefined);

export class KvRecordStore<T> {
  private constructor(
    private readonly kv: KV,
    /** The same bucket through the reader client: a watch's consumer is a reader, made again when unanswered. */
    private readonly watched: KV,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    /** Creates the readers of `all` (connection.ts: a reader placed on a dead server is made again). */
    private readonly reader: JetStreamClient,
    readonly bucket: string,
  ) {}

  /**
   * Creates the bucket (replicas from the connection, one value per key) or opens it when it exists. Reads go to
   * the stream leader (no direct get): a follower could answer with a revision older than one already acknowledged.
   */
  static async open<T>(connection: ClusterConnection, options: RecordStoreOptions): Promise<KvRecordStore<T>> {
    const bucket = `${connection.prefix}_${options.name}`;
    const settings = {
      replicas: connection.replicas,
      history: 1,
      allow_direct: false,
      ...(options.ttlMs ? { ttl: options.ttlMs } : {}),
    };
    const kv = await whilePassing(async () => {
      try {
        return await connection.kvm.create(bucket, settings);
      } catch (error) {
        // Nodes starting together create the same bucket at once (nats-server 2.9 may leave all but one of those
        // requests unanswered), and one started while a server is down asks for fewer replicas than the bucket
        // has: if the bucket exists, this node opens it.
        const exists = await connection.jsm.streams.info(`KV_${bucket}`).then(
          () => true,
          () => false,
        );
        if (!exists) throw error;
        return connection.kvm.open(bucket, { allow_direct: false });
      }
    });
    await untilStreamLed(connection.jsm, `KV_${bucket}`);
    const watched = await new Kvm(connection.reader).open(bucket, { allow_direct: false });
    return new KvRecordStore<T>(kv, watched, connection.js, connection.jsm, connection.reader, bucket);
  }

  async get(key: RecordKey): Promise<Versioned<T> | undefined> {
    const latest = await this.latest(key);
    return latest?.value === undefined ? undefined : { value: latest.value, revision: latest.revision };
  }

  /** The key's newest write, a deletion included (value undefined): what `create` needs to know. */
  async latest(key: RecordKey): Promise<LatestWrite<T> | undefined> {
    const entry = await this.kv.get(encodeKey(key));
    if (!entry) return undefined;
    return { value: entry.operation === 'PUT' ? entry.json<T>() : undefined, revision: entry.revision };
  }

  /**
   * Writes a record that must not exist yet (a deleted one may be created again); returns its revision.
   * `latest`: the key's newest write as just read by `latest` (null: none), to save reading it again.
   */
  async create(key: RecordKey, value: T, latest?: LatestWrite<T> | null): Promise<number> {
    const current = latest === undefined ? await this.latest(key) : latest;
    if (current && current.value !== undefined) throw conflict(key, undefined);
    // After a delete the key's last message is the delete marker: the write expects that one.
    return this.write(key, encoder.encode(JSON.stringify(value)), current?.revision ?? 0);
  }

  /** Replaces the record if it is still at `expectedRevision`; returns the new revision. */
  update(key: RecordKey, value: T, expectedRevision: number): Promise<number> {
    if (!(expectedRevision > 0)) throw new RangeError('an update needs the revision that was read');
    return this.write(key, encoder.encode(JSON.stringify(value)), expectedRevision);
  }

  /** Writes the record whatever it was (last writer wins): for records no two writers compute from a read. */
  put(key: RecordKey, value: T): Promise<number> {
    return this.write(key, encoder.encode(JSON.stringify(value)), undefined);
  }

  /** Deletes the record (only if still at `expectedRevision`, when given). Deleting a missing record is a no-op. */
  async delete(key: RecordKey, expectedRevision?: number): Promise<void> {
    await this.write(key, new Uint8Array(0), expectedRevision, 'DEL');
  }

  /** `expected`: the revision the write expects, 0 = no record; undefined = unchecked (a plain delete). */
  private async write(
    key: RecordKey,
    payload: Payload,
    expected: number | undefined,
    operation?: 'DEL',
  ): Promise<number> {
    const name = encodeKey(key);
    const h = headers();
    if (operation) h.set('KV-Operation', operation);
    try {
      const ack = await this.js.publish(`$KV.${this.bucket}.${name}`, payload, {
        headers: h,
        ...(expected === undefined ? {} : { msgID: `${name}@${expected}`, expect: { lastSubjectSequence: expected } }),
      });
      if (ack.duplicate) {
        await this.untilPast(key, expected);
        throw conflict(key, expected);
      }
      return ack.seq;
    } catch (error) {
      throw isConflict(error) ? conflict(key, expected) : error;
    }
  }

  /**
   * A write answered `duplicate` lost to another expecting the same revision, which may still be in flight (until a
   * quorum fsynced it). The conflict is reported once that write is readable (or after 2 s, when it never lands), so
   * the loser's re-read sees what won instead of the old revision it would lose with again.
   */
  private async untilPast(key: RecordKey, expected: number | undefined): Promise<void> {
    if (expected === undefined) return;
    const until = Date.now() + 2_000;
    for (let pause = 2; Date.now() < until; pause = Math.min(50, pause * 2)) {
      if (((await this.latest(key).catch(() => undefined))?.revision ?? 0) > expected) return;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  /**
   * The newest write (record or deletion) under `prefix`, one request to the stream leader: its sequence moves with
   * every write under the prefix, so it versions a group of keys. nats-server 2.9 takes a wildcard `last_by_subj`.
   */
  async lastWrite(prefix: RecordKey): Promise<LastWrite | undefined> {
    const message = await this.jsm.streams.getMessage(`KV_${this.bucket}`, {
      last_by_subj: `$KV.${this.bucket}.${prefixFilter(prefix)}`,
    });
    if (!message) return undefined;
    const operation = message.header?.get('KV-Operation');
    return {
      key: decodeKey(message.subject.slice(`$KV.${this.bucket}.`.length)),
      deleted: operation === 'DEL' || operation === 'PURGE',
      revision: message.seq,
    };
  }

  /**
   * The bucket's last sequence (0 when empty): every write acknowledged before this call is at or below it. Read as
   * the newest write under the whole bucket (`lastWrite`), which only the stream leader answers: a member that has
   * lost its leader answers STREAM.INFO with its own state, which after a partition may lack writes acknowledged
   * meanwhile (test/cluster-leaderless-server), while STREAM.MSG.GET then fails ("temporarily unavailable").
   */
  async lastSequence(): Promise<number> {
    return (await this.lastWrite([]))?.revision ?? 0;
  }

  /**
   * Every record under `prefix`, in no particular order, read in one pass (`#newestUnder`: about three requests,
   * however many records; `list` reads each record apart). For a bounded group of keys read whole, such as one
   * user's session index. It holds at least every write acknowledged before the call.
   */
  async all(prefix: RecordKey): Promise<StoredRecord<T>[]> {
    const subjectPrefix = `$KV.${this.bucket}.`;
    return [...(await this.#newestUnder(prefix, false)).values()].map((message) => ({
      key: decodeKey(message.subject.slice(subjectPrefix.length)),
      value: message.json<T>(),
      revision: message.seq,
    }));
  }

  /**
   * The newest write of each key under `prefix` that is a record (deleted keys left out), by subject, as of at least
   * this call, read through a reader (an R1 ordered consumer delivering each key's last write).
   *
   * Why it reads up to the leader's newest write under the prefix rather than until the reader counts 0 pending:
   * nats-server places a reader on any of the stream's servers, and on one still catching up (back from a pause or a
   * partition) the reader delivers that server's state: records acknowledged meanwhile missing, older versions of
   * others, and 0 pending at that server's last message (test/cluster-record-store-lagging-reader). The newest write
   * under the prefix comes from STREAM.MSG.GET, which only the stream leader answers (members answer "not available"
   * while it has none; STREAM.INFO would be answered by a leaderless member with its own state), and costs one
   * request against the two of a listing. Short of it, the reader fetches on while its server catches up; writes
   * delivered after a key's first one replace it, so stale versions and deleted keys drop out. A fetch that brings
   * nothing (a server that is not catching up) makes a new reader, placed anew; past PASSING_WAIT_MS it fails.
   */
  #newestUnder(prefix: RecordKey, headersOnly: boolean): Promise<Map<string, JsMsg>> {
    const stream = `KV_${this.bucket}`;
    const filter = `$KV.${this.bucket}.${prefixFilter(prefix)}`;
    const started = Date.now();
    return whilePassing(async () => {
      const newest = (await this.jsm.streams.getMessage(stream, { last_by_subj: filter }))?.seq ?? 0;
      const latest = new Map<string, JsMsg>();
      if (newest === 0) return latest;
      const consumer = await this.reader.consumers.get(stream, {
        filter_subjects: filter,
        deliver_policy: DeliverPolicy.LastPerSubject,
        ...(headersOnly ? { headers_only: true } : {}),
      });
      let through = 0;
      for (let batch = Math.max((await consumer.info(true)).num_pending, 1); ; ) {
        let received = 0;
        for await (const message of await consumer.fetch({ max_messages: batch, expires: 2_000 })) {
          received++;
          through = Math.max(through, message.seq);
          // A deletion's marker carries KV-Operation; a record's write carries none (or PUT).
          const operation = message.headers?.get('KV-Operation');
          if (!operation || operation === 'PUT') latest.set(message.subject, message);
          else latest.delete(message.subject);
          if (through >= newest) return latest;
        }
        const short = `the reader of ${stream} under ${filter} delivered through sequence ${through} of ${newest}`;
        // whilePassing takes "timeout" for a passing state: a new reader, placed anew, while its wait lasts.
        if (received === 0) throw clusterUnreachable(`timeout: ${short}`);
        // Without "timeout" in the message, whilePassing gives up at once.
        if (Date.now() - started > PASSING_WAIT_MS)
          throw clusterUnreachable(`${short}, still behind after ${Date.now() - started} ms`);
        batch = Math.min(newest - through, 4_096);
      }
    });
  }

  /**
   * Records under `prefix` in key order, `limit` at a time. Each page walks the key names under the prefix (headers
   * only, through `#newestUnder`, so no key acknowledged before the call is missed) and reads its own records from
   * the stream leader: fine for a family's bounded index (a user's sessions), not for a long log (transcripts are
   * read by ranges of numbered keys instead).
   */
  async list(prefix: RecordKey, options: { after?: string; limit?: number } = {}): Promise<RecordPage<T>> {
    const limit = options.limit ?? 100;
    const subjectPrefix = `$KV.${this.bucket}.`;
    const names = [...(await this.#newestUnder(prefix, true)).keys()].map((subject) =>
      subject.slice(subjectPrefix.length),
    );
    names.sort();
    const start = options.after === undefined ? 0 : names.findIndex((name) => name > options.after!);
    const page = start < 0 ? [] : names.slice(start, start + limit);
    const entries = await Promise.all(page.map((name) => this.kv.get(name)));
    const records = entries
      .filter((entry): entry is KvEntry => entry !== null && entry.operation === 'PUT')
      .map((entry) => ({ key: decodeKey(entry.key), value: entry.json<T>(), revision: entry.revision }));
    const more = start >= 0 && start + limit < names.length;
    return more ? { records, next: page[page.length - 1] } : { records };
  }

  /** Every record under `prefix`, then every write after it, in the bucket's order (see record-watch.ts). */
  watch(prefix: RecordKey, onChange: (change: RecordChange<T>) => void): Promise<{ stop(): void }> {
    return watchRecords(this.watched, prefix, onChange, () => this.lastWrite(prefix));
  }
}
