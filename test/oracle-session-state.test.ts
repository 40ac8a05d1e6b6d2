// The chat actor's hold on its session (actor/session-state.ts): it loads only the recent turns the model
// needs, newest pages first, never the whole transcript; a turn appends after what is stored and moves the
// record in one LMDB commit; a writer holding an old revision is refused and writes nothing.
import t from 'tap';
import { SessionState } from '../dist/src/oracle/actor/session-state.js';
import { openLmdbSessionStores } from '../dist/src/records/lmdb/oracle/turn-commit.js';
import type { TranscriptEntry } from '../dist/src/oracle/sessions/transcript.js';
import type { TranscriptRepository } from '../dist/src/oracle/sessions/transcript-repository.js';
import { tempStore } from './helpers/store.js';
import { rejectsWithConflict } from './contracts/revision.js';

/** Bounds no test here reaches (oracle-user-bounds.test.ts tests them). */
const NO_BOUNDS = { sessionsPerUser: 1_000_000, transcriptBytes: 1024 ** 3 };

const record = {
  sessionId: 's',
  userDid: 'did:key:zA',
  oracleDid: 'did:key:zO',
  oracleName: 'O',
  title: 'Untitled',
  createdAt: 1,
  lastUpdatedAt: 1,
};
const turn = (i: number): TranscriptEntry[] => [
  { id: `h${i}`, type: 'human', content: `question ${i}`, createdAt: i },
  {
    id: `a${i}`,
    type: 'ai',
    content: `answer ${i}`,
    toolCalls: [],
    chat: [{ role: 'assistant', content: `answer ${i}` }],
    createdAt: i,
  },
];

/** Counts the entries read through the repository. */
function counting(transcripts: TranscriptRepository) {
  const counter = { entriesRead: 0 };
  const repository: TranscriptRepository = {
    ...transcripts,
    read: async (id, page) => transcripts.read(id, page).then((p) => ((counter.entriesRead += p.entries.length), p)),
    readNewest: async (id, page) =>
      transcripts.readNewest(id, page).then((p) => ((counter.entriesRead += p.entries.length), p)),
  };
  return { repository, counter };
}

t.test('a long transcript: the history is the last turns, read without the rest', async (t) => {
  const store = tempStore(t, 'session-state-');
  const stores = { ...openLmdbSessionStores(store), bounds: NO_BOUNDS };
  const { sessions } = stores;
  const { repository: transcripts, counter } = counting(stores.transcripts);
  await sessions.create(record);
  const TURNS = 400;
  for (let i = 0; i < TURNS; i++) await transcripts.append('s', i * 2, turn(i));

  const state = (await SessionState.load({ ...stores, transcripts }, 's', 50))!;
  const history = await state.history();
  t.equal(history.length, 100, '50 turns of two messages');
  t.same(history[0], { role: 'user', content: `question ${TURNS - 50}` });
  t.ok(counter.entriesRead < (2 * TURNS) / 4, `read ${counter.entriesRead} of ${2 * TURNS} entries`);

  await state.commit({ ...record, title: 'Long', lastUpdatedAt: 2 }, turn(TURNS));
  t.equal((await state.history()).at(-1)?.content, `answer ${TURNS}`, 'the new turn is in the history');
  t.equal((await state.history()).length, 100, 'still the last 50 turns');
  t.equal(await transcripts.length('s'), 2 * TURNS + 2, 'appended after what was stored');
  t.match(await sessions.get('s'), { value: { title: 'Long' }, revision: 2 });

  const page = await state.messages(2 * TURNS);
  t.same(
    page.messages.map((m) => m.content),
    [`question ${TURNS}`, `answer ${TURNS}`],
  );
  t.equal(page.next, undefined);
  t.equal((await state.messages(0)).next, 100, 'GET /messages reads in pages');
});

t.test('a stale holder cannot write over a newer one', async (t) => {
  const store = tempStore(t, 'session-state-');
  const stores = { ...openLmdbSessionStores(store), bounds: NO_BOUNDS };
  await SessionState.create(stores, record, 50);
  const [current, stale] = [(await SessionState.load(stores, 's', 50))!, (await SessionState.load(stores, 's', 50))!];
  await stale.history();
  await current.commit({ ...record, title: 'Newer' }, turn(0));
  await rejectsWithConflict(t, stale.commit({ ...record, title: 'Stale' }, turn(1)), 'a stale commit');
  t.match(await stores.sessions.get('s'), { value: { title: 'Newer' } });
  t.same(
    (await stores.transcripts.read('s', { from: 0, limit: 10 })).entries.map((e) => e.content),
    ['question 0', 'answer 0'],
  );
  await rejectsWithConflict(t, stale.delete(), 'a stale delete');
  await current.delete();
  t.equal(await stores.sessions.get('s'), undefined);
  t.equal(await stores.transcripts.length('s'), 0);
});

t.test('a turn is one LMDB commit, and a record that moved leaves no entries behind', async (t) => {
  const store = tempStore(t, 'session-state-');
  const stores = { ...openLmdbSessionStores(store), bounds: NO_BOUNDS };
  const state = await SessionState.create(stores, record, 50);
  const lastTxnId = () => (store.root.getStats() as { lastTxnId: number }).lastTxnId;
  const before = lastTxnId();
  await state.commit({ ...record, title: 'One' }, turn(0));
  t.equal(lastTxnId() - before, 1, 'entries and record in one transaction');
  t.equal(await stores.transcripts.length('s'), 2);

  await stores.sessions.update({ ...record, title: 'Elsewhere' }, 2);
  await rejectsWithConflict(t, state.commit({ ...record, title: 'Stale' }, turn(1)), 'the record moved');
  t.equal(await stores.transcripts.length('s'), 2, 'the refused turn appended nothing');
  t.match(await stores.sessions.get('s'), { value: { title: 'Elsewhere' }, revision: 3 });
});

t.test(
  'reads beside a commit written one entry at a time (as on JetStream) see none of it until it is done',
  async (t) => {
    const store = tempStore(t, 'session-state-');
    const lmdb = openLmdbSessionStores(store);
    // Cluster mode's commit: the entries one key after another, then the record. Held after the first when `hold`.
    let hold = false;
    let firstWritten!: () => void;
    const written = new Promise<void>((resolve) => (firstWritten = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const stores = {
      ...lmdb,
      bounds: NO_BOUNDS,
      commitTurn: async (next: typeof record, revision: number, from: number, entries: readonly TranscriptEntry[]) => {
        for (const [i, entry] of entries.entries()) {
          await lmdb.transcripts.append(next.sessionId, from + i, [entry]);
          if (i === 0 && hold) firstWritten(), await released;
        }
        return lmdb.sessions.update(next, revision);
      },
    };
    const state = await SessionState.create(stores, record, 50);
    await state.commit({ ...record, lastUpdatedAt: 2 }, turn(0));
    hold = true;
    const committing = state.commit({ ...record, lastUpdatedAt: 3 }, turn(1));
    await written;
    t.equal(await lmdb.transcripts.length('s'), 3, 'the question is in the store, its answer not yet');
    const contents = (page: { messages: { content: string }[] }) => page.messages.map((m) => m.content);
    t.same(contents(await state.messages(0)), ['question 0', 'answer 0'], 'GET /messages: the turn before only');
    t.same(contents(await state.messages(2)), [], 'nothing from the commit being written');
    t.same(JSON.parse(`[${(await state.messagesPart(0)).json}]`).length, 2, 'a part of GET /messages: the same');
    const page = await state.historyPage({ limit: 10 });
    t.same(contents(page), ['question 0', 'answer 0'], 'a history page: the same');
    t.equal(page.hasNewer, false);
    release();
    await committing;
    t.same(
      contents(await state.messages(0)),
      ['question 0', 'answer 0', 'question 1', 'answer 1'],
      'then the whole turn',
    );
  },
);
