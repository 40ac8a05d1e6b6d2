// Thread: actor host, cluster mode
// Taking over a run whose node died mid-turn (runs/open-runs.ts), on the partition's new owner, in the session
// actor's mailbox: the open run is claimed with a revision-checked write (of two owners in turn, one runs it), the
// run's frames go on from the next id with a numbered `run` frame saying `recovering` and `resumed: true`,
// `partialLength: 0` (a client drops the text of the cut answer and shows the new one), and the turn runs again.
// A run that cannot be run again (its session is gone, or it was taken over too often already) is closed with
// `done { status: "interrupted" }`; so is a run whose open record was replaced by a later turn.
import { isRevisionConflict } from '../../store/revision.js';
import { toBatch } from '../frame-batch.js';
import { INTERRUPTED_FRAME } from '../sse-frames.js';
import type { RunFrameStore, RunFrameWriter } from '../runs/kept-runs.js';
import type { OpenRun } from '../runs/open-runs.js';
import type { RunInfo } from '../runs/run-log.js';
import type { ChatServices } from './services.js';

/** Attempts at one turn (the first included) before it is closed `interrupted`. */
export const MAX_RUN_ATTEMPTS = 3;

export type RunClaim =
  | { kind: 'claimed'; open: OpenRun; writer: RunFrameWriter }
  | { kind: 'interrupted' }
  | { kind: 'none' };

/**
 * Claims the session's open run `runId` for this node (`owned`: the session exists and is the asker's). Nothing to
 * claim when the run ended or is not this session's.
 */
export async function claimRun(
  services: ChatServices,
  sessionId: string,
  request: { runId: string; userDid: string },
  owned: boolean,
): Promise<RunClaim> {
  const stream = services.keptRuns;
  if (!stream) return { kind: 'none' };
  const next = await stream.next(request.runId);
  if (next.ended || next.info?.userDid !== request.userDid || next.info.sessionId !== sessionId)
    return { kind: 'none' };
  const stored = await services.openRuns.get(sessionId);
  const open = stored?.value.runId === request.runId ? stored.value : undefined;
  if (!open || !owned || open.attempt >= MAX_RUN_ATTEMPTS) {
    // Cut and not to be run again (or replaced by a later turn of the session): its readers are told so.
    await closeInterrupted(stream, next.info, next.id);
    if (open) await services.openRuns.remove(sessionId, open.runId);
    return { kind: 'interrupted' };
  }
  const claimed: OpenRun = { ...open, attempt: open.attempt + 1 };
  try {
    await services.openRuns.claim(claimed, stored!.revision);
  } catch (error) {
    if (isRevisionConflict(error)) return { kind: 'none' };
    throw error;
  }
  const writer = stream.writer(next.info, next.id);
  writer.open();
  const { runId, requestId } = next.info;
  const frame = { runId, requestId, resumed: true, partialLength: 0, status: 'recovering' };
  writer.write(toBatch(writer.nextId, [{ event: 'run', data: frame }]));
  services.log.info({ sessionId, runId, attempt: claimed.attempt }, 'taking over a run whose node died');
  return { kind: 'claimed', open: claimed, writer };
}

async function closeInterrupted(stream: RunFrameStore, info: RunInfo, nextId: number) {
  const writer = stream.writer(info, nextId);
  writer.write(toBatch(nextId, [INTERRUPTED_FRAME]));
  await writer.settled();
}
