// The fast path for common invocations (src/oracle/auth/fast) against ucanto's path as the oracle: for random
// invocations minted with ucanto, valid and broken in each way, both paths decide the same (identity, or the same
// 401 reason) and ask revocation about the same CIDs; for every invocation in the fast path's shape its
// signed-payload bytes equal dag-ucan's byte for byte.
// On failure fast-check prints the seed and the shrunk case; rerun with FAST_PATH_SEED=<seed>.
import t from 'tap';
import fc from 'fast-check';
import {
  base58btc,
  CAR,
  CBOR,
  createLink,
  Delegation as DelegationCodec,
  DID,
  invoke,
  sha256,
  UCAN,
} from '@ucanto/core';
import type { Delegation, Signer } from '@ucanto/interface';
import { RSA } from '@ucanto/principal';
import { createAuthenticator, inProcessVerifier, type AuthIdentity } from '../dist/src/oracle/auth/index.js';
import { HttpError } from '../dist/src/http/errors.js';
import { createDelegation, encodeArtifact, generateKey } from '../dist/src/tools/mint-ucan.js';
import { readArchive } from '../dist/src/oracle/auth/fast/archive.js';
import { fastAudience } from '../dist/src/oracle/auth/fast/invocation.js';
import { signedPayload } from '../dist/src/oracle/auth/fast/payload.js';
import { OutOfShape } from '../dist/src/oracle/auth/fast/shape.js';
import { readCommonUcan } from '../dist/src/oracle/auth/fast/ucan.js';

const oracle = await generateKey();
const user = await generateKey();
const stranger = await generateKey();
const rsa = await RSA.generate();
const ORACLE = oracle.did();
const MAX_TTL = 900;
const now = () => Math.floor(Date.now() / 1000);

const issuers: Record<string, Signer> = {
  user,
  rsa: rsa as unknown as Signer,
  // The stranger's key under the user's DID: a signature that does not verify.
  forger: stranger.withDID(user.did()) as unknown as Signer,
};

const mutation = fc.oneof(
  { weight: 15, arbitrary: fc.constant({ kind: 'none' as const }) },
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), mask: fc.integer({ min: 1, max: 255 }) }),
  fc.record({ kind: fc.constant('trailing' as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 4 }) }),
  fc.constant({ kind: 'non-canonical' as const }),
  fc.constant({ kind: 'extra-field' as const }),
  fc.constant({ kind: 'zero-nbf' as const }),
  fc.constant({ kind: 'swap-blocks' as const }),
);

/** Mostly the common value, sometimes one of the others (each case breaks a few things at most). */
const mostly = <T>(common: T, ...others: T[]) =>
  fc.oneof({ weight: 5 * others.length, arbitrary: fc.constant(common) }, fc.constantFrom(...others));

const spec = fc.record({
  issuer: mostly('user', 'rsa', 'forger'),
  audience: mostly(ORACLE, stranger.did()),
  can: mostly('*', 'store/add', 'oracle/*', 'Foo/Bar'),
  with: fc.oneof(
    { weight: 6, arbitrary: fc.constant('ixo:oracle') },
    fc.constantFrom('ixo:*', 'ucan:*', 'ixo:other', 'did:web:example.com'),
  ),
  // The lifetime: mostly within the allowed 900 s, sometimes past it, expired, or without expiration.
  ttl: fc.oneof(
    { weight: 8, arbitrary: fc.integer({ min: 1, max: MAX_TTL }) },
    fc.integer({ min: -120, max: 1200 }),
    fc.constant(Infinity),
  ),
  notBefore: fc.oneof(fc.constant(undefined), fc.constant(0), fc.integer({ min: -300, max: 300 })),
  nonce: fc.oneof(
    { weight: 3, arbitrary: fc.constant(undefined) },
    fc.constant(''),
    fc.string({ maxLength: 12 }),
    fc.string({ unit: 'binary', maxLength: 4 }),
  ),
  fact: mostly(false, true),
  proof: mostly(false, true),
  mutation,
});
type Spec = typeof spec extends fc.Arbitrary<infer S> ? S : never;

async function mint(s: Spec): Promise<Uint8Array> {
  const at = now();
  const proofs: Delegation[] = s.proof ? [await createDelegation({ issuer: stranger, audience: user.did() })] : [];
  const invocation = await invoke({
    issuer: issuers[s.issuer]!,
    audience: { did: () => s.audience as `did:${string}:${string}` },
    capability: { can: s.can as `${string}/${string}`, with: s.with as `${string}:${string}` },
    expiration: Number.isFinite(s.ttl) ? at + s.ttl : Infinity,
    notBefore: s.notBefore === undefined || s.notBefore === 0 ? s.notBefore : at + s.notBefore,
    nonce: s.nonce,
    facts: s.fact ? [{ note: 'fact' }] : [],
    proofs,
  }).delegate();
  return mutate(Buffer.from(await encodeArtifact(invocation), 'base64'), invocation, s.mutation);
}

/** The archive of one UCAN block as ucanto writes it, blocks in the given order. */
async function archiveOf(bytes: Uint8Array, ucanFirst = true): Promise<Uint8Array> {
  const cid = createLink(CBOR.code, await sha256.digest(bytes));
  const variant = await CBOR.write({ 'ucan@0.9.1': cid });
  const ucan = { cid, bytes };
  const blocks = ucanFirst ? [ucan, variant] : [variant, ucan];
  return CAR.encode({ roots: [variant], blocks: new Map(blocks.map((block) => [`${block.cid}`, block])) } as never);
}

async function mutate(car: Uint8Array, invocation: Delegation, change: Spec['mutation']): Promise<Uint8Array> {
  switch (change.kind) {
    case 'none':
      return car;
    case 'flip': {
      const out = Uint8Array.from(car);
      out[change.at % out.length]! ^= change.mask;
      return out;
    }
    case 'trailing':
      return Uint8Array.of(...car, ...change.bytes);
    case 'non-canonical': {
      // exp in eight bytes instead of four: the same value, signature and payload, but not DAG-CBOR's shortest form.
      const block = Buffer.from(invocation.bytes);
      const at = block.indexOf(Buffer.from([0x63, 0x65, 0x78, 0x70, 0x1a]));
      if (at < 0) return car;
      return archiveOf(
        Buffer.concat([block.subarray(0, at + 4), Buffer.from([0x1b, 0, 0, 0, 0]), block.subarray(at + 5)]),
      );
    }
    case 'extra-field': {
      const model = CBOR.decode(invocation.bytes) as unknown as Record<string, unknown>;
      return archiveOf(CBOR.encode({ ...model, zzz: 1 }));
    }
    case 'zero-nbf': {
      // An explicit `nbf: 0`, which ucanto never writes and dag-ucan leaves out of the signed payload.
      const model = CBOR.decode(invocation.bytes) as unknown as Record<string, unknown>;
      return 'nbf' in model ? car : archiveOf(CBOR.encode({ ...model, nbf: 0 }));
    }
    case 'swap-blocks':
      return archiveOf(invocation.bytes, false);
  }
}

type Decision = { identity: AuthIdentity } | { status: number; body: unknown };

async function decide(fastPath: boolean, car: Uint8Array): Promise<{ decision: Decision; revocationAsked: string[] }> {
  const revocationAsked: string[] = [];
  const revocations = { firstRevoked: async (keys: readonly string[]) => (revocationAsked.push(...keys), undefined) };
  const authenticator = createAuthenticator({
    oracleDid: ORACLE,
    maxTtlSeconds: MAX_TTL,
    verifier: inProcessVerifier(),
    revocations,
    fastPath,
  });
  const invocation = Buffer.from(car).toString('base64');
  const decision = await authenticator.authenticateArtifacts({ invocation }).then(
    (identity): Decision => ({ identity }),
    (error: unknown): Decision => {
      if (!(error instanceof HttpError)) throw error;
      return { status: error.status, body: error.body };
    },
  );
  return { decision, revocationAsked };
}

/** The bytes dag-ucan signs for the invocation in `car`, recorded by a verifier that accepts anything. */
async function dagUcanPayload(car: Uint8Array): Promise<Uint8Array> {
  const extracted = await DelegationCodec.extract(car);
  if (extracted.error) throw extracted.error;
  const delegation = extracted.ok;
  let captured: Uint8Array | undefined;
  await UCAN.verifySignature(delegation.data, {
    did: () => delegation.issuer.did(),
    verify: (data: Uint8Array) => ((captured = data), true),
  } as never);
  return captured!;
}

t.test('the fast path decides as ucanto does, with the same reasons and the same signed bytes', async (t) => {
  const audience = fastAudience(ORACLE)!;
  const seen = { inShape: 0, accepted: 0, refusedInShape: 0 };
  const seed = process.env.FAST_PATH_SEED ? Number(process.env.FAST_PATH_SEED) : undefined;
  await fc.assert(
    fc.asyncProperty(spec, async (s) => {
      const car = await mint(s);
      const [fast, slow] = [await decide(true, car), await decide(false, car)];
      t.same(fast, slow, `same decision for ${JSON.stringify({ ...s, ttl: String(s.ttl) })}`);
      let ucan: ReturnType<typeof readCommonUcan>;
      try {
        const archived = readArchive(car);
        ucan = readCommonUcan(archived.block, audience.bytes);
      } catch (error) {
        if (!(error instanceof OutOfShape)) throw error;
        return;
      }
      seen.inShape++;
      if ('identity' in fast.decision) seen.accepted++;
      else seen.refusedInShape++;
      const issuer = `did:key:${base58btc.encode(ucan.issuerKeyCode)}`;
      t.same(
        Buffer.from(signedPayload(ucan, issuer, audience.json)),
        Buffer.from(await dagUcanPayload(car)),
        'signed payload byte for byte',
      );
    }),
    { numRuns: 300, ...(seed !== undefined && { seed }) },
  );
  // Not vacuous: many cases took the fast path, both accepted and refused there.
  t.ok(seen.inShape >= 40, `${seen.inShape} invocations in the fast path's shape`);
  t.ok(seen.accepted >= 10, `${seen.accepted} accepted by it`);
  t.ok(seen.refusedInShape >= 10, `${seen.refusedInShape} refused by it`);
});

t.test('a long nonce (near the artifact limit) is read by the fast path and decided the same', async (t) => {
  const base = {
    issuer: 'user',
    audience: ORACLE,
    can: '*',
    with: 'ixo:oracle',
    ttl: 300,
    notBefore: undefined,
    fact: false,
    proof: false,
    mutation: { kind: 'none' },
  } as const;
  for (const nonce of ['x'.repeat(40_000), `"\\${'q'.repeat(100)}`]) {
    const car = await mint({ ...base, nonce } as Spec);
    const [fast, slow] = [await decide(true, car), await decide(false, car)];
    t.same(fast, slow);
    t.equal('identity' in fast.decision && fast.decision.identity.did, user.did(), 'accepted');
    t.ok(readCommonUcan(readArchive(car).block, fastAudience(ORACLE)!.bytes).nonce === nonce, 'in the shape');
  }
});

t.test('an oracle DID the fast path cannot encode plainly turns it off', async (t) => {
  t.equal(fastAudience('did:key:zNotBase58!!'), undefined);
  t.equal(fastAudience('did:ixo:with space'), undefined);
  t.ok(fastAudience('did:ixo:ixo1abc'), 'a did:ixo audience is encoded as dag-ucan does (did-core bytes)');
  t.same(fastAudience(ORACLE)?.bytes, DID.parse(ORACLE as `did:key:${string}`) as Uint8Array);
  t.same(fastAudience('did:ixo:ixo1abc')?.bytes, DID.parse('did:ixo:ixo1abc') as Uint8Array);
});
