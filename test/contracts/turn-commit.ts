// What every SessionStores.commitTurn does (LMDB: one transaction; JetStream: entries, then the record): a turn's
// entries and the record's move land together, and a turn refused on either writes nothing.
import type { Test } from 'tap';
import type { SessionRecord } from '../../dist/src/oracle/sessions/records.js';
import type { TranscriptEntry } from '../../dist/src/oracle/sessions/transcript.js';
import type { SessionStores } from '../../dist/src/oracle/sessions/turn-commit.js';
import { SessionState } from '../../dist/src/oracle/actor/session-state.js';
import { entriesBytes } from '../../dist/src/oracle/sessions/bounds.js';
import { rejectsWithConflict } from './revision.js';

export type SessionStoresFactory = (t: Test) => Promise<SessionStores>;

const human = (content: string): TranscriptEntry => ({ id: content, type: 'human', content, createdAt: 1 });
const record = (sessionId: string, title = 'Untitled'): SessionRecord => ({
  sessionId,
  userDid: 'did:key:zA',
  oracleDid: 'did:key:zOracle',
  oracleName: 'Oracle',
  title,
  createdAt: 1,
  lastUpdatedAt: 1,
});
const contents = async (stores: SessionStores, sessionId: string) =>
  (await stores.transcripts.read(sessionId, { from: 0, limit: 50 })).entries.map((entry) => entry.content);

export function turnCommitContract(t: Test, open: SessionStoresFactory): void {
  t.test('a turn appends its entries and moves the record', async (t) => {
    const stores = await open(t);
    const created = await stores.sessions.create(record('s'));
    const first = await stores.commitTurn({ ...record('s', 'One'), lastUpdatedAt: 2 }, created.revision, 0, [
      human('q1'),
      human('a1'),
    ]);
    t.equal(first.value.title, 'One');
    const second = await stores.commitTurn({ ...record('s', 'Two'), lastUpdatedAt: 3 }, first.revision, 2, [
      human('q2'),
      human('a2'),
    ]);
    t.same(await stores.sessions.get('s'), second);
    t.same(await contents(stores, 's'), ['q1', 'a1', 'q2', 'a2']);
    t.equal(await stores.transcripts.length('s'), 4);
  });

  t.test('a turn on a record that moved writes nothing, and the next turn takes the same numbers', async (t) => {
    const stores = await open(t);
    const created = await stores.sessions.create(record('s'));
    const moved = await stores.sessions.update(record('s', 'Moved'), created.revision);
    await rejectsWithConflict(
      t,
      stores.commitTurn(record('s', 'Stale'), created.revision, 0, [human('stale q'), human('stale a')]),
      'refused',
    );
    t.same(await contents(stores, 's'), [], 'no entry of the refused turn');
    t.equal(await stores.transcripts.length('s'), 0);
    t.equal((await stores.sessions.get('s'))?.value.title, 'Moved');
    await stores.commitTurn(record('s', 'Next'), moved.revision, 0, [human('q'), human('a')]);
    t.same(await contents(stores, 's'), ['q', 'a']);
  });

  t.test('a turn over a taken number writes nothing, the record included', async (t) => {
    const stores = await open(t);
    const created = await stores.sessions.create(record('s'));
    const first = await stores.commitTurn(record('s', 'One'), created.revision, 0, [human('q1'), human('a1')]);
    await rejectsWithConflict(
      t,
      stores.commitTurn(record('s', 'Stale'), first.revision, 1, [human('x'), human('y')]),
      'refused',
    );
    t.same(await stores.sessions.get('s'), first, 'the record did not move');
    t.same(await contents(stores, 's'), ['q1', 'a1']);
  });

  t.test('two writers with the same revision and length: one turn lands whole, the other writes nothing', async (t) => {
    const stores = await open(t);
    const created = await stores.sessions.create(record('s'));
    const outcomes = await Promise.allSettled(
      ['A', 'B', 'C'].map((w) =>
        stores.commitTurn(record('s', w), created.revision, 0, [human(`${w} q`), human(`${w} a`)]),
      ),
    );
    const won = outcomes.flatMap((outcome, i) => (outcome.status === 'fulfilled' ? ['A', 'B', 'C'][i] : []));
    t.equal(won.length, 1);
    t.same(await contents(stores, 's'), [`${won[0]} q`, `${won[0]} a`]);
    t.equal((await stores.sessions.get('s'))?.value.title, won[0]);
  });

  t.test("a transcript's bytes: counted in each turn's commit, a turn past the bound refused whole", async (t) => {
    const stores = await open(t);
    const turn = (q: string) => [human(q), human(`${q} answered`)];
    const perTurn = entriesBytes(turn('q0'));
    const bounded = { ...stores, bounds: { sessionsPerUser: 10, transcriptBytes: perTurn * 3 } };
    const state = await SessionState.create(bounded, record('bytes'), 50);
    for (const q of ['q0', 'q1']) await state.commit({ ...state.record, title: q }, turn(q));
    t.equal(state.record.transcriptBytes, perTurn * 2, 'two turns counted');
    t.equal((await stores.sessions.get('bytes'))?.value.transcriptBytes, perTurn * 2, 'as stored');
    // A second writer holding the same revision (a stale actor in cluster mode) cannot add to the same count.
    const stale = (await SessionState.load(bounded, 'bytes', 50))!;
    await state.commit({ ...state.record, title: 'q2' }, turn('q2'));
    await rejectsWithConflict(t, stale.commit({ ...stale.record, title: 'q9' }, turn('q9')), 'the stale one refused');
    const full = await state.commit({ ...state.record, title: 'q3' }, turn('q3')).then(
      () => undefined,
      (e: { code?: string; details?: unknown }) => e,
    );
    t.match(full, { code: 'transcript_full', details: { limit: perTurn * 3, used: perTurn * 3 } }, 'refused');
    t.same(await contents(stores, 'bytes'), ['q0', 'q0 answered', 'q1', 'q1 answered', 'q2', 'q2 answered']);
    t.equal((await stores.sessions.get('bytes'))?.value.title, 'q2', 'nothing of the refused turn stored');
  });
}
