// Thread: any, cluster mode
// The stream that keeps every node's runs (`<prefix>_oracle_runs`), so that a run
// outlives the node that streamed it. A run is two subjects: `<prefix>.oracle-run.<runId>.open`, one message saying
// whose run it is (RunInfo), and `<prefix>.oracle-run.<runId>.f`, its frames in batches (frame-batch.ts), each
// numbered from the id of its first frame (the SSE `id:` lines, as the front door's run log numbers them). The
// actor running the turn writes both (run-writer.ts); any node's front door reads them (run-reader.ts). The oracle
// face's port for it: oracle/runs/kept-runs.ts.
//
// Bounds, as the run log's: a run keeps at most RUN_MAX_BYTES of frames (its writer purges the oldest batches past
// it), the stream at most RUNS_MAX_BYTES (the oldest messages go first) and a message at most RUN_RETENTION_SECONDS
// plus the longest a turn runs (RUN_STREAM_TURN_MS), so an ended run stays re-joinable for about its retention.
import type { ClusterConnection } from '../../../connection.js';
import { untilStreamLed, whilePassing } from '../../../passing.js';
import { batchOf } from '../../../../oracle/frame-batch.js';
import type { RunStreamLimits } from '../../../../oracle/runs/kept-runs.js';
import type { RunInfo } from '../../../../oracle/runs/run-log.js';

export interface RunStream {
  readonly connection: ClusterConnection;
  readonly name: string;
  readonly limits: RunStreamLimits;
  /** The subject of a run's opening message or of its frames. */
  subject(runId: string, part: 'open' | 'f'): string;
}

/** The longest a turn is expected to run: frames older than it plus the retention may be gone. */
export const RUN_STREAM_TURN_MS = 60 * 60_000;

/** A run id becomes one subject token: anything but letters, digits, `-` and `_` is refused by the routes. */
export const RUN_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

export async function openRunStream(connection: ClusterConnection, limits: RunStreamLimits): Promise<RunStream> {
  const name = `${connection.prefix}_oracle_runs`;
  const base = `${connection.prefix}.oracle-run`;
  const config = {
    name,
    subjects: [`${base}.*.*`],
    num_replicas: connection.replicas,
    max_age: (limits.retentionMs + RUN_STREAM_TURN_MS) * 1_000_000,
    max_bytes: limits.totalBytes,
    allow_direct: false,
  };
  await whilePassing(async () => {
    if (await connection.jsm.streams.info(name).catch(() => undefined)) return;
    // Nodes starting together create it at once: the losers find it created.
    await connection.jsm.streams.add(config).catch(async (error: unknown) => {
      if (!(await connection.jsm.streams.info(name).catch(() => undefined))) throw error;
    });
  });
  await untilStreamLed(connection.jsm, name);
  return { connection, name, limits, subject: (runId, part) => `${base}.${runId}.${part}` };
}

/** The run's opening message (whose run it is), or undefined when the stream has none for it. */
export async function runInfoOf(stream: RunStream, runId: string): Promise<RunInfo | undefined> {
  if (!RUN_ID_PATTERN.test(runId)) return undefined;
  const message = await stream.connection.jsm.streams
    .getMessage(stream.name, { last_by_subj: stream.subject(runId, 'open') })
    .catch(() => null);
  return message ? message.json<RunInfo>() : undefined;
}

/** The run's opening (undefined: none kept), the id its next frame gets (1 when it has none) and whether it ended. */
export async function nextFrameOf(
  stream: RunStream,
  runId: string,
): Promise<{ info: RunInfo | undefined; id: number; ended: boolean }> {
  const info = await runInfoOf(stream, runId);
  const message = info
    ? await stream.connection.jsm.streams
        .getMessage(stream.name, { last_by_subj: stream.subject(runId, 'f') })
        .catch(() => null)
    : null;
  if (!message) return { info, id: 1, ended: false };
  const batch = batchOf(message.json());
  // A last batch that cannot be read: not continued (its numbers are unknown).
  if (!batch) return { info, id: 1, ended: true };
  return { info, id: batch.first + batch.events.length, ended: batch.status !== undefined };
}
