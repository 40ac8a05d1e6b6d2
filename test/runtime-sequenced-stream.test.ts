// The sequenced, credit-based stream every frame transport adapts (runtime/sequenced-stream.ts): numbers on from
// the first, arrivals in order (re-reads skipped, a gap or anything new after the end refused), a sender's window
// and a receiver's grants held while its sink is full. The transports themselves are covered by the stream relay,
// node link and kept-run tests.
import t from 'tap';
import { Credit, CreditGrant, SequenceIn, SequenceOut } from '../dist/src/runtime/sequenced-stream.js';

t.test('a sender numbers items on from its first, a batch by its first item', async (t) => {
  const ids = new SequenceOut(5);
  t.equal(ids.take(3), 5, 'a batch of three starts at 5');
  t.equal(ids.take(), 8, 'one item after it');
  t.equal(ids.next, 9);
});

t.test('a receiver takes items in order, skips re-reads and refuses gaps and what follows the end', async (t) => {
  const ids = new SequenceIn();
  t.same(ids.take(1, 3), { kind: 'next', skip: 0 }, 'frames 1-3');
  t.same(ids.take(2, 4), { kind: 'next', skip: 2 }, 'frames 2-5: two of them were had already');
  t.same(ids.take(4, 2), { kind: 'seen' }, 'frames 4-5 again');
  t.same(ids.take(7), { kind: 'gap' }, 'frame 6 never came');
  t.equal(ids.expected, 6, 'a gap moves nothing');
  t.same(ids.take(6), { kind: 'next', skip: 0 });
  ids.end();
  t.ok(ids.ended);
  t.same(ids.take(7), { kind: 'gap' }, 'nothing is new after the end');
  t.same(ids.take(6), { kind: 'seen' }, 'a re-read of the end is still a re-read');
});

t.test('a sender waits past its window until a grant, and not at all once released', async (t) => {
  const credit = new Credit(2);
  credit.sent(2);
  t.ok(credit.full, 'two unacknowledged of two');
  const room = credit.room();
  credit.granted(1);
  await room;
  t.notOk(credit.full, 'a grant of one makes room for one');
  credit.granted(0);
  t.notOk(credit.full, 'a late, smaller grant takes nothing back');
  credit.sent(1);
  t.ok(credit.full);
  const released = credit.room();
  credit.release();
  await released;
  credit.sent(10);
  t.notOk(credit.full, 'released: never full again');
});

t.test('a receiver grants every `every` items, none while its sink is full, the rest once it drains', async (t) => {
  const grants: number[] = [];
  const grant = new CreditGrant(4, (total) => grants.push(total));
  grant.took(3);
  t.same(grants, [], 'three of four');
  grant.took(2);
  t.same(grants, [5], 'past four: all five granted');
  grant.took(0, false);
  t.ok(grant.blocked, 'a heartbeat that did not fit blocks too');
  grant.took(6);
  t.same(grants, [5], 'nothing while the sink is full');
  grant.drained();
  t.same(grants, [5, 11], 'what it took meanwhile, once it drained');
  grant.drained();
  t.same(grants, [5, 11], 'nothing new: no grant');
});
