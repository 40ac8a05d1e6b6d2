#!/usr/bin/env node
// Platform smoke on a given Node.js binary: its native addons (lmdb, msgpackr-extract) load, then the built server
// (dist/) starts on it and every face is walked once: /health (and the engine it reports), a USSD walk, an SSE
// chat turn, /ws, Socket.IO, a gateway GET (against the embedded local chain node, started on the same binary),
// /docs, /metrics, and a drain on SIGTERM. With --root the server runs from another installed copy of the package
// (test/production-install.test.ts: a production install of the packed project); the clients stay this checkout's.
//   node scripts/platform-smoke.mjs [--node PATH] [--root DIR] [--engine auto|uws|node] [--expect-engine uws|node]
// Prints one `ok`/`not ok` line per check and `PASS`/`FAIL`; exits 0 only when every check passed.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createParser } from 'eventsource-parser';
import { io } from 'socket.io-client';
import WebSocket from 'ws';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const { formatKey, generateKey, mintInvocation } = await import(join(ROOT, 'dist/src/tools/mint-ucan.js'));
const { values: args } = parseArgs({
  options: {
    node: { type: 'string' },
    root: { type: 'string' },
    engine: { type: 'string' },
    'expect-engine': { type: 'string' },
  },
});
/** Where the server under test is installed (its dist/ and node_modules/). */
const SERVER_ROOT = args.root ?? ROOT;
const nodeBinary = args.node ?? process.execPath;
const STEP_TIMEOUT_MS = 30_000;

let failures = 0;
const report = (ok, what, detail = '') => {
  if (!ok) failures++;
  console.log(`${ok ? 'ok' : 'not ok'} - ${what}${detail ? ` (${detail})` : ''}`);
};
async function check(what, run) {
  try {
    const detail = await withTimeout(run(), what);
    report(true, what, typeof detail === 'string' ? detail : '');
  } catch (error) {
    report(false, what, error instanceof Error ? error.message : String(error));
  }
}
function withTimeout(promise, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise(
      (_, reject) =>
        (timer = setTimeout(() => reject(new Error(`${what}: no result in ${STEP_TIMEOUT_MS} ms`)), STEP_TIMEOUT_MS)),
    ),
  ]).finally(() => clearTimeout(timer));
}

/**
 * Spawns `nodeBinary script` in `root`; resolves once a stdout line matches `ready` (its match), with the lines seen
 * so far.
 */
function start(script, env, ready, root = ROOT) {
  const child = spawn(nodeBinary, [join(root, script)], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines = [];
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const started = new Promise((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(
      () => reject(new Error(`${script} did not start in ${STEP_TIMEOUT_MS} ms: ${lines.slice(-3).join(' | ')}`)),
      STEP_TIMEOUT_MS,
    );
    const take = (chunk) => {
      buffer += chunk;
      let end;
      while ((end = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 1);
        lines.push(line);
        const found = ready.exec(line);
        if (found) {
          clearTimeout(timer);
          resolve(found);
        }
      }
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    void exited.then(({ code, signal }) =>
      reject(new Error(`${script} exited (${code ?? signal}) before it was ready: ${lines.slice(-3).join(' | ')}`)),
    );
  });
  process.once('exit', () => child.kill('SIGKILL'));
  return { child, lines, started, exited };
}

async function waitForLine(lines, text) {
  while (!lines.some((line) => line.includes(text))) await new Promise((resolve) => setTimeout(resolve, 20));
}

const version = await new Promise((resolve) => {
  const child = spawn(nodeBinary, ['--version']);
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  child.once('close', () => resolve(out.trim()));
  child.once('error', () => resolve('unavailable'));
});
console.log(
  `# platform smoke: Node.js ${version} (${nodeBinary}), HTTP_ENGINE=${args.engine ?? 'auto'}, server in ${SERVER_ROOT}`,
);

await check('native addons load: lmdb and msgpackr-extract', async () => {
  const probe =
    "const l = require('lmdb'); const m = require('msgpackr'); require('msgpackr-extract');" +
    "if (!l.version || !m.isNativeAccelerationEnabled) throw new Error('not native'); console.log(l.version.versionString)";
  const child = spawn(nodeBinary, ['-e', probe], { cwd: SERVER_ROOT });
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  child.stderr.on('data', (chunk) => (out += chunk));
  const code = await new Promise((resolve) => child.once('close', resolve));
  if (code !== 0) throw new Error(out.trim().split('\n').at(-1));
  return out.trim();
});

const dataDir = mkdtempSync(join(tmpdir(), 'sar-smoke-'));
const chainDir = mkdtempSync(join(tmpdir(), 'sar-smoke-chain-'));
const chain = start('dist/bench/gateway-node.js', { TMPDIR: chainDir, BENCH_ENTITIES: '3' }, /LISTENING (\d+)/);
let server;
try {
  const chainPort = Number((await chain.started)[1]);
  const oracleKey = await generateKey();
  server = start(
    'dist/src/app/main.js',
    {
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      ACTOR_THREADS: '1',
      SHUTDOWN_QUIET_MS: '200',
      HTTP_ENGINE: args.engine ?? 'auto',
      ORACLE_PRIVATE_KEY: formatKey(oracleKey),
      ORACLE_NAME: 'Smoke Oracle',
      GATEWAY_GRPC_TARGET: `127.0.0.1:${chainPort}`,
    },
    /"msg":"listening"[^\n]*"port":(\d+)|"port":(\d+)[^\n]*"msg":"listening"/,
    SERVER_ROOT,
  );
  const found = await server.started;
  const url = `http://127.0.0.1:${found[1] ?? found[2]}`;
  const ws = url.replace(/^http/, 'ws');

  await check('GET /health answers 200 and names the engine', async () => {
    const res = await fetch(`${url}/health`);
    const body = await res.json();
    if (res.status !== 200 || body.status !== 'ok') throw new Error(`${res.status} ${JSON.stringify(body)}`);
    const engine = body.httpEngine?.name;
    if (args['expect-engine'] && engine !== args['expect-engine'])
      throw new Error(`engine ${engine}, expected ${args['expect-engine']}`);
    const logged = server.lines.find((line) => line.includes('HTTP engine'));
    if (!logged) throw new Error('the start-up log does not name the engine');
    return `engine ${engine}${body.httpEngine.build ? ` (${body.httpEngine.build})` : ''}`;
  });

  await check('a USSD walk: dial, then an input', async () => {
    const post = async (text) => {
      const res = await fetch(`${url}/api/ussd`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          sessionId: 'smoke-1',
          serviceCode: '*384*123#',
          phoneNumber: '+254700000001',
          text,
        }).toString(),
      });
      const body = await res.text();
      if (res.status !== 200 || !/^(CON|END) /.test(body)) throw new Error(`${res.status} ${body.slice(0, 80)}`);
      return body;
    };
    const first = await post('');
    const second = await post('1');
    if (!first.startsWith('CON ')) throw new Error(`the first screen: ${first.slice(0, 60)}`);
    return `${first.split('\n')[0]} -> ${second.split('\n')[0]}`;
  });

  const invocation = await mintInvocation({ issuer: await generateKey(), audience: oracleKey.did(), ttlSeconds: 600 });
  const auth = { authorization: `Bearer ${invocation}`, 'x-auth-type': 'ucan' };
  let sessionId = '';
  await check('an SSE chat turn: POST /sessions, then a streamed message to done', async () => {
    const created = await fetch(`${url}/sessions`, { method: 'POST', headers: auth });
    sessionId = (await created.json()).sessionId;
    if (created.status !== 201 || !sessionId) throw new Error(`POST /sessions answered ${created.status}`);
    const res = await fetch(`${url}/messages/${sessionId}`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'hello', stream: true }),
    });
    if (res.status !== 200 || !res.headers.get('content-type')?.startsWith('text/event-stream'))
      throw new Error(`answered ${res.status} ${res.headers.get('content-type')}`);
    const events = [];
    const parser = createParser({ onEvent: (event) => events.push(event.event ?? 'message') });
    const decoder = new TextDecoder();
    for await (const chunk of res.body) parser.feed(decoder.decode(chunk, { stream: true }));
    if (events.at(-1) !== 'done') throw new Error(`events: ${events.join(', ')}`);
    return `${events.length} events`;
  });

  await check('/ws: the native event socket connects and answers a ping', async () => {
    const socket = new WebSocket(`${ws}/ws?sessionId=${sessionId}&invocation=${encodeURIComponent(invocation)}`);
    const events = [];
    let arrived = () => {};
    socket.on('message', (raw) => {
      events.push(JSON.parse(String(raw)).event);
      arrived();
    });
    const closed = new Promise((_, reject) => socket.once('close', (code) => reject(new Error(`closed (${code})`))));
    closed.catch(() => {});
    const heard = async (event) => {
      while (!events.includes(event)) await Promise.race([new Promise((resolve) => (arrived = resolve)), closed]);
    };
    try {
      await new Promise((resolve, reject) => {
        socket.once('open', resolve);
        socket.once('unexpected-response', (_req, res) => reject(new Error(`refused: ${res.statusCode}`)));
        socket.once('error', reject);
      });
      await heard('connected');
      socket.send(JSON.stringify({ event: 'ping' }));
      await heard('pong');
    } finally {
      socket.close();
    }
  });

  await check('Socket.IO: connects over WebSocket and over long-polling', async () => {
    for (const transports of [['websocket'], ['polling']]) {
      const socket = io(url, {
        transports,
        query: { sessionId },
        auth: { invocation },
        reconnection: false,
        forceNew: true,
      });
      try {
        await new Promise((resolve, reject) => {
          socket.onAny((event) => event === 'connected' && resolve());
          socket.once('connect_error', reject);
        });
      } finally {
        socket.close();
      }
    }
  });

  await check('a gateway GET through the chain node', async () => {
    const res = await fetch(`${url}/ixo/token/params`);
    const body = await res.text();
    if (res.status !== 200) throw new Error(`${res.status} ${body.slice(0, 120)}`);
    return `${body.length} B`;
  });

  await check('/docs: the API reference and its document', async () => {
    const page = await fetch(`${url}/docs`);
    const document = await fetch(`${url}/docs-json`);
    const spec = await document.json();
    if (page.status !== 200 || !(await page.text()).includes('swagger') || !spec.paths?.['/health'])
      throw new Error(`${page.status} / ${document.status}`);
  });

  await check('/metrics: the Prometheus exposition counts the requests above', async () => {
    const res = await fetch(`${url}/metrics`);
    const text = await res.text();
    if (res.status !== 200 || !/^http_requests_total\{[^}]*route="\/api\/ussd"/m.test(text))
      throw new Error(`${res.status} ${text.slice(0, 120)}`);
    return `${text.split('\n').length} lines`;
  });

  await check('SIGTERM drains: a request begun before it is answered, then a clean exit', async () => {
    // The request's headers and half its body go before the signal, the rest after: the front door holds it in
    // flight and answers it (the USSD screen; or, had the signal overtaken the headers, the drain's 503), never
    // a reset; then the process exits 0.
    const body = new URLSearchParams({
      sessionId: 'smoke-2',
      serviceCode: '*384*123#',
      phoneNumber: '+254700000002',
      text: '',
    }).toString();
    const socket = connect(Number(new URL(url).port), '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk));
    const ended = new Promise((resolve) => socket.once('close', resolve));
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /api/ussd HTTP/1.1\r\nHost: smoke\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 10)}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    server.child.kill('SIGTERM');
    await waitForLine(server.lines, '"msg":"draining"');
    socket.write(body.slice(10));
    const [{ code, signal }] = await Promise.all([server.exited, ended]);
    if (!/^HTTP\/1\.1 (200 OK\r\n[\s\S]*\r\n\r\nCON |503 Service Unavailable\r\n[\s\S]*Retry-After: 1)/.test(answer))
      throw new Error(`the request in flight got: ${answer.slice(0, 80) || 'nothing'}`);
    if (code !== 0) throw new Error(`exit ${code ?? signal}`);
    if (!server.lines.some((line) => line.includes('"msg":"stopped"'))) throw new Error('no "stopped" in the log');
    return answer.slice(9, 12);
  });
} catch (error) {
  report(false, 'start', error instanceof Error ? error.message : String(error));
} finally {
  server?.child.kill('SIGKILL');
  chain.child.kill('SIGTERM');
  await chain.exited;
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(chainDir, { recursive: true, force: true });
}
console.log(failures === 0 ? `PASS Node.js ${version}` : `FAIL Node.js ${version}: ${failures} check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
