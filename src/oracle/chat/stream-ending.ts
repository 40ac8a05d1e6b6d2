// How a chat stream ends, and the frames that close it: the one place they are decided. The actor reports its
// ending as data in the stream's last message (frame-sender.ts); the relay on the main thread writes the
// closing frames (stream-relay.ts), also when the actor's host died and no ending came, so `done` is written
// once and last on every stream.
import { DONE_FRAME, encodeSseFrame, errorFrame, SseFrameBuilder, type SseFrame } from '../agent/sse-frames.js';
import { DomainError } from '../../runtime/errors.js';

export type StreamEnding =
  /** The turn ran, or was stale before it started: its outcome decides the last frames. */
  | { type: 'turn'; sessionId: string; requestId: string; aborted?: boolean; error?: string; errorSent?: boolean }
  /** The stream failed after it opened: a DomainError's code, `internal` (the actor threw), `host_unavailable`. */
  | { type: 'failed'; code: string; message: string };

/** The ending of a stream whose actor threw after the stream opened. */
export function failedEnding(error: unknown): StreamEnding {
  if (error instanceof DomainError) return { type: 'failed', code: error.code, message: error.message };
  return { type: 'failed', code: 'internal', message: error instanceof Error ? error.message : String(error) };
}

/** The closing frames of `ending`, encoded; no ending (the actor ended without saying how): `done` alone. */
export function closingFrames(ending: StreamEnding | undefined): string[] {
  let frames: SseFrame[];
  if (!ending) frames = [DONE_FRAME];
  else if (ending.type === 'turn') frames = new SseFrameBuilder(ending.sessionId, ending.requestId).end(ending);
  else frames = [errorFrame(failureText(ending)), DONE_FRAME];
  return frames.map((frame) => encodeSseFrame(frame));
}

function failureText({ code, message }: { code: string; message: string }): string {
  if (code === 'host_unavailable') return 'The chat service stopped while answering; please send your message again';
  if (code === 'internal') return 'The answer could not be completed; please send your message again';
  return message;
}
