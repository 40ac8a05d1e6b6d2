// The UssdSessionRepository contract against LMDB, and the LMDB expiry index: the sweep removes exactly the
// expired sessions and reads only the expired range of the index, never the session database as a whole.
import t from 'tap';
import type { Store } from '../dist/src/store/env.js';
import { LmdbUssdSessionRepository } from '../dist/src/ussd/sessions/lmdb-repository.js';
import { rejectsWithConflict } from './contracts/revision.js';
import { session, T0, ussdSessionRepositoryContract } from './contracts/ussd-sessions.js';
import { tempStore } from './helpers/store.js';

const freshStore = (t: Tap.Test) => tempStore(t, 'repo-ussd-sessions--');

ussdSessionRepositoryContract(t, async (t) => new LmdbUssdSessionRepository(freshStore(t)));

/** The store with every call on its databases recorded as `<database>.<method>` with its arguments. */
function recorded(store: Store) {
  const calls: { call: string; args: unknown[] }[] = [];
  const spied: Store = {
    ...store,
    get root() {
      return store.root;
    },
    get closed() {
      return store.closed;
    },
    db(name) {
      const db = store.db(name);
      return new Proxy(db, {
        get(target, property, receiver) {
          const value = Reflect.get(target, property, receiver);
          if (typeof value !== 'function') return value;
          return (...args: unknown[]) => {
            calls.push({ call: `${name}.${String(property)}`, args });
            return value.apply(target, args);
          };
        },
      });
    },
  };
  return { spied, calls };
}

t.test('the sweep removes exactly the expired sessions and reads only the expired range of the index', async (t) => {
  const store = freshStore(t);
  const { spied, calls } = recorded(store);
  const repository = new LmdbUssdSessionRepository(spied);
  const now = T0 + 100_000;
  // 2 000 sessions: 1 in 20 expired (some at exactly now), the rest live until later, some of them ended.
  await Promise.all(
    Array.from({ length: 2000 }, (_, i) => {
      const expiresAt = i % 20 === 0 ? now - (i % 3) * 1000 : now + 1 + i;
      return repository.begin(session(`s-${i}`, expiresAt, i % 7 === 1 ? { state: 'ended' } : {}), T0);
    }),
  );
  const liveBefore = (await repository.live(now)).length;
  calls.length = 0;

  t.equal(await repository.removeExpired(now), 100, 'the 100 expired sessions are removed');
  const rangeReads = calls.filter(({ call }) => call.endsWith('.getRange') || call.endsWith('.getKeys'));
  t.equal(rangeReads.length, 1, 'one range read');
  t.match(rangeReads[0], { call: 'ussd-session-expiry.getKeys', args: [{ end: String(now + 1).padStart(15, '0') }] }, 'of the index, ending after now');
  t.notOk('start' in (rangeReads[0]?.args[0] as object), 'from its beginning: everything before is expired too');
  const sessionReads = calls.filter(({ call }) => call === 'ussd-session-records.get');
  t.equal(sessionReads.length, 100, 'only the expired sessions are read');

  for (let i = 0; i < 2000; i += 20) t.equal(await repository.get(`s-${i}`), undefined);
  t.ok(await repository.get('s-1'), 'a live (ended) session stays');
  t.ok(await repository.get('s-2'), 'a live session stays');
  t.equal((await repository.live(now)).length, liveBefore, 'the live set is unchanged');
  t.equal(await repository.removeExpired(now), 0, 'a second sweep finds nothing');
});

t.test('a sweep of more expired sessions than one batch removes them all', async (t) => {
  const repository = new LmdbUssdSessionRepository(freshStore(t));
  await Promise.all(Array.from({ length: 2500 }, (_, i) => repository.begin(session(`s-${i}`, T0 + 1000), T0)));
  await repository.begin(session('live', T0 + 5000), T0);
  t.equal(await repository.removeExpired(T0 + 1000), 2500);
  t.same(await repository.live(T0 + 1000), [{ sessionId: 'live', expiresAt: T0 + 5000 }]);
});

t.test('a renewed session leaves no stale index entry behind: the sweep at its old expiry keeps it', async (t) => {
  const repository = new LmdbUssdSessionRepository(freshStore(t));
  const begun = session('s-1', T0 + 1000);
  await repository.update(session('s-1', T0 + 9000), { value: begun, revision: await repository.begin(begun, T0) });
  t.equal(await repository.removeExpired(T0 + 5000), 0);
  t.equal((await repository.get('s-1'))?.value.expiresAt, T0 + 9000);
});

t.test('sessions stored before the index existed are indexed when the repository opens', async (t) => {
  const store = freshStore(t);
  const raw = store.db<Record<string, unknown>>('ussd-sessions');
  await raw.put('old-live', session('old-live', T0 + 5000));
  await raw.put('old-expired', session('old-expired', T0 + 1000));
  const repository = new LmdbUssdSessionRepository(store);
  t.same(await repository.live(T0 + 1000), [{ sessionId: 'old-live', expiresAt: T0 + 5000 }]);
  t.equal((await repository.get('old-live'))?.revision, 0, 'a record without a revision reads as revision 0');
  t.equal(await repository.removeExpired(T0 + 1000), 1);
  t.equal(await repository.get('old-expired'), undefined);
});

t.test('sessions of the database from before entry versions move once, each with its revision, index kept', async (t) => {
  const store = freshStore(t);
  const old = session('old', T0 + 5000);
  const first = new LmdbUssdSessionRepository(store);
  await first.begin(old, T0); // indexed by the repository, as it was before the move
  const unversioned = store.db<Record<string, unknown>>('ussd-sessions');
  await store.db('ussd-session-records').remove('old');
  await unversioned.put('old', { ...old, revision: 4 });

  const repository = new LmdbUssdSessionRepository(store);
  new LmdbUssdSessionRepository(store); // another thread opening the same store: nothing left to move
  t.same(await repository.get('old'), { value: old, revision: 4 }, 'the revision moved with the record, not as a field');
  t.equal([...unversioned.getKeys()].length, 0, 'the old database is empty');
  t.same(await repository.live(T0), [{ sessionId: 'old', expiresAt: T0 + 5000 }], 'indexed once');
  await rejectsWithConflict(t, repository.update(session('old', T0 + 9000), { value: old, revision: 3 }), 'an older revision is refused');
  t.equal(await repository.update(session('old', T0 + 9000), { value: old, revision: 4 }), 5);
  t.same(await repository.live(T0), [{ sessionId: 'old', expiresAt: T0 + 9000 }], 'the index moved with the update');
});

t.test('records keep no key list of their own: the msgpack shapes are stored once for the database', async (t) => {
  const store = freshStore(t);
  const repository = new LmdbUssdSessionRepository(store);
  await repository.begin(session('s-1', T0 + 5000), T0);
  const bytes = store.db('ussd-session-records').getBinary('s-1');
  t.ok(bytes && !bytes.toString('latin1').includes('phoneNumber'), 'no field name inside the record');
  t.same((await new LmdbUssdSessionRepository(store).get('s-1'))?.value, session('s-1', T0 + 5000), 'read back through another repository');
});
