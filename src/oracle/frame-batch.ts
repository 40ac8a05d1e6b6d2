// Thread: any (shared, pure: no state of its own)
// SSE frames as they travel and are kept: over the stream port, the node link, in the runs stream and in the front
// door's run log. A batch is frames numbered from `first`, each its event name and its data as one line of JSON,
// made once where the frame objects are built (the actor), with what readers need to know of them as fields:
// `answer`, the characters of answer text in them (a `run` frame's `partialLength`), and `status` when they end the
// stream (what their `done` says). Only the SSE lines are added later, by whoever writes to a socket (encodeBatch),
// so nothing is parsed back. Data as JSON text rather than objects: a structured clone of a batch of frame objects
// costs about five times that of their JSON (measured: 4.4 against 0.9 us per five frames), paid on each hop.
import { answerLength, endStatusOf, type EndStatus, type SseFrame } from './sse-frames.js';

export interface FrameBatch {
  /** The number of the first frame (SSE `id:`); the others follow it. */
  first: number;
  events: SseFrame['event'][];
  /** Each frame's data, one line of JSON. */
  data: string[];
  /** Characters of answer text (`message` deltas) in these frames. */
  answer: number;
  /** Set when these frames end the stream: what their `done` says. */
  status?: EndStatus;
}

/** `frames` numbered from `first`, as a batch. */
export function toBatch(first: number, frames: readonly SseFrame[]): FrameBatch {
  const batch: FrameBatch = { first, events: [], data: [], answer: 0 };
  for (const frame of frames) {
    batch.events.push(frame.event);
    batch.data.push(JSON.stringify(frame.data));
    batch.answer += answerLength(frame);
    const status = endStatusOf(frame);
    if (status) batch.status = status;
  }
  return batch;
}

/** The frames from index `from` on, as SSE text in one string: numbered (`id:` lines) unless `numbered` is false. */
export function encodeBatch(batch: FrameBatch, from = 0, numbered = true): string {
  let text = '';
  for (let i = from; i < batch.events.length; i++)
    text += `${numbered ? `id: ${batch.first + i}\n` : ''}event: ${batch.events[i]}\ndata: ${batch.data[i]}\n\n`;
  return text;
}

/** Frame `index` of a batch of closing frames alone (they hold no answer text; `done` carries the status). */
export function closingFrameAt(batch: FrameBatch, index: number): FrameBatch {
  const event = batch.events[index]!;
  const one: FrameBatch = { first: batch.first + index, events: [event], data: [batch.data[index]!], answer: 0 };
  if (event === 'done' && batch.status) one.status = batch.status;
  return one;
}

/** A batch as read from the runs stream, checked; undefined when it is not one (read as a gap). */
export function batchOf(value: unknown): FrameBatch | undefined {
  const batch = value as Partial<FrameBatch> | null;
  if (!batch || typeof batch.first !== 'number' || typeof batch.answer !== 'number') return undefined;
  const { events, data } = batch;
  if (!Array.isArray(events) || !Array.isArray(data) || events.length !== data.length) return undefined;
  if (!events.every((event) => typeof event === 'string') || !data.every((line) => typeof line === 'string'))
    return undefined;
  return batch as FrameBatch;
}
