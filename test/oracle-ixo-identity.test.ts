// did:ixo identities resolved through the chain's iid module: the keys of an IidDocument, the resolver over
// the embedded local query node (gRPC on loopback), and users whose issuer is a did:ixo authenticating over
// HTTP, in WebSocket handshakes (native and Socket.IO), and storing delegations.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { base58btc } from '@ucanto/core';
import { didKeyPublicKey } from '../dist/src/oracle/auth/did.js';
import { AuthFailure } from '../dist/src/oracle/auth/failure.js';
import { createChainClient } from '../dist/src/app/chain-client.js';
import { createIxoDidResolver, ed25519KeysOf } from '../dist/src/oracle/auth/ixo-resolver.js';
import { LocalQueryNode } from '../dist/src/gateway/local-node/server.js';
import { Upstream } from '../dist/src/gateway/upstream.js';
import { openStore } from '../dist/src/store/env.js';
import { generateKey, mintDelegation, mintInvocation } from '../dist/src/tools/mint-ucan.js';
import { closeAll, NativeClient, SocketIoClient } from './helpers/events.js';
import { call, sharedOracleServer } from './helpers/oracle.js';
import { impostorSigner, ixoUserSigner, IXO_USER_DID } from './helpers/ixo-user.js';

const ENTITY_WITH_ED25519 = 'did:ixo:entity:0f4e0bd5b3b74e1e8c4f2a8f1b6e9d21';
const ENTITY_SECP_ONLY = 'did:ixo:entity:5c3e8f1a2d9b4c7e8f0a1b2c3d4e5f60';
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
/** The HTTP and WebSocket tests share one server: each asserts only on what it made itself (its sessions, its delegation). */
const oracle = sharedOracleServer(t);

t.test('ed25519KeysOf: multikey and bare base58btc keys of Ed25519 methods, nothing else', async (t) => {
  const key = await generateKey();
  const raw = didKeyPublicKey(key.did());
  const keys = ed25519KeysOf({
    verificationMethod: [
      { type: 'EcdsaSecp256k1VerificationKey2019', publicKeyMultibase: key.did().slice('did:key:'.length) },
      { type: 'Ed25519VerificationKey2020', publicKeyMultibase: key.did().slice('did:key:'.length) },
      { type: 'Ed25519VerificationKey2018', publicKeyMultibase: base58btc.encode(raw) },
      { type: 'Ed25519VerificationKey2018', publicKeyMultibase: `m${Buffer.from(raw).toString('base64')}` },
      { type: 'Ed25519VerificationKey2018', publicKeyMultibase: 'z0OIl' },
      { type: 'Ed25519VerificationKey2018', publicKeyMultibase: base58btc.encode(raw.subarray(0, 31)) },
      { type: 'Ed25519VerificationKey2018' },
    ],
  });
  t.same(
    keys.map(hex),
    [hex(raw), hex(raw)],
    'the multikey and the bare key; secp256k1, base64, malformed and short keys skipped',
  );
  t.same(ed25519KeysOf({}), []);
});

t.test('the resolver reads IidDocuments from the local query node over gRPC, with a cache', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sar-iid-'));
  const store = openStore(dir);
  const node = await LocalQueryNode.start({ db: store.db<Uint8Array>('gateway-local-node') });
  const upstream = new Upstream(node.target, 5000);
  t.teardown(async () => {
    upstream.close();
    await node.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const resolver = createIxoDidResolver(createChainClient(upstream));

  const [one, two] = await Promise.all([resolver.resolve(IXO_USER_DID), resolver.resolve(IXO_USER_DID)]);
  t.same(
    one.map(hex),
    [1, 2].map((k) => hex(didKeyPublicKey(ixoUserSigner(k as 1 | 2).toDIDKey()))),
    'both Ed25519 keys, in document order',
  );
  t.equal(two, one, 'concurrent lookups share one answer');
  t.equal(resolver.lookups, 1);
  await resolver.resolve(IXO_USER_DID);
  t.equal(resolver.lookups, 1, 'the second resolution comes from the cache');

  t.equal((await resolver.resolve(ENTITY_WITH_ED25519)).length, 1, 'an entity document with one Ed25519 method');
  t.same(await resolver.resolve(ENTITY_SECP_ONLY), [], 'secp256k1 methods only: no key');
  await t.rejects(
    resolver.resolve('did:ixo:ixo1nosuchaccount'),
    new AuthFailure('did:ixo:ixo1nosuchaccount has no iid document on the chain'),
  );

  const stopped = createIxoDidResolver(createChainClient(new Upstream('127.0.0.1:1', 1000)));
  await t.rejects(
    stopped.resolve(IXO_USER_DID),
    /the chain's iid module did not answer/,
    'an unreachable chain is an error, not an empty key list',
  );
});

t.test('over HTTP: a did:ixo user authenticates with either key of its document; other keys are refused', async (t) => {
  const server = await oracle();
  const as = (invocation: string) => ({ authorization: `Bearer ${invocation}`, 'x-auth-type': 'ucan' });

  for (const key of [1, 2] as const) {
    const invocation = await mintInvocation({
      issuer: ixoUserSigner(key),
      audience: server.oracleDid,
      ttlSeconds: 300,
    });
    const created = await call(server, 'POST', '/sessions', { headers: as(invocation) });
    t.equal(created.status, 201, `signed with key-${key}`);
    const listed = await call(server, 'GET', '/sessions', { headers: as(invocation) });
    t.ok(
      listed.body.sessions.some((s: { sessionId: string }) => s.sessionId === created.body.sessionId),
      'the session belongs to the did:ixo',
    );
  }

  const impostor = await mintInvocation({
    issuer: await impostorSigner(),
    audience: server.oracleDid,
    ttlSeconds: 300,
  });
  const refused = await call(server, 'POST', '/sessions', { headers: as(impostor) });
  t.equal(refused.status, 401);
  t.equal(refused.body.message, 'Invalid UCAN invocation');
  t.match(refused.body.reason, IXO_USER_DID, 'the reason names the DID whose keys did not match');

  const unknownSigner = (await generateKey()).withDID('did:ixo:ixo1nosuchaccount');
  const unknown = await call(server, 'POST', '/sessions', {
    headers: as(await mintInvocation({ issuer: unknownSigner, audience: server.oracleDid })),
  });
  t.equal(unknown.status, 401);
  t.match(unknown.body.reason, 'did:ixo:ixo1nosuchaccount has no iid document on the chain');

  const secpSigner = (await generateKey()).withDID(ENTITY_SECP_ONLY);
  const secp = await call(server, 'POST', '/sessions', {
    headers: as(await mintInvocation({ issuer: secpSigner, audience: server.oracleDid })),
  });
  t.equal(secp.status, 401);
  t.match(secp.body.reason, `${ENTITY_SECP_ONLY} has no Ed25519 verification method`);

  const delegation = await mintDelegation({ issuer: ixoUserSigner(2), audience: server.oracleDid, ttlSeconds: 3600 });
  const fallback = await call(server, 'GET', '/sessions', { headers: { 'x-ucan-delegation': delegation } });
  t.equal(fallback.status, 200, 'a did:ixo delegation alone (the fallback credential) is accepted too');
});

t.test(
  'WebSocket handshakes (native /ws and Socket.IO) accept a did:ixo user and refuse a key the chain does not list',
  async (t) => {
    const server = await oracle();
    const invocation = await mintInvocation({ issuer: ixoUserSigner(1), audience: server.oracleDid, ttlSeconds: 300 });
    const sessionId = (
      await call(server, 'POST', '/sessions', {
        headers: { authorization: `Bearer ${invocation}`, 'x-auth-type': 'ucan' },
      })
    ).body.sessionId;

    const native = await NativeClient.connect(server.url, { sessionId, invocation });
    const socketIo = await SocketIoClient.connect(server.url, { sessionId }, { invocation });
    closeAll(t, native, socketIo);
    // Both clients' connect() waited for the `connected` event.
    const connected = (client: { inbox: { all: { event: string; data: any }[] } }) =>
      client.inbox.all.find((e) => e.event === 'connected')?.data;
    t.equal(connected(native).sessionId, sessionId, "native /ws: connected to the did:ixo user's session");
    t.equal(connected(socketIo).sessionId, sessionId, "Socket.IO: connected to the did:ixo user's session");

    const forged = await mintInvocation({
      issuer: await impostorSigner(),
      audience: server.oracleDid,
      ttlSeconds: 300,
    });
    const refused = await NativeClient.connect(server.url, { sessionId, invocation: forged }).then(
      (client) => {
        client.close();
        return undefined;
      },
      (error: { status: number; body: { message: string } }) => error,
    );
    t.equal(refused?.status, 401, 'native /ws refuses the impostor before the upgrade');
    t.equal(refused?.body.message, 'Invalid UCAN invocation');
    await t.rejects(
      SocketIoClient.connect(server.url, { sessionId }, { invocation: forged }),
      'Socket.IO refuses it too',
    );
  },
);

t.test(
  'delegation storage: a did:ixo user stores a delegation signed by a key of its document, not by another',
  async (t) => {
    const server = await oracle();
    const invocation = await mintInvocation({ issuer: ixoUserSigner(1), audience: server.oracleDid, ttlSeconds: 300 });
    const headers = { authorization: `Bearer ${invocation}`, 'x-auth-type': 'ucan' };

    const raw = await mintDelegation({ issuer: ixoUserSigner(2), audience: server.oracleDid, ttlSeconds: 3600 });
    const stored = await call(server, 'POST', '/delegation', { headers, body: { raw } });
    t.equal(stored.status, 200);
    t.equal(stored.body.ok, true);
    t.equal((await call(server, 'GET', '/delegation', { headers })).body.authorized, true);

    const forged = await mintDelegation({
      issuer: await impostorSigner(),
      audience: server.oracleDid,
      ttlSeconds: 3600,
    });
    const refused = await call(server, 'POST', '/delegation', { headers, body: { raw: forged } });
    t.equal(refused.status, 400);
    t.match(refused.body.reason, /invalid signature from did:ixo:ixo1f9l8tdj0fatz6dvjpdrqsreesdyrq2g7xaqmgm/);
  },
);
