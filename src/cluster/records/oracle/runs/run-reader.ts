// Thread: any, cluster mode (runs on the front door; both roots load it with the record families)
// Re-joins a run kept in the runs stream (run-stream.ts) through any node: the run's frames numbered above
// `after`, then the live ones until `done`. The `run` frame first says the run's state: `running`, `recovering` (its
// node died and the partition's new owner runs the turn again: a numbered `run` frame with `resumed: true` and
// `partialLength: 0` marks where the new answer starts, so a client drops the old one), or how it ended. While no
// frame comes for `probeMs` the caller is asked (`onQuiet`: it asks the session's actor whether the run still runs,
// and has it taken over when not); after `giveUpMs` of silence with no word that it runs, the answer ends without
// `done` and the client re-joins, as after any dropped stream. A gap (a batch that was not stored) ends it alike.
import { DeliverPolicy } from '@nats-io/jetstream';
import type { StreamWriter } from '../../../../http/types.js';
import type { Logger } from '../../../../base/log.js';
import { batchOf, encodeBatch } from '../../../../oracle/frame-batch.js';
import type { KeptRun, RunReadOptions } from '../../../../oracle/runs/kept-runs.js';
import { encodeSseFrame, HEARTBEAT } from '../../../../oracle/sse-frames.js';
import { SequenceIn } from '../../../../runtime/sequenced-stream.js';
import { type RunStream, runInfoOf } from './run-stream.js';

/** The run `runId` of `userDid` from frame `after` on; undefined when there is none or its frames are gone. */
export async function keptRun(
  stream: RunStream,
  runId: string,
  userDid: string,
  after: number,
  options: RunReadOptions,
  log: Logger,
): Promise<KeptRun | undefined> {
  const info = await runInfoOf(stream, runId);
  if (!info || info.userDid !== userDid) return undefined;
  const { jsm, reader } = stream.connection;
  const subject = stream.subject(runId, 'f');
  const newest = (await jsm.streams.getMessage(stream.name, { last_by_subj: subject }).catch(() => null))?.seq ?? 0;
  const consumer = await reader.consumers.get(stream.name, {
    filter_subjects: subject,
    deliver_policy: DeliverPolicy.All,
  });
  const messages = await consumer.consume();
  const iterator = messages[Symbol.asyncIterator]();
  const first = newest === 0 ? undefined : await iterator.next();
  const firstBatch = first && !first.done ? batchOf(first.value.json()) : undefined;
  // Frames above `after` must all be kept: a client missing some would show a hole in its answer.
  if ((firstBatch && firstBatch.first > after + 1) || (!firstBatch && after > 0)) {
    await messages.close();
    return undefined;
  }
  return {
    info,
    pipe(writer) {
      void relay(writer).catch((error: unknown) => {
        log.warn({ err: error, runId }, 'a kept run could not be read');
        if (!writer.closed) writer.end();
      });
    },
  };

  async function relay(writer: StreamWriter): Promise<void> {
    /** The run's numbers, from its first batch kept (runtime/sequenced-stream.ts). */
    const ids = new SequenceIn(firstBatch?.first ?? 1);
    let backlog = '';
    let status = 'running';
    let partial = 0;
    let live = newest === 0;
    let ended = false;
    let heardAt = performance.now();
    let quietAt = heardAt;
    const stop = () => void messages.close().catch(() => undefined);
    writer.onClose(stop);
    let beatAt = heardAt;
    const ticker = setInterval(() => {
      const now = performance.now();
      if (now - heardAt > options.giveUpMs) return finish();
      if (now - quietAt > options.probeMs) {
        quietAt = now;
        void options.onQuiet(info!).then(
          (alive) => alive && (heardAt = performance.now()),
          () => undefined,
        );
      }
      if (live && !writer.closed && now - beatAt >= options.heartbeatMs) {
        beatAt = now;
        writer.write(HEARTBEAT);
      }
    }, Math.min(options.heartbeatMs, options.probeMs) / 2);
    ticker.unref();
    const finish = () => {
      clearInterval(ticker);
      stop();
      if (!writer.closed) writer.end();
    };
    const take = (value: unknown): boolean => {
      // A batch that starts past the next id: one was not stored. Ending lets the client re-join (from what it has).
      const batch = batchOf(value);
      if (!batch) return false;
      const arrival = ids.take(batch.first, batch.events.length);
      if (arrival.kind === 'gap') return false;
      if (arrival.kind === 'seen') return true;
      const { skip } = arrival;
      // The only numbered `run` frame is a takeover's, first in its batch: a new answer starts there.
      if (skip === 0 && batch.events[0] === 'run') {
        status = 'recovering';
        partial = 0;
      }
      partial += batch.answer;
      if (batch.status) {
        status = batch.status;
        ended = true;
        ids.end();
      }
      if (ids.expected - 1 > after) backlog += encodeBatch(batch, Math.max(skip, after + 1 - batch.first, 0));
      return true;
    };
    const flush = () => {
      if (backlog && !writer.closed) writer.write(backlog);
      backlog = '';
    };
    const runFrame = () =>
      encodeSseFrame({
        event: 'run',
        data: { runId, requestId: info!.requestId, resumed: false, partialLength: partial, status },
      });
    try {
      // Nothing kept yet (a run whose first frames are on their way): the run frame alone, then live.
      if (live) writer.write(runFrame());
      let next = first ?? (await iterator.next());
      while (!next.done) {
        const message = next.value;
        heardAt = quietAt = performance.now();
        if (!take(message.json())) break;
        if (!live && message.seq >= newest) {
          live = true;
          backlog = runFrame() + backlog;
        }
        if (live) flush();
        if (ended || writer.closed) break;
        next = await iterator.next();
      }
    } finally {
      finish();
    }
  }
}
