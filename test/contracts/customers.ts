// The behaviour every CustomerRepository must have (create-only IDs, creation keys, revision-checked updates),
// run against LMDB by test/repo-customers.test.ts; a replicated implementation runs the same suite.
import type { Test } from 'tap';
import { isRevisionConflict } from '../../dist/src/store/revision.js';
import type { CustomerRecord, CustomerRepository } from '../../dist/src/ussd/customers/repository.js';
import { rejectsWithConflict } from './revision.js';

/** A fresh, empty repository; the factory tears down what it opens when `t` ends. */
export type CustomerRepositoryFactory = (t: Test) => Promise<CustomerRepository>;

const T0 = Date.UTC(2026, 0, 15, 9, 0, 0);

function account(customerId: string, fields: Partial<CustomerRecord> = {}): CustomerRecord {
  return {
    customerId,
    fullName: 'Amina Otieno',
    phoneNumber: '+254712345678',
    pin: 'v1.sealed',
    failedPinAttempts: 0,
    createdAt: T0,
    ...fields,
  };
}

export function customerRepositoryContract(t: Test, open: CustomerRepositoryFactory): void {
  t.test('create, then get answers the record and its revision; an unknown ID is undefined', async (t) => {
    const repository = await open(t);
    const created = await repository.create(account('C0000000A', { email: 'amina@example.org' }));
    t.equal(created.outcome, 'created');
    const read = await repository.get('C0000000A');
    t.same(read?.value, account('C0000000A', { email: 'amina@example.org' }));
    t.type(read?.revision, 'number');
    t.same(created.outcome === 'created' && created.customer, read, 'create answers what get reads');
    t.equal(await repository.get('C0000000B'), undefined);
  });

  t.test('an ID is created once: a second account under it is refused and the first is unchanged', async (t) => {
    const repository = await open(t);
    await repository.create(account('C0000000A'));
    t.same(await repository.create(account('C0000000A', { fullName: 'Someone Else' })), { outcome: 'id-taken' });
    t.equal((await repository.get('C0000000A'))?.value.fullName, 'Amina Otieno');
  });

  t.test(
    'a creation key names one account: created again with it, nothing is written and the first answers',
    async (t) => {
      const repository = await open(t);
      const first = await repository.create(account('C0000000A'), 'session-1|12|digest');
      const again = await repository.create(account('C0000000B', { fullName: 'Someone Else' }), 'session-1|12|digest');
      t.equal(again.outcome, 'existing');
      t.same(again.outcome === 'existing' && again.customer, first.outcome === 'created' && first.customer);
      t.equal(await repository.get('C0000000B'), undefined, 'no second account');
      t.equal(
        (await repository.create(account('C0000000C'), 'session-1|20|digest')).outcome,
        'created',
        'another key, another account',
      );
    },
  );

  t.test('a creation key is not bound when its ID was taken', async (t) => {
    const repository = await open(t);
    await repository.create(account('C0000000A'));
    t.same(await repository.create(account('C0000000A', { fullName: 'Other' }), 'key-1'), { outcome: 'id-taken' });
    t.equal(
      (await repository.create(account('C0000000B', { fullName: 'Other' }), 'key-1')).outcome,
      'created',
      'the retry with a new ID binds the key',
    );
  });

  t.test(
    'update with the revision read replaces the record and moves the revision; a stale one is refused',
    async (t) => {
      const repository = await open(t);
      await repository.create(account('C0000000A'));
      const read = (await repository.get('C0000000A'))!;
      const revision = await repository.update({ ...read.value, failedPinAttempts: 1 }, read.revision);
      t.not(revision, read.revision);
      t.same(await repository.get('C0000000A'), { value: { ...read.value, failedPinAttempts: 1 }, revision });
      await rejectsWithConflict(
        t,
        repository.update({ ...read.value, failedPinAttempts: 2 }, read.revision),
        'the stale revision is a conflict',
      );
      t.equal((await repository.get('C0000000A'))?.value.failedPinAttempts, 1, 'and writes nothing');
      await rejectsWithConflict(
        t,
        repository.update(account('C0000000F'), read.revision),
        'an unknown account is a conflict',
      );
      t.equal(await repository.get('C0000000F'), undefined, 'and is not created');
    },
  );

  t.test('of concurrent updates from the same revision exactly one commits', async (t) => {
    const repository = await open(t);
    await repository.create(account('C0000000A'));
    const read = (await repository.get('C0000000A'))!;
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        repository.update({ ...read.value, failedPinAttempts: i + 1 }, read.revision),
      ),
    );
    const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i + 1] : []));
    t.equal(won.length, 1, 'one winner');
    t.ok(
      results.every((r) => r.status === 'fulfilled' || isRevisionConflict(r.reason)),
      'the others are conflicts',
    );
    t.equal((await repository.get('C0000000A'))?.value.failedPinAttempts, won[0], "the winner's record is stored");
  });

  t.test('page walks every account, one page at a time, also while the walk rewrites them', async (t) => {
    const repository = await open(t);
    const ids = Array.from({ length: 7 }, (_, i) => `C000001${i}0`);
    await Promise.all(ids.map((id) => repository.create(account(id))));
    const seen = new Map<string, number>();
    let after: string | undefined;
    let pages = 0;
    do {
      const page = await repository.page(after, 3);
      t.ok(page.records.length <= 3, 'no more than the limit');
      for (const { value, revision } of page.records) {
        seen.set(value.customerId, (seen.get(value.customerId) ?? 0) + 1);
        // As a key rotation does: the walk must still reach every account.
        if (value.pin === 'v1.sealed') await repository.update({ ...value, pin: 'v1.resealed' }, revision);
      }
      after = page.next;
    } while (after !== undefined && ++pages < 20);
    t.same([...seen.keys()].sort(), ids, 'every account is met');
    for (const id of ids) t.equal((await repository.get(id))?.value.pin, 'v1.resealed');
  });
}
