// Pins what this uWebSockets.js build (@trufflesuite/uws-js-unofficial 20.30) does with requests it cannot parse:
// HTTP/1.0 and malformed request lines get NO answer (the socket is closed at uWS's ~10 s HTTP idle timeout).
// README "Operators: proxies and health checks" says how to configure proxies around it. If a uWS upgrade starts
// answering these (a 400/505 and close), this test fails: update the README and this test then.
import { connect, type Socket } from 'node:net';
import { pino } from 'pino';
import t from 'tap';
import { HttpServer } from '../dist/src/http/server.js';
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

t.test('requests this uWS build cannot parse are not answered (pinned behaviour)', async (t) => {
  const router = new Router().get('/health', () => reply.json(200, { status: 'ok' }));
  const server = new HttpServer({
    host: '127.0.0.1', port: 0, bodyLimitBytes: 1024, corsOrigin: '*', drainQuietMs: 0, log: pino({ level: 'silent' }),
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
  for (const { name, answer, closed } of pending) {
    t.equal(answer(), '', `${name}: no answer`);
    t.notOk(closed(), `${name}: left open (until the idle timeout)`);
  }
});
