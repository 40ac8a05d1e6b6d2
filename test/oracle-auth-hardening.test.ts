// The holes of issue 30, each shown with a real ucanto-minted artifact and its mutation: a revoked delegation in
// any of its encodings, alone or as a proof; a delegation for another capability; proofs that are misaligned,
// cyclic, shared or only linked; the Ed25519 identity point as a key; a proof DAG built to make archive() walk
// forever. The authenticator decides here; test/oracle-revocation.test.ts shows the same refusals on every channel.
import { createPublicKey, verify } from 'node:crypto';
import t, { type Test } from 'tap';
import { base58btc, DID, Signature, UCAN, Delegation as DelegationCodec } from '@ucanto/core';
import type { Capability, Delegation } from '@ucanto/interface';
import {
  createAuthenticator,
  didKeyPublicKey,
  inProcessVerifier,
  INVALID_DELEGATION_MESSAGE,
  INVALID_UCAN_MESSAGE,
  revocationKeyOf,
  verifyEd25519,
  type AuthenticatorOptions,
} from '../dist/src/oracle/auth/index.js';
import { ed25519KeysOf } from '../dist/src/oracle/auth/ixo-resolver.js';
import { HttpError } from '../dist/src/http/errors.js';
import { createDelegation, createInvocation, encodeArtifact, generateKey } from '../dist/src/tools/mint-ucan.js';
import {
  archiveOf,
  cidOf,
  encodeCbor,
  reEncodings,
  repeatedLinkDelegation,
  ucantoReadsSigned,
  viewOf,
  type RawBlock,
} from './helpers/ucan-mutations.js';

const oracle = await generateKey();
const user = await generateKey();
const ORACLE = oracle.did();

function authenticator(options: Partial<AuthenticatorOptions> = {}) {
  return createAuthenticator({ oracleDid: ORACLE, maxTtlSeconds: 900, verifier: inProcessVerifier(), ...options });
}

/** Revocations in memory (the LMDB and JetStream ones share test/contracts/revocations.ts). */
function memoryRevocations() {
  const keys = new Set<string>();
  return { keys, firstRevoked: async (candidates: readonly string[]) => candidates.find((key) => keys.has(key)) };
}

const bearer = (invocation: string) => ({ authorization: `Bearer ${invocation}`, 'x-auth-type': 'ucan' });

/** The reason of the wire format's 401, or a failed assertion when it was accepted. */
async function refusal(t: Test, promise: Promise<unknown>, message = INVALID_UCAN_MESSAGE): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  t.type(error, HttpError, 'refused');
  const body = (error as HttpError | undefined)?.body as
    | { statusCode?: number; message?: string; reason?: string }
    | undefined;
  t.equal(body?.statusCode, 401);
  t.equal(body?.message, message);
  return body?.reason ?? '';
}

t.test(
  'a revocation list that cannot be read answers 503 with Retry-After, never lets the credential in',
  async (t) => {
    const auth = authenticator({
      revocations: {
        firstRevoked: () => Promise.reject(Object.assign(new Error('timeout'), { name: 'TimeoutError' })),
      },
    });
    const delegation = await createDelegation({ issuer: user, audience: ORACLE, ttlSeconds: 3600 });
    const error = await auth.authenticate({ 'x-ucan-delegation': await encodeArtifact(delegation) }).catch((e) => e);
    t.type(error, HttpError);
    t.equal((error as HttpError).status, 503);
    t.match((error as HttpError).body, { statusCode: 503, message: /revocation list cannot be read/ });
    t.same((error as HttpError).headers, { 'Retry-After': '1' });
  },
);

t.test('a revoked delegation is refused in every encoding, alone and as a proof anywhere in a chain', async (t) => {
  const revocations = memoryRevocations();
  const auth = authenticator({ revocations });
  const bob = await generateKey();
  const delegation = await createDelegation({ issuer: user, audience: ORACLE, ttlSeconds: 3600 });
  const key = revocationKeyOf(delegation);
  // A chain that carries it: the oracle passes it on to bob (each proof addressed to the issuer above it).
  const carryingChain = async (proof: Delegation) => {
    const passedOn = await createDelegation({ issuer: oracle, audience: bob.did(), ttlSeconds: 3600, proofs: [proof] });
    return encodeArtifact(await createInvocation({ issuer: bob, audience: ORACLE, proofs: [passedOn] }));
  };
  t.equal(
    (await auth.authenticate({ 'x-ucan-delegation': await encodeArtifact(delegation) })).did,
    user.did(),
    'accepted before',
  );
  t.equal(
    (await auth.authenticate(bearer(await carryingChain(delegation)))).did,
    bob.did(),
    'its chain is accepted before',
  );
  revocations.keys.add(key);
  t.match(
    await refusal(
      t,
      auth.authenticate({ 'x-ucan-delegation': await encodeArtifact(delegation) }),
      INVALID_DELEGATION_MESSAGE,
    ),
    /was revoked/,
  );
  t.match(await refusal(t, auth.authenticate(bearer(await carryingChain(delegation)))), /was revoked/, 'as a proof');

  for (const [name, block] of Object.entries(reEncodings(delegation))) {
    const raw = await archiveOf(block);
    const read = await ucantoReadsSigned(raw);
    t.ok(read, `${name}: ucanto reads it as the same signed delegation`);
    if (read) t.equal(revocationKeyOf(read), key, `${name}: the same revocation key`);
    t.ok(
      await refusal(t, auth.authenticate({ 'x-ucan-delegation': raw }), INVALID_DELEGATION_MESSAGE),
      `${name}: refused alone`,
    );
    t.ok(
      await refusal(t, auth.authenticate(bearer(await carryingChain(viewOf(block))))),
      `${name}: refused as a proof`,
    );
  }
});

t.test('a revocation recorded by CID (before the keys were signatures) is still honoured', async (t) => {
  const revocations = memoryRevocations();
  const auth = authenticator({ revocations });
  const delegation = await createDelegation({ issuer: user, audience: ORACLE, ttlSeconds: 3600 });
  const invocation = await createInvocation({ issuer: user, audience: ORACLE });
  revocations.keys.add(delegation.cid.toString());
  revocations.keys.add(invocation.cid.toString());
  t.match(
    await refusal(
      t,
      auth.authenticate({ 'x-ucan-delegation': await encodeArtifact(delegation) }),
      INVALID_DELEGATION_MESSAGE,
    ),
    new RegExp(`${delegation.cid}`),
  );
  t.match(
    await refusal(t, auth.authenticate(bearer(await encodeArtifact(invocation)))),
    new RegExp(`${invocation.cid}`),
    'on the fast path too',
  );
});

t.test('re-encodings are refused outright: one encoding, hashes checked, no JWT form', async (t) => {
  const auth = authenticator();
  const delegation = await createDelegation({ issuer: user, audience: ORACLE, ttlSeconds: 3600 });
  const reasons: Record<string, RegExp> = {
    'map keys out of order': /not in canonical DAG-CBOR/,
    'exp written as a float64': /not in canonical DAG-CBOR/,
    'nbf: 0 added': /not in canonical DAG-CBOR/,
    'an unknown field added': /not in canonical DAG-CBOR/,
    'a CID that does not match its bytes': /does not match its CID/,
    'a sha512 CID': /not DAG-CBOR under a sha2-256 CIDv1/,
    'a raw-codec CID': /not DAG-CBOR under a sha2-256 CIDv1/,
    'the JWT form': /not DAG-CBOR under a sha2-256 CIDv1/,
    'the JWT form under a dag-cbor CID': /JWT form/,
  };
  const encodings = reEncodings(delegation);
  t.same(Object.keys(encodings).sort(), Object.keys(reasons).sort(), 'every re-encoding has its reason');
  for (const [name, block] of Object.entries(encodings)) {
    t.match(
      await refusal(t, auth.authenticate({ 'x-ucan-delegation': await archiveOf(block) }), INVALID_DELEGATION_MESSAGE),
      reasons[name]!,
      name,
    );
  }
  // The invocation form too, on the fast path's shape: nbf 0 is left to ucanto's path, which refuses it.
  const invocation = await createInvocation({ issuer: user, audience: ORACLE });
  const withNbf = reEncodings(invocation)['nbf: 0 added']!;
  t.ok(await ucantoReadsSigned(await archiveOf(withNbf)), 'ucanto reads the invocation with nbf: 0');
  t.match(await refusal(t, auth.authenticate(bearer(await archiveOf(withNbf)))), /not in canonical DAG-CBOR/);
});

t.test('delegation mode checks the capability as invocations do', async (t) => {
  const auth = authenticator();
  const refused: Record<string, Capability[]> = {
    'another resource': [{ can: '*', with: 'ixo:other' }],
    'IXO:oracle': [{ can: '*', with: 'IXO:oracle' }],
    'a narrower can': [{ can: 'oracle/read', with: 'ixo:oracle' }],
    "the user's DID as with": [{ can: '*', with: user.did() }],
  };
  for (const [name, capabilities] of Object.entries(refused)) {
    const raw = await encodeArtifact(await createDelegation({ issuer: user, audience: ORACLE, capabilities }));
    t.match(
      await refusal(t, auth.authenticate({ 'x-ucan-delegation': raw }), INVALID_DELEGATION_MESSAGE),
      /does not carry the capability/,
      name,
    );
    const stored = await auth.verifyDelegationForStorage(raw, user.did());
    t.equal(stored.ok, false, `${name}: not stored either`);
  }
  // An empty att, signed by the user (ucanto will not mint one).
  const base = await createDelegation({ issuer: user, audience: ORACLE });
  const empty = await UCAN.issue({
    issuer: user,
    audience: base.audience,
    capabilities: [] as never,
    expiration: base.expiration,
  });
  const emptyRaw = await archiveOf({ cid: cidOf(UCAN.encode(empty)), bytes: UCAN.encode(empty) });
  t.match(
    await refusal(t, auth.authenticate({ 'x-ucan-delegation': emptyRaw }), INVALID_DELEGATION_MESSAGE),
    /does not carry the capability/,
    'empty att',
  );

  for (const capabilities of [
    [{ can: '*', with: 'ixo:*' }],
    [{ can: '*', with: 'ucan:*' }],
    [
      { can: 'x/y', with: 'ixo:other' },
      { can: '*', with: 'ixo:oracle' },
    ],
  ]) {
    const raw = await encodeArtifact(
      await createDelegation({ issuer: user, audience: ORACLE, capabilities: capabilities as Capability[] }),
    );
    t.equal(
      (await auth.authenticate({ 'x-ucan-delegation': raw })).did,
      user.did(),
      `${JSON.stringify(capabilities)} is accepted`,
    );
  }
});

t.test('invocation proofs: each carried, addressed to the issuer above it, linked once, at most 16', async (t) => {
  const auth = authenticator();
  const x = await generateKey();
  const toX = await createDelegation({ issuer: user, audience: x.did() });
  t.equal(
    (
      await auth.authenticate(
        bearer(await encodeArtifact(await createInvocation({ issuer: x, audience: ORACLE, proofs: [toX] }))),
      )
    ).did,
    x.did(),
    'aligned: accepted',
  );

  const toOracle = await createDelegation({ issuer: user, audience: ORACLE });
  const misaligned = await encodeArtifact(await createInvocation({ issuer: x, audience: ORACLE, proofs: [toOracle] }));
  t.match(await refusal(t, auth.authenticate(bearer(misaligned))), /broken chain/, 'a proof addressed to someone else');

  const linkOnly = await encodeArtifact(
    await createInvocation({ issuer: x, audience: ORACLE, proofs: [toX.cid as never] }),
  );
  t.match(
    await refusal(t, auth.authenticate(bearer(linkOnly))),
    /not included in the archive/,
    'a proof given only as a link',
  );
  const links = Array.from({ length: 1000 }, (_, i) => cidOf(Buffer.from(`proof ${i}`)));
  const bareLinks = await encodeArtifact(
    await createInvocation({ issuer: x, audience: ORACLE, proofs: links as never }),
  );
  t.match(
    await refusal(t, auth.authenticate(bearer(bareLinks))),
    /not included in the archive|linked more than once|longer than/,
    '1,000 bare links',
  );

  // A diamond: the same proof reached twice (the tree rule that keeps archive() linear).
  const deeper = await createDelegation({ issuer: x, audience: x.did(), proofs: [toX] });
  const diamond = await encodeArtifact(await createInvocation({ issuer: x, audience: ORACLE, proofs: [toX, deeper] }));
  t.match(await refusal(t, auth.authenticate(bearer(diamond))), /linked more than once/, 'a proof linked twice');

  // A cycle needs blocks under CIDs that do not match them: two self-signed delegations linking each other.
  const cycle = await cyclicArchive(x);
  t.match(await refusal(t, auth.authenticate(bearer(cycle))), /does not match its CID/, 'a cycle');

  let chain = await createDelegation({ issuer: x, audience: x.did() });
  for (let i = 0; i < 16; i++) chain = await createDelegation({ issuer: x, audience: x.did(), proofs: [chain] });
  const long = await encodeArtifact(await createInvocation({ issuer: x, audience: ORACLE, proofs: [chain] }));
  t.match(await refusal(t, auth.authenticate(bearer(long))), /longer than 16/, '18 UCANs');
});

/** An invocation whose proof links a delegation that links back to it, under CIDs made up to close the loop. */
async function cyclicArchive(issuer: Awaited<ReturnType<typeof generateKey>>): Promise<string> {
  const fakeA = cidOf(Buffer.from('a'));
  const fakeB = cidOf(Buffer.from('b'));
  const exp = Math.floor(Date.now() / 1000) + 300;
  const att = [{ can: '*', with: 'ixo:oracle' }];
  const a = await UCAN.issue({
    issuer,
    audience: DID.parse(ORACLE) as never,
    capabilities: att as never,
    expiration: exp,
    proofs: [fakeB] as never,
  });
  const b = await UCAN.issue({
    issuer,
    audience: DID.parse(issuer.did()) as never,
    capabilities: att as never,
    expiration: exp,
    proofs: [fakeA] as never,
  });
  return archiveOf({ cid: fakeA, bytes: UCAN.encode(a) }, [{ cid: fakeB, bytes: UCAN.encode(b) }]);
}

// The Ed25519 identity point (y = 1) as a did:key, and the signature R = identity, S = 0 that it "verifies" on anything.
const IDENTITY_KEY = Uint8Array.from({ length: 32 }, (_, i) => (i === 0 ? 1 : 0));
const IDENTITY_DID = 'did:key:z6MkeXATEjyXENzBXBxgC5EHk2JE5aqd7qMGGtDpLUH1e2Sj';
const IDENTITY_SIGNATURE = Uint8Array.from({ length: 64 }, (_, i) => (i === 0 ? 1 : 0));

t.test('the identity-point key is nobody: refused on both paths and as a did:ixo verification method', async (t) => {
  t.equal(`did:key:${base58btc.encode(Uint8Array.of(0xed, 0x01, ...IDENTITY_KEY))}`, IDENTITY_DID);
  const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), IDENTITY_KEY]);
  t.equal(
    verify(
      null,
      Buffer.from('any message'),
      createPublicKey({ key: spki, format: 'der', type: 'spki' }),
      IDENTITY_SIGNATURE,
    ),
    true,
    'OpenSSL alone accepts it',
  );
  t.equal(
    verifyEd25519(IDENTITY_KEY, Buffer.from('any message'), IDENTITY_SIGNATURE),
    false,
    'verifyEd25519 refuses it',
  );

  const template = await createInvocation({ issuer: user, audience: ORACLE });
  const model = { ...(template.data as unknown as { model: Record<string, unknown> }).model };
  const forged = await UCAN.write({
    ...model,
    iss: DID.parse(IDENTITY_DID),
    s: Signature.create(Signature.EdDSA, IDENTITY_SIGNATURE),
  } as never);
  const raw = await encodeArtifact(DelegationCodec.create({ root: forged as never, blocks: new Map() }) as Delegation);
  for (const fastPath of [true, false]) {
    t.match(
      await refusal(t, authenticator({ fastPath }).authenticate(bearer(raw))),
      /small-order or non-canonical/,
      `invocation, fast path ${fastPath}`,
    );
  }
  const delegationForm = await UCAN.write({
    ...model,
    iss: DID.parse(IDENTITY_DID),
    s: Signature.create(Signature.EdDSA, IDENTITY_SIGNATURE),
  } as never);
  const delegationRaw = await archiveOf(delegationForm as RawBlock);
  t.match(
    await refusal(t, authenticator().authenticate({ 'x-ucan-delegation': delegationRaw }), INVALID_DELEGATION_MESSAGE),
    /small-order or non-canonical/,
    'delegation',
  );

  // y >= p: a non-canonical encoding (p + 1 is the identity again).
  const nonCanonical = Uint8Array.from({ length: 32 }, (_, i) => (i === 0 ? 0xee : i === 31 ? 0x7f : 0xff));
  t.equal(verifyEd25519(nonCanonical, Buffer.from('x'), IDENTITY_SIGNATURE), false, 'a non-canonical key is refused');
  const document = {
    verificationMethod: [
      { type: 'Ed25519VerificationKey2020', publicKeyMultibase: base58btc.encode(IDENTITY_KEY) },
      {
        type: 'Ed25519VerificationKey2020',
        publicKeyMultibase: base58btc.encode(Uint8Array.of(0xed, 0x01, ...nonCanonical)),
      },
      {
        type: 'Ed25519VerificationKey2020',
        publicKeyMultibase: base58btc.encode(Uint8Array.of(0xed, 0x01, ...didKeyPublicKey(user.did()))),
      },
    ],
  };
  t.same(ed25519KeysOf(document), [Uint8Array.from(didKeyPublicKey(user.did()))], 'did:ixo: only the real key is kept');
});

t.test(
  'a delegation whose proofs repeat one link (60 per level, 15 levels) is refused at once, never archived',
  async (t) => {
    const auth = authenticator();
    const raw = await repeatedLinkDelegation(user, ORACLE, 60, 15);
    const started = process.cpuUsage();
    const check = await auth.verifyDelegationForStorage(raw, user.did());
    t.same(check.ok, false);
    t.match(!check.ok && check.reason, /linked more than once/);
    t.match(
      await refusal(t, auth.authenticate({ 'x-ucan-delegation': raw }), INVALID_DELEGATION_MESSAGE),
      /linked more than once/,
    );
    const cpu = process.cpuUsage(started);
    t.comment(`refused in ${((cpu.user + cpu.system) / 1000).toFixed(1)} ms of CPU`);
  },
);

// The canonical encoding a minted delegation already has is accepted as is (the encoder here agrees with dag-cbor).
t.test('the test encoder writes a minted UCAN byte for byte, so the mutations differ only as named', async (t) => {
  const delegation = await createDelegation({ issuer: user, audience: ORACLE });
  const fields = (await import('@ucanto/core')).CBOR.decode(delegation.root.bytes as never) as Record<string, unknown>;
  t.same(Buffer.from(encodeCbor(fields)), Buffer.from(delegation.root.bytes));
});
