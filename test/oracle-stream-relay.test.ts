// The chat stream's two ends over a real MessageChannel: the actor's FrameSender and the main thread's
// relay, with a socket stand-in whose write() reports backpressure like uWS does.
import t from 'tap';
import { MessageChannel } from 'node:worker_threads';
import { FrameSender } from '../dist/src/oracle/actor/frame-sender.js';
import { DomainError } from '../dist/src/runtime/errors.js';
import { STREAM_WINDOW } from '../dist/src/oracle/chat/chat-protocol.js';
import { HEARTBEAT, relayStream } from '../dist/src/oracle/routes/stream-relay.js';
import type { StreamWriter } from '../dist/src/http/types.js';
import { socketSink } from '../dist/src/oracle/frame-sink.js';
import { encodeSseFrame, type SseFrame } from '../dist/src/oracle/sse-frames.js';
import { eventually } from './helpers/oracle.js';

/** A socket that accepts every write but says "full" while `full` is set, then drains on demand. */
class SocketStandIn implements StreamWriter {
  chunks: string[] = [];
  full = false;
  closed = false;
  ended = false;
  #drain: (() => void)[] = [];
  #close: (() => void)[] = [];
  write(chunk: string): boolean {
    if (this.closed) return false;
    this.chunks.push(chunk);
    return !this.full;
  }
  onDrain(listener: () => void): void {
    this.#drain.push(listener);
  }
  onClose(listener: () => void): void {
    this.#close.push(listener);
  }
  end(): void {
    this.ended = true;
    this.closed = true;
  }
  drain(): void {
    this.full = false;
    for (const listener of this.#drain.splice(0)) listener();
  }
  hangUp(): void {
    this.closed = true;
    for (const listener of this.#close.splice(0)) listener();
  }
}

/** Frame `i` of a producer. */
const frame = (i: number): SseFrame => ({ event: 'message', data: { content: `frame ${i}` } });

/** Frames written so far: the actor posts a turn's frames as one message, written in one write. */
const framesIn = (socket: SocketStandIn) => socket.chunks.join('').match(/"content":"frame \d+"/g)?.length ?? 0;

const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

function pair(options: { heartbeatMs?: number; done?: Promise<void> } = {}) {
  const channel = new MessageChannel();
  const socket = new SocketStandIn();
  const cancelled = { count: 0 };
  const sender = new FrameSender(channel.port2, () => cancelled.count++);
  const controller = new AbortController();
  const outcome = relayStream(channel.port1, {
    open: () => socketSink(socket),
    signal: controller.signal,
    heartbeatMs: options.heartbeatMs ?? 60_000,
    done: options.done ?? new Promise(() => undefined),
  });
  return { socket, sender, outcome, cancelled, controller };
}

t.test('a full socket stops the producer after one window; draining resumes it, in order', async (t) => {
  const { socket, sender, outcome } = pair();
  sender.open();
  t.match(await outcome, { kind: 'streaming' });
  socket.full = true;
  let produced = 0;
  const producer = (async () => {
    for (let i = 0; i < 100; i++) {
      await sender.send(frame(i));
      produced++;
    }
    sender.end({ type: 'turn', sessionId: 's1', requestId: 'r1', aborted: true });
  })();
  await eventually(() => framesIn(socket) === STREAM_WINDOW, 'one window of frames');
  await settle();
  t.equal(framesIn(socket), STREAM_WINDOW, 'no more than the window while the socket is full');
  t.ok(
    socket.chunks.length < STREAM_WINDOW,
    `frames produced in one turn arrive together (${socket.chunks.length} writes)`,
  );
  t.equal(produced, STREAM_WINDOW, 'the producer waits');

  socket.drain();
  await producer;
  await eventually(() => socket.ended, 'the stream to end');
  t.equal(framesIn(socket), 100);
  t.ok(socket.chunks.join('').startsWith([0, 1, 2].map((i) => encodeSseFrame(frame(i))).join('')), 'in order');
  t.equal(
    socket.chunks.at(-1),
    'event: done\ndata: {"status":"aborted","aborted":true,"partialText":""}\n\n',
    'the relay writes the closing frames of the ending (aborted: done alone)',
  );
});

t.test('a client that hangs up cancels the producer, even one waiting for the window', async (t) => {
  const { socket, sender, outcome, cancelled } = pair();
  sender.open();
  await outcome;
  socket.full = true;
  const producer = (async () => {
    for (let i = 0; i < 100 && !sender.cancelled; i++) await sender.send(frame(i));
  })();
  await eventually(() => framesIn(socket) === STREAM_WINDOW, 'one window of frames');
  socket.hangUp();
  await producer;
  t.equal(cancelled.count, 1);
  t.ok(sender.cancelled);
  sender.end();
});

t.test('a refusal is handed back as data before any stream opens', async (t) => {
  const { socket, sender, outcome } = pair();
  sender.refuse(new DomainError('credits_exhausted', 'Insufficient credits', { claims: ['c1'] }));
  sender.end();
  const refused = await outcome;
  t.equal(refused.kind, 'refused');
  if (refused.kind !== 'refused') return;
  t.type(refused.error, DomainError, 'rebuilt as a DomainError on the main thread');
  t.match(refused.error, { code: 'credits_exhausted', message: 'Insufficient credits', details: { claims: ['c1'] } });
  t.same(socket.chunks, []);
});

t.test('an actor that dies mid-stream: the relay writes error then done and ends', async (t) => {
  let fail!: (error: Error) => void;
  const done = new Promise<void>((_, reject) => (fail = reject));
  const { socket, sender, outcome } = pair({ done });
  sender.open();
  await outcome;
  await sender.send({ event: 'message', data: { content: 'a' } });
  await eventually(() => socket.chunks.length === 1, 'the first frame');
  fail(new Error('host exited'));
  await eventually(() => socket.ended, 'the stream to end');
  t.match(socket.chunks[1], /^event: error\ndata: \{"error":"The chat service stopped/);
  t.equal(socket.chunks[2], 'event: done\ndata: {"status":"failed","failed":true}\n\n');
});

t.test('the ending decides the closing frames, written once, done last', async (t) => {
  const cases = [
    { ending: { type: 'turn', sessionId: 's1', requestId: 'r1' }, events: ['reasoning', 'done'] },
    { ending: { type: 'turn', sessionId: 's1', requestId: 'r1', error: 'LLM down' }, events: ['error', 'done'] },
    {
      ending: { type: 'turn', sessionId: 's1', requestId: 'r1', error: 'LLM down', errorSent: true },
      events: ['done'],
    },
    { ending: { type: 'failed', failure: { code: 'internal', message: 'boom' } }, events: ['error', 'done'] },
  ] as const;
  for (const { ending, events } of cases) {
    const { socket, sender, outcome } = pair();
    sender.open();
    await outcome;
    sender.end(ending);
    await eventually(() => socket.ended, 'the stream to end');
    t.same(
      socket.chunks.map((chunk) => /^event: (\w+)/.exec(chunk)?.[1]),
      events,
      JSON.stringify(ending),
    );
  }
});

t.test('a failure before the first word is reported as failed, with nothing written', async (t) => {
  const { socket, outcome } = pair({ done: Promise.reject(new Error('host restarting')) });
  const result = await outcome;
  t.equal(result.kind, 'failed');
  t.same(socket.chunks, []);
});

t.test('heartbeat comments while the actor is quiet', async (t) => {
  const { socket, sender, outcome } = pair({ heartbeatMs: 10 });
  sender.open();
  await outcome;
  await eventually(() => socket.chunks.includes(HEARTBEAT), 'a heartbeat');
  t.equal(HEARTBEAT, ': heartbeat\n\n');
  sender.end();
  await eventually(() => socket.ended, 'the end');
  t.equal(socket.chunks.at(-1), 'event: done\ndata: {}\n\n', 'done is added when the actor ended without it');
});
