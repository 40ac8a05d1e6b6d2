// Thread: any
// The stream behind a partition journal (journal.ts) and the few things done to it: open it, read a
// range of it in order, and the three kinds of message it holds. One replicated stream per record family,
// `<prefix>_journal_<name>`, subjects `<prefix>.journal.<name>.<writer>`: each writer appends to its own subject.
import { DeliverPolicy, type MsgRequest } from '@nats-io/jetstream';
import type { ClusterConnection } from '../connection.js';
import { clusterUnreachable } from '../out-of-reach.js';
import { untilStreamLed, whilePassing } from '../passing.js';

/**
 * What a journal message says: records appended (`r`: [partition, key, value] each); a writer's claim of the
 * partitions `c` on its own subject, whose sequence orders its load against every other; a fence on another
 * writer's subject for the partitions `f`, from the load whose claim is at sequence `by`; or a writer's first message
 * (`o`), which makes its subject exist so that writers loading a partition after it fence it too.
 */
export type JournalMessage<T> = { r: [number, string, T][] } | { c: number[] } | { f: number[]; by: number } | { o: 1 };

export interface JournalStream {
  readonly connection: ClusterConnection;
  /** The stream's name. */
  readonly name: string;
  /** Subjects of writers are `<base>.<writer>`. */
  readonly base: string;
  readonly maxAgeMs: number;
}

/** A message of the stream as read back: its sequence, when it was stored, and what it says. */
export interface JournalRead<T> {
  seq: number;
  subject: string;
  /** When the stream stored it (ms since the epoch, the server's clock). */
  at: number;
  message: JournalMessage<T>;
}

const encoder = new TextEncoder();
export const encodeMessage = <T>(message: JournalMessage<T>): Uint8Array => encoder.encode(JSON.stringify(message));

/** The JetStream default duplicate window (2 minutes), which must not exceed the max age. */
const DUPLICATE_WINDOW_MS = 120_000;

/**
 * Creates the journal's stream (replicas from the connection, fsynced like every stream of the cluster) or opens
 * it; a record not rewritten for `maxAgeMs` is dropped with the message that carried it. A stream created earlier
 * with a shorter max age (a longer lifetime configured since) gets the longer one.
 */
export async function openJournalStream(
  connection: ClusterConnection,
  options: { name: string; maxAgeMs: number },
): Promise<JournalStream> {
  const name = `${connection.prefix}_journal_${options.name}`;
  const base = `${connection.prefix}.journal.${options.name}`;
  const maxAgeNs = options.maxAgeMs * 1_000_000;
  const config = {
    name,
    subjects: [`${base}.*`],
    num_replicas: connection.replicas,
    max_age: maxAgeNs,
    duplicate_window: Math.min(DUPLICATE_WINDOW_MS, options.maxAgeMs) * 1_000_000,
    allow_direct: false,
  };
  await whilePassing(async () => {
    const existing = await connection.jsm.streams.info(name).catch(() => undefined);
    if (!existing) {
      // Nodes starting together create it at once: the losers find it created.
      await connection.jsm.streams.add(config).catch(async (error: unknown) => {
        if (!(await connection.jsm.streams.info(name).catch(() => undefined))) throw error;
      });
    } else if (existing.config.max_age < maxAgeNs) {
      await connection.jsm.streams.update(name, { max_age: maxAgeNs });
    }
  });
  await untilStreamLed(connection.jsm, name);
  return { connection, name, base, maxAgeMs: options.maxAgeMs };
}

/**
 * Reads the stream in order from sequence `from` through `to` (or as far as it goes), only `subject` when given,
 * handing each message to `onMessage`. Messages the max age removed are skipped, as is anything unparsable.
 */
export async function readJournal<T>(
  stream: JournalStream,
  range: { from: number; to: number; subject?: string },
  onMessage: (read: JournalRead<T>) => void,
): Promise<void> {
  if (range.from > range.to) return;
  await whilePassing(async () => {
    let from = range.from;
    const consumer = await stream.connection.reader.consumers.get(stream.name, {
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: from,
      ...(range.subject ? { filter_subjects: range.subject } : {}),
    });
    for (;;) {
      let received = 0;
      let done = false;
      const batch = await consumer.fetch({ max_messages: Math.min(range.to - from + 1, 4_096), expires: 2_000 });
      for await (const message of batch) {
        received++;
        from = message.seq + 1;
        let decoded: JournalMessage<T> | undefined;
        try {
          decoded = message.json<JournalMessage<T>>();
        } catch {
          decoded = undefined;
        }
        if (decoded) {
          onMessage({
            seq: message.seq,
            subject: message.subject,
            at: Number(message.info.timestampNanos) / 1e6,
            message: decoded,
          });
        }
        // The end is `to`, never the reader's pending count: a reader (an R1 ordered consumer) is placed on any of
        // the stream's servers, and on one still catching up (back from a partition) it counts 0 pending at that
        // server's last message, short of what the leader acknowledged. Stopping there skipped records for good
        // (catchUp marks everything through `to` read): a loaded partition missed a session's last steps ("END Your
        // session has expired" in test/cluster-partitions). Fetching on waits for that server to catch up; a fetch
        // that brings nothing is handled below (and a reader made again elsewhere).
        if (message.seq >= range.to) {
          done = true;
          break;
        }
      }
      if (done || from > range.to) return;
      if (received === 0) {
        // Nothing more: what is left was removed by the max age, or no message left matches the filter. Unfiltered,
        // a message that still exists was not delivered (a reader on a server that died): read again.
        if (range.subject || (await journalState(stream)).firstSeq > from) return;
        throw new Error(`timeout: journal ${stream.name} delivered nothing from ${from} through ${range.to}`);
      }
    }
  });
}

/**
 * The stream's last sequence (0 when it holds nothing) and the subjects of its writers, with one request. Only the
 * stream leader's answer is taken: a server that lost its leader answers with its own state, which after a partition
 * may lack appends acknowledged meanwhile (test/cluster-leaderless-server), so such an answer fails as a
 * timeout, as the request does while a leader is elected.
 */
export async function journalState(
  stream: JournalStream,
  withSubjects = false,
): Promise<{ lastSeq: number; firstSeq: number; subjects: string[] }> {
  const { state, cluster } = await stream.connection.jsm.streams.info(
    stream.name,
    withSubjects ? { subjects_filter: `${stream.base}.*` } : undefined,
  );
  if (cluster && !cluster.leader)
    throw clusterUnreachable(`timeout: journal ${stream.name} has no leader, its state may be stale`);
  return {
    lastSeq: state.messages === 0 ? 0 : state.last_seq,
    firstSeq: state.first_seq,
    subjects: Object.keys(state.subjects ?? {}),
  };
}

/**
 * The first message on `subject` after sequence `after` (undefined: none), from the stream leader: its sequence, its
 * message id (the `Nats-Msg-Id` header it was published with) and its bytes.
 */
export async function nextOnSubject(
  stream: JournalStream,
  subject: string,
  after: number,
): Promise<{ seq: number; msgID: string | undefined; data: Uint8Array } | undefined> {
  // STREAM.MSG.GET takes `next_by_subj` with a start sequence (nats-server >= 2.10); the client's type lacks it.
  const query = { seq: after + 1, next_by_subj: subject } as unknown as MsgRequest;
  const message = await stream.connection.jsm.streams.getMessage(stream.name, query);
  return message
    ? { seq: message.seq, msgID: message.header?.get('Nats-Msg-Id') || undefined, data: message.data }
    : undefined;
}

/** The sequence of the newest message on `subject` (0: none kept). */
export async function lastOnSubject(stream: JournalStream, subject: string): Promise<number> {
  const message = await stream.connection.jsm.streams.getMessage(stream.name, { last_by_subj: subject });
  return message?.seq ?? 0;
}
