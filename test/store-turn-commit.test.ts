// The turn commit (src/store/turn-commit.ts): the writes of one event-loop turn go in one synchronous LMDB
// transaction at the turn's end, resolved only once it committed; later writes join the next; a faulty write
// fails alone.
import t from 'tap';
import { tempStore } from './helpers/store.js';

t.test(
  'the writes of one turn share one transaction; each resolves with what it returned, once committed',
  async (t) => {
    const store = tempStore(t);
    const db = store.db<string>('health');
    const commits: number[] = [];
    store.turn.onCommitted((seconds) => commits.push(seconds));

    const writes = ['a', 'b', 'c'].map((key) =>
      store.turn.write(() => {
        db.put(key, `value-${key}`);
        return key.toUpperCase();
      }),
    );
    t.equal(db.get('a'), undefined, 'nothing is written before the turn ends');
    t.same(await Promise.all(writes), ['A', 'B', 'C']);
    t.equal(commits.length, 1, 'one transaction for the turn');
    t.ok(commits[0] >= 0, 'its duration is reported');
    t.same(
      ['a', 'b', 'c'].map((key) => db.get(key)),
      ['value-a', 'value-b', 'value-c'],
      'committed when the writes resolved',
    );

    // A write made once the first resolved is a later turn's: a transaction of its own.
    await store.turn.write(() => db.put('d', 'value-d'));
    t.equal(commits.length, 2);
  },
);

t.test(
  'a write that throws is refused and leaves nothing behind; the other writes of its turn still commit',
  async (t) => {
    const store = tempStore(t);
    const db = store.db<string>('health');
    const commits: number[] = [];
    store.turn.onCommitted((seconds) => commits.push(seconds));
    const failure = new Error('this write cannot be made');
    const before = store.turn.write(() => (db.put('before', 'kept'), 'first'));
    const faulty = store.turn.write(() => {
      db.put('half', 'written');
      throw failure;
    });
    const after = store.turn.write(() => (db.put('after', 'kept'), 'third'));
    await t.rejects(faulty, failure, 'the faulty write is refused with its error');
    t.equal(await before, 'first', 'a write of the same turn commits');
    t.equal(await after, 'third');
    t.equal(db.get('half'), undefined, 'nothing half-written stays behind');
    t.same([db.get('before'), db.get('after')], ['kept', 'kept']);
    t.equal(commits.length, 2, 'the turn failed together, then its good writes committed one by one');

    t.equal(await store.turn.write(() => (db.put('next', 'turn'), 'ok')), 'ok', 'the next turn commits together again');
    t.equal(commits.length, 3);
  },
);

t.test("lmdb's asynchronous writes from the same thread, in flight meanwhile, are kept too", async (t) => {
  const store = tempStore(t);
  const db = store.db<string>('health');
  const asynchronous = Array.from({ length: 50 }, (_, i) => db.put(`async-${i}`, 'a'));
  const turns = Array.from({ length: 50 }, (_, i) => store.turn.write(() => db.put(`turn-${i}`, 't')));
  await Promise.all([...asynchronous, ...turns]);
  const more = Array.from({ length: 50 }, (_, i) => [
    db.put(`async-${i + 50}`, 'a'),
    store.turn.write(() => db.put(`turn-${i + 50}`, 't')),
  ]).flat();
  await Promise.all(more);
  t.equal([...db.getKeys({ start: 'async-', end: 'async.' })].length, 100);
  t.equal([...db.getKeys({ start: 'turn-', end: 'turn.' })].length, 100);
});

t.test('a closed store refuses every write of the turn', async (t) => {
  const store = tempStore(t);
  const db = store.db<string>('health');
  const writes = [store.turn.write(() => db.put('late', 'write')), store.turn.write(() => db.put('later', 'write'))];
  await store.close();
  for (const write of writes) await t.rejects(write, 'the transaction cannot begin');
});
