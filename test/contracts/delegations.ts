// What every DelegationRepository does: one delegation per user (to the oracle it was opened for), replaced
// by the next one stored.
import type { Test } from 'tap';
import {
  delegationStatus,
  type DelegationRepository,
  type StoredDelegation,
} from '../../dist/src/oracle/identity/delegations.js';

/** Opens the repository of `oracleDid`'s delegations; two calls in one test share the storage. */
export type DelegationRepositoryFactory = (t: Test) => Promise<(oracleDid: string) => DelegationRepository>;

const delegation = (issuer: string, raw: string, expiration?: number): StoredDelegation => ({
  raw,
  issuer,
  audience: 'did:key:zOracle',
  storedAt: new Date().toISOString(),
  ...(expiration === undefined ? {} : { expiration }),
});

export function delegationRepositoryContract(t: Test, open: DelegationRepositoryFactory): void {
  t.test('stored per user, replaced by the next one, removed', async (t) => {
    const repositoryOf = await open(t);
    const delegations = repositoryOf('did:key:zOracle');
    t.equal(await delegations.get('did:key:zA'), undefined);
    await delegations.put(delegation('did:key:zA', 'first'));
    await delegations.put(delegation('did:key:zB', 'theirs'));
    const second = delegation('did:key:zA', 'second', 2000);
    await delegations.put(second);
    t.same(await delegations.get('did:key:zA'), second, 'the last one stored');
    t.equal((await delegations.get('did:key:zB'))?.raw, 'theirs');
    t.equal(await repositoryOf('did:key:zOtherOracle').get('did:key:zA'), undefined, 'per oracle');
    await delegations.remove('did:key:zA');
    t.equal(await delegations.get('did:key:zA'), undefined);
    await delegations.remove('did:key:zA');
    t.equal((await delegations.get('did:key:zB'))?.raw, 'theirs');
  });

  t.test('status: authorized while stored and unexpired', async (t) => {
    t.same(delegationStatus(undefined), { authorized: false });
    t.same(delegationStatus(delegation('u', 'r')), { authorized: true });
    t.same(delegationStatus(delegation('u', 'r', 100), 99), { authorized: true, expiration: 100 });
    t.same(delegationStatus(delegation('u', 'r', 100), 100), { authorized: false, expiration: 100 });
  });
}
