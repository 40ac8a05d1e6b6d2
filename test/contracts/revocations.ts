// What every RevocationRepository does: a CID stays revoked until the delegation would have expired.
import type { Test } from 'tap';
import { revocationKey } from '../../dist/src/oracle/auth/index.js';
import type { RevocationRepository } from '../../dist/src/oracle/identity/revocations.js';

export type RevocationRepositoryFactory = (t: Test) => Promise<RevocationRepository>;

export function revocationRepositoryContract(t: Test, open: RevocationRepositoryFactory): void {
  t.test('revoked until the expiration, or for good without one; revoking twice is revoking once', async (t) => {
    const revocations = await open(t);
    t.equal(await revocations.isRevoked('bafy-a'), false);
    await revocations.revoke('bafy-a', 1000);
    await revocations.revoke('bafy-forever');
    await revocations.revoke('bafy-forever');
    t.equal(await revocations.isRevoked('bafy-a', 999), true);
    t.equal(await revocations.isRevoked('bafy-a', 1000), false, 'expired anyway: no longer needed');
    t.equal(await revocations.isRevoked('bafy-forever', 1e12), true);
    t.equal(await revocations.isRevoked('bafy-other', 0), false);
  });

  t.test('keys are signatures (base64url: - and _ included), each its own', async (t) => {
    const revocations = await open(t);
    const signature = Uint8Array.from({ length: 64 }, (_, i) => (i % 2 ? 0xfb : 0xff));
    const other = Uint8Array.from(signature, (byte, i) => (i === 63 ? byte ^ 1 : byte));
    const key = revocationKey(signature);
    t.match(key, /^sig-[A-Za-z0-9_-]+$/);
    t.ok(key.includes('-', 4) && key.includes('_'), 'both base64url extras appear');
    await revocations.revoke(key, 2e9);
    t.equal(await revocations.isRevoked(key, 1e9), true);
    t.equal(
      await revocations.isRevoked(revocationKey(other), 1e9),
      false,
      'one bit of the signature apart: not revoked',
    );
  });

  t.test('firstRevoked: the first of a chain still revoked, or undefined', async (t) => {
    const revocations = await open(t);
    await revocations.revoke('sig-second', 1000);
    await revocations.revoke('bafy-legacy-cid');
    t.equal(await revocations.firstRevoked(['sig-first', 'sig-second', 'bafy-legacy-cid'], 999), 'sig-second');
    t.equal(
      await revocations.firstRevoked(['sig-first', 'sig-second', 'bafy-legacy-cid'], 1000),
      'bafy-legacy-cid',
      'the expired one no longer counts',
    );
    t.equal(await revocations.firstRevoked(['sig-first'], 0), undefined);
    t.equal(await revocations.firstRevoked([], 0), undefined);
  });

  t.test('onRevoked hears each revocation by the time revoke resolves', async (t) => {
    const revocations = await open(t);
    const heard: string[] = [];
    revocations.onRevoked((cid) => heard.push(cid));
    await revocations.revoke('bafy-heard', 2e9);
    t.ok(heard.includes('bafy-heard'));
  });
}
