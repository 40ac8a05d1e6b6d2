// Cluster mode's stream of a turn, actor end to main-thread relay over a real MessageChannel, with the run's frames
// kept in a real JetStream runs stream (one NATS server): a batch reaches the socket only once the stream acknowledged
// it, and `done` only after the closing frames are stored. So a client never holds a frame the runs stream lacks,
// and a takeover (which numbers on from what is stored) never reuses a number the client has for another frame.
import t from 'tap';
import { MessageChannel } from 'node:worker_threads';
import { connectCluster } from '../dist/src/cluster/connection.js';
import { FrameSender } from '../dist/src/oracle/actor/frame-sender.js';
import { nextFrameOf, openRunStream, type RunStream } from '../dist/src/cluster/records/oracle/runs/run-stream.js';
import { RunWriter } from '../dist/src/cluster/records/oracle/runs/run-writer.js';
import { relayStream } from '../dist/src/oracle/routes/stream-relay.js';
import type { StreamWriter } from '../dist/src/http/types.js';
import { socketSink } from '../dist/src/oracle/frame-sink.js';
import { createLogger } from '../dist/src/base/log.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';

const nats = await startTestNatsCluster(t, 1);
const connection = await connectCluster({ NATS_URL: [nats.urls], NATS_PREFIX: 'wt' }, 'write-through');
t.teardown(() => connection.close());
const real = await openRunStream(connection, { maxBytes: 1 << 20, retentionMs: 60_000, totalBytes: 1 << 24 });

/** The runs stream, with its frame publishes held until `release()` (the open record goes through). */
function heldStream(): { stream: RunStream; held: () => number; release: () => void } {
  let gate: (() => void) | undefined;
  let opened = new Promise<void>((resolve) => (gate = resolve));
  let waiting = 0;
  const js = new Proxy(real.connection.js, {
    get(target, key) {
      if (key !== 'publish') return Reflect.get(target, key);
      return async (subject: string, body: string) => {
        if (subject.endsWith('.f')) {
          waiting++;
          await opened;
          waiting--;
        }
        return target.publish(subject, body);
      };
    },
  });
  const stream = { ...real, connection: { ...real.connection, js } } as RunStream;
  return {
    stream,
    held: () => waiting,
    release: () => {
      gate?.();
      gate = undefined;
      opened = Promise.resolve();
    },
  };
}

class Socket implements StreamWriter {
  text = '';
  closed = false;
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
  onDrain(): void {}
  onClose(): void {}
  end(): void {
    this.closed = true;
  }
}

const until = async (what: string, test: () => boolean) => {
  for (let i = 0; i < 400 && !test(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!test()) throw new Error(`timed out waiting for ${what}`);
};

t.test('frames reach the client only once stored; done only after the closing frames', async (t) => {
  const { stream, held, release } = heldStream();
  const runId = `run-${Date.now()}`;
  const info = { runId, sessionId: 's-1', userDid: 'did:key:z6Mk-test', requestId: 'r-1' };
  const writer = new RunWriter(stream, info, createLogger('silent'));
  const channel = new MessageChannel();
  const sender = new FrameSender(channel.port2, () => undefined, 32, writer);
  const socket = new Socket();
  const outcome = relayStream(channel.port1, {
    open: () => socketSink(socket),
    heartbeatMs: 60_000,
    done: new Promise(() => undefined),
  });

  sender.open();
  await sender.send({ event: 'message', data: { content: 'Half' } });
  await until('the batch to wait on its publish', () => held() === 1);
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.notMatch(socket.text, /Half/, 'not on the socket while the runs stream has not stored it');
  release();
  await until('the frame on the socket', () => socket.text.includes('Half'));
  t.equal((await nextFrameOf(real, runId)).id, 2, 'stored before it was shown: frame 1');

  await sender.send({ event: 'message', data: { content: ' and more' } });
  sender.end({ type: 'turn', sessionId: 's-1', requestId: 'r-1' });
  t.match(await outcome, { kind: 'streaming' });
  await until('the end', () => socket.closed);
  const stored = await nextFrameOf(real, runId);
  t.ok(stored.ended, 'done was stored before the client got it');
  const shown = socket.text.match(/^event: /gm)?.length ?? 0;
  t.equal(stored.id - 1, shown, `every frame the client got is stored (${shown})`);
});
