// Thread: any (shared, pure: no state of its own)
// How a chat stream ends, and the frames that close it: the one place they are decided. The actor reports its
// ending as data in the stream's last message (actor/frame-sender.ts); the relay on the main thread writes the
// closing frames (routes/stream-relay.ts), also when the actor's host died and no ending came, so `done` is written
// once and last on every stream.
import { DONE_FRAME, encodeSseFrame, errorFrame, SseFrameBuilder, type SseFrame } from './sse-frames.js';
import { failureOf, streamAnswers, type ChatFailure } from './chat-failures.js';

export type StreamEnding =
  /** The turn ran, or was stale before it started: its outcome decides the last frames. */
  | {
      type: 'turn';
      sessionId: string;
      requestId: string;
      aborted?: boolean;
      error?: string;
      errorSent?: boolean;
      partialText?: string;
    }
  /** The stream failed after it opened (the actor threw, or its host died): the SSE face's answer to it. */
  | { type: 'failed'; failure: ChatFailure };

/** The ending of a stream that failed after it opened. */
export function failedEnding(error: unknown): StreamEnding {
  return { type: 'failed', failure: failureOf(error) };
}

/** The closing frames of `ending`, encoded; no ending (the actor ended without saying how): `done` alone. */
export function closingFrames(ending: StreamEnding | undefined): string[] {
  let frames: SseFrame[];
  if (!ending) frames = [DONE_FRAME];
  else if (ending.type === 'turn') frames = new SseFrameBuilder(ending.sessionId, ending.requestId).end(ending);
  else
    frames = [
      errorFrame(streamAnswers.sse[ending.failure.code](ending.failure)),
      { event: 'done', data: { status: 'failed', failed: true } },
    ];
  return frames.map((frame) => encodeSseFrame(frame));
}
