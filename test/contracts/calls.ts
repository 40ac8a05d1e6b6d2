// What every CallRepository does (LMDB and JetStream KV alike): call ids create-only, updates at the revision read,
// racing updates from one read landing once, and each user's calls listed per session by what the records say.
import type { Test } from 'tap';
import type { CallRecord, CallRepository } from '../../dist/src/oracle/calls/records.js';
import { changeRecord } from '../../dist/src/oracle/revisions.js';
import { isRevisionConflict } from '../../dist/src/store/revision.js';
import { rejectsWithConflict } from './revision.js';

export type CallRepositoryFactory = (t: Test) => Promise<CallRepository>;

const ADA = 'did:key:zAda';
const BOB = 'did:key:zBob';

/** A pending call as a sync makes it; `at` orders syncs. */
export function pendingCall(callId: string, userDid: string, sessionId: string | undefined, at: number): CallRecord {
  const time = new Date(Date.UTC(2026, 0, 1, 10, 0, at)).toISOString();
  return {
    callId,
    userDid,
    ...(sessionId === undefined ? {} : { sessionId }),
    callType: 'audio',
    callStatus: 'pending',
    encryptionKey: `key-of-${callId}`,
    createdAt: time,
    updatedAt: time,
  };
}

export function callRepositoryContract(t: Test, open: CallRepositoryFactory): void {
  t.test('a call id is created once; updates name the revision read, a stale one changes nothing', async (t) => {
    const calls = await open(t);
    const call = pendingCall('$ev1:example.org@!room:example.org', ADA, 's-1', 1);
    t.equal(await calls.get(call.callId), undefined);
    const r1 = await calls.create(call);
    t.same(await calls.get(call.callId), { value: call, revision: r1 });
    await rejectsWithConflict(t, calls.create({ ...call, userDid: BOB }), 'the id is taken, by anyone');
    const active: CallRecord = { ...call, callStatus: 'active', callStartedAt: '2026-01-01T10:01:00.000Z' };
    const r2 = await calls.update(active, r1);
    t.ok(r2 > r1, 'revisions grow');
    await rejectsWithConflict(t, calls.update({ ...active, callStatus: 'ended' }, r1), 'a stale revision');
    t.same(await calls.get(call.callId), { value: active, revision: r2 });
    const other = pendingCall('$ev2:example.org@!room:example.org', ADA, 's-1', 2);
    await rejectsWithConflict(t, calls.update(other, r1), 'no record to update');
    t.equal(await calls.get(other.callId), undefined);
  });

  t.test('concurrent updates from one revision: one lands, the others conflict', async (t) => {
    const calls = await open(t);
    const call = pendingCall('$race:example.org@!room:example.org', ADA, 's-1', 1);
    const r1 = await calls.create(call);
    const outcomes = await Promise.allSettled([
      calls.update({ ...call, callStatus: 'active' }, r1),
      calls.update({ ...call, callStatus: 'ended' }, r1),
      calls.update({ ...call, callStatus: 'ended' }, r1),
    ]);
    t.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1);
    t.ok(outcomes.every((o) => o.status === 'fulfilled' || isRevisionConflict(o.reason)));
  });

  t.test('changes redone on conflict all land (changeRecord over the repository)', async (t) => {
    const calls = await open(t);
    const call = pendingCall('$merge:example.org@!room:example.org', ADA, undefined, 1);
    await calls.create(call);
    const records = {
      get: (id: string) => calls.get(id),
      create: (_id: string, value: CallRecord) => calls.create(value),
      update: (_id: string, value: CallRecord, revision: number) => calls.update(value, revision),
    };
    await Promise.all(
      (['agentVoice', 'language'] as const).map((field) =>
        changeRecord(records, call.callId, (current) => ({ value: { ...current!, [field]: field }, result: null })),
      ),
    );
    t.match((await calls.get(call.callId))?.value, { agentVoice: 'agentVoice', language: 'language' });
  });

  t.test("a session's list holds that user's calls in it, oldest sync first, and nobody else's", async (t) => {
    const calls = await open(t);
    const second = pendingCall('$b:example.org@!room:example.org', ADA, 's-1', 2);
    const first = pendingCall('$z:example.org@!room:example.org', ADA, 's-1', 1);
    await calls.create(second);
    await calls.create(first);
    await calls.create(pendingCall('$c:example.org@!room:example.org', ADA, 's-2', 3));
    await calls.create(pendingCall('$d:example.org@!room:example.org', BOB, 's-1', 4));
    await calls.create(pendingCall('$e:example.org@!room:example.org', ADA, undefined, 5));
    t.same(await calls.listSession(ADA, 's-1', 100), [first, second]);
    t.same(await calls.listSession(ADA, 's-1', 1), [first], 'at most limit, the oldest');
    t.same(
      (await calls.listSession(BOB, 's-1', 100)).map((call) => call.callId),
      ['$d:example.org@!room:example.org'],
    );
    t.same(await calls.listSession(BOB, 's-2', 100), []);
    t.same(await calls.listSession(ADA, 'no-such-session', 100), []);
  });

  t.test(
    'a session given at a later update lists the call; the record, not a left-behind entry, decides',
    async (t) => {
      const calls = await open(t);
      const call = pendingCall('$late:example.org@!room:example.org', ADA, undefined, 1);
      const r1 = await calls.create(call);
      t.same(await calls.listSession(ADA, 's-9', 100), []);
      const r2 = await calls.update({ ...call, sessionId: 's-9' }, r1);
      t.same(await calls.listSession(ADA, 's-9', 100), [{ ...call, sessionId: 's-9' }]);
      await calls.update({ ...call, sessionId: 's-10' }, r2);
      t.same(await calls.listSession(ADA, 's-9', 100), [], 'the entry of s-9 is left, the record says s-10');
      t.same((await calls.listSession(ADA, 's-10', 100)).length, 1);
    },
  );

  t.test('ids with the characters Matrix uses are kept apart, up to the longest a route takes', async (t) => {
    const calls = await open(t);
    const longest = `${'!'.repeat(255)}@${':'.repeat(256)}`;
    const ids = ['$a.b:x.org@!r:x.org', '$a:b.x.org@!r:x.org', '$A_b-c~d=e@!r:x.org', "$a'(b)*+,;@!r:x.org", longest];
    for (const [i, id] of ids.entries()) await calls.create(pendingCall(id, ADA, 's-x', i));
    for (const id of ids) t.equal((await calls.get(id))?.value.callId, id);
    t.same(
      (await calls.listSession(ADA, 's-x', 100)).map((call) => call.callId),
      ids,
    );
  });
}
