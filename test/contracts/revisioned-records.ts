// What every RevisionedRecords does (the preferences and credits families share the shape): create-only keys
// and updates that name the revision they read, as a KV bucket's compare-and-set.
import type { Test } from 'tap';
import { changeRecord, type RevisionedRecords } from '../../dist/src/oracle/revisions.js';
import { isRevisionConflict } from '../../dist/src/store/revision.js';
import { rejectsWithConflict } from './revision.js';

export function revisionedRecordsContract<K, V>(
  t: Test,
  open: (t: Test) => Promise<RevisionedRecords<K, V>>,
  keys: [K, K],
  values: [V, V, V],
): void {
  const [key, otherKey] = keys;
  const [first, second, third] = values;

  t.test(
    'create-only, then updates at the revision read; a stale revision is a conflict that changes nothing',
    async (t) => {
      const records = await open(t);
      t.equal(await records.get(key), undefined);
      const r1 = await records.create(key, first);
      t.same(await records.get(key), { value: first, revision: r1 });
      await rejectsWithConflict(t, records.create(key, second), 'the key is taken');
      const r2 = await records.update(key, second, r1);
      t.ok(r2 > r1, 'revisions grow');
      await rejectsWithConflict(t, records.update(key, third, r1), 'a stale revision');
      t.same(await records.get(key), { value: second, revision: r2 });
      await rejectsWithConflict(t, records.update(otherKey, third, r1), 'no record to update');
      t.equal(await records.get(otherKey), undefined, 'keys apart');
    },
  );

  t.test('concurrent updates from one revision: one lands, the others conflict', async (t) => {
    const records = await open(t);
    const r1 = await records.create(key, first);
    const outcomes = await Promise.allSettled([
      records.update(key, second, r1),
      records.update(key, third, r1),
      records.update(key, third, r1),
    ]);
    t.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1);
    t.ok(
      outcomes
        .filter((o) => o.status === 'rejected')
        .every((o) => isRevisionConflict((o as PromiseRejectedResult).reason)),
    );
  });

  t.test('changeRecord redoes a change that lost a race, on the value that won', async (t) => {
    const records = await open(t);
    let calls = 0;
    // A writer that gets in between the first read and write: its create is made to land first (the change's own
    // write waits for it), since two creates in flight on a cluster may be applied in either order.
    let racer: Promise<unknown> | undefined;
    const raced = new Proxy(records, {
      get(target, property) {
        if (property === 'create') {
          return async (...args: Parameters<typeof target.create>) => {
            await racer?.catch(() => undefined);
            return target.create(...args);
          };
        }
        const member = Reflect.get(target, property, target);
        return typeof member === 'function' ? member.bind(target) : member;
      },
    });
    const result = await changeRecord(raced, key, (current) => {
      calls += 1;
      if (calls === 1) racer = records.create(key, first);
      return { value: current === undefined ? second : third, result: current };
    });
    t.equal(calls, 2, 'retried once');
    t.same(result, first, 'the second attempt saw the record that won');
    t.same((await records.get(key))?.value, third);
  });
}
