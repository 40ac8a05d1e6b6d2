// Thread: any (shared, pure: no state of its own)
// Agent events -> SSE frames in the wire format existing clients parse (oracle-wire-format.md, "SSE stream"):
// a `reasoning` ack first, then message / reasoning / tool_call / action_call frames, then either
// `reasoning` (complete) + `done`, or `error` + `done`. `done` is always last, also after an abort (doneFrame).
import { toolErrorContent } from './chat/agent-errors.js';
import type { AgentEvent } from './chat/agent-types.js';

export interface SseFrame {
  /** `run` says where a reader is in a run (runs/run-log.ts; a takeover's `recovering`); the others are the turn's. */
  event: 'run' | 'reasoning' | 'message' | 'tool_call' | 'action_call' | 'error' | 'done';
  data: Record<string, unknown>;
}

/** A comment that keeps a quiet stream open: not a frame (neither numbered nor kept). */
export const HEARTBEAT = ': heartbeat\n\n';

/** How a stream ended, as its `done` frame says; `interrupted`: cut by its node's death and not run again. */
export type EndStatus = 'finished' | 'aborted' | 'failed' | 'interrupted';

/** How a run cut and not run again ends (client SDK 1.4.0 reads `status: "interrupted"`). */
export const INTERRUPTED_FRAME: SseFrame = { event: 'done', data: { status: 'interrupted', interrupted: true } };

/** The status a `done` frame says (`finished` when it says none); undefined for any other frame. */
export function endStatusOf(frame: SseFrame | undefined): EndStatus | undefined {
  if (frame?.event !== 'done') return undefined;
  const { status } = frame.data;
  return status === 'aborted' || status === 'failed' || status === 'interrupted' ? status : 'finished';
}

/** Characters of answer text a frame adds (a `message` delta's): what a `run` frame's `partialLength` counts. */
export function answerLength(frame: SseFrame): number {
  const content = frame.event === 'message' ? frame.data.content : undefined;
  return typeof content === 'string' ? content.length : 0;
}

/** How a turn ended, as far as the frames care. */
export interface TurnOutcome {
  aborted?: boolean;
  error?: string;
  /** An `error` frame was sent already (by the builder that framed the turn, when it is another one). */
  errorSent?: boolean;
  /** The answer's text as streamed so far (all `message` deltas): what a stopped or failed turn keeps. */
  partialText?: string;
}

/**
 * `done` of a turn that ran (client SDK 1.4.0 reads these): `status` `finished`, or `aborted` / `failed` with the
 * same flag set and `partialText`, the text kept (the SDK shows it in place of what it assembled).
 */
export function doneFrame(outcome: TurnOutcome): SseFrame {
  if (outcome.aborted)
    return { event: 'done', data: { status: 'aborted', aborted: true, partialText: outcome.partialText ?? '' } };
  if (outcome.error !== undefined)
    return { event: 'done', data: { status: 'failed', failed: true, partialText: outcome.partialText ?? '' } };
  return { event: 'done', data: { status: 'finished' } };
}

/** `done` of a stream whose actor ended without saying how. */
export const DONE_FRAME: SseFrame = { event: 'done', data: {} };

export function errorFrame(text: string, timestamp = new Date().toISOString()): SseFrame {
  return { event: 'error', data: { error: text, timestamp } };
}

const THINKING = 'Thinking...';

let lastMs = -1;
let lastIso = '';
/** The current time in ISO 8601, formatted once per millisecond: a turn stamps dozens of frames in the same one. */
function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

/** `event: <name>\ndata: <one-line JSON>\n\n` (plus `id:` when given): one string, written in one write. */
export function encodeSseFrame(frame: SseFrame, id?: number): string {
  const idLine = id === undefined ? '' : `id: ${id}\n`;
  return `${idLine}event: ${frame.event}\ndata: ${JSON.stringify(frame.data)}\n\n`;
}

export class SseFrameBuilder {
  #failed = false;

  constructor(
    readonly sessionId: string,
    readonly requestId: string,
    private readonly now: () => string = isoNow,
  ) {}

  #reasoning(text: string, isComplete: boolean): SseFrame {
    return {
      event: 'reasoning',
      data: {
        sessionId: this.sessionId,
        requestId: this.requestId,
        reasoning: text,
        reasoningDetails: text ? [{ type: 'thinking', text }] : [],
        isComplete,
        timestamp: this.now(),
      },
    };
  }

  /** The first frame of every stream. */
  start(): SseFrame {
    return this.#reasoning(THINKING, false);
  }

  /** The frame of one loop event. */
  frame(event: AgentEvent): SseFrame {
    switch (event.type) {
      case 'message':
        return { event: 'message', data: { content: event.delta, timestamp: this.now() } };
      case 'reasoning':
        return this.#reasoning(event.delta, false);
      case 'tool_call': {
        const data: Record<string, unknown> = {
          requestId: this.requestId,
          sessionId: this.sessionId,
          // Clients read the real name from args.toolName; the top-level name is the literal "toolCall".
          toolName: 'toolCall',
          args: { ...event.args, toolName: event.toolName },
          status: event.status,
          eventId: event.toolCallId,
        };
        if (event.phase === 'end') {
          // tool_call has no error status on the wire: a failure ends as `done` whose output is the error.
          data.output = event.error === undefined ? (event.output ?? '') : toolErrorContent(event.error);
          if (event.error !== undefined) data.error = event.error;
        }
        return { event: 'tool_call', data };
      }
      case 'action_call': {
        const data: Record<string, unknown> = {
          requestId: this.requestId,
          sessionId: this.sessionId,
          toolCallId: event.toolCallId,
          toolName: event.toolName,
          status: event.status,
        };
        if (event.phase === 'end') {
          if (event.status === 'error') data.error = event.error ?? 'Action failed';
          else data.output = event.output ?? '';
        }
        return { event: 'action_call', data };
      }
      case 'error':
        this.#failed = true;
        return errorFrame(event.message, this.now());
    }
  }

  /** Whether an `error` frame was built. */
  get failed(): boolean {
    return this.#failed;
  }

  /** The closing frames: `done` always last; the `error` frame here only if none was sent yet. */
  end(outcome: TurnOutcome = {}): SseFrame[] {
    const failed = this.#failed || outcome.errorSent === true;
    const done = doneFrame(failed && !outcome.aborted ? { ...outcome, error: outcome.error ?? 'failed' } : outcome);
    if (outcome.error !== undefined && !failed) return [this.frame({ type: 'error', message: outcome.error }), done];
    if (failed || outcome.aborted || outcome.error !== undefined) return [done];
    return [this.#reasoning('', true), done];
  }
}
