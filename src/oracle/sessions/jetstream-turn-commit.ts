// Cluster mode (any thread holding a NATS connection): the chat repositories on JetStream KV with a turn stored in
// two steps, since KV has no transaction over two keys: the entries first (create-only numbers), then the record
// (revision-checked).
// - A number taken: refused before anything is written (the append checks every number first).
// - The record moved (a stale writer): the entries it appended are deleted again (only if still its own), then
//   refused, so on a conflict nothing of the turn stays.
// - The node dies between the two steps: the entries stay and the record does not move. They are the newest
//   entries of the transcript, so the next turn (on whichever node) counts them in the length it reads and appends
//   after them; the transcript stays one numbered sequence and no acknowledged turn is touched. What the user sees
//   is the turn's message and answer although the request that made them failed, and the session's time and title
//   as before it.
import type { ClusterConnection } from '../../cluster/connection.js';
import { isRevisionConflict } from '../../store/revision.js';
import { JetStreamSessionRepository } from './jetstream-repository.js';
import { JetStreamTranscriptRepository } from './jetstream-transcript-repository.js';
import type { SessionStores } from './turn-commit.js';

export async function openJetStreamSessionStores(connection: ClusterConnection): Promise<SessionStores> {
  const sessions = await JetStreamSessionRepository.open(connection);
  const transcripts = await JetStreamTranscriptRepository.open(connection);
  return {
    sessions,
    transcripts,
    async commitTurn(record, revision, from, entries) {
      const appended = await transcripts.appendEntries(record.sessionId, from, entries);
      try {
        return await sessions.update(record, revision);
      } catch (error) {
        if (isRevisionConflict(error)) await transcripts.takeBack(appended);
        throw error;
      }
    },
  };
}
