// The gateway's own HTTP/2 client (src/gateway/h2) under faults: a grpc-js node killed mid-call and restarted,
// GOAWAY with streams above its last id, RST_STREAM codes, a stalled node past the deadline, answers and requests
// larger than the windows, MAX_CONCURRENT_STREAMS 2 with 100 calls, a hostile node sending malformed frames, and
// the dial backoff while the node cannot be reached.
import t from 'tap';
import type { Test } from 'tap';
import http2 from 'node:http2';
import { createServer, type Socket } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { DIAL_BACKOFF, H2Channel } from '../dist/src/gateway/h2/channel.js';
import { frame, FrameType, goawayFrame, settingsFrame } from '../dist/src/gateway/h2/frames.js';
import { rawMethod } from './helpers/grpc-raw.js';

const { status } = grpc;
const OPTIONS = { maxReceiveBytes: 64 * 1024 * 1024, keepaliveMs: 60_000 };

function channelTo(t: Test, port: number): H2Channel {
  const channel = new H2Channel({ host: '127.0.0.1', port }, OPTIONS);
  t.teardown(() => channel.close());
  return channel;
}

/** A grpc-js node with Echo and a Hold that answers only when told (to be killed mid-call). */
async function startGrpcNode(port = 0) {
  const server = new grpc.Server();
  const held: grpc.sendUnaryData<Buffer>[] = [];
  server.addService({ Echo: rawMethod('/t.S/Echo'), Hold: rawMethod('/t.S/Hold') } as grpc.ServiceDefinition, {
    Echo: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) =>
      callback(null, call.request),
    Hold: (_call: unknown, callback: grpc.sendUnaryData<Buffer>) => held.push(callback),
  });
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (error, p) =>
      error ? reject(error) : resolve(p),
    ),
  );
  return { server, port: bound, held };
}

/** A node:http2 server whose streams are handled by `handle`; counts sessions. */
async function startH2Node(
  t: Test,
  handle: (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => void,
  settings: http2.Settings = {},
) {
  const server = http2.createServer({ settings });
  const sessions: http2.ServerHttp2Session[] = [];
  server.on('session', (session) => sessions.push(session));
  server.on('stream', (stream, headers) => {
    stream.on('error', () => {}); // node reports resets (its own too) as stream errors
    handle(stream, headers);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const session of sessions) session.destroy();
    server.close();
  });
  return { port: (server.address() as { port: number }).port, sessions };
}

/** A gRPC answer: headers, the framed message, trailers with status 0. */
function answer(stream: http2.ServerHttp2Stream, payload = Buffer.from('ok')) {
  const framed = Buffer.alloc(5 + payload.length);
  framed.writeUInt32BE(payload.length, 1);
  payload.copy(framed, 5);
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  stream.end(framed);
}

t.test(
  'a node killed mid-call fails the call UNAVAILABLE; the next call reconnects to the restarted node',
  async (t) => {
    const first = await startGrpcNode();
    const channel = channelTo(t, first.port);
    t.equal((await channel.call('/t.S/Echo', Buffer.from('a'), {}, 2000)).bytes?.toString(), 'a');
    const pending = channel.call('/t.S/Hold', Buffer.from('b'), {}, 5000);
    while (first.held.length === 0) await new Promise((resolve) => setImmediate(resolve));
    first.server.forceShutdown();
    const outcome = await pending;
    t.equal(outcome.code, status.UNAVAILABLE, outcome.details);
    const second = await startGrpcNode(first.port);
    t.teardown(() => second.server.forceShutdown());
    const again = await channel.call('/t.S/Echo', Buffer.from('c'), {}, 2000);
    t.equal(again.code, status.OK, again.details);
    t.equal(again.bytes?.toString(), 'c');
  },
);

t.test('an unreachable node: UNAVAILABLE, no connection established', async (t) => {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  const outcome = await channelTo(t, port).call('/t.S/Echo', Buffer.from('x'), {}, 2000);
  t.equal(outcome.code, status.UNAVAILABLE);
  t.match(outcome.details, /^No connection established: .*ECONNREFUSED/);
});

t.test(
  'a node that cannot be reached is dialled once per backoff, not once per call; reaching it resets the backoff',
  async (t) => {
    // A port that takes the connection and drops it at once (counted), as a node mid-restart may.
    let dials = 0;
    const dropper = createServer((socket) => {
      dials++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => dropper.listen(0, '127.0.0.1', resolve));
    const { port } = dropper.address() as { port: number };
    let now = 0;
    const backoff = { initialMs: 1000, maxMs: 3000, multiplier: 2, jitter: 0 };
    const channel = new H2Channel({ host: '127.0.0.1', port }, { ...OPTIONS, backoff, now: () => now });
    t.teardown(() => channel.close());
    /** One call; whether it dialled shows at once (a fail-fast call settles without a connection). */
    const call = async () => {
      const outcome = channel.call('/t.S/Echo', Buffer.from('x'), {}, 2000);
      const dialled = channel.connection !== undefined;
      return { dialled, ...(await outcome) };
    };

    const first = await call();
    t.ok(first.dialled);
    t.equal(first.code, status.UNAVAILABLE);
    for (let i = 0; i < 20; i++) {
      const again = await call();
      t.notOk(again.dialled, 'within the backoff: no dial');
      t.same(
        [again.code, again.details],
        [status.UNAVAILABLE, first.details],
        "failed at once with the last attempt's error",
      );
    }
    t.equal(dials, 1, 'the node saw one connection for 21 calls');
    now = 999;
    t.notOk((await call()).dialled);
    now = 1000;
    t.ok((await call()).dialled, 'dialled again once the backoff passed');
    t.equal(dials, 2);
    now = 2999; // the next wait doubled: 2000 ms
    t.notOk((await call()).dialled);
    now = 3000;
    t.ok((await call()).dialled);
    now = 5999; // capped at maxMs: 3000 ms
    t.notOk((await call()).dialled);
    t.equal(dials, 3);

    // The node comes back on that port: the next attempt reaches it, and the backoff starts over.
    await new Promise((resolve) => dropper.close(resolve));
    const node = await startGrpcNode(port);
    now = 6000;
    const served = await call();
    t.same([served.code, served.bytes?.toString()], [status.OK, 'x']);
    node.server.forceShutdown();
    await new Promise((resolve) => setImmediate(resolve));
    now = 7000;
    const refused = await call();
    t.ok(refused.dialled, 'a connection that reached the node is dialled again at once when it drops');
    t.match(refused.details, /^No connection established: .*ECONNREFUSED/);
    now = 7999;
    t.notOk((await call()).dialled);
    now = 8000;
    t.ok((await call()).dialled, 'the backoff after a success starts again at its first step (1000 ms)');
  },
);

t.test('GOAWAY: streams above its last id go to a new connection (once); those below finish', async (t) => {
  let first: http2.ServerHttp2Stream | undefined;
  const node = await startH2Node(t, (stream) => {
    // On the first connection two streams arrive; the node says it saw only the first, then answers it.
    if (stream.session === node.sessions[0]) {
      if (!first) {
        first = stream;
        return;
      }
      stream.session.goaway(http2.constants.NGHTTP2_NO_ERROR, first.id);
      answer(first, Buffer.from('first'));
      return;
    }
    answer(stream, Buffer.from('retried'));
  });
  const channel = channelTo(t, node.port);
  const [a, b] = await Promise.all([
    channel.call('/t.S/A', Buffer.from('1'), {}, 3000),
    channel.call('/t.S/B', Buffer.from('2'), {}, 3000),
  ]);
  t.equal(a.code, status.OK, a.details);
  t.equal(a.bytes?.toString(), 'first');
  t.equal(b.code, status.OK, b.details);
  t.equal(b.bytes?.toString(), 'retried', 'the stream above the last id was sent again on a new connection');
  t.equal(node.sessions.length, 2);

  // A node that answers every connection with GOAWAY(last id 0): the retry fails too, UNAVAILABLE.
  const refusing = await startRawNode(t, (socket) =>
    socket.write(Buffer.concat([settingsFrame([]), goawayFrame(0, 0)])),
  );
  const outcome = await channelTo(t, refusing.port).call('/t.S/A', Buffer.from('1'), {}, 3000);
  t.equal(outcome.code, status.UNAVAILABLE, outcome.details);
  t.match(outcome.details, /GOAWAY/);
  t.equal(refusing.sockets.length, 2, 'sent twice, on two connections');
});

t.test('RST_STREAM codes map as grpc-js maps them; REFUSED_STREAM is retried once', async (t) => {
  const node = await startH2Node(t, (stream, headers) => {
    stream.close(Number(String(headers[':path']).slice(1)));
  });
  const channel = channelTo(t, node.port);
  for (const [code, expected] of [
    [http2.constants.NGHTTP2_CANCEL, status.CANCELLED],
    [http2.constants.NGHTTP2_ENHANCE_YOUR_CALM, status.RESOURCE_EXHAUSTED],
    [http2.constants.NGHTTP2_INTERNAL_ERROR, status.INTERNAL],
    [http2.constants.NGHTTP2_REFUSED_STREAM, status.UNAVAILABLE],
  ]) {
    const outcome = await channel.call(`/${code}`, Buffer.from('x'), {}, 2000);
    t.equal(outcome.code, expected, `RST_STREAM ${code}: ${outcome.details}`);
    t.equal(outcome.details, `Received RST_STREAM with code ${code}`);
  }
  t.same(channel.connection?.load, { open: 0, queued: 0 });
  t.equal(node.sessions.length, 1, 'one connection for all');
});

t.test('a stalled node: the deadline fires, the stream is reset, the connection stays usable', async (t) => {
  const resets: number[] = [];
  const node = await startH2Node(t, (stream, headers) => {
    if (headers[':path'] === '/stall') {
      stream.on('close', () => resets.push(stream.rstCode));
      return;
    }
    t.equal(headers['grpc-timeout'], '1500m');
    answer(stream);
  });
  const channel = channelTo(t, node.port);
  const started = Date.now();
  const stalled = await channel.call('/stall', Buffer.from('x'), {}, 150);
  t.equal(stalled.code, status.DEADLINE_EXCEEDED);
  t.ok(Date.now() - started < 1000);
  while (resets.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  t.same(resets, [http2.constants.NGHTTP2_CANCEL], 'the node saw the stream cancelled');
  const next = await channel.call('/ok', Buffer.from('y'), {}, 1500);
  t.equal(next.code, status.OK, next.details);
  t.equal(node.sessions.length, 1, 'the same connection');
  t.same(channel.connection?.load, { open: 0, queued: 0 });
});

t.test('answers and requests larger than the windows (flow control both ways)', async (t) => {
  // A 20 MB answer passes our 8 MB stream window (WINDOW_UPDATEs); a 300 KB request passes the node's 1 KB one.
  const node = await startH2Node(
    t,
    (stream) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const request = Buffer.concat(chunks);
        const size = request.readUInt32BE(1);
        answer(
          stream,
          request.length === 5 + size && size === 300_000 ? Buffer.alloc(20_000_000, 7) : Buffer.from('short'),
        );
      });
    },
    { initialWindowSize: 1024 },
  );
  const channel = channelTo(t, node.port);
  const [big, again] = await Promise.all([
    channel.call('/big', Buffer.alloc(300_000, 1), {}, 10_000),
    channel.call('/big', Buffer.alloc(300_000, 2), {}, 10_000),
  ]);
  for (const outcome of [big, again]) {
    t.equal(outcome.code, status.OK, outcome.details);
    t.equal(outcome.bytes?.length, 20_000_000);
    t.equal(outcome.bytes?.[19_999_999], 7);
  }
  const limited = new H2Channel({ host: '127.0.0.1', port: node.port }, { maxReceiveBytes: 1000, keepaliveMs: 60_000 });
  t.teardown(() => limited.close());
  const tooBig = await limited.call('/big', Buffer.alloc(300_000), {}, 10_000);
  t.equal(tooBig.code, status.RESOURCE_EXHAUSTED);
  t.same(limited.connection?.load, { open: 0, queued: 0 });
});

t.test('MAX_CONCURRENT_STREAMS 2: 100 calls at once are queued, never more than 2 open', async (t) => {
  let open = 0;
  let most = 0;
  const node = await startH2Node(
    t,
    (stream) => {
      most = Math.max(most, ++open);
      setTimeout(() => {
        open--;
        answer(stream);
      }, 2);
    },
    { maxConcurrentStreams: 2 },
  );
  const channel = channelTo(t, node.port);
  // Cold: the first burst goes out before the node's SETTINGS; refused streams are sent again.
  const cold = await Promise.all(Array.from({ length: 10 }, () => channel.call('/c', Buffer.from('x'), {}, 10_000)));
  t.ok(
    cold.every((outcome) => outcome.code === status.OK),
    cold.map((outcome) => outcome.details).join(),
  );
  most = 0;
  const outcomes = await Promise.all(
    Array.from({ length: 100 }, () => channel.call('/c', Buffer.from('x'), {}, 10_000)),
  );
  t.ok(outcomes.every((outcome) => outcome.code === status.OK));
  t.equal(most, 2);
  t.same(channel.connection?.load, { open: 0, queued: 0 });
});

/** A raw TCP node: reads the preface, then sends what `script` writes. Counts connections. */
async function startRawNode(t: Test, script: (socket: Socket) => void) {
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => {});
    socket.once('data', () => script(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  return { port: (server.address() as { port: number }).port, sockets };
}

t.test('a hostile node sending malformed frames: INTERNAL or UNAVAILABLE, no crash, nothing left open', async (t) => {
  const settings = settingsFrame([]);
  const cases: [string, (socket: Socket) => void, number][] = [
    [
      'HTTP/1.1 instead of HTTP/2',
      (socket) => socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n'),
      status.UNAVAILABLE,
    ],
    ['garbage bytes', (socket) => socket.write('zzzzzzzzzzzzzzzzzzzzzzzz'), status.UNAVAILABLE],
    [
      'SETTINGS of a wrong length',
      (socket) => socket.write(frame(FrameType.SETTINGS, 0, 0, Buffer.from('zzzz'))),
      status.UNAVAILABLE,
    ],
    [
      'a HEADERS block that is not HPACK',
      (socket) =>
        socket.write(
          Buffer.concat([
            settings,
            frame(FrameType.HEADERS, 0x4, 1, Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff])),
          ]),
        ),
      status.INTERNAL,
    ],
    [
      'a frame past the maximum size',
      (socket) => socket.write(Buffer.concat([settings, frame(FrameType.DATA, 0, 1, Buffer.alloc(20_000))])),
      status.INTERNAL,
    ],
    [
      'DATA on stream 0',
      (socket) => socket.write(Buffer.concat([settings, frame(FrameType.DATA, 0, 0, Buffer.from('x'))])),
      status.INTERNAL,
    ],
    [
      'a PING of the wrong length',
      (socket) => socket.write(Buffer.concat([settings, frame(FrameType.PING, 0, 0, Buffer.from('x'))])),
      status.INTERNAL,
    ],
    [
      'CONTINUATION without HEADERS',
      (socket) => socket.write(Buffer.concat([settings, frame(FrameType.CONTINUATION, 0x4, 1, Buffer.from([0x88]))])),
      status.INTERNAL,
    ],
    [
      'HEADERS on a stream never opened',
      (socket) => socket.write(Buffer.concat([settings, frame(FrameType.HEADERS, 0x5, 9, Buffer.from([0x88]))])),
      status.INTERNAL,
    ],
    [
      'half a frame, then the connection closes',
      (socket) =>
        socket.end(
          Buffer.concat([settings, frame(FrameType.HEADERS, 0x4, 1, Buffer.from([0x88, 0x88])).subarray(0, 11)]),
        ),
      status.UNAVAILABLE,
    ],
  ];
  for (const [name, script, expected] of cases) {
    const node = await startRawNode(t, script);
    let now = 0;
    const channel = new H2Channel({ host: '127.0.0.1', port: node.port }, { ...OPTIONS, now: () => now });
    t.teardown(() => channel.close());
    const outcome = await channel.call('/t.S/M', Buffer.from('x'), {}, 3000);
    t.equal(outcome.code, expected, `${name}: ${outcome.details}`);
    t.equal(channel.connection, undefined, `${name}: the connection is dropped`);
    if (/does not speak HTTP\/2/.test(outcome.details)) {
      // Never a working connection: the next attempt waits for the dial backoff.
      t.same(
        await channel.call('/t.S/M', Buffer.from('x'), {}, 3000),
        outcome,
        `${name}: within the backoff, the same failure at once`,
      );
      t.equal(node.sockets.length, 1, `${name}: no dial within the backoff`);
      now += DIAL_BACKOFF.maxMs * 2;
    }
    await channel.call('/t.S/M', Buffer.from('x'), {}, 3000);
    t.equal(node.sockets.length, 2, `${name}: the next call dials again`);
  }
});

t.test(
  'keepalive: PINGs on a quiet connection; a node that stops answering them is dropped, its calls UNAVAILABLE',
  async (t) => {
    const node = await startH2Node(t, (stream) => answer(stream));
    const channel = new H2Channel({ host: '127.0.0.1', port: node.port }, { ...OPTIONS, keepaliveMs: 30 });
    t.teardown(() => channel.close());
    t.equal((await channel.call('/a', Buffer.from('x'), {}, 2000)).code, status.OK);
    await new Promise((resolve) => node.sessions[0].once('ping', resolve));
    t.ok(channel.connection?.usable, 'answered pings keep the connection');

    // Answers SETTINGS, then nothing: no PING ack, no answer to the call.
    const mute = await startRawNode(t, (socket) => socket.write(settingsFrame([])));
    const muted = new H2Channel({ host: '127.0.0.1', port: mute.port }, { ...OPTIONS, keepaliveMs: 30 });
    t.teardown(() => muted.close());
    const outcome = await muted.call('/a', Buffer.from('x'), {}, 5000);
    t.equal(outcome.code, status.UNAVAILABLE);
    t.equal(outcome.details, 'Keepalive ping not answered');
    t.equal(muted.connection, undefined);
  },
);
