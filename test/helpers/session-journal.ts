// What the USSD sessions journal holds for one session, for a failure message (test/cluster-partitions.test.ts):
// every record of the session in stream order (its revision, the writer's subject, the state and consumed history
// it stored) and the claims and fences of its partition from the first record on, so a step lost or written on an
// old revision shows as such. Read from the stream itself (an observer's connection), not through any node.
import type { ClusterConnection } from '../../dist/src/cluster/connection.js';
import { RECORDS_PER_MESSAGE } from '../../dist/src/cluster/journal/image.js';
import { journalState, readJournal, type JournalStream } from '../../dist/src/cluster/journal/stream.js';
import { DEFAULT_PARTITIONS, partitionOf } from '../../dist/src/cluster/partition-leases.js';
import { USSD_JOURNAL } from '../../dist/src/cluster/records/ussd/sessions.js';

interface StoredStep {
  state?: string;
  history?: { length?: number };
  updatedAt?: number;
}

/** The journal's lines for `sessionId` (one per record, claim or fence), or why they could not be read. */
export async function sessionJournal(connection: ClusterConnection, sessionId: string): Promise<string> {
  const stream: JournalStream = {
    connection,
    name: `${connection.prefix}_journal_${USSD_JOURNAL}`,
    base: `${connection.prefix}.journal.${USSD_JOURNAL}`,
    maxAgeMs: 0,
  };
  const partition = partitionOf(sessionId, DEFAULT_PARTITIONS);
  const lines: string[] = [];
  let seen = false;
  try {
    const { firstSeq, lastSeq } = await journalState(stream);
    await readJournal<StoredStep>(stream, { from: firstSeq, to: lastSeq }, ({ seq, subject, at, message }) => {
      const writer = subject.slice(stream.base.length + 1, stream.base.length + 7);
      const when = new Date(at).toISOString().slice(11, 23);
      if ('r' in message) {
        message.r.forEach(([, key, value], index) => {
          if (key !== sessionId) return;
          seen = true;
          const revision = seq * RECORDS_PER_MESSAGE + index;
          lines.push(`${when} @${revision} by ${writer}: ${value.state} (history ${value.history?.length})`);
        });
      } else if (seen && 'c' in message && message.c.includes(partition)) {
        lines.push(`${when} seq ${seq}: ${writer} claims partition ${partition}`);
      } else if (seen && 'f' in message && message.f.includes(partition)) {
        lines.push(`${when} seq ${seq}: fence on ${writer} from the claim at ${message.by}`);
      }
    });
  } catch (error) {
    lines.push(`(the journal could not be read: ${(error as Error).message})`);
  }
  return `journal of ${sessionId} (partition ${partition}):\n  ${lines.join('\n  ') || 'no record'}`;
}
