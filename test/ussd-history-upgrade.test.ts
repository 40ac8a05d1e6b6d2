// An upgrade with live USSD sessions: a session stored by a release whose history digest was HMAC-SHA256 (no
// version mark) continues on this one, through HTTP, and is stored again with the current digest form.
import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { openStore } from '../dist/src/store/env.js';
import type { UssdSession } from '../dist/src/ussd/session.js';
import { startTestServer } from './helpers/server.js';
import { GatewaySession } from './helpers/ussd-gateway.js';

/** The digest the earlier release stored: HMAC-SHA256 under the HKDF subkey of the PIN key, base64url. */
function legacyDigest(key: Buffer, text: string): string {
  const subkey = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'ussd-text-history-digest', 32));
  return createHmac('sha256', subkey).update(text, 'utf8').digest('base64url');
}

/** The stored records of a stopped server's data directory, by session ID: read, and written at the same version. */
interface Records {
  getEntry(sessionId: string): { value: UssdSession; version: number } | undefined;
  get(sessionId: string): UssdSession | undefined;
  putSync(sessionId: string, value: UssdSession, version: number): void;
}

/** Opens the stopped server's data directory, hands `use` its session records, closes it again. */
async function withRecords<T>(dataDir: string, use: (records: Records) => T): Promise<T> {
  const store = openStore(dataDir);
  // Records are keyed `<start>:<sessionId>`; the start of each session ID is in `ussd-session-starts`.
  const records = store.db<UssdSession>('ussd-sessions-by-start');
  const keyOf = (sessionId: string) =>
    `${String(store.db<number>('ussd-session-starts').get(sessionId)).padStart(15, '0')}:${sessionId}`;
  try {
    return use({
      getEntry: (sessionId) =>
        records.getEntry(keyOf(sessionId)) as { value: UssdSession; version: number } | undefined,
      get: (sessionId) => records.get(keyOf(sessionId)),
      putSync: (sessionId, value, version) => void records.putSync(keyOf(sessionId), value, version),
    });
  } finally {
    await store.close();
  }
}

t.test('sessions stored with the HMAC history digest continue after the upgrade, retries included', async (t) => {
  const key = randomBytes(32);
  const env = { PIN_ENCRYPTION_KEY: key.toString('hex') };
  const dataDir = mkdtempSync(join(tmpdir(), 'sar-ussd-upgrade-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));

  const before = await startTestServer(t, { env, dataDir });
  const form = new GatewaySession(before.url, 'upgrade-form');
  await form.send();
  await form.send('2'); // Account Menu
  const askName = await form.send('2'); // Create account
  t.match(askName, /^CON Enter your full name:/);
  const foreign = new GatewaySession(before.url, 'upgrade-foreign');
  await foreign.send();
  const knowMore = await foreign.send('1');
  await before.shutdown();

  // As the earlier release wrote them: the same records, their history digests in the HMAC form; the second
  // one made with another key, so it matches no text.
  await withRecords(dataDir, (records) => {
    const entry = records.getEntry('upgrade-form')!;
    t.match(entry.value.history, { length: 3, digest: /^h2\./ }, 'written by this release');
    records.putSync(
      'upgrade-form',
      { ...entry.value, history: { length: 3, digest: legacyDigest(key, '2*2') } },
      entry.version,
    );
    const other = records.getEntry('upgrade-foreign')!;
    records.putSync(
      'upgrade-foreign',
      { ...other.value, history: { length: 1, digest: legacyDigest(randomBytes(32), '1') } },
      other.version,
    );
  });

  const after = await startTestServer(t, { env, dataDir });
  const resumed = new GatewaySession(after.url, 'upgrade-form');
  resumed.inputs.push(...form.inputs);
  t.equal(await resumed.resend(), askName, 'the gateway retry of the last request answers the same screen');
  t.match(await resumed.send('Amina Wanjiru'), /^CON Enter your email address/, 'the next input continues the form');
  t.match(await resumed.send('00'), /^CON Choose a 5-digit PIN:/, 'and the one after');

  // A digest that matches nothing: '1' is no consumed history, so it is the input on the Know More screen.
  const unmatched = new GatewaySession(after.url, 'upgrade-foreign');
  unmatched.inputs.push(...foreign.inputs);
  const screen = await unmatched.resend();
  t.not(screen, knowMore, 'an HMAC digest of another key is not taken for the history (no retry)');
  t.match(screen, /^CON About this service/);
  await after.shutdown();

  await withRecords(dataDir, (records) => {
    const { history, pending } = records.get('upgrade-form')!;
    t.equal(history.length, '2*2*Amina Wanjiru*00'.length);
    t.match(history.digest, /^h2\./, 'stored again in the current form');
    t.equal(pending?.fullName, 'Amina Wanjiru');
  });
});
