// How the USSD route logs a failed actor call: refusals an operator expects under load (a full mailbox) are
// warnings, so an error-level alert is left for faults.
import t from 'tap';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { startTestServer } from './helpers/server.js';
import { postUssd } from './helpers/ussd-gateway.js';

const UNAVAILABLE = 'END Service temporarily unavailable. Please try again later.';

t.test('a burst on one session past its mailbox: each refusal is logged once, at warn, none at error', async (t) => {
  const records: { level: number; msg: string; err?: { type?: string } }[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) records.push(JSON.parse(line));
      done();
    },
  });
  const server = await startTestServer(t, { env: { ACTOR_MAILBOX_LIMIT: '1' }, log: pino({ level: 'debug' }, sink) });
  const dial = { sessionId: 'burst-logs', serviceCode: '*384*123#', phoneNumber: '+254700000010', text: '' };
  const answers = await Promise.all(Array.from({ length: 16 }, () => postUssd(server.url, dial)));
  const refused = answers.filter((a) => a.body === UNAVAILABLE).length;
  t.ok(refused > 0, `${refused} of 16 refused while the mailbox was full`);

  const failures = records.filter((r) => r.msg === 'USSD actor failed');
  t.equal(failures.length, refused, 'one log record per refusal');
  t.ok(
    failures.every((r) => r.level === 40 && r.err?.type === 'ActorBusyError'),
    'each a warning naming ActorBusyError',
  );
  t.same(
    records.filter((r) => r.level >= 50),
    [],
    'nothing logged at error or above',
  );
});
