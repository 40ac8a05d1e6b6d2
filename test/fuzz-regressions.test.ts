// One test per distinct cause the route fuzzer (fuzz-routes.test.ts) found: each answered 500, or broke the
// connection, before its fix.
import net from 'node:net';
import t from 'tap';
import { generateKey, mintDelegation } from '../dist/src/tools/mint-ucan.js';
import { sharedOracleServer } from './helpers/oracle.js';

// Each test reads or probes on its own and writes nothing another reads: one server (with a known oracle key,
// for the DID test) serves them all.
const shared = sharedOracleServer(t);

const ENTITY = 'did:ixo:entity:0f4e0bd5b3b74e1e8c4f2a8f1b6e9d21';

async function get(url: string, init?: RequestInit) {
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

function isCosmosError(body: any, code: number): boolean {
  return body?.code === code && typeof body.message === 'string' && Array.isArray(body.details);
}

/** Sends raw bytes on one connection; resolves with everything read until the server closes or `settle` ms pass quietly. */
function rawExchange(port: number, bytes: string, settle = 300): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    let received = '';
    let timer: NodeJS.Timeout;
    const done = () => {
      socket.destroy();
      resolve(received);
    };
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      clearTimeout(timer);
      timer = setTimeout(done, settle);
    });
    socket.on('end', done);
    socket.on('error', reject);
  });
}

t.test('gateway query keys named like Object.prototype members are unknown fields, not a crash', async (t) => {
  const server = await shared();
  for (const key of [
    'hasOwnProperty',
    'valueOf',
    '__defineGetter__',
    'isPrototypeOf',
    'prototype',
    '__proto__',
    'constructor',
    'toString',
  ]) {
    const { status, body } = await get(`${server.url}/ixo/entity?${key}=x`);
    t.equal(status, 200, `?${key}=x is ignored like any unknown key`);
    t.ok(Array.isArray(body.entities), `?${key}=x lists entities`);
    const nested = await get(`${server.url}/ixo/entity?pagination.${key}=x`);
    t.equal(nested.status, 200, `?pagination.${key}=x is ignored too`);
  }
});

t.test('oversized keys never reach LMDB: 404 for an id, 400 for a pagination key, in the Cosmos body', async (t) => {
  const server = await shared();
  const long = 'a'.repeat(5000);
  const entity = await get(`${server.url}/ixo/entity/${long}`);
  t.equal(entity.status, 404, 'an id over the key limit is not found');
  t.ok(isCosmosError(entity.body, 5), 'NOT_FOUND body');
  const justOver = await get(`${server.url}/ixo/entity/${'b'.repeat(1990)}`);
  t.equal(justOver.status, 404, "an id just over LMDB's 1978-byte key is not found either");
  const member = await get(`${server.url}/ixo/claims/collection/${long}/members`);
  t.equal(member.status, 200, 'a list under an oversized prefix is empty');
  t.same(Object.values(member.body).filter(Array.isArray), [[]], 'no members');
  const page = await get(`${server.url}/ixo/entity?pagination.key=${long}`);
  t.equal(page.status, 400, 'a pagination key over the limit is INVALID_ARGUMENT');
  t.ok(isCosmosError(page.body, 3), 'INVALID_ARGUMENT body');
  const ok = await get(`${server.url}/ixo/entity/${encodeURIComponent(ENTITY)}`);
  t.equal(ok.status, 200, 'ordinary ids still resolve');
});

t.test('the USSD debug route answers not found for an id over the key limit', async (t) => {
  const server = await shared();
  const { status, body } = await get(`${server.url}/api/ussd/debug/${'é'.repeat(3000)}`);
  t.equal(status, 404);
  t.equal(body.debugInfo.error, 'Session not found');
});

t.test('HEAD is answered with headers only, and the connection serves the next request', async (t) => {
  const server = await shared();
  const answer = await rawExchange(
    server.port,
    'HEAD /nope HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n',
  );
  const [head, rest] = answer.split('\r\n\r\n', 2);
  t.match(head, /^HTTP\/1\.1 404 /, 'HEAD answered');
  t.match(head, /Content-Length: 0/i, 'without a body');
  t.match(rest, /^HTTP\/1\.1 200 /, 'the next request on the connection is answered, not read as a body');
});

t.test('an issuer DID whose method is named like an Object.prototype member is an unsupported method', async (t) => {
  const server = await shared();
  // DID methods are lower case: `constructor` is the one Object.prototype member that is a valid method name.
  const issuer = (await generateKey()).withDID('did:constructor:abc');
  const raw = await mintDelegation({ issuer, audience: server.oracleDid, ttlSeconds: 600 });
  const res = await get(`${server.url}/sessions`, { headers: { 'x-ucan-delegation': raw } });
  t.equal(res.status, 401);
  t.match(res.body.reason, /did:constructor method is not supported/, 'not a resolver found on the prototype');
});

t.test('headers and path parameters named like Object.prototype members are plain data', async (t) => {
  const server = await shared();
  const res = await fetch(`${server.url}/api/ussd/debug/constructor`, {
    headers: { constructor: 'x', hasOwnProperty: 'y', __proto__: 'z' } as Record<string, string>,
  });
  t.equal(res.status, 404);
  t.equal(((await res.json()) as { sessionId: unknown }).sessionId, 'constructor');
});
