// Thread: any (shared, pure: no state of its own)
// How a chat stream ends, and the frames that close it: the one place they are decided. The actor builds its
// closing frames from its ending and sends them, numbered, with their status in the stream's last message
// (actor/frame-sender.ts); the relay on the main thread builds them when the actor's host died and no end came
// (routes/stream-relay.ts), so `done` is written once and last on every stream.
import { DONE_FRAME, errorFrame, SseFrameBuilder, type SseFrame } from './sse-frames.js';
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

/** The closing frames of `ending`, `done` last; no ending (the actor ended without saying how): `done` alone. */
export function closingFrames(ending: StreamEnding | undefined): SseFrame[] {
  if (!ending) return [DONE_FRAME];
  if (ending.type === 'turn') return new SseFrameBuilder(ending.sessionId, ending.requestId).end(ending);
  return [
    errorFrame(streamAnswers.sse[ending.failure.code](ending.failure)),
    { event: 'done', data: { status: 'failed', failed: true } },
  ];
}
