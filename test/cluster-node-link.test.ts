// The node link over real TCP on 127.0.0.1, without NATS: a caller's NodeLinks against a LinkServer (and against
// raw sockets playing a broken or hostile peer). What the router relies on: every call gets its own answer whatever
// the order they finish in; a call that never left says so (LinkNotDeliveredError: the router sends it through NATS
// instead), and one lost with the connection says that (LinkLostError: it may have run, so it is not sent again);
// a wrong token, a huge frame or a silent peer is dropped; a closing server answers what is in flight first.
import { createServer, connect, type Server, type Socket } from 'node:net';
import t, { type Test } from 'tap';
import { FrameReader, MAX_FRAME_BYTES, writeFrame } from '../dist/src/cluster/node-link/frames.js';
import {
  LinkLostError,
  LinkNotDeliveredError,
  LinkTimeoutError,
  NodeLinks,
} from '../dist/src/cluster/node-link/peers.js';
import { LinkServer } from '../dist/src/cluster/node-link/server.js';
import { linkHostOf } from '../dist/src/cluster/node-link/start.js';
import type { NatsConnection } from '@nats-io/transport-node';

const TOKEN = 'secret-token-of-this-node';

/** A server whose answer to `{ wait, value }` comes after `wait` ms (calls finish in any order); `fail` rejects. */
async function echoServer(t: Test, refused: string[] = []) {
  const inFlight = new Set<number>();
  const server = await LinkServer.listen({
    host: '127.0.0.1',
    port: 0,
    token: TOKEN,
    answer: async (request) => {
      const { wait, value, fail } = request as { wait: number; value: number; fail?: boolean };
      if (fail) throw new Error('the answer failed');
      inFlight.add(value);
      await new Promise((resolve) => setTimeout(resolve, wait));
      inFlight.delete(value);
      return { echoed: value };
    },
    onRefused: (reason) => refused.push(reason),
  });
  t.teardown(() => server.close());
  return { server, inFlight };
}

function links(t: Test): NodeLinks {
  const made = new NodeLinks();
  t.teardown(() => made.close());
  return made;
}

const settle = (promise: Promise<unknown>) =>
  promise.then(
    (value) => ({ value }),
    (error: Error) => ({ error }),
  );

/** A raw listener: the test decides what each accepted socket does. */
async function rawPeer(t: Test, onSocket: (socket: Socket) => void): Promise<{ port: number; server: Server }> {
  const server = createServer(onSocket);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => sockets.add(socket));
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise((resolve) => server.close(resolve));
  });
  return { port: (server.address() as { port: number }).port, server };
}

t.test('calls get their own answers, in whatever order they finish', async (t) => {
  const { server } = await echoServer(t);
  const caller = links(t);
  const waits = [60, 0, 30, 10, 45, 5, 0, 20];
  const answers = await Promise.all(
    waits.map((wait, value) => caller.call('owner', server.address, { wait, value }, 5_000)),
  );
  t.same(
    answers,
    waits.map((_, value) => ({ echoed: value })),
    'each answer matches its call',
  );
});

t.test('a wrong token: refused before any call runs, and the next calls skip the link for a moment', async (t) => {
  const refused: string[] = [];
  const { server } = await echoServer(t, refused);
  const caller = links(t);
  const wrong = { ...server.address, token: 'not-the-token' };
  const first = await settle(caller.call('owner', wrong, { wait: 0, value: 1 }, 5_000));
  t.ok('error' in first && first.error instanceof LinkNotDeliveredError, 'LinkNotDeliveredError: it never left');
  t.same(refused, ['wrong token'], 'the server says why it dropped the connection');
  const startedAt = performance.now();
  const again = await settle(caller.call('owner', wrong, { wait: 0, value: 2 }, 5_000));
  t.ok('error' in again && again.error instanceof LinkNotDeliveredError, 'the next call too');
  t.ok(performance.now() - startedAt < 50, 'at once, without another connection');
  t.equal(refused.length, 1, 'no second attempt reached the server');
});

t.test('nothing listening: not delivered', async (t) => {
  const { port, server } = await rawPeer(t, () => undefined);
  await new Promise((resolve) => server.close(resolve));
  const outcome = await settle(links(t).call('gone', { host: '127.0.0.1', port, token: TOKEN }, {}, 5_000));
  t.ok('error' in outcome && outcome.error instanceof LinkNotDeliveredError, 'LinkNotDeliveredError');
});

t.test('a peer that welcomes and then drops the connection: the calls sent are lost, not re-sent', async (t) => {
  let calls = 0;
  const { port } = await rawPeer(t, (socket) => {
    const reader = new FrameReader((frame) => {
      if ('token' in (frame as object)) return writeFrame(socket, { welcome: true });
      calls++;
      if (calls === 2) socket.destroy(); // two calls reached it, none answered
    });
    socket.on('data', (chunk: Buffer) => reader.push(chunk));
    socket.on('error', () => undefined);
  });
  const caller = links(t);
  const address = { host: '127.0.0.1', port, token: TOKEN };
  const outcomes = await Promise.all([1, 2].map((value) => settle(caller.call('dropper', address, { value }, 5_000))));
  for (const outcome of outcomes)
    t.ok('error' in outcome && outcome.error instanceof LinkLostError, 'LinkLostError: it may have run');
  t.equal(calls, 2, 'each call was sent once');
});

t.test('a silent peer (no welcome): the call is not delivered once the opening times out', async (t) => {
  const { port } = await rawPeer(t, (socket) => socket.on('error', () => undefined));
  const startedAt = performance.now();
  const outcome = await settle(links(t).call('silent', { host: '127.0.0.1', port, token: TOKEN }, {}, 10_000));
  const waited = performance.now() - startedAt;
  t.ok('error' in outcome && outcome.error instanceof LinkNotDeliveredError, 'LinkNotDeliveredError');
  t.ok(waited >= 900 && waited < 5_000, `after the opening's timeout, not the call's (${waited.toFixed(0)} ms)`);
});

t.test('a call without an answer in time fails as a timeout', async (t) => {
  const { server } = await echoServer(t);
  const outcome = await settle(links(t).call('slow', server.address, { wait: 2_000, value: 1 }, 100));
  t.ok('error' in outcome && outcome.error instanceof LinkTimeoutError, 'LinkTimeoutError');
});

t.test('hostile callers: a frame over the limit, or garbage, ends their connection; others go on', async (t) => {
  const refused: string[] = [];
  const { server } = await echoServer(t, refused);
  const closed = (bytes: Buffer[]) =>
    new Promise<void>((resolve) => {
      const socket = connect(server.address.port, '127.0.0.1', () => {
        for (const chunk of bytes) socket.write(chunk);
      });
      socket.on('error', () => undefined);
      socket.on('close', () => resolve());
    });
  const head = (length: number) => {
    const buffer = Buffer.alloc(4);
    buffer.writeUInt32BE(length, 0);
    return buffer;
  };
  await closed([head(MAX_FRAME_BYTES + 1)]);
  t.match(refused.at(-1), /over the \d+-byte limit/, 'a huge frame: dropped before its body is read');
  await closed([head(5), Buffer.from('{nope')]);
  t.equal(refused.length, 2, 'a frame that is not JSON: dropped');
  const hello = Buffer.from(JSON.stringify({ token: TOKEN }));
  await closed([head(hello.length), hello, head(MAX_FRAME_BYTES + 1)]);
  t.equal(refused.length, 3, 'after a good hello too');
  const noId = Buffer.from(JSON.stringify({ request: { wait: 0, value: 1 } }));
  await closed([head(hello.length), hello, head(noId.length), noId]);
  t.equal(refused.at(-1), 'a call without an id', 'a call without an id: dropped, not run');
  t.same(await links(t).call('owner', server.address, { wait: 0, value: 7 }, 5_000), { echoed: 7 }, 'others go on');
});

t.test(
  'a flood of connections that never say hello: those over 64 are dropped at once, a node still gets in',
  async (t) => {
    const refused: string[] = [];
    const { server } = await echoServer(t, refused);
    const silent = await Promise.all(
      Array.from(
        { length: 70 },
        () =>
          new Promise<Socket>((resolve) => {
            const socket = connect(server.address.port, '127.0.0.1', () => resolve(socket));
            socket.on('error', () => undefined);
          }),
      ),
    );
    t.teardown(() => {
      for (const socket of silent) socket.destroy();
    });
    while (refused.length < 6) await new Promise((resolve) => setTimeout(resolve, 5));
    t.equal(refused.length, 6, 'six of seventy dropped');
    t.match(refused[0], /over 64 connections waiting to say hello/);
    for (const socket of silent.slice(0, 10)) socket.destroy();
    for (;;) {
      const answer = await settle(links(t).call('owner', server.address, { wait: 0, value: 3 }, 5_000));
      if ('value' in answer) {
        t.same(answer.value, { echoed: 3 }, 'a node with the token gets in once some strangers left');
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  },
);

t.test(
  'an answer that fails drops its connection: the caller hears the call was lost, the server goes on',
  async (t) => {
    const refused: string[] = [];
    const { server } = await echoServer(t, refused);
    const outcome = await settle(links(t).call('owner', server.address, { wait: 0, value: 1, fail: true }, 5_000));
    t.ok('error' in outcome && outcome.error instanceof LinkLostError, 'LinkLostError');
    t.match(refused, ['a call could not be answered: the answer failed']);
    t.same(await links(t).call('owner', server.address, { wait: 0, value: 2 }, 5_000), { echoed: 2 }, 'others go on');
  },
);

t.test('a closing server answers the calls in flight first', async (t) => {
  const { server, inFlight } = await echoServer(t);
  const caller = links(t);
  const calls = [1, 2, 3].map((value) => caller.call('owner', server.address, { wait: 200, value }, 5_000));
  while (inFlight.size < 3) await new Promise((resolve) => setTimeout(resolve, 5));
  await server.close();
  t.same(await Promise.all(calls), [{ echoed: 1 }, { echoed: 2 }, { echoed: 3 }], 'every call in flight answered');
  const after = await settle(caller.call('owner', server.address, { wait: 0, value: 4 }, 5_000));
  t.ok('error' in after && after.error instanceof LinkNotDeliveredError, 'then it takes no more connections');
});

t.test(
  'where a node link listens: CLUSTER_LINK_HOST, else a specific HOST, else the address NATS is reached from',
  async (t) => {
    const nc = {
      protocol: { transport: { socket: { localAddress: '::ffff:10.1.2.3' } } },
    } as unknown as NatsConnection;
    t.equal(linkHostOf({ CLUSTER_LINK_HOST: '10.9.9.9', HOST: '10.0.0.1' }, nc), '10.9.9.9');
    t.equal(linkHostOf({ HOST: '10.0.0.1' }, nc), '10.0.0.1');
    t.equal(linkHostOf({ HOST: '0.0.0.0' }, nc), '10.1.2.3', 'any-address HOST: the NATS socket, IPv4 unmapped');
    t.equal(linkHostOf({ HOST: '::' }, {} as NatsConnection), '127.0.0.1', 'nothing known: loopback');
  },
);
