// Units of the front door's per-request shortcuts: request ids and the auth cache's LRU.
import t from 'tap';
import { nextRequestId } from '../dist/src/http/request-id.js';
import { ExpiringLru } from '../dist/src/oracle/auth/cache.js';

t.test('request ids are UUID-shaped and distinct', async (t) => {
  const ids = Array.from({ length: 10_000 }, () => nextRequestId());
  for (const id of [ids[0], ids[9_999]]) t.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  t.equal(new Set(ids).size, ids.length);
});

t.test('the LRU evicts the least recently used entry, a recent hit included', async (t) => {
  const lru = new ExpiringLru<number>(8); // a hit moves an entry when it was touched more than 2 insertions ago
  const far = Date.now() + 60_000;
  for (let i = 0; i < 8; i++) lru.set(`k${i}`, i, far);
  t.equal(lru.get('k0'), 0, 'k0 is touched: moved to the back (8 insertions since)');
  lru.set('k8', 8, far);
  t.equal(lru.get('k1'), undefined, 'k1 was the least recently used');
  t.equal(lru.get('k0'), 0, 'k0 survived');
  t.equal(lru.size, 8);
  for (let i = 9; i < 15; i++) lru.set(`k${i}`, i, far);
  t.equal(lru.get('k0'), 0, 'k0 survives six more insertions (the six entries older than it went)');
  for (let i = 2; i < 8; i++) t.equal(lru.get(`k${i}`), undefined, `k${i} evicted`);
});

t.test('the LRU forgets expired entries', async (t) => {
  const lru = new ExpiringLru<string>(4);
  lru.set('a', 'A', 1_000);
  t.equal(lru.get('a', 999), 'A');
  t.equal(lru.get('a', 1_000), undefined);
  t.equal(lru.size, 0);
});
