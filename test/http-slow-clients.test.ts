// Clients that hold the front door: headers or a body trickled a byte at a time are cut at the engine's bound
// (the portable engine: HTTP_HEADERS_TIMEOUT_MS / HTTP_REQUEST_TIMEOUT_MS with a 408 in the contract's body; uWS:
// its own ~10 s), and 200 sockets that flood frames and never read their answers are closed at
// WS_MAX_FRAMES_PER_SECOND while /health stays quick (p99 under 500 ms). test/engine-node/ runs it on the
// portable engine.
import { execFile } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { promisify } from 'node:util';
import t from 'tap';
import type WebSocket from 'ws';
import { closeAll, invocationOf, NativeClient, SocketIoClient } from './helpers/events.js';
import { formatKey, generateKey } from '../dist/src/tools/mint-ucan.js';
import { startChildServer } from './helpers/child-server.js';
import { createSession, newUser } from './helpers/oracle.js';

const run = promisify(execFile);
const HEADERS_MS = 1000;
const REQUEST_MS = 1500;
const FRAMES_PER_SECOND = 100;
const FLOODERS = 200;
/** Frames each flooder sends: four seconds' budget, all at once. */
const PER_FLOODER = FRAMES_PER_SECOND * 4;

// Its own process, so the clients' work (200 sockets flooding) is not on the server's main thread.
const oracleKey = await generateKey();
const server = await startChildServer(t, {
  ACTOR_THREADS: '1',
  ORACLE_PRIVATE_KEY: formatKey(oracleKey),
  HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_MS),
  HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_MS),
  WS_MAX_FRAMES_PER_SECOND: String(FRAMES_PER_SECOND),
});
const oracleDid = oracleKey.did();
const warnings = () =>
  server
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg: string });
/** How many times `msg` was logged from `from` on, once `count` were (the log comes through a pipe), or at 5 s. */
async function logged(msg: string, count: number, from = 0): Promise<number> {
  const seen = () =>
    warnings()
      .slice(from)
      .filter((w) => w.msg === msg).length;
  for (const until = Date.now() + 5000; seen() < count && Date.now() < until; )
    await new Promise((resolve) => setTimeout(resolve, 20));
  return seen();
}

const engine = (await (await fetch(`${server.url}/health`)).json()).httpEngine.name;
const portable = engine === 'node';

/** A client sending `start` at once, then one byte of `rest` every 200 ms; resolves when the server closes it. */
function trickle(start: string, rest: string): Promise<{ ms: number; answer: string }> {
  return new Promise((resolve) => {
    const began = Date.now();
    let answer = '';
    let timer: NodeJS.Timeout | undefined;
    const socket: Socket = connect(server.port, '127.0.0.1', () => {
      socket.write(start);
      let next = 0;
      timer = setInterval(() => socket.writable && socket.write(rest[next++ % rest.length]), 200);
    });
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ ms: Date.now() - began, answer });
    });
    // Past any engine's bound: a client still open here was not cut.
    setTimeout(() => socket.destroy(), 20_000).unref();
  });
}

t.test('trickled headers and bodies are cut at the bound', async (t) => {
  const headers = Array.from({ length: 10 }, () =>
    trickle('GET /health HTTP/1.1\r\nHost: x\r\n', 'X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n'),
  );
  const bodies = Array.from({ length: 10 }, () =>
    trickle(
      'POST /api/ussd HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{',
      ' ',
    ),
  );
  // Meanwhile the server answers everyone else.
  t.equal((await fetch(`${server.url}/health`)).status, 200, 'served beside them');
  const results = await Promise.all([...headers, ...bodies]);
  // The portable engine checks every second; uWS's timer ticks every 4 s up to its 10 s.
  const bounds = portable ? [HEADERS_MS + 1000, REQUEST_MS + 1000] : [14_000, 14_000];
  for (const [i, { ms, answer }] of results.entries()) {
    const kind = i < headers.length ? 'headers' : 'body';
    const bound = bounds[i < headers.length ? 0 : 1];
    t.ok(ms <= bound + 500, `slow ${kind} cut after ${ms} ms (bound ${bound} ms)`);
    if (!portable) continue;
    t.match(answer, /^HTTP\/1\.1 408 Request Timeout\r\n[\s\S]*Content-Type: application\/json/, `${kind}: a 408`);
    t.match(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)), {
      statusCode: 408,
      message: /did not arrive in time/,
      error: 'Request Timeout',
    });
  }
});

/** Probes `url` every 20 ms for `ms` from a child process; its latencies and statuses. */
async function probeHealth(url: string, ms: number): Promise<{ latencies: number[]; statuses: number[] }> {
  const script = `
    const [url, ms] = process.argv.slice(1);
    const latencies = [], statuses = [];
    for (const until = Date.now() + Number(ms); Date.now() < until; ) {
      const began = performance.now();
      const res = await fetch(url);
      await res.text();
      latencies.push(performance.now() - began);
      statuses.push(res.status);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    process.stdout.write(JSON.stringify({ latencies, statuses }));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script, url, String(ms)]);
  return JSON.parse(stdout) as { latencies: number[]; statuses: number[] };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
}

t.test(`${FLOODERS} never-read sockets flooding list-events: closed, /health p99 under 500 ms`, async (t) => {
  const user = await newUser(oracleDid);
  const sessionId = await createSession(server, user);
  const query = { sessionId, invocation: invocationOf(user) };
  const flooders: NativeClient[] = [];
  for (let i = 0; i < FLOODERS; i += 20)
    flooders.push(...(await Promise.all(Array.from({ length: 20 }, () => NativeClient.connect(server.url, query)))));
  t.teardown(() => {
    for (const client of flooders) (client.socket as unknown as WebSocket).terminate();
  });
  // The same probe first without the flood: what this machine's load alone adds, so the bound below is the
  // flood's share (a server stalled by it answers seconds late), not the neighbours'.
  const quiet = percentile((await probeHealth(`${server.url}/health`, 1500)).latencies, 99);
  const before = warnings().length;
  // Each sends as fast as its socket takes frames (PER_FLOODER in all) and reads nothing the server answers.
  const frame = JSON.stringify({ event: 'list-events' });
  let sending = true;
  let sent = 0;
  const flood = flooders.map((client) => {
    const ws = client.socket as unknown as WebSocket & { _socket: Socket };
    ws._socket.pause();
    let mine = 0;
    return new Promise<void>((resolve) => {
      const pump = () => {
        if (!sending || ws.readyState !== ws.OPEN || mine >= PER_FLOODER) return resolve();
        for (let i = 0; i < 50; i++, sent++, mine++) ws.send(frame);
        setTimeout(pump, 5);
      };
      pump();
    });
  });
  // Probed from a process of its own: the flooders' pumping here must not count as the server's latency.
  const { latencies, statuses } = await probeHealth(`${server.url}/health`, 3000);
  t.same([...new Set(statuses)], [200], `/health answered 200 to all ${statuses.length} probes`);
  sending = false;
  await Promise.all(flood);
  const p99 = percentile(latencies, 99);
  t.comment(
    `${sent} frames sent; /health p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, ` +
      `max ${Math.max(...latencies).toFixed(1)} ms over ${latencies.length} probes`,
  );
  t.ok(p99 < 500 + quiet, `/health p99 ${p99.toFixed(1)} ms under the flood (without it ${quiet.toFixed(1)} ms)`);
  const closed = warnings()
    .slice(before)
    .filter((w) => w.msg === 'WebSocket closed: too many frames');
  t.equal(closed.length, FLOODERS, 'every flooder was closed for its frames');

  // A client that keeps to the budget stays served.
  const reader = await NativeClient.connect(server.url, query);
  closeAll(t, reader);
  reader.send('list-events');
  t.equal((await reader.take('available-events')).sessionId, sessionId);
});

t.test('Socket.IO: a client sending more packets a second than the budget is closed', async (t) => {
  const user = await newUser(oracleDid);
  const sessionId = await createSession(server, user);
  const client = await SocketIoClient.connect(server.url, { sessionId }, { invocation: invocationOf(user) });
  closeAll(t, client);
  const disconnected = new Promise<string>((resolve) => client.socket.once('disconnect', resolve));
  for (let i = 0; i < FRAMES_PER_SECOND * 2; i++) client.send('list-events');
  t.equal(await disconnected, 'transport close', 'disconnected by the server');
  t.equal(await logged('Socket.IO closed: too many frames', 1), 1, 'logged');
  const within = await SocketIoClient.connect(server.url, { sessionId }, { invocation: invocationOf(user) });
  closeAll(t, within);
  for (let i = 0; i < 10; i++) within.send('list-events');
  for (let i = 0; i < 10; i++) await within.take('available-events');
  t.ok(within.socket.connected, 'a client within the budget stays connected');
});
