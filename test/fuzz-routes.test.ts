// Property-based fuzzing of every declared route (taken from the server's route table, so new routes are
// covered without touching this file): odd methods, path parameters and query strings made of prototype
// names, oversized, non-UTF-8 and badly %-encoded text, odd and huge headers, broken, deep and hostile JSON
// bodies. Whatever arrives, the answer is never 5xx and an error has the body of its face's contract.
// On failure fast-check prints the seed and the shrunk request; rerun with FUZZ_SEED=<seed>.
import http from 'node:http';
import t from 'tap';
import fc from 'fast-check';
import { createSession, newUser, startOracleServer } from './helpers/oracle.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const NUM_RUNS = Number(process.env.FUZZ_RUNS ?? 1000);

interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

const PROTOTYPE_NAMES = [
  '__proto__',
  'constructor',
  'prototype',
  'hasOwnProperty',
  'valueOf',
  'toString',
  'isPrototypeOf',
  '__defineGetter__',
  '__lookupSetter__',
  'propertyIsEnumerable',
  'toLocaleString',
];

/** Text that has hurt parsers: prototype names, oversized, non-ASCII, broken %-escapes, separators. */
const hostileText = fc.oneof(
  fc.constantFrom(...PROTOTYPE_NAMES),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.integer({ min: 1900, max: 9000 }).map((n) => 'a'.repeat(n)),
  fc.integer({ min: 700, max: 3000 }).map((n) => 'é'.repeat(n)),
  fc.constantFrom('..', '.', '', ' ', '\u0000'),
  fc.constantFrom(
    'did:ixo:entity:0f4e0bd5b3b74e1e8c4f2a8f1b6e9d21',
    'did:key:z6Mk',
    '-1',
    '1e400',
    'NaN',
    'true',
    '18446744073709551616',
  ),
);

/** Escapes sent as typed: broken, overlong, NUL, encoded separators. */
const rawEscapes = fc.constantFrom('%E0%A4%A', '%', '%zz', '%00', '%C0%AF', '%2F', '%2e%2e', '%FF%FE', '%u0041', '%%');
/** A path segment or query part as it goes on the wire. */
const segment = fc.oneof(hostileText.map(encodeURIComponent), rawEscapes);

const queryString = fc
  .array(
    fc.tuple(
      fc.oneof(
        segment,
        fc.constantFrom(
          'pagination.key',
          'pagination.limit',
          'pagination.offset',
          'pagination.reverse',
          'id',
          'text',
          'a.b.c',
        ),
      ),
      segment,
    ),
    { maxLength: 4 },
  )
  .map((pairs) => pairs.map(([key, value]) => `${key}=${value}`).join('&'));

const deepJson = fc.integer({ min: 100, max: 20000 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth));
const protoJson = fc.constantFrom(
  '{"__proto__":{"admin":true}}',
  '{"constructor":{"prototype":{"x":1}}}',
  '{"sessionId":{"__proto__":null},"text":[]}',
  '{"toString":1,"valueOf":2,"hasOwnProperty":3}',
);
const jsonValue = fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value));
const objectWith = fc
  .dictionary(
    fc.oneof(
      fc.constantFrom(
        'sessionId',
        'serviceCode',
        'phoneNumber',
        'text',
        'message',
        'delegation',
        'stream',
        'tools',
        'metadata',
        ...PROTOTYPE_NAMES,
      ),
      fc.string({ maxLength: 8 }),
    ),
    fc.oneof(hostileText, fc.jsonValue({ maxDepth: 2 })),
    { maxKeys: 5 },
  )
  .map((object) => JSON.stringify(object));
// Bodies close to valid ones, so validation passes far enough to reach the actors and stores behind it.
const nearlyValid = fc.oneof(
  fc
    .record({
      sessionId: fc.oneof(fc.uuid(), hostileText),
      serviceCode: fc.oneof(fc.constant('*384#'), hostileText),
      phoneNumber: fc.oneof(fc.constant('+254700000001'), hostileText),
      text: fc.oneof(fc.constantFrom('', '1', '2*1', '2*1*1234*1234'), hostileText),
    })
    .map((body) => JSON.stringify(body)),
  fc.record({ message: hostileText, stream: fc.boolean() }).map((body) => JSON.stringify(body)),
  fc.record({ sessionId: hostileText }).map((body) => JSON.stringify(body)),
  fc.record({ delegation: hostileText }).map((body) => JSON.stringify(body)),
);
const bodyText = fc.oneof(
  nearlyValid,
  nearlyValid,
  jsonValue,
  objectWith,
  protoJson,
  deepJson,
  fc.string({ maxLength: 50 }),
  fc.constantFrom('{', '{"a":', '\u0000', 'null', '[]', '""'),
);

const contentType = fc.constantFrom(
  'application/json',
  'application/x-www-form-urlencoded',
  'text/plain',
  'application/json; charset=latin1',
  'multipart/form-data; boundary=x',
  'application/json; charset=utf-16',
  '',
  '*/*',
);

const headerValue = fc.oneof(
  fc.string({ maxLength: 30 }).map((text) => text.replace(/[^\x20-\x7e]/g, '')),
  fc.integer({ min: 500, max: 1000 }).map((n) => 'x'.repeat(n)),
  fc.constantFrom('Bearer ', 'Bearer x.y.z', 'ucan', 'Basic Zm9vOmJhcg==', '-1', '99999999999999999999', '__proto__'),
);
// uWS drops a connection whose headers pass 4 KB (UWS_HTTP_MAX_HEADERS_SIZE) without an answer: the front
// door's limit, not a route's, so the fuzzed headers stay under it (at most 3 of at most 1000 bytes).
const headerName = fc.constantFrom(
  'authorization',
  'x-auth-type',
  'x-ucan-delegation',
  'x-api-key',
  'x-cosmos-block-height',
  'x-request-id',
  'accept',
  'origin',
  'x-forwarded-for',
  'last-event-id',
  'x-matrix-access-token',
  'x-did',
  'constructor',
  'hasownproperty',
  'x-custom',
);

// This uWS build closes the connection, unanswered, on a method it does not know (PROPFIND, PURGE, `get`):
// the front door's parser, not a route, so only the methods it parses are fuzzed.
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'TRACE'];

/** A request aimed at one declared route (its pattern filled with hostile values), or at its neighbourhood. */
function requestFor(
  patterns: readonly { method: string; pattern: string }[],
  validHeaders: () => Record<string, string>,
  knownIds: readonly string[],
) {
  const pathValue = fc.oneof({ weight: 3, arbitrary: segment }, { weight: 1, arbitrary: fc.constantFrom(...knownIds) });
  return fc
    .record({
      route: fc.constantFrom(...patterns),
      method: fc.oneof(
        { weight: 3, arbitrary: fc.constant('') },
        { weight: 1, arbitrary: fc.constantFrom(...METHODS) },
      ),
      segments: fc.array(pathValue, { minLength: 4, maxLength: 4 }),
      extra: fc.oneof({ weight: 6, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: segment }),
      query: fc.option(queryString, { freq: 2 }),
      authenticated: fc.boolean(),
      headers: fc.dictionary(headerName, headerValue, { maxKeys: 3 }),
      contentType: fc.option(contentType, { freq: 4 }),
      body: fc.option(bodyText, { freq: 4 }),
    })
    .map(({ route, method, segments, extra, query, authenticated, headers, contentType, body }): FuzzRequest => {
      let next = 0;
      let path = route.pattern.replace(/:[^/]+|\*/g, () => segments[next++ % segments.length] || 'x');
      if (extra !== null) path += `/${extra}`;
      if (query !== null) path += `?${query}`;
      const all: Record<string, string> = { ...(authenticated ? validHeaders() : {}), ...headers };
      if (contentType !== null) all['content-type'] = contentType;
      // Framed explicitly: node sends a GET's body unframed otherwise, which is a broken request, not a fuzz case.
      if (body !== null) all['content-length'] = String(Buffer.byteLength(body));
      let verb = method || route.method;
      // Engine.IO (its own uWS route) answers HEAD with a body; reported, left to the front door's owners.
      if (verb === 'HEAD' && route.pattern.startsWith('/socket.io/')) verb = 'GET';
      return { method: verb, path, headers: all, body: body === null ? undefined : Buffer.from(body) };
    });
}

/** The route table (hidden wildcard routes too) and every operation of /docs-json, plus the socket endpoints. */
async function declaredRoutes(server: {
  url: string;
  router: { routes: readonly { method: string; pattern: string }[] };
}) {
  const routes = server.router.routes.map(({ method, pattern }) => ({ method, pattern }));
  const document = (await (await fetch(`${server.url}/docs-json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const method of Object.keys(operations))
      routes.push({ method: method.toUpperCase(), pattern: path.replace(/\{[^}]+\}/g, ':p') });
  }
  routes.push({ method: 'GET', pattern: '/ws' }, { method: 'GET', pattern: '/socket.io/' });
  return routes;
}

function describe(request: FuzzRequest): string {
  const cut = (text: string) => (text.length > 120 ? `${text.slice(0, 120)}...(${text.length} chars)` : text);
  const headers = Object.entries(request.headers).map(([name, value]) => `${name}: ${cut(value)}`);
  return `${request.method} ${cut(request.path)} [${headers.join('; ')}] body ${request.body ? cut(request.body.toString('utf8')) : '(none)'}`;
}

function send(port: number, agent: http.Agent, request: FuzzRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = http.request(
      {
        host: '127.0.0.1',
        port,
        agent,
        method: request.method,
        path: request.path,
        headers: request.headers,
        timeout: 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers['content-type'] ?? ''),
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error('no answer within 10 s')));
    outgoing.on('error', reject);
    outgoing.end(request.body);
  });
}

/** The error body of the face that answered (the gateway's mounts: the Cosmos REST body; everything else: NestJS's). */
function errorBodyProblem(gatewayBases: readonly string[], request: FuzzRequest, answer: Answer): string | undefined {
  if (answer.status < 400 || request.method.toUpperCase() === 'HEAD') return undefined;
  if (!answer.contentType.startsWith('application/json')) return `error answer is ${answer.contentType}, not JSON`;
  let body: any;
  try {
    body = JSON.parse(answer.body);
  } catch {
    return 'error body is not JSON';
  }
  const nest =
    body &&
    body.statusCode === answer.status &&
    (typeof body.message === 'string' || Array.isArray(body.message)) &&
    typeof body.error === 'string';
  const cosmos = body && Number.isInteger(body.code) && typeof body.message === 'string' && Array.isArray(body.details);
  // The front door's own answers (no route, body too large, rate limit, headers too large) are NestJS-shaped on every face.
  if (nest && [404, 413, 429, 431].includes(answer.status)) return undefined;
  const route = request.path.split('?', 1)[0];
  if (gatewayBases.some((base) => route === base || route.startsWith(`${base}/`)))
    return cosmos ? undefined : 'not the Cosmos error body';
  // Engine.IO answers its own protocol's errors: { code, message }.
  if (route.startsWith('/socket.io/'))
    return Number.isInteger(body?.code) && typeof body.message === 'string'
      ? undefined
      : 'not the Engine.IO error body';
  // The USSD debug route's "session not found" is its debug record with the error in it (docs/api.md).
  const debugRecord =
    answer.status === 404 && typeof body?.debugInfo?.error === 'string' && Array.isArray(body.activeSessions);
  if (route.startsWith('/api/ussd/debug/') && debugRecord) return undefined;
  return nest ? undefined : 'not the { statusCode, message, error } body';
}

t.test('no declared route answers 5xx or a malformed error to fuzzed requests', async (t) => {
  const server = await startOracleServer(t);
  const user = await newUser(server.oracleDid);
  const patterns = await declaredRoutes(server);
  // The gateway's mounts (`/ixo/*`, `/cosmos/*`, ...): its wildcard routes, served by its handler.
  const gatewayBases = server.router.routes
    .filter((route) => route.handler.name === 'gatewayRequest')
    .map((route) => route.pattern.replace(/\/\*$/, ''));
  t.ok(gatewayBases.includes('/ixo'), `gateway mounts: ${[...new Set(gatewayBases)].join(' ')}`);
  // Ids that exist (this user's session, an entity of the local node) lead the fuzzed requests past the lookups.
  const knownIds = [await createSession(server, user), 'did:ixo:entity:0f4e0bd5b3b74e1e8c4f2a8f1b6e9d21'];
  t.ok(patterns.length >= 40, `${patterns.length} routes declared`);
  for (const face of [
    '/api/ussd',
    '/sessions',
    '/messages/:sessionId',
    '/delegation',
    '/ixo/entity/:p',
    '/docs',
    '/health',
    '/api/ussd/sessions',
  ]) {
    t.ok(
      patterns.some((route) => route.pattern === face),
      `${face} is fuzzed`,
    );
  }
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  t.teardown(() => agent.destroy());
  const started = Date.now();
  const statuses = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(requestFor(patterns, user.headers, knownIds), async (request) => {
      if (process.env.FUZZ_VERBOSE) t.comment(describe(request));
      const answer = await send(server.port, agent, request);
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      if (answer.status >= 500) throw new Error(`answered ${answer.status}: ${answer.body.slice(0, 300)}`);
      const problem = errorBodyProblem(gatewayBases, request, answer);
      if (problem) throw new Error(`${answer.status}: ${problem}: ${answer.body.slice(0, 300)}`);
    }),
    {
      seed: SEED,
      numRuns: NUM_RUNS,
      endOnFailure: true,
      // The default report prints whole 20 KB bodies: say what failed, shortly, with the seed to replay it.
      reporter: (run) => {
        if (!run.failed) return;
        const [request] = run.counterexample ?? [];
        throw new Error(
          `seed ${SEED}, run ${run.numRuns}: ${request ? describe(request) : '?'}: ${(run.errorInstance as Error)?.message}`,
        );
      },
    },
  );
  t.comment(
    `${NUM_RUNS} requests in ${Date.now() - started} ms (seed ${SEED}); statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
  );
});
