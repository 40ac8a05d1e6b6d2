// What every RevocationRepository does: a CID stays revoked until the delegation would have expired.
import type { Test } from 'tap';
import type { RevocationRepository } from '../../dist/src/oracle/revocations.js';

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

  t.test('onRevoked hears each revocation by the time revoke resolves', async (t) => {
    const revocations = await open(t);
    const heard: string[] = [];
    revocations.onRevoked((cid) => heard.push(cid));
    await revocations.revoke('bafy-heard', 2e9);
    t.ok(heard.includes('bafy-heard'));
  });
}
