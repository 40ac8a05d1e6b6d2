// UCAN authentication of the oracle face, with real ucanto-signed invocations and delegations and real keys.
import t from 'tap';
import type { Test } from 'tap';
import { Signature, UCAN, Delegation as DelegationCodec } from '@ucanto/core';
import type { Delegation, Signer } from '@ucanto/interface';
import {
  createAuthenticator,
  inProcessVerifier,
  INVALID_DELEGATION_MESSAGE,
  INVALID_UCAN_MESSAGE,
  MISSING_UCAN_MESSAGE,
  type AuthenticatorOptions,
  type DidResolver,
  type SignatureVerifier,
} from '../dist/src/oracle/auth/index.js';
import { HttpError } from '../dist/src/http/errors.js';
import {
  createDelegation,
  createInvocation,
  encodeArtifact,
  generateKey,
  mintDelegation,
  mintInvocation,
} from '../dist/src/tools/mint-ucan.js';

const now = () => Math.floor(Date.now() / 1000);
const oracle = await generateKey();
const user = await generateKey();
const stranger = await generateKey();
const ORACLE = oracle.did();

/** A verifier that counts how often the authenticator asks it (each call = one trip to the CPU pool). */
function countingVerifier() {
  const inner = inProcessVerifier();
  const counter = { calls: 0, checks: 0 };
  const verifier: SignatureVerifier = (checks) => {
    counter.calls++;
    counter.checks += checks.length;
    return inner(checks);
  };
  return { verifier, counter };
}

function authenticator(options: Partial<AuthenticatorOptions> = {}) {
  return createAuthenticator({ oracleDid: ORACLE, maxTtlSeconds: 900, verifier: inProcessVerifier(), ...options });
}

const bearer = (invocation: string, extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${invocation}`,
  'x-auth-type': 'ucan',
  ...extra,
});

/** A delegation authenticating alone is refused naming it. */
const refusedDelegation = (t: Test, promise: Promise<unknown>) => refused(t, promise, INVALID_DELEGATION_MESSAGE);

/** Asserts the 401 of the wire format and answers its reason. */
async function refused(t: Test, promise: Promise<unknown>, message = INVALID_UCAN_MESSAGE): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  t.type(error, HttpError, 'refused with an HttpError');
  const http = error as HttpError;
  t.equal(http.status, 401);
  const body = http.body as { statusCode: number; message: string; error: string; reason?: string };
  t.equal(body.statusCode, 401);
  t.equal(body.message, message);
  t.equal(body.error, 'Unauthorized');
  return body.reason ?? '';
}

/** Re-encodes a delegation with other UCAN fields or another signature, as an attacker would. */
async function forge(
  delegation: Delegation,
  change: (model: Record<string, unknown>) => Record<string, unknown>,
): Promise<string> {
  const model = change({ ...(delegation.data as unknown as { model: Record<string, unknown> }).model });
  const block = await UCAN.write(model as never);
  return encodeArtifact(DelegationCodec.create({ root: block as never, blocks: new Map() }));
}

t.test('a valid invocation authenticates its issuer', async (t) => {
  const auth = authenticator();
  const expiration = now() + 300;
  const identity = await auth.authenticate(
    bearer(await mintInvocation({ issuer: user, audience: ORACLE, expiration })),
  );
  t.same(identity, { did: user.did(), via: 'invocation', expiration, chain: identity.chain });
  t.equal(identity.chain.length, 1, 'its chain: the invocation alone (no proofs)');
  t.notOk(identity.delegation);
});

t.test('x-did never changes who is authenticated', async (t) => {
  const auth = authenticator();
  const identity = await auth.authenticate(
    bearer(await mintInvocation({ issuer: user, audience: ORACLE }), { 'x-did': stranger.did() }),
  );
  t.equal(identity.did, user.did());
});

t.test("an invocation beside the same user's delegation carries the parsed delegation", async (t) => {
  const auth = authenticator();
  const raw = await mintDelegation({ issuer: user, audience: ORACLE, ttlSeconds: 3600 });
  const identity = await auth.authenticate(
    bearer(await mintInvocation({ issuer: user, audience: ORACLE }), { 'x-ucan-delegation': raw }),
  );
  t.equal(identity.via, 'invocation');
  t.equal(identity.delegationRaw, raw);
  t.equal(identity.delegation?.issuer.did(), user.did());
  t.equal(identity.delegation?.audience.did(), ORACLE);
  t.same(identity.delegation?.capabilities, [{ can: '*', with: 'ixo:oracle' }]);

  // Another user's delegation, or an invalid one, is left out without failing the request.
  const foreign = await mintDelegation({ issuer: stranger, audience: ORACLE });
  const withForeign = await auth.authenticate(
    bearer(await mintInvocation({ issuer: user, audience: ORACLE }), { 'x-ucan-delegation': foreign }),
  );
  t.equal(withForeign.did, user.did());
  t.notOk(withForeign.delegation);
  const withGarbage = await auth.authenticate(
    bearer(await mintInvocation({ issuer: user, audience: ORACLE }), { 'x-ucan-delegation': 'AAAA' }),
  );
  t.notOk(withGarbage.delegation);
});

t.test('the delegation alone is the fallback', async (t) => {
  const auth = authenticator();
  const expiration = now() + 3600;
  const raw = await mintDelegation({ issuer: user, audience: ORACLE, expiration });
  const identity = await auth.authenticate({ 'x-ucan-delegation': raw });
  t.equal(identity.did, user.did());
  t.equal(identity.via, 'delegation');
  t.equal(identity.expiration, expiration);
  t.equal(identity.delegationRaw, raw);
  t.equal(identity.delegation?.issuer.did(), user.did());
});

t.test('the WebSocket handshake artifacts follow the same rules', async (t) => {
  const auth = authenticator();
  const invocation = await mintInvocation({ issuer: user, audience: ORACLE });
  t.equal((await auth.authenticateArtifacts({ invocation })).did, user.did());
  const delegation = await mintDelegation({ issuer: user, audience: ORACLE });
  t.equal((await auth.authenticateArtifacts({ delegation })).via, 'delegation');
  await refused(t, auth.authenticateArtifacts({}), MISSING_UCAN_MESSAGE);
});

t.test('missing headers answer the exact 401 text', async (t) => {
  const auth = authenticator();
  const reason = await refused(t, auth.authenticate({}), MISSING_UCAN_MESSAGE);
  t.equal(reason, '');
  t.equal(
    MISSING_UCAN_MESSAGE,
    'Missing UCAN authentication: provide Authorization: Bearer <invocation> with X-Auth-Type: ucan, or an x-ucan-delegation header',
  );
  await refused(t, auth.authenticate({ 'x-auth-type': 'ucan' }), MISSING_UCAN_MESSAGE);
  await refused(t, auth.authenticate({ 'x-auth-type': 'ucan', authorization: 'Bearer ' }), MISSING_UCAN_MESSAGE);
  await refused(t, auth.authenticate({ 'x-ucan-delegation': '   ' }), MISSING_UCAN_MESSAGE);
});

t.test('a bearer without X-Auth-Type: ucan is ignored', async (t) => {
  const auth = authenticator();
  const invocation = await mintInvocation({ issuer: user, audience: ORACLE });
  await refused(t, auth.authenticate({ authorization: `Bearer ${invocation}` }), MISSING_UCAN_MESSAGE);
  await refused(
    t,
    auth.authenticate({ authorization: `Bearer ${invocation}`, 'x-auth-type': 'jwt' }),
    MISSING_UCAN_MESSAGE,
  );
  // ...and the delegation beside it authenticates instead.
  const delegation = await mintDelegation({ issuer: stranger, audience: ORACLE });
  const identity = await auth.authenticate({ authorization: `Bearer ${invocation}`, 'x-ucan-delegation': delegation });
  t.same([identity.did, identity.via], [stranger.did(), 'delegation']);
  // Header value and scheme are case-insensitive.
  t.equal(
    (await auth.authenticate({ authorization: `bearer ${invocation}`, 'x-auth-type': 'UCAN' })).via,
    'invocation',
  );
});

t.test('an invalid invocation is refused even when a valid delegation is sent too', async (t) => {
  const auth = authenticator();
  const expired = await mintInvocation({ issuer: user, audience: ORACLE, expiration: now() - 5 });
  const delegation = await mintDelegation({ issuer: user, audience: ORACLE });
  const reason = await refused(t, auth.authenticate(bearer(expired, { 'x-ucan-delegation': delegation })));
  t.match(reason, /expired/);
});

t.test('expired artifacts are refused', async (t) => {
  const auth = authenticator();
  t.match(
    await refused(
      t,
      auth.authenticate(bearer(await mintInvocation({ issuer: user, audience: ORACLE, expiration: now() - 1 }))),
    ),
    /^invocation .* expired at/,
  );
  t.match(
    await refusedDelegation(
      t,
      auth.authenticate({
        'x-ucan-delegation': await mintDelegation({ issuer: user, audience: ORACLE, expiration: now() - 1 }),
      }),
    ),
    /^delegation .* expired at/,
  );
});

t.test('artifacts not valid yet are refused', async (t) => {
  const auth = authenticator();
  const notBefore = now() + 120;
  t.match(
    await refused(t, auth.authenticate(bearer(await mintInvocation({ issuer: user, audience: ORACLE, notBefore })))),
    /not valid before/,
  );
  t.match(
    await refusedDelegation(
      t,
      auth.authenticate({ 'x-ucan-delegation': await mintDelegation({ issuer: user, audience: ORACLE, notBefore }) }),
    ),
    /not valid before/,
  );
});

t.test('invocations must expire, and no later than UCAN_AUTH_MAX_TTL_SECONDS from now', async (t) => {
  const auth = authenticator({ maxTtlSeconds: 600 });
  t.match(
    await refused(
      t,
      auth.authenticate(bearer(await mintInvocation({ issuer: user, audience: ORACLE, expiration: Infinity }))),
    ),
    /must declare an expiration/,
  );
  t.match(
    await refused(
      t,
      auth.authenticate(bearer(await mintInvocation({ issuer: user, audience: ORACLE, expiration: now() + 660 }))),
    ),
    /longer than the allowed 600 seconds/,
  );
  const fits = await auth.authenticate(
    bearer(await mintInvocation({ issuer: user, audience: ORACLE, expiration: now() + 590 })),
  );
  t.equal(fits.did, user.did());
});

t.test('artifacts addressed to another audience are refused', async (t) => {
  const auth = authenticator();
  t.match(
    await refused(t, auth.authenticate(bearer(await mintInvocation({ issuer: user, audience: stranger.did() })))),
    /addressed to did:key:.*not to this oracle/,
  );
  t.match(
    await refusedDelegation(
      t,
      auth.authenticate({ 'x-ucan-delegation': await mintDelegation({ issuer: user, audience: stranger.did() }) }),
    ),
    /addressed to/,
  );
});

t.test('ORACLE_DID can be a did:ixo: artifacts must then name it', async (t) => {
  const oracleDid = 'did:ixo:entity:oracle-test';
  const auth = createAuthenticator({
    oracleDid,
    oracleKeyDid: ORACLE,
    maxTtlSeconds: 900,
    verifier: inProcessVerifier(),
  });
  t.equal(
    (await auth.authenticate(bearer(await mintInvocation({ issuer: user, audience: oracleDid })))).did,
    user.did(),
  );
  await refused(t, auth.authenticate(bearer(await mintInvocation({ issuer: user, audience: ORACLE }))));
});

t.test('the capability must be { can: "*", with: "ixo:oracle" } or a wildcard covering it', async (t) => {
  const auth = authenticator();
  for (const capability of [
    { can: '*', with: 'ixo:memory' },
    { can: 'sessions/list', with: 'ixo:oracle' },
    { can: 'store/add', with: user.did() },
    { can: '*', with: user.did() },
  ]) {
    const reason = await refused(
      t,
      auth.authenticate(
        bearer(await mintInvocation({ issuer: user, audience: ORACLE, capability: capability as never })),
      ),
    );
    t.match(reason, /does not carry the capability/, `${capability.can} on ${capability.with}`);
  }
  for (const wildcard of ['ixo:*', 'ucan:*']) {
    const identity = await auth.authenticate(
      bearer(
        await mintInvocation({ issuer: user, audience: ORACLE, capability: { can: '*', with: wildcard } as never }),
      ),
    );
    t.equal(identity.did, user.did(), `${wildcard} covers ixo:oracle`);
  }
});

t.test('tampered signatures are refused', async (t) => {
  const auth = authenticator();
  const invocation = await createInvocation({ issuer: user, audience: ORACLE });
  const flipped = await forge(invocation, (model) => {
    const raw = Uint8Array.from((model.s as { raw: Uint8Array }).raw);
    raw[10] ^= 0x01;
    return { ...model, s: Signature.create(Signature.EdDSA, raw) };
  });
  t.match(await refused(t, auth.authenticate(bearer(flipped))), /signature/);

  // The same signature over a changed payload (a later expiration): still the user's DID, not their signature.
  const extended = await forge(invocation, (model) => ({ ...model, exp: (model.exp as number) + 200 }));
  t.match(await refused(t, auth.authenticate(bearer(extended))), /signature/);

  // A stranger's signature on a token that claims to be the user's.
  const signedByStranger = await createInvocation({ issuer: stranger, audience: ORACLE });
  const impersonation = await forge(signedByStranger, (model) => ({
    ...model,
    iss: (invocation.data as unknown as { model: { iss: unknown } }).model.iss,
  }));
  t.match(await refused(t, auth.authenticate(bearer(impersonation))), /signature/);

  const delegation = await createDelegation({ issuer: user, audience: ORACLE });
  const forgedDelegation = await forge(delegation, (model) => ({ ...model, exp: (model.exp as number) + 86_400 }));
  t.match(
    await refusedDelegation(t, auth.authenticate({ 'x-ucan-delegation': forgedDelegation })),
    /invalid signature/,
  );
});

t.test('garbage is refused as an invalid invocation', async (t) => {
  const auth = authenticator();
  for (const garbage of [
    'not base64!',
    'AAAA',
    Buffer.from('hello world, not a CAR').toString('base64'),
    'x'.repeat(70_000),
  ]) {
    const reason = await refused(t, auth.authenticate(bearer(garbage)));
    t.ok(reason.length > 0, `a reason for ${garbage.slice(0, 16)}`);
    await refusedDelegation(t, auth.authenticate({ 'x-ucan-delegation': garbage }));
  }
  // A valid CAR whose root is not a UCAN.
  const valid = Buffer.from(await mintInvocation({ issuer: user, audience: ORACLE }), 'base64');
  const truncated = valid.subarray(0, valid.length - 20).toString('base64');
  await refused(t, auth.authenticate(bearer(truncated)));
});

t.test('a cache hit answers the same identity without verifying again', async (t) => {
  const { verifier, counter } = countingVerifier();
  const auth = authenticator({ verifier });
  const headers = bearer(await mintInvocation({ issuer: user, audience: ORACLE }));
  const first = await auth.authenticate(headers);
  t.equal(counter.calls, 1, 'one batch for the cold artifact');
  const second = await auth.authenticate(headers);
  t.same(second, first);
  t.equal(counter.calls, 1, 'no verification on the hit');
  t.match(auth.stats, { cached: 1, hits: 1, misses: 1 });

  // Concurrent requests with the same new artifact share one verification.
  const fresh = bearer(await mintInvocation({ issuer: stranger, audience: ORACLE }));
  const all = await Promise.all([1, 2, 3, 4, 5].map(() => auth.authenticate(fresh)));
  t.ok(all.every((identity) => identity.did === stranger.did()));
  t.equal(counter.calls, 2);

  auth.clearCache();
  t.equal(auth.stats.cached, 0);
  await auth.authenticate(headers);
  t.equal(counter.calls, 3, 'verified again after clearCache');
});

t.test('failures are not cached', async (t) => {
  const { verifier, counter } = countingVerifier();
  const auth = authenticator({ verifier });
  const invocation = await createInvocation({ issuer: user, audience: ORACLE });
  const forged = await forge(invocation, (model) => ({ ...model, exp: (model.exp as number) + 1 }));
  await refused(t, auth.authenticate(bearer(forged)));
  await refused(t, auth.authenticate(bearer(forged)));
  t.equal(counter.calls, 2);
  t.equal(auth.stats.cached, 0);
});

t.test('the cache is bounded', async (t) => {
  const auth = authenticator({ cacheSize: 2 });
  // Different lifetimes make different artifacts (the same fields in the same second sign to the same bytes).
  for (let i = 0; i < 4; i++)
    await auth.authenticate(bearer(await mintInvocation({ issuer: user, audience: ORACLE, ttlSeconds: 100 + i })));
  t.equal(auth.stats.cached, 2);
});

t.test('a proof chain user -> X -> oracle: valid links pass, a broken link is refused', async (t) => {
  const auth = authenticator();
  const x = await generateKey();
  const userToX = await createDelegation({ issuer: user, audience: x.did() });
  const good = await mintDelegation({ issuer: x, audience: ORACLE, proofs: [userToX] });
  const identity = await auth.authenticate({ 'x-ucan-delegation': good });
  t.equal(identity.did, x.did(), 'the issuer of the delegation addressed to the oracle');

  const userToY = await createDelegation({ issuer: user, audience: stranger.did() });
  const broken = await mintDelegation({ issuer: x, audience: ORACLE, proofs: [userToY] });
  t.match(await refusedDelegation(t, auth.authenticate({ 'x-ucan-delegation': broken })), /broken chain/);

  const expiredLink = await createDelegation({ issuer: user, audience: x.did(), expiration: now() - 10 });
  const stale = await mintDelegation({ issuer: x, audience: ORACLE, proofs: [expiredLink] });
  t.match(await refusedDelegation(t, auth.authenticate({ 'x-ucan-delegation': stale })), /^proof .* expired/);

  const forgedLink = await forge(userToX, (model) => ({ ...model, exp: (model.exp as number) + 60 }));
  const forgedProof = (await DelegationCodec.extract(Buffer.from(forgedLink, 'base64'))).ok as Delegation;
  const withForged = await mintDelegation({ issuer: x, audience: ORACLE, proofs: [forgedProof] });
  t.match(
    await refusedDelegation(t, auth.authenticate({ 'x-ucan-delegation': withForged })),
    /^proof .* invalid signature/,
  );

  // An invocation carrying an expired proof is refused too (time bounds along its chain).
  const invocation = await mintInvocation({ issuer: x, audience: ORACLE, proofs: [expiredLink] });
  t.match(await refused(t, auth.authenticate(bearer(invocation))), /^proof .* expired/);
  const fine = await mintInvocation({ issuer: x, audience: ORACLE, proofs: [userToX] });
  t.equal((await auth.authenticate(bearer(fine))).did, x.did());
});

t.test('did:ixo issuers are refused with a clear reason until a resolver is plugged in', async (t) => {
  const ixoDid = 'did:ixo:entity:user-42';
  const ixoUser = (user as Signer).withDID(ixoDid as `did:ixo:${string}`);
  const auth = authenticator();
  const invocation = await mintInvocation({ issuer: ixoUser, audience: ORACLE });
  const reason = await refused(t, auth.authenticate(bearer(invocation)));
  t.match(reason, /cannot verify did:ixo:entity:user-42: did:ixo keys are read from the chain's iid module/);
  const delegation = await mintDelegation({ issuer: ixoUser, audience: ORACLE });
  t.match(await refusedDelegation(t, auth.authenticate({ 'x-ucan-delegation': delegation })), /iid module/);

  // The resolver slot is injectable: with the chain's keys the same artifacts pass.
  const keys = new Map([[ixoDid, [(user as unknown as { verifier: { publicKey: Uint8Array } }).verifier.publicKey]]]);
  const resolver: DidResolver = { resolve: async (did) => keys.get(did) ?? [] };
  auth.setDidResolver('ixo', resolver);
  const again = await auth.authenticate(bearer(invocation));
  t.same(again, { did: ixoDid, via: 'invocation', expiration: again.expiration, chain: again.chain });
  t.equal((await auth.authenticate({ 'x-ucan-delegation': delegation })).did, ixoDid);

  // A did:ixo whose document holds another key is refused on the signature.
  const other = createAuthenticator({
    oracleDid: ORACLE,
    maxTtlSeconds: 900,
    verifier: inProcessVerifier(),
    resolvers: {
      ixo: {
        resolve: async () => [(stranger as unknown as { verifier: { publicKey: Uint8Array } }).verifier.publicKey],
      },
    },
  });
  t.match(await refused(t, other.authenticate(bearer(invocation))), /signature/);
  // Methods without a resolver are refused by name.
  const web = await mintInvocation({ issuer: (user as Signer).withDID('did:web:example.com'), audience: ORACLE });
  t.match(await refused(t, auth.authenticate(bearer(web))), /did:web method is not supported/);
});

t.test('verifyDelegationForStorage: issuer = the user, audience = this oracle, not expired', async (t) => {
  const auth = authenticator();
  const expiration = now() + 7 * 86_400;
  const raw = await mintDelegation({ issuer: user, audience: ORACLE, expiration });
  t.same(await auth.verifyDelegationForStorage(raw, user.did()), {
    ok: true,
    issuer: user.did(),
    audience: ORACLE,
    expiration,
  });

  const forever = await mintDelegation({ issuer: user, audience: ORACLE, expiration: Infinity });
  t.same(await auth.verifyDelegationForStorage(forever, user.did()), {
    ok: true,
    issuer: user.did(),
    audience: ORACLE,
  });

  const mismatch = await auth.verifyDelegationForStorage(raw, stranger.did());
  t.equal(mismatch.ok, false);
  t.match(mismatch, { reason: /issued by did:key:.*not by the authenticated user/ });

  t.match(
    await auth.verifyDelegationForStorage(await mintDelegation({ issuer: user, audience: stranger.did() }), user.did()),
    { ok: false, reason: /addressed to/ },
  );
  t.match(
    await auth.verifyDelegationForStorage(
      await mintDelegation({ issuer: user, audience: ORACLE, expiration: now() - 1 }),
      user.did(),
    ),
    { ok: false, reason: /expired/ },
  );
  t.match(await auth.verifyDelegationForStorage('garbage!', user.did()), { ok: false, reason: /not base64/ });
});

t.test('verifyDelegationForStorage also works standalone', async (t) => {
  const { verifyDelegationForStorage } = await import('../dist/src/oracle/auth/index.js');
  const raw = await mintDelegation({ issuer: user, audience: ORACLE, ttlSeconds: 60 });
  t.match(await verifyDelegationForStorage(raw, ORACLE, { userDid: user.did(), verifier: inProcessVerifier() }), {
    ok: true,
    issuer: user.did(),
  });
  t.match(
    await verifyDelegationForStorage(raw, stranger.did(), { userDid: user.did(), verifier: inProcessVerifier() }),
    { ok: false },
  );
});
