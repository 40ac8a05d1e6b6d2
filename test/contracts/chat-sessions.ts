// What every SessionRepository does (LMDB today, JetStream KV in cluster mode): create-only records,
// revision-checked updates and removals, per-user lists newest first with their totals.
import type { Test } from 'tap';
import type { SessionRecord } from '../../dist/src/oracle/sessions/records.js';
import { SessionLimitError, type SessionRepository } from '../../dist/src/oracle/sessions/repository.js';
import { rejectsWithConflict } from './revision.js';

export type SessionRepositoryFactory = (t: Test) => Promise<SessionRepository>;

let clock = Date.now();
const record = (sessionId: string, userDid: string, title = 'Untitled'): SessionRecord => {
  clock += 1;
  return {
    sessionId,
    userDid,
    oracleDid: 'did:key:zOracle',
    oracleName: 'Oracle',
    title,
    createdAt: clock,
    lastUpdatedAt: clock,
  };
};

export function sessionRepositoryContract(t: Test, open: SessionRepositoryFactory): void {
  t.test('a record is created once, read back with its revision', async (t) => {
    const sessions = await open(t);
    t.equal(await sessions.get('s1'), undefined);
    const created = await sessions.create(record('s1', 'did:key:zA'));
    t.same(await sessions.get('s1'), created);
    await rejectsWithConflict(t, sessions.create(record('s1', 'did:key:zB')), 'create-only: the id is taken');
    t.equal((await sessions.get('s1'))?.value.userDid, 'did:key:zA', 'the first record stands');
  });

  t.test('updates name the revision they read; a stale one is refused and changes nothing', async (t) => {
    const sessions = await open(t);
    const first = await sessions.create(record('s1', 'did:key:zA'));
    const moved = { ...first.value, title: 'Hello', lastUpdatedAt: first.value.lastUpdatedAt + 5 };
    const second = await sessions.update(moved, first.revision);
    t.not(second.revision, first.revision);
    t.same(await sessions.get('s1'), second);
    await rejectsWithConflict(
      t,
      sessions.update({ ...first.value, title: 'Stale' }, first.revision),
      'a stale revision',
    );
    await rejectsWithConflict(t, sessions.remove('s1', first.revision), 'refused: revision conflict');
    t.equal((await sessions.get('s1'))?.value.title, 'Hello');
    t.same(
      (await sessions.listByUser('did:key:zA', { offset: 0, limit: 10 })).sessions.map((s) => s.title),
      ['Hello'],
      'one index entry',
    );
    await rejectsWithConflict(t, sessions.update(record('nope', 'did:key:zA'), 1), 'no such record');
  });

  t.test("a user's list: newest lastUpdatedAt first, paginated, with the total; other users apart", async (t) => {
    const sessions = await open(t);
    const stored = [];
    for (const id of ['a', 'b', 'c', 'd']) stored.push(await sessions.create(record(id, 'did:key:zA', `title ${id}`)));
    await sessions.create(record('x', 'did:key:zB'));
    const page = (offset: number, limit: number) => sessions.listByUser('did:key:zA', { offset, limit });
    t.same(
      (await page(0, 10)).sessions.map((s) => s.sessionId),
      ['d', 'c', 'b', 'a'],
    );
    t.same(await page(1, 2).then((p) => [p.sessions.map((s) => s.sessionId), p.total]), [['c', 'b'], 4]);
    t.same((await page(4, 2)).sessions, []);
    // An update moves the session to the top.
    await sessions.update({ ...stored[0].value, lastUpdatedAt: clock + 100 }, stored[0].revision);
    t.same(
      (await page(0, 2)).sessions.map((s) => s.sessionId),
      ['a', 'd'],
    );
    t.match((await page(0, 1)).sessions[0], {
      sessionId: 'a',
      title: 'title a',
      oracleName: 'Oracle',
      oracleDid: 'did:key:zOracle',
      lastUpdatedAt: new Date(clock + 100).toISOString(),
    });
    t.same(
      await sessions.listByUser('did:key:zB', { offset: 0, limit: 10 }).then((p) => [p.sessions.length, p.total]),
      [1, 1],
    );
    t.same(await sessions.listByUser('did:key:zNobody', { offset: 0, limit: 10 }), { sessions: [], total: 0 });
  });

  t.test("every write to a user's list moves its version, and only that user's", async (t) => {
    const sessions = await open(t);
    const versions = new Set<number>();
    const seen = async (label: string) => {
      const version = await sessions.listVersion('did:key:zA');
      t.notOk(versions.has(version), `${label}: a new version`);
      versions.add(version);
    };
    await seen('no sessions');
    const created = await sessions.create(record('a', 'did:key:zA'));
    await seen('create');
    const updated = await sessions.update({ ...created.value, title: 'Moved' }, created.revision);
    await seen('update');
    const other = await sessions.listVersion('did:key:zA');
    await sessions.create(record('x', 'did:key:zB'));
    t.equal(await sessions.listVersion('did:key:zA'), other, "another user's write leaves it");
    await rejectsWithConflict(
      t,
      sessions.update({ ...created.value, title: 'Stale' }, created.revision),
      'a stale update',
    );
    t.equal(await sessions.listVersion('did:key:zA'), other, 'a refused write leaves it');
    await sessions.remove('a', updated.revision);
    await seen('remove');
  });

  t.test('a removal takes the record out of its list and its total', async (t) => {
    const sessions = await open(t);
    await sessions.create(record('a', 'did:key:zA'));
    const b = await sessions.create(record('b', 'did:key:zA'));
    await sessions.remove('b', b.revision);
    t.equal(await sessions.get('b'), undefined);
    t.same(
      await sessions
        .listByUser('did:key:zA', { offset: 0, limit: 10 })
        .then((p) => [p.sessions.map((s) => s.sessionId), p.total]),
      [['a'], 1],
    );
  });

  t.test('concurrent updates from one revision: exactly one lands', async (t) => {
    const sessions = await open(t);
    const first = await sessions.create(record('s', 'did:key:zA'));
    const outcomes = await Promise.allSettled(
      Array.from({ length: 5 }, (_, i) => sessions.update({ ...first.value, title: `t${i}` }, first.revision)),
    );
    t.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1);
    t.equal((await sessions.listByUser('did:key:zA', { offset: 0, limit: 10 })).total, 1);
  });

  t.test('a cap on sessions per user: exact under 12 racing creates, a removal frees a place', async (t) => {
    const sessions = await open(t);
    const CAP = 4;
    // Sessions made before the cap was asked for count too (a store from before the counter).
    await sessions.create(record('old', 'did:key:zCapped'));
    const outcomes = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) => sessions.create(record(`cap-${i}`, 'did:key:zCapped'), CAP)),
    );
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []));
    t.equal(outcomes.length - refused.length, CAP - 1, 'only the free places were taken');
    t.ok(
      refused.every((e) => e instanceof SessionLimitError && e.limit === CAP),
      'the others were refused for the cap',
    );
    const listed = await sessions.listByUser('did:key:zCapped', { offset: 0, limit: 100 });
    t.equal(listed.total, CAP);
    t.equal(listed.sessions.length, CAP, 'a refused create wrote nothing');
    await rejectsWithConflict(t, sessions.create(record('old', 'did:key:zCapped'), CAP + 1), 'a taken id');
    t.equal(await sessions.create(record('free', 'did:key:zFree'), CAP).then((s) => s.value.userDid), 'did:key:zFree');
    const one = listed.sessions[0].sessionId;
    await sessions.remove(one, (await sessions.get(one))!.revision);
    const again = await Promise.allSettled([
      sessions.create(record('again-1', 'did:key:zCapped'), CAP),
      sessions.create(record('again-2', 'did:key:zCapped'), CAP),
    ]);
    t.equal(again.filter((o) => o.status === 'fulfilled').length, 1, 'the freed place, once');
    t.equal((await sessions.listByUser('did:key:zCapped', { offset: 0, limit: 100 })).total, CAP);
  });
}
