// The gateway's HTTP/2 client with several addresses and connections that go away: an ipv4: list whose first
// address refuses (pick-first failover, and back), a DNS name whose two A records (served here by a real DNS
// server on UDP, named by a dns://server/ target) start with one that refuses, a node that drops an idle
// connection as a call is written (the call goes out on a new connection), and keepalive: none on an idle
// connection unless asked for, doubled after GOAWAY too_many_pings.
import type { Test } from 'tap';
import t from 'tap';
import http2 from 'node:http2';
import { createSocket } from 'node:dgram';
import { connect, createServer, type Socket } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { H2Channel } from '../dist/src/gateway/h2/channel.js';
import { parseTarget } from '../dist/src/gateway/grpc-h2.js';
import { Upstream } from '../dist/src/gateway/upstream.js';
import { rawMethod } from './helpers/grpc-raw.js';
import { startTestServer } from './helpers/server.js';

const { status } = grpc;

/** A grpc-js node whose Echo answers its request prefixed with `name`, on host:port (0: any free port). */
async function startGrpcNode(t: Test, name: string, host = '127.0.0.1', port = 0) {
  const server = new grpc.Server();
  server.addService(
    { Echo: rawMethod('/t.S/Echo'), Params: rawMethod('/ixo.token.v1beta1.Query/Params') } as grpc.ServiceDefinition,
    {
      Echo: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) =>
        callback(null, Buffer.concat([Buffer.from(`${name}:`), call.request])),
      Params: (_call: unknown, callback: grpc.sendUnaryData<Buffer>) => callback(null, Buffer.alloc(0)),
    },
  );
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host}:${port}`, grpc.ServerCredentials.createInsecure(), (error, p) =>
      error ? reject(error) : resolve(p),
    ),
  );
  t.teardown(() => server.forceShutdown());
  return { server, port: bound };
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** A DNS server on UDP answering A queries for `records`' names (AAAA: no records), counting queries. */
async function startDnsServer(t: Test, records: Record<string, string[]>) {
  const socket = createSocket('udp4');
  const queries: string[] = [];
  socket.on('message', (query, peer) => {
    let at = 12;
    const labels: string[] = [];
    while (query[at] !== 0) {
      labels.push(query.subarray(at + 1, at + 1 + query[at]).toString('latin1'));
      at += 1 + query[at];
    }
    const questionEnd = at + 5;
    const name = labels.join('.').toLowerCase();
    const type = query.readUInt16BE(at + 1);
    queries.push(`${name} ${type === 1 ? 'A' : type === 28 ? 'AAAA' : type}`);
    const addresses = type === 1 ? (records[name] ?? []) : [];
    const header = Buffer.alloc(12);
    header.writeUInt16BE(query.readUInt16BE(0), 0); // id
    header.writeUInt16BE(records[name] ? 0x8180 : 0x8183, 2); // response, recursion; NXDOMAIN for unknown names
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(addresses.length, 6);
    const answers = addresses.map((address) => {
      const answer = Buffer.alloc(16);
      answer.writeUInt16BE(0xc00c, 0); // the question's name
      answer.writeUInt16BE(1, 2); // A
      answer.writeUInt16BE(1, 4); // IN
      answer.writeUInt32BE(5, 6); // TTL
      answer.writeUInt16BE(4, 10);
      for (const [i, octet] of address.split('.').entries()) answer[12 + i] = Number(octet);
      return answer;
    });
    socket.send(Buffer.concat([header, query.subarray(12, questionEnd), ...answers]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  t.teardown(() => socket.close());
  return { server: `127.0.0.1:${socket.address().port}`, queries };
}

t.test(
  'ipv4: with two addresses: the first refuses, the second serves; when it goes, the first (now up) does',
  async (t) => {
    const [first, second] = [await freePort(), await startGrpcNode(t, 'second')];
    const target = `ipv4:127.0.0.1:${first},127.0.0.1:${second.port}`;
    t.same(parseTarget(target)?.addresses.length, 2);
    const upstream = new Upstream(target, 5000);
    t.teardown(() => upstream.close());
    const answer = await upstream.call('/t.S/Echo', Buffer.from('a'));
    t.equal(answer.bytes.toString(), 'second:a', 'the refused first address cost no failure');
    t.match(upstream.state, { state: 'ready', address: `127.0.0.1:${second.port}` });
    t.equal(
      (await upstream.call('/t.S/Echo', Buffer.from('b'))).bytes.toString(),
      'second:b',
      'pick-first: it stays there',
    );

    second.server.forceShutdown();
    await startGrpcNode(t, 'first', '127.0.0.1', first);
    let after: { bytes: Buffer } | undefined;
    for (let tries = 0; tries < 3 && after?.bytes.toString() !== 'first:c'; tries++) {
      after = await upstream.call('/t.S/Echo', Buffer.from('c')).catch((error) => error);
    }
    t.equal(after?.bytes?.toString(), 'first:c', 'after the drop the round starts again from the first address');
  },
);

t.test(
  'a DNS name with two A records, the first refusing: served by the second, through the DNS server the target names',
  async (t) => {
    const node = await startGrpcNode(t, 'node');
    // 127.0.0.2 is a loopback address too, with nothing listening on the node's port.
    const dns = await startDnsServer(t, { 'node.test': ['127.0.0.2', '127.0.0.1'] });
    const upstream = new Upstream(`dns://${dns.server}/node.test:${node.port}`, 5000);
    t.teardown(() => upstream.close());
    const answer = await upstream.call('/t.S/Echo', Buffer.from('x'));
    t.equal(answer.bytes.toString(), 'node:x');
    t.ok(dns.queries.includes('node.test A'), dns.queries.join());
    t.match(upstream.state, { state: 'ready', address: `node.test:${node.port}` });

    // Through the server's configuration too, and a name the DNS server does not know fails cleanly.
    const server = await startTestServer(t, {
      env: { GATEWAY_GRPC_TARGET: `dns://${dns.server}/node.test:${node.port}`, GATEWAY_DESCRIPTORS: 'bundled' },
    });
    const res = await fetch(`${server.url}/ixo/token/params`);
    t.equal(res.status, 200);
    const unknown = new Upstream(`dns://${dns.server}/nowhere.test:${node.port}`, 5000);
    t.teardown(() => unknown.close());
    await t.rejects(unknown.call('/t.S/Echo', Buffer.from('x')), {
      code: status.UNAVAILABLE,
      details: /^No connection established: .*nowhere\.test/,
    });
  },
);

t.test(
  'a node that drops an idle connection as a call is written: the call goes out on a new connection',
  async (t) => {
    const node = await startGrpcNode(t, 'node');
    // A proxy in front of the node: its first connection is cut (no GOAWAY) the moment the second call's bytes arrive.
    const connections: Socket[] = [];
    const proxy = createServer((client) => {
      connections.push(client);
      const index = connections.length;
      const upstream = connect(node.port, '127.0.0.1');
      let seen = 0;
      client.on('data', (chunk) => {
        seen++;
        if (index === 1 && seen > 1 && chunk.includes('/t.S/Echo')) {
          client.destroy();
          upstream.destroy();
          return;
        }
        upstream.write(chunk);
      });
      upstream.pipe(client);
      client.on('error', () => {});
      upstream.on('error', () => {});
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    t.teardown(() => {
      for (const socket of connections) socket.destroy();
      proxy.close();
    });
    const channel = new H2Channel(
      { host: '127.0.0.1', port: (proxy.address() as { port: number }).port },
      { maxReceiveBytes: 1024, keepaliveMs: 0 },
    );
    t.teardown(() => channel.close());
    t.equal(
      (await channel.call('/t.S/Other', Buffer.from('1'), {}, 5000)).code,
      status.UNIMPLEMENTED,
      'the first call is answered on the first connection',
    );
    const outcome = await channel.call('/t.S/Echo', Buffer.from('2'), {}, 5000);
    t.equal(outcome.code, status.OK, outcome.details);
    t.equal(outcome.bytes?.toString(), 'node:2');
    t.equal(connections.length, 2, 'sent again on a second connection');
  },
);

t.test(
  'keepalive: no PINGs on an idle connection unless asked for; GOAWAY too_many_pings doubles the interval',
  async (t) => {
    const pings: number[] = [];
    const server = http2.createServer();
    const sessions: http2.ServerHttp2Session[] = [];
    server.on('session', (session) => {
      sessions.push(session);
      const index = sessions.length;
      // As grpc-go with its default policy: pings on a connection without calls earn a GOAWAY too_many_pings.
      session.on('ping', () => {
        pings.push(index);
        session.goaway(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM, 0, Buffer.from('too_many_pings'));
      });
    });
    server.on('stream', (stream) => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(Buffer.from([0, 0, 0, 0, 0]));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.teardown(() => {
      for (const session of sessions) session.destroy();
      server.close();
    });
    const port = (server.address() as { port: number }).port;

    const quiet = new H2Channel({ host: '127.0.0.1', port }, { maxReceiveBytes: 1024, keepaliveMs: 0 });
    t.teardown(() => quiet.close());
    t.equal((await quiet.call('/a', Buffer.alloc(0), {}, 5000)).code, status.OK);
    await new Promise((resolve) => setTimeout(resolve, 300));
    t.same(pings, [], 'keepaliveMs 0: no PING at all');

    const pinging = new H2Channel({ host: '127.0.0.1', port }, { maxReceiveBytes: 1024, keepaliveMs: 40 });
    t.teardown(() => pinging.close());
    t.equal((await pinging.call('/a', Buffer.alloc(0), {}, 5000)).code, status.OK);
    while (pinging.state.keepaliveMs === 40) await new Promise((resolve) => setTimeout(resolve, 10));
    t.equal(pinging.state.keepaliveMs, 80, 'doubled after GOAWAY too_many_pings');
    t.equal(
      (await pinging.call('/a', Buffer.alloc(0), {}, 5000)).code,
      status.OK,
      'the next call dials a new connection',
    );
    while (pinging.state.keepaliveMs === 80) await new Promise((resolve) => setTimeout(resolve, 10));
    t.equal(pinging.state.keepaliveMs, 160, 'and again on the next connection');
  },
);
