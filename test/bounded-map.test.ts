// The one bounded memo (src/base/bounded-map.ts): never more than its limit, the oldest key goes first, a known key
// is replaced in place without evicting another.
import t from 'tap';
import { BoundedMap } from '../dist/src/base/bounded-map.js';

t.test('a new key past the limit drops the oldest; hits do not move keys', async (t) => {
  const map = new BoundedMap<string, number>(3);
  for (const [i, key] of ['a', 'b', 'c'].entries()) map.set(key, i);
  t.equal(map.get('a'), 0, 'a hit');
  map.set('d', 3);
  t.equal(map.size, 3);
  t.notOk(map.has('a'), 'the oldest went first, though it was just read');
  t.same(
    ['b', 'c', 'd'].map((key) => map.get(key)),
    [1, 2, 3],
  );
});

t.test('setting a known key at the limit evicts nothing', async (t) => {
  const map = new BoundedMap<string, number>(2);
  map.set('a', 1).set('b', 2).set('a', 10);
  t.equal(map.size, 2);
  t.equal(map.get('a'), 10);
  t.equal(map.get('b'), 2);
});

t.test('stays bounded against endless new keys', async (t) => {
  const map = new BoundedMap<number, number>(100);
  for (let i = 0; i < 10_000; i++) map.set(i, i);
  t.equal(map.size, 100);
  t.ok(map.has(9_999) && map.has(9_900) && !map.has(9_899), 'the last 100 keys are the ones kept');
  t.ok(map.delete(9_999));
  map.clear();
  t.equal(map.size, 0);
});

t.test('a limit below 1 is refused', async (t) => {
  t.throws(() => new BoundedMap(0), RangeError);
});
