// UCAN authentication of the oracle routes through HTTP, with real ucanto-signed artifacts.
import t from 'tap';
import { Delegation as DelegationCodec, Signature, UCAN } from '@ucanto/core';
import type { Delegation } from '@ucanto/interface';
import {
  INVALID_DELEGATION_MESSAGE,
  INVALID_UCAN_MESSAGE,
  MISSING_UCAN_MESSAGE,
} from '../dist/src/oracle/auth/index.js';
import {
  createInvocation,
  encodeArtifact,
  generateKey,
  mintDelegation,
  mintInvocation,
} from '../dist/src/tools/mint-ucan.js';
import { call, sharedOracleServer, startOracleServer } from './helpers/oracle.js';

// The tests of the default configuration have users of their own: one server serves them.
const oracle = sharedOracleServer(t);

const now = () => Math.floor(Date.now() / 1000);
const bearer = (invocation: string) => ({ authorization: `Bearer ${invocation}`, 'x-auth-type': 'ucan' });

/** Re-encodes an invocation with changed UCAN fields, keeping its signature (as an attacker would). */
async function forge(
  delegation: Delegation,
  change: (model: Record<string, unknown>) => Record<string, unknown>,
): Promise<string> {
  const model = change({ ...(delegation.data as unknown as { model: Record<string, unknown> }).model });
  const block = await UCAN.write(model as never);
  return encodeArtifact(DelegationCodec.create({ root: block as never, blocks: new Map() }));
}

t.test('protected routes: the exact 401 answers, with X-Request-Id', async (t) => {
  const server = await startOracleServer(t, { env: { UCAN_AUTH_MAX_TTL_SECONDS: '900' } });
  const user = await generateKey();
  const oracle = server.oracleDid;

  const missing = await call(server, 'GET', '/sessions', { headers: { 'x-request-id': 'req-401' } });
  t.equal(missing.status, 401);
  t.equal(missing.headers.get('x-request-id'), 'req-401');
  t.same(missing.body, { statusCode: 401, message: MISSING_UCAN_MESSAGE, error: 'Unauthorized' });
  t.match(MISSING_UCAN_MESSAGE, /^Missing UCAN authentication/);

  // A bearer without X-Auth-Type: ucan is not ours to read: the request has no UCAN.
  const untyped = await call(server, 'GET', '/sessions', {
    headers: { authorization: `Bearer ${await mintInvocation({ issuer: user, audience: oracle })}` },
  });
  t.equal(untyped.status, 401);
  t.equal(untyped.body.message, MISSING_UCAN_MESSAGE);

  const valid = await call(server, 'GET', '/sessions', {
    headers: bearer(await mintInvocation({ issuer: user, audience: oracle, ttlSeconds: 300 })),
  });
  t.equal(valid.status, 200, 'a valid invocation passes');
  t.same(valid.body, { sessions: [], total: 0 });

  const refusals: [string, string, RegExp][] = [
    ['expired', await mintInvocation({ issuer: user, audience: oracle, expiration: now() - 60 }), /expired/i],
    [
      'too long-lived',
      await mintInvocation({ issuer: user, audience: oracle, ttlSeconds: 3600 }),
      /900|lifetime|long/i,
    ],
    [
      'wrong audience',
      await mintInvocation({ issuer: user, audience: (await generateKey()).did() }),
      /audience|addressed/i,
    ],
    [
      'wrong resource',
      await mintInvocation({ issuer: user, audience: oracle, capability: { can: '*', with: 'ixo:other' } }),
      /ixo:oracle|capabilit|resource|with/i,
    ],
    [
      'tampered signature',
      await forge(await createInvocation({ issuer: user, audience: oracle }), (model) => {
        const raw = Uint8Array.from((model.s as { raw: Uint8Array }).raw);
        raw[10] ^= 0x01;
        return { ...model, s: Signature.create(Signature.EdDSA, raw) };
      }),
      /signature/,
    ],
    ['garbage', 'bm90IGEgVUNBTg==', /archive|ucanto|malformed/i],
  ];
  for (const [name, invocation, reason] of refusals) {
    const res = await call(server, 'GET', '/sessions', {
      headers: { ...bearer(invocation), 'x-request-id': `req-${name}` },
    });
    t.equal(res.status, 401, `${name}: 401`);
    t.equal(res.body.statusCode, 401);
    t.equal(res.body.message, INVALID_UCAN_MESSAGE, `${name}: exact message`);
    t.equal(res.body.error, 'Unauthorized');
    t.match(res.body.reason, reason, `${name}: the reason says why`);
    t.equal(res.headers.get('x-request-id'), `req-${name}`);
  }
});

t.test('every oracle route is protected; public routes ignore auth headers', async (t) => {
  const server = await oracle();
  const routes: [string, string][] = [
    ['POST', '/sessions'],
    ['GET', '/sessions'],
    ['DELETE', '/sessions/abc'],
    ['POST', '/messages/abc'],
    ['GET', '/messages/abc'],
    ['POST', '/messages/abort'],
    ['POST', '/delegation'],
    ['GET', '/delegation'],
    ['DELETE', '/delegation'],
    ['GET', '/user-preferences'],
  ];
  for (const [method, path] of routes) {
    const res = await call(server, method, path, {
      body: method === 'POST' ? { message: 'hi', sessionId: 'abc', raw: 'x' } : undefined,
    });
    t.equal(res.status, 401, `${method} ${path}`);
    t.equal(res.body.message, MISSING_UCAN_MESSAGE);
  }
  // Rule 4: public routes do not read the headers, even broken ones.
  for (const path of ['/', '/health']) {
    const res = await call(server, 'GET', path, { headers: { ...bearer('garbage'), 'x-ucan-delegation': 'garbage' } });
    t.equal(res.status, 200, `${path} is public`);
  }
});

t.test('x-ucan-delegation alone authenticates its issuer; a bad one is refused', async (t) => {
  const server = await oracle();
  const user = await generateKey();
  const delegation = await mintDelegation({ issuer: user, audience: server.oracleDid, ttlSeconds: 3600 });
  const created = await call(server, 'POST', '/sessions', { headers: { 'x-ucan-delegation': delegation } });
  t.equal(created.status, 201);
  // The same user through an invocation sees the session: the identity is the delegation's issuer.
  const listed = await call(server, 'GET', '/sessions', {
    headers: bearer(await mintInvocation({ issuer: user, audience: server.oracleDid })),
  });
  t.same(
    listed.body.sessions.map((s: { sessionId: string }) => s.sessionId),
    [created.body.sessionId],
  );

  const elsewhere = await mintDelegation({ issuer: user, audience: (await generateKey()).did() });
  const refused = await call(server, 'GET', '/sessions', { headers: { 'x-ucan-delegation': elsewhere } });
  t.equal(refused.status, 401);
  t.equal(refused.body.message, INVALID_DELEGATION_MESSAGE, 'a delegation alone is named as what it is');
  t.equal(refused.body.message, 'Invalid UCAN delegation');
});

t.test('x-did is informational only: it never changes who the user is', async (t) => {
  const server = await oracle();
  const user = await generateKey();
  const other = await generateKey();
  const headers = {
    ...bearer(await mintInvocation({ issuer: user, audience: server.oracleDid })),
    'x-did': other.did(),
  };
  await call(server, 'POST', '/sessions', { headers });
  const asOther = await call(server, 'GET', '/sessions', {
    headers: bearer(await mintInvocation({ issuer: other, audience: server.oracleDid })),
  });
  t.equal(asOther.body.total, 0);
});
