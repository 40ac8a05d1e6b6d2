// Readers that never read: an SSE stream and a WebSocket whose client stops reading are closed at their bound
// (with a logged reason) while other clients of the same routes stay served.
import { connect, type Socket } from 'node:net';
import { pino } from 'pino';
import t from 'tap';
import { frontDoor } from './helpers/engine.js';
import { Router } from '../dist/src/http/router.js';
import { nativeTopic } from '../dist/src/oracle/events/native.js';
import { closeAll, invocationOf, NativeClient } from './helpers/events.js';
import { createSession, newUser, startOracleServer } from './helpers/oracle.js';

const CHUNK = `data: ${'x'.repeat(64 * 1024 - 8)}\n\n`;
const ANSWER_CHUNKS = 160; // 10 MiB: more than the socket buffers of a reader that never reads hold (~5 MiB here)

/** A request whose answer is never read: the socket reads only until its own buffer is full. */
function neverReading(port: number, path: string): Socket {
  const socket = connect(port, '127.0.0.1', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: test\r\n\r\n`));
  socket.pause();
  return socket;
}

t.test(
  'SSE: a stream whose reader never reads is closed at SSE_MAX_BUFFER_BYTES or SSE_STALL_TIMEOUT_SECONDS',
  async (t) => {
    const warnings: { reason: string; msg: string }[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line)) });
    const closed = new Map<string, () => void>();
    const closedOnce = (name: string) => new Promise<void>((resolve) => closed.set(name, resolve));
    const router = new Router()
      // Writes whatever the socket says (a writer that ignores backpressure): the buffer bound stops it.
      .get('/flood', (_req, res) => {
        const writer = res.stream(200, { 'Content-Type': 'text/event-stream' });
        writer.onClose(() => closed.get('flood')?.());
        const pump = () => {
          if (writer.closed) return;
          writer.write(CHUNK);
          setImmediate(pump);
        };
        pump();
      })
      // Waits for the socket to drain, as the chat relay does: the stall timeout stops a reader that never reads.
      .get('/answer', (req, res) => {
        const writer = res.stream(200, { 'Content-Type': 'text/event-stream' });
        writer.onClose(() => closed.get(`answer ${req.rawQuery}`)?.());
        let sent = 0;
        const pump = () => {
          while (!writer.closed && sent < ANSWER_CHUNKS) {
            sent++;
            if (!writer.write(CHUNK)) return writer.onDrain(pump);
          }
          writer.end();
        };
        pump();
      });
    const server = frontDoor({
      host: '127.0.0.1',
      port: 0,
      bodyLimitBytes: 1024,
      corsOrigin: '*',
      drainQuietMs: 0,
      log,
      rateLimit: { max: 1000, windowSeconds: 60, allowlist: [] },
      streamLimits: { maxBufferBytes: 256 * 1024, stallTimeoutMs: 1000 },
    });
    server.mount(router);
    const port = await server.listen();
    t.teardown(() => server.close());

    const flooded = closedOnce('flood');
    const floodReader = neverReading(port, '/flood');
    t.teardown(() => floodReader.destroy());
    await flooded;
    t.match(warnings.shift(), { msg: 'stream closed: its reader stopped reading', reason: /over 262144 bytes unsent/ });

    const stalled = closedOnce('answer sleeper');
    const stalledReader = neverReading(port, '/answer?sleeper');
    t.teardown(() => stalledReader.destroy());
    const startedAt = Date.now();
    // Meanwhile a client that reads gets the whole answer from the same route.
    const whole = await (await fetch(`http://127.0.0.1:${port}/answer`)).text();
    t.equal(whole.length, CHUNK.length * ANSWER_CHUNKS, 'a reading client is served in full');
    await stalled;
    t.ok(Date.now() - startedAt >= 900, 'closed after the stall timeout');
    t.match(warnings.shift(), { msg: 'stream closed: its reader stopped reading', reason: /nothing sent for 1 s/ });
    t.equal(server.inFlight, 0, 'both streams are finished');
  },
);

t.test(
  'WebSocket: a client that never reads is closed at WS_MAX_BACKPRESSURE_BYTES; its neighbour stays served',
  async (t) => {
    const warnings: { msg: string; bufferedBytes: number; limitBytes: number }[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line)) });
    const server = await startOracleServer(t, { env: { WS_MAX_BACKPRESSURE_BYTES: String(64 * 1024) }, log });
    const user = await newUser(server.oracleDid);
    const sessionId = await createSession(server, user);
    const query = { sessionId, invocation: invocationOf(user) };
    const reader = await NativeClient.connect(server.url, query);
    const sleeper = await NativeClient.connect(server.url, query);
    closeAll(t, reader);
    const sleeperSocket = sleeper.socket as unknown as { pause(): void; terminate(): void };
    sleeperSocket.pause();
    t.teardown(() => sleeperSocket.terminate()); // a close handshake would wait for an answer it never reads

    const connections = async () => {
      reader.send('status');
      return (await reader.take('status')).totalConnections as number;
    };
    t.equal(await connections(), 2);
    // Events for the session (60 KB each) until the sleeper's buffers are full and it is closed.
    const frame = JSON.stringify({ event: 'flood', data: 'x'.repeat(60_000) });
    let published = 0;
    while ((await connections()) === 2 && published < 2_000) {
      for (let i = 0; i < 16; i++, published++) server.http.publish(nativeTopic(sessionId), frame);
    }
    t.equal(await connections(), 1, `the sleeper was closed after ${published} events`);
    const closing = warnings.find((w) => w.msg.startsWith('WebSocket closed'));
    t.match(closing, {
      msg: 'WebSocket closed: its reader stopped reading (send buffer over the bound)',
      limitBytes: 65536,
    });
    t.ok(
      closing!.bufferedBytes <= 65536 + frame.length + 64,
      `it held ${closing!.bufferedBytes} bytes: the bound plus one frame at most`,
    );
    await reader.sync();
    t.equal(reader.inbox.names().filter((name) => name === 'flood').length, published, 'the reader heard every event');
  },
);
