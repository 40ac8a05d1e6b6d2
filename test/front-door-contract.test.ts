// One front-door contract, both engines: the same routes on uWS (when a native build loads here) and on the
// portable node:http engine, the same raw requests, and the same answers byte for byte once what each engine
// writes of its own is set aside (Date; uWS's `uWebSockets: 20`; node's keep-alive lines). Covers routing,
// bodies, CORS, request ids, SSE, the rate limit, proxy trust and the 503 of a drain. The suites run on both
// engines too (test/engine-node/ runs the drain, slow-reader, protocol and /ws + Socket.IO files on
// the portable engine).
import { connect } from 'node:net';
import { pino } from 'pino';
import t from 'tap';
import { TimeoutError } from '@nats-io/transport-node';
import { outOfReach } from '../dist/src/cluster/out-of-reach.js';
import { httpErrors } from '../dist/src/http/errors.js';
import { compileProxyTrust } from '../dist/src/http/proxy-trust.js';
import { Router } from '../dist/src/http/router.js';
import { createHttpServer, type HttpServer, type HttpServerOptions } from '../dist/src/http/server.js';
import { reply } from '../dist/src/http/types.js';
import { loadNativeUws } from '../dist/src/http/uws-native.js';
import { freePorts } from '../dist/src/tools/local-processes.js';

const native = loadNativeUws();

function router(): Router {
  return new Router()
    .get('/health', () => reply.json(200, { status: 'ok' }))
    .get('/items/:id', (req) => reply.json(200, { id: req.params.id, query: req.rawQuery, q: req.query.get('q') }))
    .get('/items/special', () => reply.text(200, 'static wins'))
    .get('/files/*', (req) => reply.text(200, `file ${req.path}`))
    .post('/echo', (req) =>
      reply.json(req.bodyError ? 400 : 201, {
        body: req.body ?? null,
        bodyError: req.bodyError ?? null,
        type: req.headers['content-type'] ?? null,
      }),
    )
    .delete('/items/:id', (req) => reply.json(200, { deleted: req.params.id }))
    .get('/ip', (req) => reply.text(200, req.ip))
    .get('/headers', () =>
      reply.raw(202, 'application/x-custom', new Uint8Array([1, 2, 3]), {
        'Cache-Control': 'no-store',
        'X-Extra': 'a',
      }),
    )
    .get('/throws', () => {
      throw new Error('boom');
    })
    .get('/nats-timeout', () => {
      throw new TimeoutError();
    })
    .get('/sse', (_req, res) => {
      const writer = res.stream(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
      writer.write('event: one\ndata: 1\n\n');
      setTimeout(() => {
        writer.write('data: two\n\n');
        writer.end();
      }, 20);
    });
}

const BASE: Omit<HttpServerOptions, 'engine'> = {
  host: '127.0.0.1',
  port: 0,
  bodyLimitBytes: 64,
  corsOrigin: 'https://app.example, https://other.example',
  drainQuietMs: 0,
  log: pino({ level: 'silent' }),
  rateLimit: { max: 1000, windowSeconds: 60, allowlist: [] },
  streamLimits: { maxBufferBytes: 1 << 20, stallTimeoutMs: 30_000 },
};

async function start(
  t: { teardown(fn: () => unknown): void },
  engine: 'uws' | 'node',
  options: Partial<HttpServerOptions> = {},
): Promise<HttpServer> {
  const server = createHttpServer({ ...BASE, ...options, engine });
  server.mount(router());
  await server.listen();
  t.teardown(() => server.close());
  return server;
}

/** Sends raw bytes on a new connection; resolves with what came back once the server closed it or went quiet. */
function exchange(port: number, text: string, quietMs = 300): Promise<string> {
  return new Promise((resolve) => {
    const received: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(Buffer.concat(received).toString('latin1'));
    };
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    socket.on('data', (chunk) => {
      received.push(chunk);
      clearTimeout(timer);
      timer = setTimeout(done, quietMs);
    });
    socket.on('close', done);
    socket.on('error', () => {});
  });
}

/** What the contract fixes: the engine's own lines out. */
function contractPart(answer: string): string {
  return answer
    .replace(/^(Date|uWebSockets|Keep-Alive): [^\r]*\r\n/gim, '')
    .replace(/^Connection: keep-alive\r\n/gim, '');
}

const ID = 'X-Request-Id: fixed-id\r\n';
const REQUESTS: Record<string, string> = {
  'a static route': `GET /health HTTP/1.1\r\nHost: x\r\n${ID}\r\n`,
  'a parameter, URI-decoded, and the query': `GET /items/a%20b?q=1&r HTTP/1.1\r\nHost: x\r\n${ID}\r\n`,
  'a static segment wins over a parameter': `GET /items/special HTTP/1.1\r\nHost: x\r\n${ID}\r\n`,
  'a wildcard, the empty rest included': `GET /files/ HTTP/1.1\r\nHost: x\r\n${ID}\r\n`,
  'a wildcard, several segments': `GET /files/a/b.txt HTTP/1.1\r\nHost: x\r\n${ID}\r\n`,
  'an empty parameter is no match (404)': `GET /items/ HTTP/1.1\r\nHost: x\r\n${ID}\r\n`,
  'a trailing slash is another path (404)': `GET /health/ HTTP/1.1\r\nHost: x\r\n${ID}\r\n`,
  'HEAD of a GET route: its headers, no body': `HEAD /health HTTP/1.1\r\nHost: x\r\n${ID}\r\n`,
  'HEAD of a streamed GET route: its headers, no body': `HEAD /sse HTTP/1.1\r\nHost: x\r\n${ID}\r\n`,
  'HEAD where no GET route is (404, no body)': `HEAD /nope HTTP/1.1\r\nHost: x\r\n${ID}\r\n`,
  'DELETE with a parameter': `DELETE /items/7 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n${ID}\r\n`,
  'an unknown method on a known path (404)': `PUT /health HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n${ID}\r\n`,
  'the CORS preflight': `OPTIONS /anything HTTP/1.1\r\nHost: x\r\nOrigin: https://app.example\r\n${ID}\r\n`,
  'CORS for a listed origin': `GET /health HTTP/1.1\r\nHost: x\r\nOrigin: https://other.example\r\n${ID}\r\n`,
  'CORS for another origin': `GET /health HTTP/1.1\r\nHost: x\r\nOrigin: https://evil.example\r\n${ID}\r\n`,
  'a JSON body': `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 14\r\n${ID}\r\n{"a":[1,"é"]}`,
  'a form body': `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 7\r\n${ID}\r\na=1&b=2`,
  'a chunked body': `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n${ID}\r\n4\r\n{"a"\r\n3\r\n:1}\r\n0\r\n\r\n`,
  'malformed JSON': `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\n${ID}\r\n{"a":`,
  'an unsupported content type': `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: text/csv\r\nContent-Length: 3\r\n${ID}\r\na,b`,
  'a body declared over the limit (413, closed)': `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 65\r\n${ID}\r\n${'x'.repeat(65)}`,
  'a chunked body over the limit (413, closed)': `POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n${ID}\r\n40\r\n${'x'.repeat(64)}\r\n1\r\nx\r\n0\r\n\r\n`,
  'raw bytes and extra headers': `GET /headers HTTP/1.1\r\nHost: x\r\n${ID}\r\n`,
  'a handler that throws (500)': `GET /throws HTTP/1.1\r\nHost: x\r\n${ID}\r\n`,
  'an SSE stream': `GET /sse HTTP/1.1\r\nHost: x\r\n${ID}\r\n`,
  'two requests on one connection': `GET /health HTTP/1.1\r\nHost: x\r\n${ID}\r\nGET /items/2 HTTP/1.1\r\nHost: x\r\n${ID}\r\n`,
};

t.test('the same requests get the same answers from both engines', async (t) => {
  // Each request on a connection of its own, all at once: each exchange ends 300 ms after its answer's last bytes
  // (a keep-alive connection is not closed), and one after another those waits alone took 7 s per engine.
  const exchangeAll = async (port: number) =>
    new Map(
      await Promise.all(
        Object.entries(REQUESTS).map(async ([name, text]) => [name, contractPart(await exchange(port, text))] as const),
      ),
    );
  const node = await start(t, 'node');
  const answers = await exchangeAll(node.port);
  // The contract's own words, asserted on the portable engine; uWS must then give the same bytes.
  t.match(answers.get('a parameter, URI-decoded, and the query'), /\r\n\r\n\{"id":"a b","query":"q=1&r","q":"1"\}$/);
  t.match(
    answers.get('the CORS preflight'),
    /^HTTP\/1\.1 204 No Content\r\n[\s\S]*Access-Control-Allow-Origin: https:\/\/app\.example\r\n[\s\S]*Access-Control-Max-Age: 86400\r\n/,
  );
  t.match(answers.get('CORS for another origin'), /Vary: Origin\r\n/);
  t.notMatch(answers.get('CORS for another origin'), /Access-Control-Allow-Origin/);
  t.match(
    answers.get('a body declared over the limit (413, closed)'),
    /^HTTP\/1\.1 413 Payload Too Large\r\n[\s\S]*"Request body larger than 64 bytes"/,
  );
  t.match(
    answers.get('HEAD of a GET route: its headers, no body'),
    /^HTTP\/1\.1 200 OK\r\nContent-Type: application\/json; charset=utf-8\r\n[\s\S]*Content-Length: 0\r\n\r\n$/,
  );
  t.match(
    answers.get('HEAD of a streamed GET route: its headers, no body'),
    /^HTTP\/1\.1 200 OK\r\nContent-Type: text\/event-stream\r\n[\s\S]*Cache-Control: no-cache\r\n[\s\S]*\r\n\r\n$/,
  );
  t.match(
    answers.get('HEAD where no GET route is (404, no body)'),
    /^HTTP\/1\.1 404 Not Found\r\n[\s\S]*Content-Length: 0\r\n\r\n$/,
  );
  t.match(
    answers.get('an SSE stream'),
    /^HTTP\/1\.1 200 OK\r\nContent-Type: text\/event-stream\r\n[\s\S]*event: one\ndata: 1\n\n[\s\S]*data: two\n\n/,
  );
  t.match(answers.get('a handler that throws (500)'), /"message":"Internal server error"/);
  for (const [name, answer] of answers)
    t.match(answer, /^HTTP\/1\.1 [\s\S]*X-Request-Id: fixed-id\r\n/, `${name}: answered, the request id echoed`);

  if (!native.module)
    return void t.comment(`no native uWS build loads here (${native.reason}): the portable engine's answers alone`);
  const uws = await start(t, 'uws');
  for (const [name, answer] of await exchangeAll(uws.port)) t.equal(answer, answers.get(name), name);
});

t.test('request ids, the rate limit, proxy trust and the drain answer alike', async (t) => {
  const engines = native.module ? (['uws', 'node'] as const) : (['node'] as const);
  const seen: Record<string, string[]> = {};
  // The engines side by side (servers, clients and rate limits of their own): each exchange waits 300 ms of quiet.
  const answerOn = async (engine: (typeof engines)[number]) => {
    const answers: string[] = (seen[engine] = []);
    const limited = await start(t, engine, {
      rateLimit: { max: 1, windowSeconds: 60, allowlist: [], exemptToken: 'probe-token' },
      proxyTrust: compileProxyTrust({ TRUST_PROXY_ENABLED: false, TRUST_PROXY_HOPS: 2, TRUSTED_PROXIES: [] }),
    });
    const generated = await exchange(limited.port, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    t.match(
      generated,
      /X-Request-Id: [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\r\n/,
      `${engine}: a request id is made when none came`,
    );
    // Two hops trusted (the peer and the proxy before it); one request per client: the second from a client is refused.
    answers.push(
      contractPart(
        await exchange(
          limited.port,
          `GET /ip HTTP/1.1\r\nHost: x\r\n${ID}X-Forwarded-For: 203.0.113.9, 198.51.100.1\r\n\r\n`,
        ),
      ),
    );
    answers.push(
      contractPart(
        await exchange(limited.port, `GET /ip HTTP/1.1\r\nHost: x\r\n${ID}X-Forwarded-For: 198.51.100.1\r\n\r\n`),
      ),
    );
    answers.push(
      contractPart(
        await exchange(limited.port, `GET /ip HTTP/1.1\r\nHost: x\r\n${ID}X-Forwarded-For: 198.51.100.1\r\n\r\n`),
      ),
    );
    // The operator's token exempts a request (a probe past the limit); another bearer does not.
    for (const bearer of ['probe-token', 'probe-tokeN'])
      answers.push(
        contractPart(
          await exchange(
            limited.port,
            `GET /ip HTTP/1.1\r\nHost: x\r\n${ID}Authorization: Bearer ${bearer}\r\nX-Forwarded-For: 198.51.100.1\r\n\r\n`,
          ),
        ),
      );
    // A drain: a kept-alive connection's next request gets 503, Retry-After and Connection: close.
    const drained = await start(t, engine);
    const kept = connect(drained.port, '127.0.0.1');
    const received: Buffer[] = [];
    kept.on('data', (chunk) => received.push(chunk));
    const closed = new Promise((resolve) => kept.on('close', resolve));
    kept.write(`GET /health HTTP/1.1\r\nHost: x\r\n${ID}\r\n`);
    await new Promise((resolve) => kept.once('data', resolve));
    const draining = drained.drain(5_000);
    t.equal(drained.port, 0, `${engine}: no longer listening`);
    kept.write(`GET /health HTTP/1.1\r\nHost: x\r\n${ID}\r\n`);
    await closed;
    t.equal(await draining, true, `${engine}: drained`);
    answers.push(contractPart(Buffer.concat(received).toString('latin1')));
  };
  await Promise.all(engines.map(answerOn));
  const [first] = engines;
  t.match(seen[first][0], /\r\n\r\n203\.0\.113\.9$/, 'the forwarded client');
  t.match(seen[first][1], /\r\n\r\n198\.51\.100\.1$/);
  t.match(seen[first][2], /^HTTP\/1\.1 429 Too Many Requests\r\n[\s\S]*Retry-After: \d+\r\n/);
  t.match(seen[first][3], /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\n198\.51\.100\.1$/, 'the token exempts a request');
  t.match(seen[first][4], /^HTTP\/1\.1 429 Too Many Requests\r\n/, 'another bearer does not');
  t.match(
    seen[first][5],
    /^HTTP\/1\.1 200 OK\r\n[\s\S]*HTTP\/1\.1 503 Service Unavailable\r\n[\s\S]*Retry-After: 1\r\n[\s\S]*Connection: close\r\n/,
  );
  if (engines.length === 2)
    t.same(seen.uws.map(withoutRetryAfter), seen.node.map(withoutRetryAfter), 'the same bytes on both engines');
});

/** Retry-After counts down to the window's end: it may differ by a second between two servers. */
function withoutRetryAfter(answer: string): string {
  return answer.replace(/Retry-After: \d+/, 'Retry-After: n');
}

t.test('an error that means NATS is out of reach answers 503 with Retry-After when the node says so', async (t) => {
  const engines = native.module ? (['uws', 'node'] as const) : (['node'] as const);
  for (const engine of engines) {
    const clustered = await start(t, engine, {
      passingOutage: (error) => (outOfReach(error) ? httpErrors.temporarilyUnavailable() : undefined),
    });
    const outage = await fetch(`http://127.0.0.1:${clustered.port}/nats-timeout`);
    t.equal(outage.status, 503, `${engine}: 503`);
    t.equal(outage.headers.get('retry-after'), '1', `${engine}: with Retry-After`);
    t.match(
      await outage.json(),
      { statusCode: 503, message: /temporarily unavailable/ },
      `${engine}: the wire's shape`,
    );
    t.equal((await fetch(`http://127.0.0.1:${clustered.port}/throws`)).status, 500, `${engine}: a bug is still a 500`);
    const single = await start(t, engine);
    t.equal((await fetch(`http://127.0.0.1:${single.port}/nats-timeout`)).status, 500, `${engine}: unset, a 500`);
  }
});

t.test(
  'a port another server holds: listen fails on either engine, and the first server keeps every request',
  async (t) => {
    const engines = native.module ? (['uws', 'node'] as const) : (['node'] as const);
    for (const holder of engines) {
      // A port chosen here, not by the kernel: on a port it picked (0), a second bind fails whatever the options.
      const [port] = await freePorts(1);
      const first = await start(t, holder, { port });
      for (const engine of engines) {
        // uWS binds with SO_REUSEPORT unless told otherwise: a second uWS server used to start on the same port and
        // take part of the first one's connections.
        const second = createHttpServer({ ...BASE, port: first.port, engine });
        second.mount(router());
        await t.rejects(second.listen(), /Cannot listen on/, `${engine} after ${holder}: refused`);
        second.close();
      }
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => fetch(`http://127.0.0.1:${first.port}/ip`).then((answer) => answer.status)),
      );
      t.same(new Set(answers), new Set([200]), `${holder}: answers as before`);
    }
  },
);
