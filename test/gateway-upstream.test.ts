// The gateway against a separate @grpc/grpc-js node started here: it knows the test.kitchen.v1 module
// only through the node's cosmos.reflection.v1 FileDescriptors. Every gRPC status code, a slow call
// past the deadline, block height metadata both ways, identical concurrent requests sharing one call,
// an unreachable node.
import t from 'tap';
import type { Test } from 'tap';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { loadConfig } from '../dist/src/app/config.js';
import { createLogger } from '../dist/src/base/log.js';
import { openStore } from '../dist/src/store/env.js';
import { fileDescriptorsOf } from '../dist/src/gateway/descriptors.js';
import { serviceDefinitionOf } from '../dist/src/gateway/grpc-service.js';
import { parseTarget } from '../dist/src/gateway/grpc-h2.js';
import { createGatewayFace } from '../dist/src/gateway/index.js';
import { Upstream } from '../dist/src/gateway/upstream.js';
import { loadProtoFiles, PROTO_DIR, protobuf } from '../dist/src/gateway/proto-root.js';
import { startTestServer } from './helpers/server.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/gateway/', import.meta.url));
const root = loadProtoFiles(['kitchen.proto', 'cosmos/reflection/v1/reflection.proto'], [FIXTURES, PROTO_DIR]);
const CountResponse = root.lookupType('test.kitchen.v1.CountResponse');
const HEIGHT = 'x-cosmos-block-height';

const DEFAULT_SCALARS =
  '{"d":0,"f":0,"i32":0,"i64":"0","u32":0,"u64":"0","s32":0,"s64":"0","fx32":0,"fx64":"0","sfx32":0,"sfx64":"0","b":false,"s":"","by":null}';
const GOLDEN_KITCHEN = (name: string) =>
  '{"snake_case_name":"snake","camelCaseName":"camel",' +
  '"scalars":{"d":2.5,"f":0.25,"i32":-1,"i64":"-9007199254740993","u32":3,"u64":"9007199254740993","s32":-2,"s64":"4","fx32":5,"fx64":"6","sfx32":-7,"sfx64":"-8","b":true,"s":"ß","by":"Ynl0ZXM="},' +
  '"color":"GREEN","colors":["RED","GREEN"],"at":"2024-05-31T16:08:37.120Z","took":"90s",' +
  '"any":{"@type":"/test.kitchen.v1.CountResponse","key":"k","calls":2},' +
  `"name":${JSON.stringify(name)},"tags":["a","b"],"counts":{"x":"9007199254740993"},"child":null,"wrapped":"-1","extra":null,"blobs":[],` +
  `"list":[${DEFAULT_SCALARS}]}`;

/** A chain-like node for test.kitchen.v1.Query; counts the calls of Count per key. */
async function startTestNode(t: Test) {
  const calls = new Map<string, number>();
  const heightOf = (call: grpc.ServerUnaryCall<any, any>) => String(call.metadata.get(HEIGHT)[0] ?? '');
  const withHeight = (call: grpc.ServerUnaryCall<any, any>) => {
    const metadata = new grpc.Metadata();
    metadata.set(HEIGHT, heightOf(call) || '77');
    call.sendMetadata(metadata);
  };
  const echo: grpc.handleUnaryCall<any, any> = (call, callback) => {
    withHeight(call);
    callback(null, { ...call.request.toJSON(), height_seen: heightOf(call) });
  };
  const server = new grpc.Server();
  const query: Record<string, grpc.MethodDefinition<any, any>> = {
    ...serviceDefinitionOf(root.lookupService('test.kitchen.v1.Query')),
  };
  // Field 1, length 255, then nothing: not a decodable message.
  query.Garbage = { ...query.Garbage, responseSerialize: () => Buffer.from([0x0a, 0xff, 0x01]) };
  server.addService(query, {
    Kitchen: (call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<any>) => {
      withHeight(call);
      callback(null, {
        snake_case_name: 'snake',
        camelCaseName: 'camel',
        scalars: {
          d: 2.5,
          f: 0.25,
          i32: -1,
          i64: '-9007199254740993',
          u32: 3,
          u64: '9007199254740993',
          s32: -2,
          s64: '4',
          fx32: 5,
          fx64: '6',
          sfx32: -7,
          sfx64: '-8',
          b: true,
          s: 'ß',
          by: Buffer.from('bytes'),
        },
        color: 'GREEN',
        colors: ['RED', 'GREEN'],
        at: { seconds: 1717171717, nanos: 120_000_000 },
        took: { seconds: 90 },
        any: {
          type_url: '/test.kitchen.v1.CountResponse',
          value: CountResponse.encode({ key: 'k', calls: 2 }).finish(),
        },
        name: call.request.id,
        tags: ['a', 'b'],
        counts: { x: '9007199254740993' },
        wrapped: { value: '-1' },
        list: [{}],
      });
    },
    Echo: echo,
    EchoPath: echo,
    EchoNested: echo,
    Status: (call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<any>) => {
      callback({ code: call.request.code, details: call.request.message || `status ${call.request.code}` });
    },
    Slow: (call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<any>) => {
      setTimeout(() => callback(null, { name: 'slow' }), call.request.ms);
    },
    Count: (call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<any>) => {
      const key = `${call.request.key}@${heightOf(call)}`;
      const count = (calls.get(key) ?? 0) + 1;
      calls.set(key, count);
      // Held a while, so that requests sent together are all in flight at once.
      setTimeout(() => callback(null, { key: call.request.key, calls: count }), 300);
    },
    TrailerHeight: (_call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<any>) => {
      const trailer = new grpc.Metadata();
      trailer.set(HEIGHT, '4242');
      callback(null, { key: 'trailer' }, trailer);
    },
    Garbage: (_call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<any>) => callback(null, {}),
    // Missing is declared with a route but not implemented: the node answers UNIMPLEMENTED.
  });
  const reflection = new protobuf.Writer();
  for (const file of fileDescriptorsOf(root)) reflection.uint32(10).bytes(file);
  const response = Buffer.from(reflection.finish());
  const definition = serviceDefinitionOf(root.lookupService('cosmos.reflection.v1.ReflectionService'));
  server.addService(
    { FileDescriptors: { ...definition.FileDescriptors, responseSerialize: (bytes: Buffer) => bytes } },
    { FileDescriptors: (_call: unknown, callback: grpc.sendUnaryData<Buffer>) => callback(null, response) },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  t.teardown(() => server.forceShutdown());
  return { target: `127.0.0.1:${port}`, calls };
}

async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

async function get(base: string, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(base + path, { headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined };
}

t.test('a gRPC node whose routes come from its FileDescriptors', async (t) => {
  const node = await startTestNode(t);
  const server = await startTestServer(t, {
    env: { GATEWAY_GRPC_TARGET: node.target, GATEWAY_DESCRIPTORS: 'reflection', GATEWAY_TIMEOUT_MS: '500' },
  });
  const call = (path: string, headers?: Record<string, string>) => get(server.url, path, headers);

  t.test('golden JSON of every field kind, through HTTP, on both bindings of the method', async (t) => {
    const res = await call('/test/kitchen/did:ixo:entity:abc');
    t.equal(res.status, 200);
    t.equal(res.text, GOLDEN_KITCHEN('did:ixo:entity:abc'));
    t.equal((await call('/test/kitchen-alias/k2')).text, GOLDEN_KITCHEN('k2'));
    t.equal((await call('/ixo/entity/params')).status, 404, "only the node's own modules are routed");
  });

  t.test('query parameters reach the node typed', async (t) => {
    const res = await call(
      '/test/echo/did:ixo:entity:abc?scalars.u64=0x10&scalars.i32=-3&nums=1&nums=2&words=w&color=GREEN&colors=1&colors=GREEN' +
        '&page.key=-_8&page.countTotal=t&at=2024-01-02T03:04:05Z&took=2.5s&flag=false&second=pick&id=ignored&unknown=1',
    );
    t.equal(res.status, 200);
    const echo = res.body;
    t.equal(echo.id, 'did:ixo:entity:abc');
    t.equal(echo.scalars.u64, '16');
    t.equal(echo.scalars.i32, -3);
    t.same(echo.nums, [1, 2]);
    t.same(echo.colors, ['RED', 'GREEN']);
    t.same(echo.page, { key: '+/8=', limit: '0', count_total: true });
    t.equal(echo.at, '2024-01-02T03:04:05Z');
    t.equal(echo.took, '2.500s');
    t.equal(echo.flag, false);
    t.equal(echo.second, 'pick');
    t.notOk('first' in echo);
  });

  t.test('bad query and path values: 400 INVALID_ARGUMENT before any upstream call', async (t) => {
    for (const query of [
      'nums=x',
      'color=BLUE',
      'scalars.b=yes',
      'page.limit=-1',
      'at=today',
      'first=a&second=b',
      'page.key=%%%',
    ]) {
      const res = await call(`/test/echo/x?${query}`);
      t.equal(res.status, 400, query);
      t.equal(res.body.code, 3, query);
      t.same(res.body.details, [], query);
    }
    t.equal((await call('/test/nested/1.5/RED')).status, 400);
    t.equal((await call('/test/status/abc')).status, 400);
  });

  t.test('{path=**} and nested path fields', async (t) => {
    t.equal((await call('/test/files/a/b/c.txt')).body.path, 'a/b/c.txt');
    const nested = (await call('/test/nested/-5/RED?scalars.i64=9&color=GREEN')).body;
    t.equal(nested.scalars.i64, '-5');
    t.equal(nested.color, 'RED');
  });

  t.test('every gRPC status code maps to its HTTP status with the Cosmos error body', async (t) => {
    const table: [number, number][] = [
      [1, 408],
      [2, 500],
      [3, 400],
      [4, 504],
      [5, 404],
      [6, 409],
      [7, 403],
      [8, 429],
      [9, 400],
      [10, 409],
      [11, 400],
      [12, 501],
      [13, 500],
      [14, 503],
      [15, 500],
      [16, 401],
    ];
    for (const [code, status] of table) {
      const res = await call(`/test/status/${code}?message=boom%20${code}`);
      t.equal(res.status, status, `gRPC ${code}`);
      t.same(res.body, { code, message: `boom ${code}`, details: [] }, `gRPC ${code}`);
      t.match(res.headers.get('content-type'), /^application\/json/);
    }
  });

  t.test('a method the node does not implement: 501', async (t) => {
    const res = await call('/test/missing');
    t.equal(res.status, 501);
    t.equal(res.body.code, 12);
  });

  t.test('an answer that does not decode as the declared type: 500 INTERNAL in the Cosmos shape', async (t) => {
    const res = await call('/test/garbage');
    t.equal(res.status, 500);
    t.equal(res.body.code, 13);
    t.match(res.body.message, /cannot decode the node's test\.kitchen\.v1\.CountResponse/);
    t.same(res.body.details, []);
  });

  t.test('past GATEWAY_TIMEOUT_MS: 504 DEADLINE_EXCEEDED', async (t) => {
    const res = await call('/test/slow/3000');
    t.equal(res.status, 504);
    t.equal(res.body.code, 4);
    t.equal((await call('/test/slow/0')).status, 200);
  });

  t.test('block height: request header to metadata, metadata (headers or trailers) to response header', async (t) => {
    const asked = await call('/test/echo/h', { [HEIGHT]: '123' });
    t.equal(asked.body.height_seen, '123');
    t.equal(asked.headers.get(HEIGHT), '123');
    const latest = await call('/test/echo/h');
    t.equal(latest.body.height_seen, '');
    t.equal(latest.headers.get(HEIGHT), '77');
    t.equal((await call('/test/trailer-height')).headers.get(HEIGHT), '4242');
    t.equal((await call('/test/echo/h', { [HEIGHT]: '12a' })).status, 400);
  });

  t.test('identical requests in flight share one upstream call', async (t) => {
    const together = await Promise.all(Array.from({ length: 12 }, () => call('/test/count/same')));
    t.ok(together.every((res) => res.status === 200 && res.text === together[0].text));
    t.equal(node.calls.get('same@'), 1, 'twelve requests, one call');
    t.same(together[0].body, { key: 'same', calls: 1 });

    const mixed = await Promise.all([
      call('/test/count/mixed'),
      call('/test/count/mixed', { [HEIGHT]: '5' }),
      call('/test/count/mixed?x=1'),
      call('/test/count/mixed'),
    ]);
    t.ok(mixed.every((res) => res.status === 200));
    t.equal(node.calls.get('mixed@'), 2, 'a different query string is a different request');
    t.equal(node.calls.get('mixed@5'), 1, 'a different height is a different request');

    await call('/test/count/same');
    t.equal(node.calls.get('same@'), 2, 'shared while in flight only, not cached');
  });
});

t.test(
  'a node on a unix socket (GATEWAY_GRPC_TARGET=unix:path): calls, statuses and heights as over TCP',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'sar-gateway-sock-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const server = new grpc.Server();
    server.addService(serviceDefinitionOf(root.lookupService('test.kitchen.v1.Query')), {
      Count: (call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<any>) => {
        const metadata = new grpc.Metadata();
        metadata.set(HEIGHT, String(call.metadata.get(HEIGHT)[0] ?? '9'));
        call.sendMetadata(metadata);
        callback(null, { key: call.request.key, calls: 1 });
      },
      Status: (call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<any>) =>
        callback({ code: call.request.code, details: 'ünïcode details' }),
    });
    const target = `unix:${join(dir, 'node.sock')}`;
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(target, grpc.ServerCredentials.createInsecure(), (error) => (error ? reject(error) : resolve())),
    );
    t.teardown(() => server.forceShutdown());
    const upstream = new Upstream(target, 2000);
    t.teardown(() => upstream.close());
    const CountRequest = root.lookupType('test.kitchen.v1.CountRequest');
    const answer = await upstream.call(
      '/test.kitchen.v1.Query/Count',
      CountRequest.encode({ key: 'sock' }).finish(),
      '42',
    );
    t.same(CountResponse.toObject(CountResponse.decode(answer.bytes)), { key: 'sock', calls: 1 });
    t.equal(answer.height, '42');
    const StatusRequest = root.lookupType('test.kitchen.v1.StatusRequest');
    await t.rejects(upstream.call('/test.kitchen.v1.Query/Status', StatusRequest.encode({ code: 5 }).finish()), {
      code: 5,
      details: 'ünïcode details',
    });
    await t.rejects(upstream.call('/test.kitchen.v1.Query/Nope', new Uint8Array(0)), { code: 12 });
  },
);

t.test('an unreachable node: 503 UNAVAILABLE; reflection mode refuses to start without descriptors', async (t) => {
  const port = await closedPort();
  const server = await startTestServer(t, { env: { GATEWAY_GRPC_TARGET: `127.0.0.1:${port}` } });
  const res = await get(server.url, '/ixo/token/params');
  t.equal(res.status, 503);
  t.equal(res.body.code, 14);
  t.same(res.body.details, []);

  const dataDir = mkdtempSync(join(tmpdir(), 'sar-gateway-'));
  const store = openStore(dataDir);
  t.teardown(async () => {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const config = loadConfig({
    DATA_DIR: dataDir,
    GATEWAY_GRPC_TARGET: `127.0.0.1:${port}`,
    GATEWAY_DESCRIPTORS: 'reflection',
    GATEWAY_TIMEOUT_MS: '2000',
  });
  // The face needs neither the actor runtime, the CPU pool nor record families.
  const face = await createGatewayFace({
    config,
    store,
    records: undefined as never,
    log: createLogger('silent'),
    actors: undefined as never,
    cpuPool: undefined as never,
  });
  await t.rejects(
    face.start!(),
    /GATEWAY_DESCRIPTORS=reflection: \/cosmos\.reflection\.v1\.ReflectionService\/FileDescriptors on 127\.0\.0\.1:\d+ failed/,
  );
});

t.test('configuration errors name the variable', async (t) => {
  t.throws(() => loadConfig({ GATEWAY_GRPC_TARGET: 'no port' }), /GATEWAY_GRPC_TARGET/);
  t.throws(
    () => loadConfig({ GATEWAY_GRPC_TARGET: 'ipv4:10.0.0.1:9090,' }),
    /GATEWAY_GRPC_TARGET=.*: must be host:port, grpcs:\/\/host:port \(TLS\)/,
  );
  t.throws(() => loadConfig({ GATEWAY_GRPC_TARGET: 'grpcs://node:99999' }), /GATEWAY_GRPC_TARGET/);
  t.throws(() => loadConfig({ GATEWAY_GRPC_TARGET: 'ftp://node:21' }), /GATEWAY_GRPC_TARGET/);
  t.throws(() => loadConfig({ GATEWAY_GRPC_TARGET: 'xds:///node' }), /GATEWAY_GRPC_TARGET/);
  const plain = (host: string, port: number, extra = {}) => ({
    addresses: [{ host, port }],
    tls: false,
    authority: host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`,
    ...extra,
  });
  for (const [target, parsed] of [
    ['node:9090', plain('node', 9090)],
    ['dns:///node:9090', plain('node', 9090)],
    ['dns://10.0.0.53/node:9090', plain('node', 9090, { dnsServer: '10.0.0.53' })],
    ['dns://127.0.0.1:5353/node:9090', plain('node', 9090, { dnsServer: '127.0.0.1:5353' })],
    ['[::1]:9090', plain('::1', 9090)],
    ['ipv4:10.0.0.1:9090', plain('10.0.0.1', 9090)],
    [
      'ipv4:10.0.0.1:9090,10.0.0.2:9091',
      {
        addresses: [
          { host: '10.0.0.1', port: 9090 },
          { host: '10.0.0.2', port: 9091 },
        ],
        tls: false,
        authority: '10.0.0.1:9090',
      },
    ],
    [
      'ipv6:[::1]:9090,[::2]',
      {
        addresses: [
          { host: '::1', port: 9090 },
          { host: '::2', port: 443 },
        ],
        tls: false,
        authority: '[::1]:9090',
      },
    ],
    [
      'grpcs://impacthub-grpc.lavenderfive.com:443',
      {
        addresses: [{ host: 'impacthub-grpc.lavenderfive.com', port: 443 }],
        tls: true,
        authority: 'impacthub-grpc.lavenderfive.com:443',
      },
    ],
    [
      'https://node.example',
      { addresses: [{ host: 'node.example', port: 443 }], tls: true, authority: 'node.example:443' },
    ],
    ['http://node:9090', plain('node', 9090)],
    ['unix:/run/node.sock', { addresses: [{ socketPath: '/run/node.sock' }], tls: false, authority: 'localhost' }],
    ['unix:///run/node.sock', { addresses: [{ socketPath: '/run/node.sock' }], tls: false, authority: 'localhost' }],
  ] as const) {
    t.same(parseTarget(target), parsed, target);
    t.equal(loadConfig({ GATEWAY_GRPC_TARGET: target }).GATEWAY_GRPC_TARGET, target);
  }
  t.equal(loadConfig({}).GATEWAY_MAX_RESPONSE_BYTES, 4 * 1024 * 1024);
  t.equal(loadConfig({}).GATEWAY_KEEPALIVE_MS, 0, 'no keepalive pings unless asked for');
  t.throws(
    () => loadConfig({ GATEWAY_KEEPALIVE_MS: '500' }),
    /GATEWAY_KEEPALIVE_MS=.*: must be 0 \(off\) or at least 10000/,
  );
  t.throws(() => loadConfig({ GATEWAY_GRPC_CA_FILE: '/nonexistent/ca.pem' }), /GATEWAY_GRPC_CA_FILE=.*no such file/);
  t.throws(() => loadConfig({ GATEWAY_DESCRIPTORS: 'grpcurl' }), /GATEWAY_DESCRIPTORS/);
  t.throws(() => loadConfig({ GATEWAY_TIMEOUT_MS: '0' }), /GATEWAY_TIMEOUT_MS/);
  t.throws(() => loadConfig({ GATEWAY_PREFIX: '/a b' }), /GATEWAY_PREFIX/);
  t.equal(loadConfig({ GATEWAY_PREFIX: 'api/protocol/' }).GATEWAY_PREFIX, '/api/protocol');
  t.same(loadConfig({ GATEWAY_API_KEYS: ' a, ,b ' }).GATEWAY_API_KEYS, ['a', 'b']);
  t.equal(loadConfig({}).GATEWAY_GRPC_TARGET, undefined);
});
