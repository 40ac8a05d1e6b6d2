// The UssdSessionRepository contract against LMDB, and its layout: records keyed by start (sessions in progress are
// neighbours whatever their IDs), the expiry index by bucket: a step writes an index entry only when its bucket or
// its state changes, the sweep removes exactly the expired sessions reading only the buckets up to now's (never the
// session database as a whole), and the sessions of older layouts move once.
import t from 'tap';
import type { Test } from 'tap';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Store } from '../dist/src/store/env.js';
import { isLive, type UssdSession } from '../dist/src/ussd/session.js';
import { LmdbUssdSessionRepository } from '../dist/src/records/lmdb/ussd/sessions.js';
import { rejectsWithConflict } from './contracts/revision.js';
import { session, T0, ussdSessionRepositoryContract } from './contracts/ussd-sessions.js';
import { tempStore } from './helpers/store.js';

const freshStore = (t: Test) => tempStore(t, 'repo-ussd-sessions--');

const ms = (time: number) => String(time).padStart(15, '0');
/** A record key: the session's start (epoch ms, 15 digits), then its ID. */
const recordKey = (sessionId: string, start = T0) => `${ms(start)}:${sessionId}`;
/** An index key: the bucket end (epoch ms, 15 digits), then the record's key. */
const key = (bucket: number, sessionId: string, start = T0) => `${ms(bucket)}:${recordKey(sessionId, start)}`;

/** The bucketed index's entries, as [key, LIVE 0 | ENDED 1]. */
const indexOf = (store: Store) =>
  [...store.db('ussd-session-expiry-index').getRange()].map((entry) => [entry.key, entry.value]);
/** Every record key, and every start entry as [session ID, start]. */
const recordsOf = (store: Store) => [...store.db('ussd-sessions-by-start').getKeys()];
const startsOf = (store: Store) =>
  [...store.db('ussd-session-starts').getRange()].map((entry) => [entry.key, entry.value]);

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
    db<V = unknown>(name: Parameters<Store['db']>[0]) {
      const db = store.db<V>(name);
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

t.test(
  "the sweep removes exactly the expired sessions, reading the index up to now's bucket and only the records it names",
  async (t) => {
    const store = freshStore(t);
    const { spied, calls } = recorded(store);
    const repository = new LmdbUssdSessionRepository(spied);
    const now = T0 + 150_000; // inside the bucket ending at T0 + 180 000
    // 2 000 sessions: 1 in 20 expired (at exactly now, in now's bucket, in a passed bucket), the rest live until
    // later (in now's bucket and in the buckets after it), some of them ended.
    const expiryOf = (i: number) => (i % 20 === 0 ? now - (i % 3) * 40_000 : now + 1 + i * 60);
    await Promise.all(
      Array.from({ length: 2000 }, (_, i) =>
        repository.begin(session(`s-${i}`, expiryOf(i), i % 7 === 1 ? { state: 'ended' } : {}), T0),
      ),
    );
    const liveBefore = (await repository.live(now)).length;
    calls.length = 0;

    t.equal(await repository.removeExpired(now), 100, 'the 100 expired sessions are removed');
    const rangeReads = calls.filter(({ call }) => call.endsWith('.getRange') || call.endsWith('.getKeys'));
    t.equal(rangeReads.length, 1, 'one range read');
    t.match(
      rangeReads[0],
      { call: 'ussd-session-expiry-index.getKeys', args: [{ start: undefined, end: ms(T0 + 180_001) }] },
      "of the index, from its beginning to the end of now's bucket",
    );
    const sessionsRead = new Set(
      calls.filter(({ call }) => call === 'ussd-sessions-by-start.get').map(({ args }) => String(args[0]).slice(16)),
    );
    const upToNowsBucket = Array.from({ length: 2000 }, (_, i) => i).filter((i) => expiryOf(i) <= T0 + 180_000);
    t.ok(
      upToNowsBucket.length > 400 && upToNowsBucket.length < 1000,
      "several hundred sessions expire by the end of now's bucket",
    );
    t.same(
      [...sessionsRead].sort(),
      upToNowsBucket.map((i) => `s-${i}`).sort(),
      "only the sessions of the buckets up to now's are read",
    );

    for (let i = 0; i < 2000; i += 20) t.equal(await repository.get(`s-${i}`), undefined);
    t.ok(await repository.get('s-1'), 'a live (ended) session stays');
    t.ok(await repository.get('s-2'), 'a live session stays');
    t.equal((await repository.live(now)).length, liveBefore, 'the live set is unchanged');
    calls.length = 0;
    t.equal(await repository.removeExpired(now), 0, 'a second sweep finds nothing');
    t.same(
      calls.filter(({ call }) => !call.endsWith('.get') && !call.endsWith('.getKeys')),
      [],
      "and writes nothing: the live sessions of now's bucket stay out of any transaction",
    );
  },
);

t.test('a sweep whose bucket holds more live sessions than one batch keeps them and ends', async (t) => {
  const repository = new LmdbUssdSessionRepository(freshStore(t));
  const now = T0 + 1000; // all 4 000 sessions expire in now's bucket, the one ending at T0 + 60 000
  await Promise.all(
    Array.from({ length: 2500 }, (_, i) => repository.begin(session(`live-${i}`, now + 1 + i * 20), T0)),
  );
  await Promise.all(
    Array.from({ length: 1500 }, (_, i) => repository.begin(session(`expired-${i}`, now - (i % 1000)), T0)),
  );
  t.equal(await repository.removeExpired(now), 1500);
  t.equal((await repository.live(now)).length, 2500);
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
  const raw = store.db<ReturnType<typeof session>>('ussd-sessions');
  await raw.put('old-live', session('old-live', T0 + 5000));
  await raw.put('old-expired', session('old-expired', T0 + 1000));
  const repository = new LmdbUssdSessionRepository(store);
  t.same(await repository.live(T0 + 1000), [{ sessionId: 'old-live', expiresAt: T0 + 5000 }]);
  t.equal((await repository.get('old-live'))?.revision, 0, 'a record without a revision reads as revision 0');
  t.equal(await repository.removeExpired(T0 + 1000), 1);
  t.equal(await repository.get('old-expired'), undefined);
});

t.test(
  'sessions of the database from before entry versions move once, each with its revision, and are indexed',
  async (t) => {
    const store = freshStore(t);
    const old = session('old', T0 + 5000);
    const unversioned = store.db<Record<string, unknown>>('ussd-sessions');
    await unversioned.put('old', { ...old, revision: 4 });

    const repository = new LmdbUssdSessionRepository(store);
    new LmdbUssdSessionRepository(store); // another thread opening the same store: nothing left to move
    t.same(
      await repository.get('old'),
      { value: old, revision: 4 },
      'the revision moved with the record, not as a field',
    );
    t.equal([...unversioned.getKeys()].length, 0, 'the old database is empty');
    t.same(await repository.live(T0), [{ sessionId: 'old', expiresAt: T0 + 5000 }], 'indexed once');
    await rejectsWithConflict(
      t,
      repository.update(session('old', T0 + 9000), { value: old, revision: 3 }),
      'an older revision is refused',
    );
    t.equal(await repository.update(session('old', T0 + 9000), { value: old, revision: 4 }), 5);
    t.same(await repository.live(T0), [{ sessionId: 'old', expiresAt: T0 + 9000 }], 'the index moved with the update');
  },
);

t.test(
  'sessions keyed by their ID, indexed by bucket and ID, move once to records keyed by start, revisions kept',
  async (t) => {
    const store = freshStore(t);
    const byId = store.db<UssdSession>('ussd-session-records');
    const buckets = store.db<number>('ussd-session-expiry-buckets');
    const live = session('live', T0 + 5000, { createdAt: T0 - 2000 });
    const ended = session('ended', T0 + 70_000, { state: 'ended' });
    for (const [value, revision] of [
      [live, 3],
      [ended, 2],
    ] as const) {
      await byId.put(value.sessionId, value, revision);
      await buckets.put(
        `${ms(Math.ceil(value.expiresAt / 60_000) * 60_000)}:${value.sessionId}`,
        value.state === 'ended' ? 1 : 0,
      );
    }

    const repository = new LmdbUssdSessionRepository(store);
    new LmdbUssdSessionRepository(store);
    t.same([[...byId.getKeys()], [...buckets.getKeys()]], [[], []], 'the older databases are empty');
    t.same(recordsOf(store), [recordKey('live', T0 - 2000), recordKey('ended')], 'the records are keyed by start');
    t.same(startsOf(store), [
      ['ended', T0],
      ['live', T0 - 2000],
    ]);
    t.same(indexOf(store), [
      [key(T0 + 60_000, 'live', T0 - 2000), 0],
      [key(T0 + 120_000, 'ended'), 1],
    ]);
    t.same(await repository.get('live'), { value: live, revision: 3 });
    t.same(await repository.get('ended'), { value: ended, revision: 2 });
    t.equal(
      await repository.update(session('live', T0 + 9000, { createdAt: T0 - 2000 }), { value: live, revision: 3 }),
      4,
    );
  },
);

t.test(
  'sessions in progress are neighbours in the records whatever their IDs; the starts map each ID to its record',
  async (t) => {
    const store = freshStore(t);
    const repository = new LmdbUssdSessionRepository(store);
    // Gateway-shaped IDs in no order of their own (a multiplicative hash), begun one millisecond apart: the records
    // sort by start, not by ID.
    const ids = Array.from(
      { length: 50 },
      (_, i) => `ATUid_${((i * 2654435761) % 2 ** 32).toString(16).padStart(8, '0')}`,
    );
    for (const [i, id] of ids.entries())
      await repository.begin(session(id, T0 + 300_000, { createdAt: T0 + i }), T0 + i);
    t.not(JSON.stringify([...ids].sort()), JSON.stringify(ids), 'the IDs themselves are not in start order');
    t.same(
      recordsOf(store),
      ids.map((id, i) => recordKey(id, T0 + i)),
      'the records are in start order',
    );
    t.same(
      startsOf(store),
      ids.map((id, i) => [id, T0 + i]).sort(([x], [y]) => String(x).localeCompare(String(y))),
    );
    for (const [i, id] of ids.entries()) t.equal((await repository.get(id))?.value.createdAt, T0 + i);
  },
);

t.test(
  'a session begun again under the ID of an expired one leaves one record, one start and one index entry',
  async (t) => {
    const store = freshStore(t);
    const repository = new LmdbUssdSessionRepository(store);
    await repository.begin(session('s-1', T0 + 1000), T0);
    await repository.begin(session('s-1', T0 + 301_000, { createdAt: T0 + 1000 }), T0 + 1000);
    t.same(recordsOf(store), [recordKey('s-1', T0 + 1000)], 'the expired record went');
    t.same(startsOf(store), [['s-1', T0 + 1000]]);
    t.same(indexOf(store), [[key(T0 + 360_000, 's-1', T0 + 1000), 0]]);
    t.equal(await repository.removeExpired(T0 + 60_000), 0, 'the sweep finds nothing of the old session');
    t.same(startsOf(store), [['s-1', T0 + 1000]]);
  },
);

t.test('records keep no key list of their own: the msgpack shapes are stored once for the database', async (t) => {
  const store = freshStore(t);
  const repository = new LmdbUssdSessionRepository(store);
  await repository.begin(session('s-1', T0 + 5000), T0);
  const bytes = store.db('ussd-sessions-by-start').getBinary(recordKey('s-1'));
  t.ok(bytes && !bytes.toString('latin1').includes('phoneNumber'), 'no field name inside the record');
  t.same(
    (await new LmdbUssdSessionRepository(store).get('s-1'))?.value,
    session('s-1', T0 + 5000),
    'read back through another repository',
  );
});

t.test(
  'a step within its bucket writes the record alone; crossing a bucket or ending moves or marks the entry',
  async (t) => {
    const store = freshStore(t);
    const { spied, calls } = recorded(store);
    const repository = new LmdbUssdSessionRepository(spied);
    const begun = session('s-1', T0 + 301_000);
    let read = { value: begun, revision: await repository.begin(begun, T0) };
    const step = async (expiresAt: number, fields: Partial<UssdSession> = {}) => {
      const value = session('s-1', expiresAt, fields);
      read = { value, revision: await repository.update(value, read) };
    };
    const indexWrites = () =>
      calls
        .filter(({ call }) => call.startsWith('ussd-session-expiry-index.'))
        .map(({ call, args }) => [call, args[0]]);
    t.same(
      indexOf(store),
      [[key(T0 + 360_000, 's-1'), 0]],
      'begin indexes the session in the bucket ending at or after its expiry',
    );

    calls.length = 0;
    await step(T0 + 330_000);
    await step(T0 + 360_000); // exactly the bucket's end is still in it
    t.same(indexWrites(), [], 'two steps within the bucket write no index entry');
    t.same(indexOf(store), [[key(T0 + 360_000, 's-1'), 0]]);
    t.equal((await repository.get('s-1'))?.value.expiresAt, T0 + 360_000, 'the record was written');

    await step(T0 + 360_001);
    t.same(
      indexWrites(),
      [
        ['ussd-session-expiry-index.removeSync', key(T0 + 360_000, 's-1')],
        ['ussd-session-expiry-index.putSync', key(T0 + 420_000, 's-1')],
      ],
      'one remove, one put',
    );
    t.same(indexOf(store), [[key(T0 + 420_000, 's-1'), 0]], 'crossing into the next bucket moves the entry');

    calls.length = 0;
    await step(T0 + 400_000, { state: 'ended' });
    t.same(indexWrites(), [['ussd-session-expiry-index.putSync', key(T0 + 420_000, 's-1')]]);
    t.same(indexOf(store), [[key(T0 + 420_000, 's-1'), 1]], 'an END within the bucket marks the entry ENDED in place');
    await step(T0 + 470_000, { state: 'ended' });
    t.same(indexOf(store), [[key(T0 + 480_000, 's-1'), 1]], 'an ended session moved to a later bucket stays ENDED');
    t.same(await repository.live(T0), []);
  },
);

t.test('at every bucket boundary the sweep and the live listing match a model of the sessions', async (t) => {
  const store = freshStore(t);
  const repository = new LmdbUssdSessionRepository(store);
  const ids = ['a', 'b', 'c'];
  // Times on and next to bucket boundaries (whole minutes), and inside buckets.
  const time = fc
    .tuple(fc.integer({ min: 0, max: 2 }), fc.constantFrom(-1, 0, 1, 25_000))
    .map(([minutes, offset]) => minutes * 60_000 + offset);
  const ttl = fc.oneof(fc.constantFrom(1, 59_999, 60_000, 60_001, 120_000), fc.integer({ min: 1, max: 200_000 }));
  const op = fc.oneof(
    fc.record({
      kind: fc.constant('step' as const),
      id: fc.constantFrom(...ids),
      advance: time,
      ttl,
      end: fc.boolean(),
    }),
    fc.record({ kind: fc.constant('sweep' as const), advance: time }),
  );
  await t.resolves(
    fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 20 }), async (ops) => {
        for (const name of ['ussd-sessions-by-start', 'ussd-session-starts', 'ussd-session-expiry-index'] as const)
          store.db(name).clearSync();
        const model = new Map<string, { value: UssdSession; revision: number }>();
        let now = T0;
        for (const o of ops) {
          now = Math.max(now, Math.floor(now / 60_000) * 60_000 + o.advance);
          if (o.kind === 'step') {
            const value = session(o.id, now + o.ttl, o.end ? { state: 'ended' } : {});
            const stored = model.get(o.id);
            const revision =
              stored && stored.value.expiresAt > now
                ? await repository.update(value, stored)
                : await repository.begin(value, now);
            model.set(o.id, { value, revision });
          } else {
            const expired = [...model].filter(([, { value }]) => value.expiresAt <= now).map(([id]) => id);
            assert.equal(await repository.removeExpired(now), expired.length, 'the expired sessions are removed');
            for (const id of expired) model.delete(id);
          }
          const stored = await Promise.all(ids.map((id) => repository.get(id)));
          assert.deepStrictEqual(
            stored,
            ids.map((id) => model.get(id)),
            'the records are the model',
          );
          const bySessionId = (x: { sessionId: string }, y: { sessionId: string }) =>
            x.sessionId.localeCompare(y.sessionId);
          const expected = [...model]
            .filter(([, { value }]) => isLive(value, now))
            .map(([sessionId, { value }]) => ({ sessionId, expiresAt: value.expiresAt }));
          assert.deepStrictEqual(
            (await repository.live(now)).sort(bySessionId),
            expected.sort(bySessionId),
            "the live listing is the model's",
          );
          const entries = [...model].map(([id, { value }]) => [
            key(Math.ceil(value.expiresAt / 60_000) * 60_000, id),
            value.state === 'ended' ? 1 : 0,
          ]);
          assert.deepStrictEqual(
            indexOf(store),
            entries.sort(([x], [y]) => String(x).localeCompare(String(y))),
            'one entry per record, in its bucket',
          );
        }
      }),
      { numRuns: 60 },
    ),
  );
});

t.test(
  'a data directory whose index keyed exact expiry times is indexed by bucket once, the old index emptied',
  async (t) => {
    const store = freshStore(t);
    const records = store.db<UssdSession>('ussd-session-records');
    const exact = store.db<number>('ussd-session-expiry');
    const exactKey = (expiresAt: number, sessionId: string) => `${String(expiresAt).padStart(15, '0')}:${sessionId}`;
    for (const [value, revision] of [
      [session('live', T0 + 5000), 3],
      [session('ended', T0 + 70_000, { state: 'ended' }), 2],
      [session('expired', T0 + 1000), 1],
    ] as const) {
      await records.put(value.sessionId, value, revision);
      await exact.put(exactKey(value.expiresAt, value.sessionId), value.state === 'ended' ? 1 : 0);
    }

    const repository = new LmdbUssdSessionRepository(store);
    new LmdbUssdSessionRepository(store); // another thread opening the same store: nothing left to do
    t.same([[...exact.getKeys()], [...records.getKeys()]], [[], []], 'the old index and records are empty');
    t.same(indexOf(store), [
      [key(T0 + 60_000, 'expired'), 0],
      [key(T0 + 60_000, 'live'), 0],
      [key(T0 + 120_000, 'ended'), 1],
    ]);
    t.same(await repository.live(T0 + 1000), [{ sessionId: 'live', expiresAt: T0 + 5000 }]);
    t.equal(await repository.removeExpired(T0 + 1000), 1);
    t.equal(await repository.get('expired'), undefined);
    t.equal(
      await repository.update(session('live', T0 + 65_000), { value: session('live', T0 + 5000), revision: 3 }),
      4,
    );
    t.same(
      indexOf(store),
      [
        [key(T0 + 120_000, 'ended'), 1],
        [key(T0 + 120_000, 'live'), 0],
      ],
      'a step moves the rebuilt entry',
    );
  },
);
