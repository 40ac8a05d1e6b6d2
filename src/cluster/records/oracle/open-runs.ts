// Thread: any holding a NATS connection, cluster mode
// The open runs (open-runs.ts) in the JetStream bucket
// `<prefix>_oracle_open_runs`, keyed `r.<session>`. A recovery's claim is a revision-checked update, so of two
// nodes taking one turn over (the partition moved twice) one runs it.
import type { ClusterConnection } from '../../connection.js';
import { KvRecordStore } from '../../record-store.js';
import type { OpenRun, OpenRunRepository } from '../../../oracle/runs/open-runs.js';

export async function openJetStreamOpenRuns(connection: ClusterConnection): Promise<OpenRunRepository> {
  const store = await KvRecordStore.open<OpenRun>(connection, { name: 'oracle_open_runs' });
  return {
    get: (sessionId) => store.get(['r', sessionId]),
    async put(run) {
      await store.put(['r', run.sessionId], run);
    },
    async claim(run, revision) {
      await store.update(['r', run.sessionId], run, revision);
    },
    async remove(sessionId, runId) {
      const current = await store.get(['r', sessionId]);
      if (current?.value.runId === runId) await store.delete(['r', sessionId], current.revision).catch(() => undefined);
    },
    all: async () => (await store.all(['r'])).map((record) => record.value),
  };
}
