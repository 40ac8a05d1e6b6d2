// The gateway against a chain node over TLS (a grpc-js node with a certificate of a CA made here by openssl):
// grpcs:// and https:// targets with GATEWAY_GRPC_CA_FILE, the same channel for the routes and the chain client,
// a certificate the gateway cannot verify named in the answer, the log and /health, a node that asks for a client
// certificate (mTLS), and a plaintext target pointed at the TLS port told so.
import type { Test } from 'tap';
import t from 'tap';
import * as grpc from '@grpc/grpc-js';
import { Writable } from 'node:stream';
import { createChainClient } from '../dist/src/app/chain-client.js';
import { pino } from 'pino';
import { H2Channel, tlsContext } from '../dist/src/gateway/grpc-h2.js';
import { Upstream } from '../dist/src/gateway/upstream.js';
import { rawMethod } from './helpers/grpc-raw.js';
import { startTestServer } from './helpers/server.js';
import { makeTestCa } from './helpers/test-ca.js';

const TOKEN_PARAMS = '/ixo.token.v1beta1.Query/Params';
const IID_DOCUMENT = '/ixo.iid.v1beta1.Query/IidDocument';

const ca = makeTestCa(t);

/** A grpc-js node over TLS answering token Params (an empty message: `{}`) and IidDocument (NOT_FOUND); counts calls. */
async function startTlsNode(t: Test, clientCertificates: boolean) {
  const server = new grpc.Server();
  const calls: string[] = [];
  server.addService(
    { Params: rawMethod(TOKEN_PARAMS), IidDocument: rawMethod(IID_DOCUMENT) } as grpc.ServiceDefinition,
    {
      Params: (_call: unknown, callback: grpc.sendUnaryData<Buffer>) => {
        calls.push(TOKEN_PARAMS);
        callback(null, Buffer.alloc(0));
      },
      IidDocument: (_call: unknown, callback: grpc.sendUnaryData<Buffer>) => {
        calls.push(IID_DOCUMENT);
        callback({ code: grpc.status.NOT_FOUND, details: 'no such did' });
      },
    },
  );
  const credentials = grpc.ServerCredentials.createSsl(
    ca.read(ca.caFile),
    [{ cert_chain: ca.read(ca.serverCert), private_key: ca.read(ca.serverKey) }],
    clientCertificates,
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', credentials, (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  t.teardown(() => server.forceShutdown());
  return { port, calls };
}

/** A logger writing JSON lines into `lines`. */
function capturingLogger() {
  const lines: { msg: string; [key: string]: unknown }[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: pino({ level: 'info' }, sink), lines };
}

async function get(url: string) {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

t.test(
  'grpcs:// target with GATEWAY_GRPC_CA_FILE: routes and the chain client over one TLS connection; /health says ready',
  async (t) => {
    const node = await startTlsNode(t, false);
    const server = await startTestServer(t, {
      env: {
        GATEWAY_GRPC_TARGET: `grpcs://localhost:${node.port}`,
        GATEWAY_GRPC_CA_FILE: ca.caFile,
        GATEWAY_DESCRIPTORS: 'bundled',
      },
    });
    const answer = await get(`${server.url}/ixo/token/params`);
    t.equal(answer.status, 200, JSON.stringify(answer.body));
    t.match(answer.body, { params: { ixo1155_contract_code: '0' } }, 'the empty message with its defaults');
    const health = await get(`${server.url}/health`);
    t.match(health.body.gateway, {
      upstream: {
        target: `grpcs://localhost:${node.port}`,
        tls: true,
        state: 'ready',
        address: `localhost:${node.port}`,
      },
    });
    t.notOk(health.body.gateway.upstream.error);
    t.same(node.calls, [TOKEN_PARAMS]);
  },
);

t.test('https:// and the chain client: the same Upstream, TLS verified against the CA file', async (t) => {
  const node = await startTlsNode(t, false);
  const upstream = new Upstream(`https://localhost:${node.port}`, { timeoutMs: 5000, tls: { caFile: ca.caFile } });
  t.teardown(() => upstream.close());
  const chain = createChainClient(upstream);
  t.equal(await chain.iidDocument('did:ixo:nobody'), undefined, 'NOT_FOUND from the TLS node reads as no document');
  t.same(node.calls, [IID_DOCUMENT]);
  t.equal(upstream.state.state, 'ready');
});

t.test('a private CA in NODE_EXTRA_CA_CERTS is trusted, as by Node itself', async (t) => {
  const node = await startTlsNode(t, false);
  const before = process.env.NODE_EXTRA_CA_CERTS;
  process.env.NODE_EXTRA_CA_CERTS = ca.caFile; // read when the channel's TLS context is made, as at a process start
  t.teardown(() => {
    if (before === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
    else process.env.NODE_EXTRA_CA_CERTS = before;
  });
  const upstream = new Upstream(`grpcs://localhost:${node.port}`, { timeoutMs: 5000, tls: {} });
  t.teardown(() => upstream.close());
  t.equal(await createChainClient(upstream).iidDocument('did:ixo:nobody'), undefined, 'the handshake verified');
  t.same(node.calls, [IID_DOCUMENT]);
});

t.test('a certificate the gateway cannot verify: 503 naming it, in the log and in /health', async (t) => {
  const node = await startTlsNode(t, false);
  const { log, lines } = capturingLogger();
  // No GATEWAY_GRPC_CA_FILE: the node's CA is in neither node's roots nor the system store.
  const server = await startTestServer(t, {
    env: { GATEWAY_GRPC_TARGET: `grpcs://localhost:${node.port}`, GATEWAY_DESCRIPTORS: 'auto' },
    log,
  });
  const answer = await get(`${server.url}/ixo/token/params`);
  t.equal(answer.status, 503);
  t.match(
    answer.body.message,
    /^TLS handshake failed: SELF_SIGNED_CERT_IN_CHAIN: self-signed certificate in certificate chain/,
  );
  const health = await get(`${server.url}/health`);
  t.equal(health.status, 200, 'the node is not this service: /health stays 200');
  t.match(health.body.gateway.upstream, { tls: true, state: 'failing', error: /SELF_SIGNED_CERT_IN_CHAIN/ });
  const failure = lines.find((line) => line.msg === 'gateway: cannot reach the chain node');
  t.match(failure, { error: /TLS handshake failed: SELF_SIGNED_CERT_IN_CHAIN/ }, 'logged once with its name');
  t.ok(
    lines.some(
      (line) =>
        line.msg === "gateway: could not read the node's descriptors; all routes come from the bundled .proto files",
    ),
  );
  t.notOk(
    lines.some((line) => /has no descriptors/.test(line.msg)),
    'not the misleading "no descriptors"',
  );
  t.same(node.calls, [], 'nothing reached the node');

  // The name does not match: the certificate is for localhost / node.test / 127.0.0.1 only.
  const wrongName = new H2Channel(
    {
      addresses: [{ host: '127.0.0.1', port: node.port }],
      tls: { secureContext: tlsContext({ caFile: ca.caFile }), servername: 'other.test' },
    },
    { maxReceiveBytes: 1024, keepaliveMs: 0 },
  );
  t.teardown(() => wrongName.close());
  const outcome = await wrongName.call(TOKEN_PARAMS, new Uint8Array(0), {}, 5000);
  t.equal(outcome.code, grpc.status.UNAVAILABLE);
  t.match(
    outcome.details,
    /^TLS handshake failed: ERR_TLS_CERT_ALTNAME_INVALID: Hostname\/IP does not match certificate's altnames: Host: other\.test/,
  );
});

t.test(
  'mTLS: a node that asks for a client certificate is served with GATEWAY_GRPC_CERT_FILE and KEY_FILE',
  async (t) => {
    const node = await startTlsNode(t, true);
    const without = new Upstream(`grpcs://localhost:${node.port}`, { timeoutMs: 5000, tls: { caFile: ca.caFile } });
    t.teardown(() => without.close());
    const refused = await without.call(TOKEN_PARAMS, new Uint8Array(0)).catch((error) => error);
    t.equal(refused.code, grpc.status.UNAVAILABLE, refused.details);
    t.same(node.calls, []);

    const server = await startTestServer(t, {
      env: {
        GATEWAY_GRPC_TARGET: `grpcs://localhost:${node.port}`,
        GATEWAY_GRPC_CA_FILE: ca.caFile,
        GATEWAY_GRPC_CERT_FILE: ca.clientCert,
        GATEWAY_GRPC_KEY_FILE: ca.clientKey,
        GATEWAY_DESCRIPTORS: 'bundled',
      },
    });
    const answer = await get(`${server.url}/ixo/token/params`);
    t.equal(answer.status, 200, JSON.stringify(answer.body));
    t.same(node.calls, [TOKEN_PARAMS]);
    t.throws(
      () => new Upstream(`grpcs://localhost:${node.port}`, { timeoutMs: 5000, tls: { certFile: ca.clientCert } }),
      /GATEWAY_GRPC_CERT_FILE and GATEWAY_GRPC_KEY_FILE go together/,
    );
  },
);

t.test('a plaintext target pointed at the TLS port: told that the node speaks TLS', async (t) => {
  const node = await startTlsNode(t, false);
  const upstream = new Upstream(`localhost:${node.port}`, 5000);
  t.teardown(() => upstream.close());
  const failure = await upstream.call(TOKEN_PARAMS, new Uint8Array(0)).catch((error) => error);
  t.equal(failure.code, grpc.status.UNAVAILABLE);
  t.equal(
    failure.details,
    'Connection to the node closed (if the node speaks TLS, write the target as grpcs://host:port)',
  );
});
