// Thread: main (front door), cluster mode
// What a kept run's reader does while the run is quiet (kept-runs.ts): asks the session's actor, on whichever node
// owns its partition now, whether it runs that turn (a signal, answered beside the mailbox); when it does not, the
// turn's node died mid-turn, and a `recover` call has the owner take the turn over (actor/run-recovery.ts). The
// call is not awaited: the reader hears of the recovery by its frames. The same is done without any reader by the
// node that inherits a dead node's partitions, for every open run of a session in them (`takeOverInherited`).
import type { Actors } from '../../runtime/router.js';
import { CHAT_ACTOR } from '../chat/chat-protocol.js';
import type { Logger } from '../../base/log.js';
import type { OpenRunRepository } from './open-runs.js';
import type { RunInfo } from './run-log.js';

/** A recovered turn may take as long as a JSON turn: several model calls and tools. */
const RECOVER_TIMEOUT_MS = 10 * 60_000;

export function takeOverWhenDead(actors: Actors): (info: RunInfo) => Promise<boolean> {
  return async ({ sessionId, userDid, runId }) => {
    const actor = actors.ref(CHAT_ACTOR, sessionId);
    if ((await actor.signal({ type: 'run-alive', userDid, runId })) === true) return true;
    void actor.send({ type: 'recover', userDid, runId }, RECOVER_TIMEOUT_MS).catch(() => undefined);
    return false;
  };
}

/** Has every open run of the sessions `inherited` tests true for taken over (or found alive) on this node. */
export async function takeOverInherited(
  openRuns: OpenRunRepository,
  actors: Actors,
  inherited: (sessionId: string) => boolean,
  log: Logger,
): Promise<void> {
  const runs = (await openRuns.all()).filter((run) => inherited(run.sessionId));
  if (runs.length === 0) return;
  log.info({ runs: runs.length }, 'inherited partitions: taking over their open runs');
  const probe = takeOverWhenDead(actors);
  await Promise.allSettled(runs.map((run) => probe(run)));
}
