// The behaviour the USSD sessions must have, through the actors' store (UssdSessionRepository: begin,
// revision-checked updates) and the live index beside it (UssdLiveIndex: the live set, expiry), run against LMDB by
// test/repo-ussd-sessions.test.ts and the sessions journal by test/repo-ussd-sessions-journal.test.ts.
import type { Test } from 'tap';
import type { UssdSession } from '../../dist/src/ussd/session.js';
import type { UssdLiveIndex, UssdSessionRepository } from '../../dist/src/ussd/sessions/repository.js';
import { rejectsWithConflict } from './revision.js';

/** One node's sessions: the actors' store and the live index over it. */
export type UssdSessionsUnderTest = UssdSessionRepository & Pick<UssdLiveIndex, 'live' | 'removeExpired'>;

/** A fresh, empty repository; the factory tears down what it opens when `t` ends. */
export type UssdSessionRepositoryFactory = (t: Test) => Promise<UssdSessionsUnderTest>;

export const T0 = Date.UTC(2026, 0, 15, 9, 0, 0);

export function session(sessionId: string, expiresAt: number, fields: Partial<UssdSession> = {}): UssdSession {
  return {
    sessionId,
    phoneNumber: '+254712345678',
    serviceCode: '*384#',
    state: 'preMenu',
    context: { sessionId, phoneNumber: '+254712345678', message: 'Welcome', isAuthenticated: false },
    history: { length: 0, digest: 'd' },
    screen: 'CON Welcome',
    createdAt: T0,
    updatedAt: T0,
    expiresAt,
    ...fields,
  };
}

export function ussdSessionRepositoryContract(t: Test, open: UssdSessionRepositoryFactory): void {
  t.test('begin creates a session; get answers it with its revision; an unknown id is undefined', async (t) => {
    const repository = await open(t);
    const revision = await repository.begin(session('s-1', T0 + 300_000), T0);
    t.same(await repository.get('s-1'), { value: session('s-1', T0 + 300_000), revision });
    t.equal(await repository.get('s-2'), undefined);
  });

  t.test('begin refuses while a session that has not expired is stored, and replaces an expired one', async (t) => {
    const repository = await open(t);
    const first = await repository.begin(session('s-1', T0 + 1000), T0);
    await rejectsWithConflict(
      t,
      repository.begin(session('s-1', T0 + 2000, { phoneNumber: '+254700000002' }), T0 + 999),
      'a live session is kept',
    );
    t.equal((await repository.get('s-1'))?.value.phoneNumber, '+254712345678');
    // The new session numbers its steps on from the expired one's (session-actor.ts), as the journal requires.
    const replacement = session('s-1', T0 + 301_000, { createdAt: T0 + 1000, step: 1 });
    const second = await repository.begin(replacement, T0 + 1000);
    t.not(second, first, 'the revision moved');
    t.same((await repository.get('s-1'))?.value, replacement);
  });

  t.test(
    'update with the revision read replaces the session; a stale revision or a missing session is refused',
    async (t) => {
      const repository = await open(t);
      const begun = session('s-1', T0 + 300_000);
      const first = { value: begun, revision: await repository.begin(begun, T0) };
      const next = session('s-1', T0 + 310_000, { state: 'knowMore', updatedAt: T0 + 10_000 });
      const second = await repository.update(next, first);
      t.same(await repository.get('s-1'), { value: next, revision: second });
      await rejectsWithConflict(t, repository.update(session('s-1', T0 + 320_000), first), 'stale');
      t.same((await repository.get('s-1'))?.value, next, 'nothing written');
      await rejectsWithConflict(
        t,
        repository.update(session('s-9', T0 + 320_000), {
          value: session('s-9', T0 + 300_000),
          revision: first.revision,
        }),
        'missing',
      );
      t.equal(await repository.get('s-9'), undefined, 'not created');
    },
  );

  t.test('live lists the sessions that neither expired nor ended, with their expiry', async (t) => {
    const repository = await open(t);
    await repository.begin(session('live-1', T0 + 5000), T0);
    await repository.begin(session('expired', T0 + 1000), T0);
    await repository.begin(session('ended', T0 + 60_000, { state: 'ended', screen: 'END Bye' }), T0);
    const renewed = session('live-2', T0 + 1000);
    await repository.update(session('live-2', T0 + 9000), {
      value: renewed,
      revision: await repository.begin(renewed, T0),
    });
    const live = await repository.live(T0 + 1000);
    t.same(
      live.sort((a, b) => a.sessionId.localeCompare(b.sessionId)),
      [
        { sessionId: 'live-1', expiresAt: T0 + 5000 },
        { sessionId: 'live-2', expiresAt: T0 + 9000 },
      ],
      'expired at exactly now is not live; a renewed session is listed once, with its new expiry',
    );
    t.same(await repository.live(T0 + 9000), []);
  });

  t.test('removeExpired never removes a session that has not expired', async (t) => {
    const repository = await open(t);
    await repository.begin(session('live', T0 + 5000), T0);
    await repository.begin(session('expired', T0 + 1000), T0);
    await repository.removeExpired(T0 + 1000);
    t.same((await repository.get('live'))?.value, session('live', T0 + 5000));
    t.same(await repository.live(T0 + 1000), [{ sessionId: 'live', expiresAt: T0 + 5000 }]);
    // Numbering its steps on (the journal may still hold the expired one: it expires its own records).
    await repository.begin(session('expired', T0 + 400_000, { step: 1 }), T0 + 1000);
    t.equal((await repository.get('expired'))?.value.expiresAt, T0 + 400_000, 'an expired id can begin again');
  });
}
