// The node:crypto Ed25519 verifier against ucanto's own (@noble/ed25519), and the CPU-pool path.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { Signature } from '@ucanto/core';
import { ed25519 } from '@ucanto/principal';
import { verifyEd25519 } from '../dist/src/oracle/auth/ed25519.js';
import { createAuthenticator, poolVerifier, VERIFY_TASK, type SignatureCheck } from '../dist/src/oracle/auth/index.js';
import { CpuPool } from '../dist/src/runtime/cpu-pool.js';
import { verifyEd25519Batch } from '../dist/workers/crypto.js';
import { generateKey, mintInvocation } from '../dist/src/tools/mint-ucan.js';
import { generateSigner, parseSigner } from '../dist/src/oracle/auth/node-signer.js';

/** The raw 32-byte key ucanto's Ed25519 verifier keeps (its type does not declare it). */
const publicKeyOf = (signer: Awaited<ReturnType<typeof ed25519.generate>>) =>
  (signer.verifier as unknown as { publicKey: Uint8Array }).publicKey;

const flip = (bytes: Uint8Array, index: number) => {
  const copy = Uint8Array.from(bytes);
  copy[index % copy.length] ^= 0x40;
  return copy;
};

/** Valid and invalid signatures made by real keys, each with ucanto's verdict. */
async function cases() {
  const list: Array<{ name: string; check: SignatureCheck; ucanto: boolean }> = [];
  for (let i = 0; i < 12; i++) {
    const signer = await ed25519.generate();
    const other = await ed25519.generate();
    const data = randomBytes(1 + i * 37);
    const signature = await signer.sign(data);
    // noble throws when a flipped bit leaves R off the curve; that is a refusal too.
    const verdict = async (key: ed25519.EdSigner, bytes: Uint8Array, raw: Uint8Array) => {
      try {
        return await key.verifier.verify(bytes, Signature.create(Signature.EdDSA, raw));
      } catch {
        return false;
      }
    };
    const publicKey = publicKeyOf(signer);
    list.push(
      {
        name: `valid #${i}`,
        check: { publicKey, data, signature: signature.raw },
        ucanto: await verdict(signer, data, signature.raw),
      },
      {
        name: `flipped signature #${i}`,
        check: { publicKey, data, signature: flip(signature.raw, i * 5) },
        ucanto: await verdict(signer, data, flip(signature.raw, i * 5)),
      },
      {
        name: `changed data #${i}`,
        check: { publicKey, data: flip(data, i), signature: signature.raw },
        ucanto: await verdict(signer, flip(data, i), signature.raw),
      },
      {
        name: `other key #${i}`,
        check: { publicKey: publicKeyOf(other), data, signature: signature.raw },
        ucanto: await verdict(other, data, signature.raw),
      },
    );
  }
  return list;
}

t.test('node:crypto agrees with ucanto on valid and invalid signatures', async (t) => {
  const all = await cases();
  t.equal(all.filter((c) => c.ucanto).length, 12, 'ucanto accepts exactly the valid ones');
  for (const { name, check, ucanto } of all) {
    t.equal(verifyEd25519(check.publicKey, check.data, check.signature), ucanto, name);
  }
  t.same(
    verifyEd25519Batch(all.map((c) => c.check)),
    all.map((c) => c.ucanto),
    'the piscina task answers the same, in order',
  );
});

t.test('malformed keys and signatures are false, never a throw', async (t) => {
  const signer = await ed25519.generate();
  const data = randomBytes(40);
  const { raw } = await signer.sign(data);
  t.equal(verifyEd25519(publicKeyOf(signer).subarray(0, 31), data, raw), false);
  t.equal(verifyEd25519(publicKeyOf(signer), data, raw.subarray(0, 63)), false);
  t.equal(verifyEd25519(new Uint8Array(32), data, raw), false);
  t.equal(verifyEd25519(new Uint8Array(32).fill(0xff), data, new Uint8Array(64).fill(0xff)), false);
});

t.test('poolVerifier runs the checks in the CPU pool, one task per burst', async (t) => {
  const pool = new CpuPool({ maxThreads: 1 });
  t.teardown(() => pool.close());
  const tasks: string[] = [];
  const runner = {
    run<T>(name: string, payload: unknown): Promise<T> {
      tasks.push(name);
      return pool.run<T>(name, payload);
    },
  };
  const verify = poolVerifier(runner);
  const all = await cases();
  const half = Math.floor(all.length / 2);
  const [first, second] = await Promise.all([
    verify(all.slice(0, half).map((c) => c.check)),
    verify(all.slice(half).map((c) => c.check)),
  ]);
  t.same(
    [...first, ...second],
    all.map((c) => c.ucanto),
  );
  t.same(tasks, [VERIFY_TASK], 'two callers in the same turn share one pool task');

  // Through the authenticator: a cold artifact is verified in the pool, a warm one is not.
  const oracle = await generateKey();
  const user = await generateKey();
  const auth = createAuthenticator({ oracleDid: oracle.did(), maxTtlSeconds: 900, verifier: verify });
  const headers = {
    'x-auth-type': 'ucan',
    authorization: `Bearer ${await mintInvocation({ issuer: user, audience: oracle.did() })}`,
  };
  t.equal((await auth.authenticate(headers)).did, user.did());
  t.equal(tasks.length, 2);
  t.equal((await auth.authenticate(headers)).did, user.did());
  t.equal(tasks.length, 2, 'the cache hit did not reach the pool');
});

t.test('a failing pool is a server error, not a 401', async (t) => {
  const oracle = await generateKey();
  const user = await generateKey();
  const broken = { run: async () => Promise.reject(new Error('pool destroyed')) } as never;
  const auth = createAuthenticator({ oracleDid: oracle.did(), maxTtlSeconds: 900, verifier: poolVerifier(broken) });
  const headers = {
    'x-auth-type': 'ucan',
    authorization: `Bearer ${await mintInvocation({ issuer: user, audience: oracle.did() })}`,
  };
  await t.rejects(auth.authenticate(headers), { name: 'VerifierUnavailable', message: /pool destroyed/ });
});

t.test('the node:crypto signer signs exactly as ucanto’s own, with the same key bytes and DID', async (t) => {
  for (let i = 0; i < 4; i++) {
    const fast = generateSigner();
    const formatted = ed25519.format(fast);
    const slow = ed25519.parse(formatted); // ucanto's signer, signing with @noble/ed25519
    t.equal(fast.did(), slow.did(), 'the DID comes from the public key ucanto reads');
    t.equal(parseSigner(formatted).did(), fast.did(), 'the formatted key parses back');
    const data = randomBytes(1 + i * 101);
    const signature = await fast.sign(data);
    t.same(Buffer.from(signature), Buffer.from(await slow.sign(data)), 'Ed25519 is deterministic: the same bytes');
    t.equal(signature.code, Signature.EdDSA);
    t.ok(await slow.verifier.verify(data, signature), 'ucanto verifies it');
    t.ok(verifyEd25519(publicKeyOf(slow), data, signature.raw), 'so does node:crypto');
  }
});
