// The USSD expiry sweep through the running server: with a 1 s TTL the sweep removes the expired sessions
// from LMDB and keeps the ended ones (retained 60 s so a gateway retry still gets their END screen).
import t from 'tap';
import { rmSync } from 'node:fs';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { openStore } from '../dist/src/store/env.js';
import { LmdbUssdSessionRepository } from '../dist/src/records/lmdb/ussd/sessions.js';
import { startTestServer } from './helpers/server.js';
import { GatewaySession } from './helpers/ussd-gateway.js';

t.test('the sweep removes expired sessions from the store and keeps the ended ones', async (t) => {
  let removed = 0;
  let allRemoved: () => void = () => {};
  const swept = new Promise<void>((resolve) => (allRemoved = resolve));
  const lines = new Writable({
    write(chunk, _encoding, done) {
      const entry = JSON.parse(String(chunk));
      if (entry.msg === 'expired USSD sessions removed' && (removed += entry.removed) >= 5) allRemoved();
      done();
    },
  });
  const server = await startTestServer(t, {
    env: { USSD_SESSION_TTL_SECONDS: '1' },
    log: pino({ level: 'debug' }, lines),
    keepData: true,
  });

  const expiring = Array.from({ length: 5 }, (_, i) => new GatewaySession(server.url, `expiring-${i}`));
  for (const session of expiring) await session.send();
  const ended = Array.from({ length: 3 }, (_, i) => new GatewaySession(server.url, `ended-${i}`));
  const endScreens: string[] = [];
  for (const session of ended) {
    await session.send();
    endScreens.push(await session.send('*'));
  }

  await swept;
  t.equal(removed, 5, 'the five expired sessions were swept');
  for (const [i, session] of ended.entries())
    t.equal(await session.resend(), endScreens[i], 'an ended session still answers its END');
  t.match(await expiring[0].send('1'), /^END .*expired/, 'a swept session answers as expired');

  await server.shutdown();
  const store = openStore(server.dataDir);
  t.teardown(async () => {
    await store.close();
    rmSync(server.dataDir, { recursive: true, force: true });
  });
  const repository = new LmdbUssdSessionRepository(store);
  for (const session of expiring)
    t.equal(await repository.get(session.sessionId), undefined, `${session.sessionId} is gone from the store`);
  for (const session of ended)
    t.equal((await repository.get(session.sessionId))?.value.state, 'ended', `${session.sessionId} is kept`);
});
