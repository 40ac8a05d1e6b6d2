// Thread: any holding a NATS connection, cluster mode
// Kept runs (the oracle face's port, oracle/runs/kept-runs.ts) on JetStream: the runs stream every node shares
// (run-stream.ts), written by the actor hosts' turns (run-writer.ts) and read by any node's front door
// (run-reader.ts, cluster-runs.ts).
import type { ClusterConnection } from '../../../connection.js';
import type { RunKeeping } from '../../../../oracle/runs/kept-runs.js';
import { ClusterRuns } from './cluster-runs.js';
import { nextFrameOf, openRunStream } from './run-stream.js';
import { RunWriter } from './run-writer.js';

export function jetStreamRunKeeping(connection: ClusterConnection): RunKeeping {
  return {
    async frames(limits, log) {
      const stream = await openRunStream(connection, limits);
      return {
        writer: (info, nextId) => new RunWriter(stream, info, log, nextId),
        next: (runId) => nextFrameOf(stream, runId),
      };
    },
    async front(limits, { registry, openRuns, reading, log }) {
      return new ClusterRuns(connection, await openRunStream(connection, limits), registry, openRuns, reading, log);
    },
  };
}
