// A stream between two nodes whose NATS connections are on different servers, opened the way the node link opens
// it: the owner hears of the stream at once, before the caller's subscription can have crossed the route between
// the two servers. Nothing written at once is lost either way (src/cluster/remote-stream.ts: the owner holds its
// frames until it heard the caller, and the caller's first word is repeated until the owner's subscription is there).
import t from 'tap';
import { connect } from '@nats-io/transport-node';
import { openRemoteStream, relayToCaller } from '../dist/src/cluster/remote-stream.js';
import type { ActorStream } from '../dist/src/runtime/router.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';

const nats = await startTestNatsCluster(t);
const caller = await connect({ servers: nats.servers[0].url });
const owner = await connect({ servers: nats.servers[2].url });
t.teardown(() => Promise.all([caller.close(), owner.close()]));

const LIVENESS = { pingMs: 1_000, silentMs: 3_000 };

/** An actor's stream that writes `frames` as soon as someone listens, and keeps the control messages it gets. */
function writingAtOnce(frames: string[]): { stream: ActorStream; control: unknown[] } {
  const control: unknown[] = [];
  let end!: () => void;
  const done = new Promise<void>((resolve) => (end = resolve));
  const stream: ActorStream = {
    done,
    channel: {
      on<M>(_event: 'message', listener: (message: M) => void) {
        for (const frame of frames) listener(frame as M);
        end();
      },
      postMessage: (message) => void control.push(message),
      close: () => {},
    },
  };
  return { stream, control };
}

t.test('frames written the moment the owner hears of the stream all arrive, in order', async (t) => {
  for (let round = 0; round < 20; round++) {
    const frames = ['one', 'two', 'three'].map((word) => `${word}-${round}`);
    const received: unknown[] = [];
    const stream = openRemoteStream(caller, LIVENESS, async (open) => {
      relayToCaller(owner, open, writingAtOnce(frames).stream, 'cancel');
    });
    stream.channel.on('message', (message) => void received.push(message));
    await stream.done;
    stream.channel.close();
    t.same(received, frames, `round ${round}: every frame`);
  }
});

t.test('control messages the caller sends at once reach the owner, in order', async (t) => {
  for (let round = 0; round < 20; round++) {
    const actor = writingAtOnce([]);
    let opened!: () => void;
    const relayed = new Promise<void>((resolve) => (opened = resolve));
    const stream = openRemoteStream(caller, LIVENESS, async (open) => {
      relayToCaller(owner, open, { ...actor.stream, done: new Promise(() => {}) }, 'cancel');
      opened();
    });
    stream.channel.postMessage({ ack: 1 });
    stream.channel.postMessage({ ack: 2 });
    await relayed;
    await new Promise<void>((resolve, reject) => {
      const deadline = setTimeout(() => reject(new Error(`owner got ${JSON.stringify(actor.control)}`)), 3_000);
      const check = setInterval(() => {
        if (actor.control.length < 2) return;
        clearInterval(check);
        clearTimeout(deadline);
        resolve();
      }, 5);
    });
    t.same(actor.control, [{ ack: 1 }, { ack: 2 }], `round ${round}: both, in order`);
    stream.channel.close();
  }
});
