// Thread: any
// The span of one journal append (journal.ts), under the first traced record's context and linked
// to the others' traces: how many records the message carried and how long its quorum took to fsync it.
import { type Context, tracing } from '../../telemetry/index.js';

/** A queued record, with the context its append() call came with. */
export interface Traced {
  trace?: Context | undefined;
}

export async function tracedAppend<R>(batch: readonly Traced[], subject: string, append: () => Promise<R>): Promise<R> {
  const t = tracing;
  const traced = t ? batch.filter((record) => record.trace) : [];
  if (!t || traced.length === 0) return append();
  const span = t.start(
    'journal.append',
    'producer',
    { 'journal.records': batch.length, 'journal.subject': subject },
    traced[0].trace,
  );
  for (const record of traced.slice(1)) {
    const link = t.spanContextOf(record.trace!);
    if (link) span.addLink({ context: link });
  }
  try {
    return await append();
  } catch (error) {
    t.failed(span, error);
    throw error;
  } finally {
    span.end();
  }
}
