// Pins what the uWS engine (uWebSockets.js 20.30 and 20.57) does with requests it cannot parse: HTTP/1.0 and
// malformed request lines get NO answer (the socket is closed at uWS's ~10 s HTTP idle timeout). docs/operations.md
// "Health checks and HTTP/1.0" says how to configure proxies around it. If a uWS upgrade starts
// answering these (a 400/505 and close), this test fails: update docs/operations.md and this test then.
// The portable engine (HTTP_ENGINE=node; test/engine-node/ runs this file on it) answers them all: HTTP/1.0 and
// an absolute-form target with the route's answer, malformed requests with 400 and a closed connection.
import { connect, type Socket } from 'node:net';
import { pino } from 'pino';
import t from 'tap';
import { frontDoor } from './helpers/engine.js';
import { Router } from '../dist/src/http/router.js';
import { reply } from '../dist/src/http/types.js';

const UNANSWERED: Record<string, string> = {
  'HTTP/1.0 (HAProxy option httpchk, nginx without proxy_http_version 1.1)': 'GET /health HTTP/1.0\r\n\r\n',
  'HTTP/1.0 with a Host': 'GET /health HTTP/1.0\r\nHost: x\r\n\r\n',
  'a bare LF in a header': 'GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\nb\r\n\r\n',
  'a bare CR in a header': 'GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n',
  'bare LF line ends': 'GET /health HTTP/1.1\nHost: x\n\n',
  'a NUL in the URL': 'GET /he\0alth HTTP/1.1\r\nHost: x\r\n\r\n',
  'an absolute-form URL': 'GET http://x/health HTTP/1.1\r\nHost: x\r\n\r\n',
};

/** Sends raw bytes; collects what comes back. */
function rawRequest(port: number, text: string) {
  const received: Buffer[] = [];
  let closed = false;
  let markSent!: () => void;
  const sent = new Promise<void>((resolve) => (markSent = resolve));
  const socket: Socket = connect(port, '127.0.0.1', () => socket.write(text, () => markSent()));
  socket.on('data', (chunk) => received.push(chunk));
  socket.on('close', () => (closed = true));
  socket.on('error', () => {});
  return { socket, sent, answer: () => Buffer.concat(received).toString('latin1'), closed: () => closed };
}

const ANSWERED_BY_NODE: Record<string, RegExp> = {
  'HTTP/1.0 (HAProxy option httpchk, nginx without proxy_http_version 1.1)':
    /^HTTP\/1\.1 200 OK\r\n[\s\S]*Connection: close\r\n\r\n\{"status":"ok"\}$/,
  'HTTP/1.0 with a Host': /^HTTP\/1\.1 200 OK\r\n[\s\S]*\{"status":"ok"\}$/,
  'a bare LF in a header': /^HTTP\/1\.1 400 Bad Request\r\n/,
  'a bare CR in a header': /^HTTP\/1\.1 400 Bad Request\r\n/,
  'bare LF line ends': /^HTTP\/1\.1 400 Bad Request\r\n/,
  'a NUL in the URL': /^HTTP\/1\.1 400 Bad Request\r\n/,
  'an absolute-form URL': /^HTTP\/1\.1 200 OK\r\n[\s\S]*\{"status":"ok"\}$/,
};

t.test(
  'requests uWS cannot parse: unanswered on uWS (pinned behaviour), answered by the portable engine',
  async (t) => {
    const router = new Router().get('/health', () => reply.json(200, { status: 'ok' }));
    const server = frontDoor({
      host: '127.0.0.1',
      port: 0,
      bodyLimitBytes: 1024,
      corsOrigin: '*',
      drainQuietMs: 0,
      log: pino({ level: 'silent' }),
      rateLimit: { max: 1000, windowSeconds: 60, allowlist: [] },
      streamLimits: { maxBufferBytes: 1 << 20, stallTimeoutMs: 30_000 },
    });
    server.mount(router);
    const port = await server.listen();
    t.teardown(() => server.close());

    const pending = Object.entries(UNANSWERED).map(([name, text]) => ({ name, ...rawRequest(port, text) }));
    t.teardown(() => {
      for (const { socket } of pending) socket.destroy();
    });
    // Once the kernel has them all, a well-formed HTTP/1.1 request, twice: by its second answer uWS has read the others.
    await Promise.all(pending.map(({ sent }) => sent));
    for (let i = 0; i < 2; i++) {
      const ok = rawRequest(port, 'GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      await new Promise((resolve) => ok.socket.once('close', resolve));
      t.match(ok.answer(), /^HTTP\/1\.1 200 OK\r\n/, 'HTTP/1.1 is answered');
    }
    if (server.engine.name === 'node') {
      for (const { name, socket, answer } of pending) {
        if (!socket.destroyed && !/Connection: close/.test(answer())) socket.end();
        await new Promise((resolve) => (socket.destroyed ? resolve(undefined) : socket.once('close', resolve)));
        t.match(answer(), ANSWERED_BY_NODE[name], `${name}: answered`);
      }
      return;
    }
    for (const { name, answer, closed } of pending) {
      t.equal(answer(), '', `${name}: no answer`);
      t.notOk(closed(), `${name}: left open (until the idle timeout)`);
    }
  },
);
