// What every TranscriptRepository does: numbered entries written once, read in pages both ways.
import type { Test } from 'tap';
import type { TranscriptEntry } from '../../dist/src/oracle/sessions/transcript.js';
import type { TranscriptRepository } from '../../dist/src/oracle/sessions/transcript-repository.js';
import { rejectsWithConflict } from './revision.js';

export type TranscriptRepositoryFactory = (t: Test) => Promise<TranscriptRepository>;

const human = (content: string): TranscriptEntry => ({ id: content, type: 'human', content, createdAt: 1 });
const contents = (entries: TranscriptEntry[]) => entries.map((entry) => entry.content);

export function transcriptRepositoryContract(t: Test, open: TranscriptRepositoryFactory): void {
  t.test('appends are numbered from 0; length is the next number', async (t) => {
    const transcripts = await open(t);
    t.equal(await transcripts.length('s'), 0);
    await transcripts.append('s', 0, [human('m0'), human('m1')]);
    await transcripts.append('s', 2, [human('m2')]);
    t.equal(await transcripts.length('s'), 3);
    t.same(contents((await transcripts.read('s', { from: 0, limit: 10 })).entries), ['m0', 'm1', 'm2']);
    t.equal(await transcripts.length('other'), 0, 'per session');
  });

  t.test('a number is written once: an append over a taken one is refused whole', async (t) => {
    const transcripts = await open(t);
    await transcripts.append('s', 0, [human('m0'), human('m1')]);
    await rejectsWithConflict(
      t,
      transcripts.append('s', 1, [human('stale'), human('m2?')]),
      'refused: revision conflict',
    );
    t.same(
      contents((await transcripts.read('s', { from: 0, limit: 10 })).entries),
      ['m0', 'm1'],
      'nothing of it written',
    );
    t.equal(await transcripts.length('s'), 2);
    // The first number free, a later one taken: still nothing written.
    await transcripts.append('s', 3, [human('m3')]);
    await rejectsWithConflict(
      t,
      transcripts.append('s', 2, [human('m2'), human('m3 again')]),
      'refused: revision conflict',
    );
    t.same(contents((await transcripts.read('s', { from: 0, limit: 10 })).entries), ['m0', 'm1', 'm3']);
  });

  t.test('pages oldest first: each names where the next starts, the last names none', async (t) => {
    const transcripts = await open(t);
    await transcripts.append(
      's',
      0,
      Array.from({ length: 7 }, (_, i) => human(`m${i}`)),
    );
    await transcripts.append('s-neighbour', 0, [human('x')]);
    const seen: string[][] = [];
    for (let from: number | undefined = 0; from !== undefined; ) {
      const page = await transcripts.read('s', { from, limit: 3 });
      t.ok(page.entries.length <= 3);
      seen.push(contents(page.entries));
      from = page.next;
    }
    t.same(seen, [['m0', 'm1', 'm2'], ['m3', 'm4', 'm5'], ['m6']]);
    t.same(await transcripts.read('s', { from: 3, limit: 4 }).then((p) => [contents(p.entries), p.next]), [
      ['m3', 'm4', 'm5', 'm6'],
      undefined,
    ]);
    t.same(await transcripts.read('s', { from: 9, limit: 3 }), { entries: [] });
  });

  t.test('pages newest first, down to the oldest', async (t) => {
    const transcripts = await open(t);
    await transcripts.append(
      's',
      0,
      Array.from({ length: 7 }, (_, i) => human(`m${i}`)),
    );
    const seen: string[][] = [];
    for (let before: number | undefined = undefined, first = true; first || before !== undefined; first = false) {
      const page = await transcripts.readNewest('s', { before, limit: 3 });
      seen.push(contents(page.entries));
      before = page.next;
    }
    t.same(seen, [['m6', 'm5', 'm4'], ['m3', 'm2', 'm1'], ['m0']]);
    t.same(contents((await transcripts.readNewest('s', { before: 2, limit: 5 })).entries), ['m1', 'm0']);
    t.same(await transcripts.readNewest('s', { before: 0, limit: 5 }), { entries: [] });
    t.same(await transcripts.readNewest('empty', { limit: 5 }), { entries: [] });
  });

  t.test('remove takes every entry of the session, and only those', async (t) => {
    const transcripts = await open(t);
    await transcripts.append('s', 0, [human('a'), human('b')]);
    await transcripts.append('s2', 0, [human('c')]);
    await transcripts.remove('s');
    t.equal(await transcripts.length('s'), 0);
    t.same(contents((await transcripts.read('s2', { from: 0, limit: 5 })).entries), ['c']);
  });
}
