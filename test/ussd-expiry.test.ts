// Nothing of a USSD session stays once it expired (issue 13: RSS flat over many expired sessions, measured by
// bench/memory.ts): its actor leaves the host's memory, the host's live-session map (ussd_sessions_active)
// forgets it, and the expiry sweep removes its record and its expiry-index entry from LMDB, counting it as ended by
// timeout.
import { rmSync } from 'node:fs';
import { pino } from 'pino';
import t from 'tap';
import { openStore } from '../dist/src/store/env.js';
import { scrape } from './helpers/metrics.js';
import { eventually } from './helpers/oracle.js';
import { startTestServer } from './helpers/server.js';
import { GatewaySession } from './helpers/ussd-gateway.js';

const SESSIONS = 20;

t.test('expired sessions leave no actor, no live entry and no record behind', async (t) => {
  // The sweep says what it removed in a debug line: the test waits for that instead of for a time.
  let swept = 0;
  const log = pino(
    { level: 'debug' },
    {
      write: (line: string) => {
        const entry = JSON.parse(line) as { msg?: string; removed?: number };
        if (entry.msg === 'expired USSD sessions removed') swept += entry.removed ?? 0;
      },
    },
  );
  const server = await startTestServer(t, {
    env: { USSD_SESSION_TTL_SECONDS: '1', ACTOR_IDLE_SECONDS: '1' },
    keepData: true,
    log,
  });

  for (let i = 0; i < SESSIONS; i++) {
    const session = new GatewaySession(server.url, `expiring-${i}`);
    t.match(await session.send(), /^CON /);
    t.match(await session.send('1'), /^CON Know More/);
  }

  const after = await eventually(
    async () => {
      // Read before the scrape: a sweep that ends while the scrape is on its way must not pass with its counts.
      const sweptBefore = swept;
      const s = await scrape(server.url);
      return sweptBefore === SESSIONS &&
        s.value('ussd_sessions_active') === 0 &&
        s.value('actors_active', { kind: 'ussd' }) === 0
        ? s
        : undefined;
    },
    'the sessions to expire, their actors to be dropped and the sweep to remove them',
    800,
  );
  t.equal(after.value('ussd_sessions_active'), 0, 'no live session counted: the live map forgot them');
  t.equal(after.value('actors_active', { kind: 'ussd' }), 0, 'no USSD actor left in memory');
  t.equal(swept, SESSIONS, 'the sweep removed each session once');
  t.equal(
    after.value('ussd_service_sessions_ended_total', { service: 'builtin', state: 'knowMore', reason: 'timeout' }),
    SESSIONS,
    'each counted once as ended by timeout, from the state the user left it in',
    { ended: after.text.split('\n').filter((line) => line.startsWith('ussd_service_sessions_ended_total')) },
  );

  await server.shutdown();
  const store = openStore(server.dataDir);
  t.teardown(async () => {
    await store.close();
    rmSync(server.dataDir, { recursive: true, force: true });
  });
  const keys = (name: 'ussd-sessions-by-start' | 'ussd-session-starts' | 'ussd-session-expiry-index') =>
    [...store.db(name).getKeys()].length;
  t.equal(keys('ussd-sessions-by-start'), 0, 'no session record left in LMDB');
  t.equal(keys('ussd-session-starts'), 0, 'no start entry left in LMDB');
  t.equal(keys('ussd-session-expiry-index'), 0, 'no expiry-index entry left in LMDB');
});
