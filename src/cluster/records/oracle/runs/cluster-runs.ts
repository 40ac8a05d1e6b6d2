// Thread: any, cluster mode (runs on the front door; both roots load it with the record families)
// Runs across nodes. A run's frames are kept in the runs stream by the actor running its turn (run-writer.ts), so a
// re-join through any node reads them there (run-reader.ts), also after the node that streamed it died. While a
// kept run is quiet, the reader asks the session's actor whether the run still runs (`onQuiet`, run takeover).
// GET /sessions/:id/run through a node without the session's run asks the others over core NATS
// (`<prefix>.runs-by-session`; only the holder answers), then the session's open run (a run whose front door died,
// or that is being taken over: `recovering`).
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { ClusterConnection } from '../../../connection.js';
import type { Logger } from '../../../../base/log.js';
import type { KeptRun, KeptRuns, RunReadOptions } from '../../../../oracle/runs/kept-runs.js';
import type { OpenRunRepository } from '../../../../oracle/runs/open-runs.js';
import type { RunRegistry } from '../../../../oracle/runs/registry.js';
import type { RunStream } from './run-stream.js';
import { keptRun } from './run-reader.js';

export class ClusterRuns implements KeptRuns {
  readonly #nc: NatsConnection;
  /** Every node answers here for the runs in progress it streamed (GET /sessions/:id/run through another node). */
  readonly #sessions: Subscription;
  readonly #sessionsSubject: string;

  constructor(
    connection: ClusterConnection,
    private readonly stream: RunStream,
    private readonly registry: RunRegistry,
    private readonly openRuns: OpenRunRepository,
    private readonly reading: RunReadOptions,
    private readonly log: Logger,
  ) {
    this.#nc = connection.nc;
    this.#sessionsSubject = `${connection.prefix}.runs-by-session`;
    this.#sessions = this.#nc.subscribe(this.#sessionsSubject, {
      callback: (error, msg) => {
        if (error) return;
        const { sessionId, userDid } = msg.json<{ sessionId: string; userDid: string }>();
        const run = this.registry.running(sessionId, userDid);
        // Only the holder answers: the asker takes the first answer, or none within its wait.
        if (run) msg.respond(JSON.stringify({ runId: run.info.runId, status: run.status }));
      },
    });
  }

  /** The run kept in the runs stream, from frame `after` on; undefined when it is not this user's or not kept. */
  join(runId: string, userDid: string, after: number): Promise<KeptRun | undefined> {
    return keptRun(this.stream, runId, userDid, after, this.reading, this.log);
  }

  /** The session's run in progress on another node, asked of all of them (none within `waitMs`), or its open run. */
  async running(
    sessionId: string,
    userDid: string,
    waitMs = 500,
  ): Promise<{ runId: string; status: string } | undefined> {
    try {
      return (
        await this.#nc.request(this.#sessionsSubject, JSON.stringify({ sessionId, userDid }), { timeout: waitMs })
      ).json();
    } catch {
      const open = (await this.openRuns.get(sessionId).catch(() => undefined))?.value;
      if (!open || open.userDid !== userDid) return undefined;
      return { runId: open.runId, status: open.attempt > 1 ? 'recovering' : 'running' };
    }
  }

  stop(): void {
    this.#sessions.unsubscribe();
  }
}
