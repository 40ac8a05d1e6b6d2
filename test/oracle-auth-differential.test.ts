// A seeded differential suite: ucanto-minted invocations and delegations of many shapes (capabilities, audiences,
// time bounds, chains aligned or not, link-only proofs), each mutated or not (a re-encoding of its root, a flipped
// byte), sent in both header modes. The server's decision is compared with ucanto's own: Delegation.extract, then
// @ucanto/validator's access() for an invocation and claim() for a delegation (the same capability parser and
// canIssue rule), with ucanto's own Ed25519 verifier, plus the wire format's rules (audience, time bounds, TTL).
// The server may refuse more (one canonical encoding, proofs a carried tree, no weak keys); it must never accept
// what ucanto refuses. Seeded (DIFFERENTIAL_SEED), so a failure is reproduced by its seed.
import t from 'tap';
import { Delegation as DelegationCodec } from '@ucanto/core';
import type { Capability, Delegation, DID, Signer } from '@ucanto/interface';
import { Verifier } from '@ucanto/principal';
import { claim, access } from '@ucanto/validator';
import { createAuthenticator, inProcessVerifier, OracleAccess } from '../dist/src/oracle/auth/index.js';
import { createDelegation, createInvocation, encodeArtifact, generateKey } from '../dist/src/tools/mint-ucan.js';
import { archiveOf, reEncodings } from './helpers/ucan-mutations.js';

const SEED = Number(process.env.DIFFERENTIAL_SEED ?? 30);
const RUNS = 90;
const MAX_TTL = 900;

/** mulberry32: a small seeded PRNG. */
function prng(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
    chance: (p: number) => next() < p,
  };
}

const oracle = await generateKey();
const ORACLE = oracle.did();
const keys = [await generateKey(), await generateKey(), await generateKey()];
const now = () => Math.floor(Date.now() / 1000);

const COVERING = ['ixo:oracle', 'ixo:*', 'ucan:*'];
const canIssue = (capability: { with: string }, issuer: DID) =>
  COVERING.includes(capability.with) || capability.with === issuer;
const ucantoConfig = {
  authority: Verifier.parse(ORACLE),
  principal: Verifier,
  canIssue,
  validateAuthorization: () => ({ ok: {} }),
};

/** ucanto's decision, with the wire format's rules: the DID it authenticates, or undefined. */
async function ucantoDecision(raw: string, mode: 'invocation' | 'delegation'): Promise<string | undefined> {
  // ucanto decodes lazily: a malformed block throws when a field is first read, which is a refusal.
  return ucantoDecisionOrThrow(raw, mode).catch(() => undefined);
}

async function ucantoDecisionOrThrow(raw: string, mode: 'invocation' | 'delegation'): Promise<string | undefined> {
  const extracted = await DelegationCodec.extract(Buffer.from(raw, 'base64'));
  if (extracted.error) return undefined;
  const artifact = extracted.ok as Delegation;
  if (artifact.audience.did() !== ORACLE) return undefined;
  const at = now();
  if (artifact.expiration <= at || (artifact.notBefore != null && at <= artifact.notBefore)) return undefined;
  if (mode === 'invocation') {
    if (!Number.isFinite(artifact.expiration) || artifact.expiration > at + MAX_TTL) return undefined;
    const result = await access(artifact as never, { capability: OracleAccess, ...ucantoConfig } as never);
    return result.error ? undefined : artifact.issuer.did();
  }
  const result = await claim(OracleAccess, [artifact], ucantoConfig as never);
  return result.error ? undefined : artifact.issuer.did();
}

const CAPABILITIES: Capability[] = [
  { can: '*', with: 'ixo:oracle' },
  { can: '*', with: 'ixo:*' },
  { can: '*', with: 'ucan:*' },
  { can: '*', with: 'IXO:oracle' },
  { can: 'oracle/read', with: 'ixo:oracle' },
  { can: '*', with: 'ixo:other' },
];

/** One artifact of a random shape; `shape` says how it was made and what was done to it. */
async function artifact(random: ReturnType<typeof prng>): Promise<{ raw: string; shape: string }> {
  const issuer = random.pick(keys);
  const at = now();
  const depth = random.pick([0, 0, 1, 1, 2, 3]);
  let proof: Delegation | undefined;
  let holder: Signer = random.pick(keys);
  const shape: string[] = [];
  for (let i = 0; i < depth; i++) {
    const next = i === depth - 1 ? issuer : random.pick(keys);
    // Mostly aligned (addressed to the next issuer), sometimes not.
    const audience = random.chance(0.8) ? next.did() : random.pick([ORACLE, random.pick(keys).did()]);
    const expiration = random.chance(0.9) ? at + random.pick([120, 3600]) : at - 5;
    proof = await createDelegation({
      issuer: holder,
      audience,
      capabilities: [random.pick(CAPABILITIES)],
      expiration,
      ...(proof && { proofs: [proof] }),
    });
    shape.push(`proof(${audience === next.did() ? 'aligned' : 'misaligned'}${expiration < at ? ', expired' : ''})`);
    holder = next;
  }
  const proofs = proof ? [random.chance(0.15) ? (proof.cid as never) : proof] : [];
  if (proof && proofs[0] !== proof) shape.push('link-only');
  const audience = random.chance(0.85) ? ORACLE : random.pick(keys).did();
  const expiration = random.pick([at + 60, at + 300, at + 2000, at - 5]);
  const notBefore = random.chance(0.2) ? random.pick([at - 30, at + 100]) : undefined;
  const capability = random.chance(0.7) ? CAPABILITIES[0]! : random.pick(CAPABILITIES);
  const options = { issuer, audience, expiration, ...(notBefore !== undefined && { notBefore }), proofs };
  const root = random.chance(0.5)
    ? await createInvocation({ ...options, capability })
    : await createDelegation({ ...options, capabilities: [capability] });
  shape.push(
    `${capability.can} on ${capability.with}`,
    audience === ORACLE ? 'to the oracle' : 'to another',
    `exp ${expiration - at}`,
    `nbf ${notBefore === undefined ? '-' : notBefore - at}`,
  );
  let raw = await encodeArtifact(root);
  const mutation = random.pick(['none', 'none', 'none', 're-encoding', 'flip']);
  if (mutation === 're-encoding') {
    const [name, block] = random.pick(Object.entries(reEncodings(root)));
    const blocks = [...root.iterateIPLDBlocks()].filter((b) => `${b.cid}` !== `${root.cid}`);
    raw = await archiveOf(block, blocks as never);
    shape.push(`re-encoded: ${name}`);
  } else if (mutation === 'flip') {
    const bytes = Buffer.from(raw, 'base64');
    const at = Math.floor(random.next() * bytes.length);
    bytes[at]! ^= 1 << Math.floor(random.next() * 8);
    raw = bytes.toString('base64');
    shape.push(`byte ${at} flipped`);
  }
  return { raw, shape: shape.join(', ') };
}

t.test(
  `the server never accepts what ucanto refuses (seed ${SEED}, ${RUNS} artifacts, both header modes)`,
  async (t) => {
    const random = prng(SEED);
    const servers = [true, false].map((fastPath) =>
      createAuthenticator({
        oracleDid: ORACLE,
        maxTtlSeconds: MAX_TTL,
        verifier: inProcessVerifier(),
        fastPath,
        cacheSize: 1,
      }),
    );
    const tally = { agreed: 0, accepted: 0, stricter: 0 };
    for (let run = 0; run < RUNS; run++) {
      const { raw, shape } = await artifact(random);
      for (const mode of ['invocation', 'delegation'] as const) {
        const headers =
          mode === 'invocation'
            ? { authorization: `Bearer ${raw}`, 'x-auth-type': 'ucan' }
            : { 'x-ucan-delegation': raw };
        const expected = await ucantoDecision(raw, mode);
        for (const [i, server] of servers.entries()) {
          const got = await server.authenticate(headers).then(
            (identity) => identity.did,
            (error: { status?: number }) => {
              if (error.status !== 401) throw error;
              return undefined;
            },
          );
          if (got !== undefined && got !== expected)
            t.fail(
              `run ${run} (${mode}, fast path ${i === 0}): the server accepted ${got}, ucanto ${expected ?? 'refuses'}: ${shape}`,
            );
          if (got === expected) tally.agreed++;
          if (got !== undefined) tally.accepted++;
          if (got === undefined && expected !== undefined) {
            tally.stricter++;
            // DIFFERENTIAL_VERBOSE=1 lists them: re-encodings, misaligned, expired or link-only proofs, flipped bytes.
            if (process.env.DIFFERENTIAL_VERBOSE)
              t.comment(`refused by the server only (${mode}, fast path ${i === 0}): ${shape}`);
          }
        }
      }
    }
    t.comment(
      `decisions: ${tally.agreed} agreed, ${tally.accepted} accepted, ${tally.stricter} refused by the server only`,
    );
    t.ok(tally.accepted > 0, 'some artifacts are accepted (the suite is not vacuous)');
    t.ok(tally.agreed > tally.stricter, 'the server mostly agrees with ucanto');
  },
);
