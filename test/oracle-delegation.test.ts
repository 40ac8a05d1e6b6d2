// POST/GET/DELETE /delegation with real delegations: stored only when issued by the caller to this
// oracle, correctly signed and not expired; 400 with a reason otherwise.
import t from 'tap';
import { Delegation as DelegationCodec, UCAN } from '@ucanto/core';
import type { Delegation } from '@ucanto/interface';
import { createDelegation, encodeArtifact, generateKey, mintDelegation } from '../dist/src/tools/mint-ucan.js';
import { call, newUser, sharedOracleServer } from './helpers/oracle.js';
import { archiveOf, reEncodings, repeatedLinkDelegation } from './helpers/ucan-mutations.js';

// Every test has users of its own: one server serves them all.
const oracle = sharedOracleServer(t);

const now = () => Math.floor(Date.now() / 1000);

async function forge(
  delegation: Delegation,
  change: (model: Record<string, unknown>) => Record<string, unknown>,
): Promise<string> {
  const model = change({ ...(delegation.data as unknown as { model: Record<string, unknown> }).model });
  const block = await UCAN.write(model as never);
  return encodeArtifact(DelegationCodec.create({ root: block as never, blocks: new Map() }));
}

t.test('store, read and revoke a delegation', async (t) => {
  const server = await oracle();
  const ada = await newUser(server.oracleDid);
  t.same((await call(server, 'GET', '/delegation', { user: ada })).body, { authorized: false }, 'none yet');

  const expiration = now() + 3600;
  const raw = await mintDelegation({ issuer: ada.key, audience: server.oracleDid, expiration });
  const stored = await call(server, 'POST', '/delegation', {
    user: ada,
    body: { raw, issuer: ada.did, audience: server.oracleDid, expiration },
  });
  t.equal(stored.status, 200);
  t.same(stored.body, { ok: true, expiration });
  t.same((await call(server, 'GET', '/delegation', { user: ada })).body, { authorized: true, expiration });

  const bob = await newUser(server.oracleDid);
  t.same(
    (await call(server, 'GET', '/delegation', { user: bob })).body,
    { authorized: false },
    "Ada's delegation is hers only",
  );

  const revoked = await call(server, 'DELETE', '/delegation', { user: ada });
  t.same([revoked.status, revoked.body], [200, { ok: true }]);
  t.same((await call(server, 'GET', '/delegation', { user: ada })).body, { authorized: false });
  t.same((await call(server, 'DELETE', '/delegation', { user: ada })).body, { ok: true }, 'revoking twice is fine');
});

t.test('refused delegations: 400 with the reason', async (t) => {
  const server = await oracle();
  const ada = await newUser(server.oracleDid);
  const stranger = await generateKey();
  const genuine = await createDelegation({ issuer: ada.key, audience: server.oracleDid });

  const cases: [string, Record<string, unknown>, RegExp][] = [
    [
      'issued by someone else',
      { raw: await mintDelegation({ issuer: stranger, audience: server.oracleDid }) },
      /not by the authenticated user/,
    ],
    [
      'addressed to another audience',
      { raw: await mintDelegation({ issuer: ada.key, audience: stranger.did() }) },
      /not to this oracle/,
    ],
    [
      'expired',
      { raw: await mintDelegation({ issuer: ada.key, audience: server.oracleDid, expiration: now() - 10 }) },
      /expired/i,
    ],
    [
      'tampered',
      { raw: await forge(genuine, (model) => ({ ...model, exp: (model.exp as number) + 86_400 })) },
      /signature/,
    ],
    ['not a UCAN', { raw: 'aGVsbG8=' }, /archive|ucanto|malformed/i],
    [
      'for another capability',
      {
        raw: await mintDelegation({
          issuer: ada.key,
          audience: server.oracleDid,
          capabilities: [{ can: '*', with: 'IXO:oracle' }],
        }),
      },
      /does not carry the capability/,
    ],
    [
      'proofs linking one proof 60 times a level, 15 levels',
      { raw: await repeatedLinkDelegation(ada.key, server.oracleDid, 60, 15) },
      /linked more than once/,
    ],
    [
      'a re-encoding (map keys out of order)',
      { raw: await archiveOf(reEncodings(genuine)['map keys out of order']!) },
      /not in canonical DAG-CBOR/,
    ],
    [
      'body issuer is not the caller',
      { raw: await encodeArtifact(genuine), issuer: stranger.did() },
      /is not the authenticated user/,
    ],
    [
      'body audience is not this oracle',
      { raw: await encodeArtifact(genuine), audience: stranger.did() },
      /is not this oracle/,
    ],
  ];
  for (const [name, body, reason] of cases) {
    const res = await call(server, 'POST', '/delegation', { user: ada, body });
    t.equal(res.status, 400, name);
    t.equal(res.body.statusCode, 400);
    t.equal(res.body.error, 'Bad Request');
    t.match(res.body.message, /^Invalid delegation: /, name);
    t.match(res.body.reason, reason, name);
  }
  const invalid = await call(server, 'POST', '/delegation', { user: ada, body: { raw: 5, expiration: 'soon' } });
  t.same(invalid.body, {
    statusCode: 400,
    message: ['raw must be a string', 'expiration must be a number'],
    error: 'Bad Request',
  });
  t.same((await call(server, 'GET', '/delegation', { user: ada })).body, { authorized: false }, 'nothing was stored');
});

t.test('a stored delegation that expires reads as not authorized', async (t) => {
  const server = await oracle();
  const ada = await newUser(server.oracleDid);
  const expiration = now() + 2;
  const raw = await mintDelegation({ issuer: ada.key, audience: server.oracleDid, expiration });
  t.equal((await call(server, 'POST', '/delegation', { user: ada, body: { raw } })).status, 200);
  t.same((await call(server, 'GET', '/delegation', { user: ada })).body, { authorized: true, expiration });
  await new Promise((resolve) => setTimeout(resolve, (expiration - Date.now() / 1000 + 0.2) * 1000));
  t.same((await call(server, 'GET', '/delegation', { user: ada })).body, { authorized: false, expiration });
});
