// Thread: any (wherever a NATS connection is)
// The records of a KV bucket walked in write order, a page at a time,
// for a walk over a whole family (a PIN key rotation over every account). `KvRecordStore.list` reads every key name
// for each page, fine for a bounded index but quadratic over a bucket of a million accounts; a scan reads each record
// once. A record-store bucket keeps one value per key (history 1), so the bucket's messages from any sequence on are
// exactly the current records written after it (and deletion markers, skipped): a page is an ordered consumer from
// the sequence after the cursor. A record rewritten during the walk moves past the cursor and is met again later.
//
// As in `KvRecordStore.all`, the reader may sit on a server still catching up, which would end the walk early: each
// page reads the stream leader's newest write first (STREAM.MSG.GET, which only the leader answers) and fetches until
// it reached that sequence, or `limit` records.
import { DeliverPolicy } from '@nats-io/jetstream';
import type { ClusterConnection } from './connection.js';
import { decodeKey, prefixFilter, type RecordKey } from './keys.js';
import { clusterUnreachable } from './out-of-reach.js';
import { whilePassing } from './passing.js';
import type { StoredRecord } from './record-store.js';

export interface ScanPage<T> {
  records: StoredRecord<T>[];
  /** The sequence to pass as `after` for the next page; absent when the page reached the bucket's newest write. */
  next?: number;
}

/** How many messages one fetch asks for at most. */
const FETCH_MAX = 1_024;

/**
 * Up to `limit` records under `prefix` of `bucket` (the full bucket name, deployment prefix included) written after
 * sequence `after` (0: from the start), oldest first, each with its revision (its sequence).
 */
export function scanRecords<T>(
  connection: ClusterConnection,
  bucket: string,
  prefix: RecordKey,
  after: number,
  limit: number,
): Promise<ScanPage<T>> {
  const stream = `KV_${bucket}`;
  const subjectPrefix = `$KV.${bucket}.`;
  const filter = `${subjectPrefix}${prefixFilter(prefix)}`;
  return whilePassing(async () => {
    const newest = (await connection.jsm.streams.getMessage(stream, { last_by_subj: filter }))?.seq ?? 0;
    if (newest <= after) return { records: [] };
    const consumer = await connection.reader.consumers.get(stream, {
      filter_subjects: filter,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: after + 1,
    });
    const records: StoredRecord<T>[] = [];
    let through = after;
    while (records.length < limit && through < newest) {
      let received = 0;
      // Never more than the page still needs, nor than there is up to `newest`: the fetch need not wait it out.
      const wanted = Math.min(limit - records.length, newest - through, FETCH_MAX);
      for await (const message of await consumer.fetch({ max_messages: wanted, expires: 2_000 })) {
        received++;
        through = message.seq;
        // A deletion's marker carries KV-Operation; a record's write carries none (or PUT).
        const operation = message.headers?.get('KV-Operation');
        if (!operation || operation === 'PUT')
          records.push({
            key: decodeKey(message.subject.slice(subjectPrefix.length)),
            value: message.json<T>(),
            revision: message.seq,
          });
        // Sequences between the cursor and `newest` may hold no message under the filter (overwritten, other
        // subjects): the fetch would wait out its expiry for them. Stop at `newest` instead.
        if (through >= newest) break;
      }
      // whilePassing takes "timeout" for a passing state: a new reader, placed anew.
      if (received === 0)
        throw clusterUnreachable(`timeout: the reader of ${stream} delivered nothing after ${through}`);
    }
    return through < newest ? { records, next: through } : { records };
  });
}
