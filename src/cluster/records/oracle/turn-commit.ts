// Thread: any holding a NATS connection, cluster mode
// The chat repositories on JetStream KV with a turn stored in
// two steps, since KV has no transaction over two keys: the entries first (create-only numbers), then the record
// (revision-checked).
// - A number taken or a stale revision: refused before anything is written (both are checked first, at once).
// - A racing writer takes a number or moves the record between the checks and the writes: the entries this turn
//   appended are deleted again (only if still its own), then it is refused, so on a conflict nothing of it stays.
// - The node dies between the two steps: the entries stay and the record does not move. They are the newest
//   entries of the transcript, so the next turn (on whichever node) counts them in the length it reads and appends
//   after them; the transcript stays one numbered sequence and no acknowledged turn is touched. What the user sees
//   is the turn's message and answer although the request that made them failed, and the session's time and title
//   as before it.
import type { ClusterConnection } from '../../connection.js';
import { isRevisionConflict } from '../../../store/revision.js';
import { JetStreamSessionRepository } from './sessions.js';
import { JetStreamTranscriptRepository } from './transcripts.js';
import type { SessionStores } from '../../../oracle/sessions/turn-commit.js';

export async function openJetStreamSessionStores(connection: ClusterConnection): Promise<SessionStores> {
  const sessions = await JetStreamSessionRepository.open(connection);
  const transcripts = await JetStreamTranscriptRepository.open(connection);
  return {
    sessions,
    transcripts,
    async commitTurn(record, revision, from, entries) {
      // Both checks at once, before anything is written: a stale revision or a taken number writes nothing.
      const [current, checked] = await Promise.all([
        sessions.expect(record.sessionId, revision),
        transcripts.check(record.sessionId, from, entries),
      ]);
      const appended = await transcripts.write(checked);
      try {
        return await sessions.updateFrom(current, record);
      } catch (error) {
        if (isRevisionConflict(error)) await transcripts.takeBack(appended);
        throw error;
      }
    },
  };
}
