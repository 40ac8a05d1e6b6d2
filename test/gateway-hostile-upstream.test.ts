// The real server (its own process) pointed at a hostile HTTP/2 node written here on a raw socket: empty
// CONTINUATION frames without end, SETTINGS and PING floods whose ACKs it never reads, an answer whose length
// prefix announces 100 MB, `grpc-status: ""`, a header list that decodes past its limit, a node that stalls. For
// each: the gateway answers a clean 5xx or 504 within its deadline, its RSS stays bounded, the node sees the
// connection dropped where it flooded, and /health (a real LMDB write and read) keeps answering throughout.
import type { Test } from 'tap';
import t from 'tap';
import { readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { encodeFields } from '../dist/src/gateway/h2/hpack.js';
import { Flag, FrameType, frame, settingsFrame } from '../dist/src/gateway/h2/frames.js';
import { startChildServer } from './helpers/child-server.js';

const TIMEOUT_MS = 4000;
const PREFACE_LENGTH = 24;

type Mode = (socket: Socket, streamId: number) => void;
let mode: Mode = () => {};

const responseHeaders = encodeFields([
  [':status', '200'],
  ['content-type', 'application/grpc'],
]);

/** Writes `chunk` again and again until the socket closes or `ms` pass (the node floods). */
function flood(socket: Socket, chunk: Buffer, ms = 8000): void {
  const until = Date.now() + ms;
  const more = () => {
    for (let i = 0; i < 64 && !socket.destroyed; i++) socket.write(chunk);
    if (!socket.destroyed && Date.now() < until) setImmediate(more);
  };
  more();
}

/** `count` copies of `one` in one buffer. */
const times = (one: Buffer, count: number) => Buffer.concat(Array.from({ length: count }, () => one));

/** HPACK integer with a prefix of `bits` bits, first byte ORed with `pattern`. */
function hpackInteger(value: number, bits: number, pattern: number): number[] {
  const max = (1 << bits) - 1;
  if (value < max) return [pattern | value];
  const out = [pattern | max];
  for (value -= max; value >= 128; value >>= 7) out.push((value & 0x7f) | 0x80);
  out.push(value);
  return out;
}

/** A raw TCP HTTP/2 node: SETTINGS first, then `mode` for every request HEADERS it reads. */
async function startHostileNode(t: Test) {
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => {});
    let buffer = Buffer.alloc(0);
    let prefaceSeen = false;
    socket.write(settingsFrame([]));
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (!prefaceSeen) {
        if (buffer.length < PREFACE_LENGTH) return;
        buffer = buffer.subarray(PREFACE_LENGTH);
        prefaceSeen = true;
      }
      while (buffer.length >= 9) {
        const length = buffer.readUIntBE(0, 3);
        if (buffer.length < 9 + length) return;
        const [type, streamId] = [buffer[3], buffer.readUInt32BE(5) & 0x7fffffff];
        buffer = buffer.subarray(9 + length);
        if (type === FrameType.HEADERS) mode(socket, streamId);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  return (server.address() as { port: number }).port;
}

const rssOf = (pid: number) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'latin1'))![1]) * 1024;

t.test('a hostile node: clean 5xx or 504 within the deadline, bounded memory, the other faces answering', async (t) => {
  const port = await startHostileNode(t);
  const server = await startChildServer(t, {
    GATEWAY_GRPC_TARGET: `127.0.0.1:${port}`,
    GATEWAY_DESCRIPTORS: 'bundled',
    GATEWAY_TIMEOUT_MS: String(TIMEOUT_MS),
  });
  const pid = server.child.pid!;
  let n = 0;
  const query = async () => {
    const started = Date.now();
    const res = await fetch(`${server.url}/ixo/token/params?n=${++n}`);
    return {
      status: res.status,
      body: (await res.json()) as { code: number; message: string },
      ms: Date.now() - started,
    };
  };

  // A well-behaved answer first: the baseline of memory, with the routes and the connection warm.
  mode = (socket, streamId) => {
    socket.write(
      Buffer.concat([
        frame(FrameType.HEADERS, Flag.END_HEADERS, streamId, responseHeaders),
        frame(FrameType.DATA, 0, streamId, Buffer.alloc(5)),
        frame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, streamId, encodeFields([['grpc-status', '0']])),
      ]),
    );
  };
  for (let i = 0; i < 20; i++) t.equal((await query()).status, 200);
  const baseline = rssOf(pid);
  let peak = baseline;

  const cases: [name: string, behave: Mode, expected: { status: number; message: RegExp; dropped: boolean }][] = [
    [
      'empty CONTINUATION frames without end',
      (socket, streamId) => {
        socket.write(frame(FrameType.HEADERS, 0, streamId, responseHeaders));
        flood(socket, times(frame(FrameType.CONTINUATION, 0, streamId), 1000));
      },
      { status: 500, message: /more than 8 CONTINUATION frames/, dropped: true },
    ],
    [
      'a SETTINGS flood whose ACKs the node never reads',
      (socket) => {
        socket.pause();
        flood(socket, times(settingsFrame([[4, 65_535]]), 1000));
      },
      { status: 500, message: /flood of SETTINGS or PING frames/, dropped: true },
    ],
    [
      'a PING flood whose ACKs the node never reads',
      (socket) => {
        socket.pause();
        flood(socket, times(frame(FrameType.PING, 0, 0, Buffer.alloc(8)), 1000));
      },
      { status: 500, message: /flood of SETTINGS or PING frames/, dropped: true },
    ],
    [
      'an answer whose length prefix announces 100 MB (then 1 MB of it, and no end)',
      (socket, streamId) => {
        const prefix = Buffer.alloc(5);
        prefix.writeUInt32BE(100 * 1024 * 1024, 1);
        socket.write(
          Buffer.concat([
            frame(FrameType.HEADERS, Flag.END_HEADERS, streamId, responseHeaders),
            frame(FrameType.DATA, 0, streamId, prefix),
          ]),
        );
        socket.write(times(frame(FrameType.DATA, 0, streamId, Buffer.alloc(16_384)), 64));
      },
      {
        status: 502,
        message: /larger than GATEWAY_MAX_RESPONSE_BYTES: Received message larger than max \(104857600 vs\. 4194304\)/,
        dropped: false,
      },
    ],
    [
      'grpc-status "" in the trailers',
      (socket, streamId) => {
        socket.write(
          Buffer.concat([
            frame(FrameType.HEADERS, Flag.END_HEADERS, streamId, responseHeaders),
            frame(FrameType.DATA, 0, streamId, Buffer.alloc(5)),
            frame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, streamId, encodeFields([['grpc-status', '']])),
          ]),
        );
      },
      { status: 500, message: /^Invalid grpc-status ""$/, dropped: false },
    ],
    [
      'a header block of 4 KB that decodes past 256 KB (one indexed entry referenced 100 times)',
      (socket, streamId) => {
        const value = Buffer.alloc(4000, 'v');
        const block = Buffer.from([
          0x40,
          3,
          ...Buffer.from('x-a'),
          ...hpackInteger(value.length, 7, 0),
          ...value,
          ...Array(100).fill(0xbe),
        ]);
        socket.write(frame(FrameType.HEADERS, Flag.END_HEADERS, streamId, block));
      },
      { status: 500, message: /header list larger than 262144 octets/, dropped: true },
    ],
    ['a node that never answers', () => {}, { status: 504, message: /Deadline exceeded/, dropped: false }],
  ];
  for (const [name, behave, expected] of cases) {
    let dropped: Promise<unknown> | undefined;
    mode = (socket, streamId) => {
      // Resolves when the gateway drops the connection the case misbehaves on.
      dropped = new Promise((resolve) => (socket.destroyed ? resolve(undefined) : socket.once('close', resolve)));
      behave(socket, streamId);
    };
    const pending = query();
    // The other faces answer while the node misbehaves: /health writes and reads LMDB.
    let settled = false;
    void pending.finally(() => (settled = true));
    let healthChecks = 0;
    while (!settled) {
      const health = await fetch(`${server.url}/health`);
      t.equal(health.status, 200, `${name}: /health answers`);
      await health.arrayBuffer();
      healthChecks++;
      peak = Math.max(peak, rssOf(pid));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const answer = await pending;
    t.equal(answer.status, expected.status, `${name}: ${JSON.stringify(answer.body)}`);
    t.match(answer.body.message, expected.message, name);
    t.ok(answer.ms < TIMEOUT_MS + 2000, `${name}: answered in ${answer.ms} ms, within the deadline`);
    t.ok(healthChecks > 0);
    if (expected.dropped) {
      await dropped;
      t.ok(dropped, `${name}: the gateway dropped the connection`);
    }
    peak = Math.max(peak, rssOf(pid));
    t.ok(
      peak - baseline < 96 * 1024 * 1024,
      `${name}: RSS ${Math.round(baseline / 2 ** 20)} -> ${Math.round(peak / 2 ** 20)} MiB`,
    );
  }

  // And the gateway still serves a well-behaved node afterwards.
  mode = (socket, streamId) => {
    socket.write(
      Buffer.concat([
        frame(FrameType.HEADERS, Flag.END_HEADERS, streamId, responseHeaders),
        frame(FrameType.DATA, 0, streamId, Buffer.alloc(5)),
        frame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, streamId, encodeFields([['grpc-status', '0']])),
      ]),
    );
  };
  let last: Awaited<ReturnType<typeof query>> | undefined;
  for (let tries = 0; tries < 20 && last?.status !== 200; tries++) {
    last = await query();
    if (last.status !== 200) await new Promise((resolve) => setTimeout(resolve, 500));
  }
  t.equal(last?.status, 200, 'served again once the node behaves');
  t.equal(server.child.exitCode, null, 'the server never went down');
});
