// A full disk is an answer, never a crash: a server whose DATA_DIR is a 16 MB tmpfs of this test's own, filled to
// just above DATA_DIR_MIN_FREE_BYTES while USSD callers open accounts and chat users send messages. The writes reach
// the floor and are refused before LMDB (lmdb 3.5.6's mdb.c aborts the process on a failed page write): USSD steps
// answer the END text, chat writes 503 with Retry-After, /health 503 with storage.writable false, the metric counts
// the refusals, no actor host restarts; a delete still runs; with space freed it all recovers by itself; and after
// a restart every acknowledged account logs in and every acknowledged message is in its transcript.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { scrape } from './helpers/metrics.js';
import { call, createSession, newUser, startOracleServer, type OracleServer } from './helpers/oracle.js';
import { GatewaySession, postUssd } from './helpers/ussd-gateway.js';

t.setTimeout(120_000);

const UNAVAILABLE = 'END Service temporarily unavailable. Please try again later.';
const FLOOR = 2 * 1024 * 1024;
const PIN = '48207';

/** A tmpfs of `size` mounted for this test, unmounted (after `before`) in teardown. */
function tmpfs(size: string, before: () => Promise<unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'sar-full-disk-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
  t.teardown(async () => {
    await before();
    execFileSync('umount', [dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

const freeBytes = (dir: string) => {
  const { bavail, bsize } = statfsSync(dir);
  return bavail * bsize;
};

/** Opens an account through the menu: its customer ID, or undefined when a step was refused. */
async function openAccount(url: string, sessionId: string): Promise<string | undefined> {
  const s = new GatewaySession(url, sessionId);
  for (const input of [undefined, '2', '2', 'Amina Wanjiru', '00', PIN]) {
    if ((await s.send(input)) === UNAVAILABLE) return undefined;
  }
  return /C[0-9A-F]{8}/.exec(await s.send(PIN))?.[0];
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

t.test(
  'writes reach the free-space floor under load: refused, answered, recovered, nothing acknowledged lost',
  async (t) => {
    let live: OracleServer | undefined;
    const mount = tmpfs('16m', async () => live?.shutdown());
    const dataDir = join(mount, 'data');
    const env = { DATA_DIR_MIN_FREE_BYTES: String(FLOOR), ACTOR_THREADS: '2' };
    live = await startOracleServer(t, { dataDir, env });
    const server = live;
    const ada = await newUser(server.oracleDid);
    const chats = [await createSession(server, ada), await createSession(server, ada)];
    const spare = await createSession(server, ada);
    t.equal((await call(server, 'GET', '/health')).status, 200, 'healthy before the disk fills');

    // Leave about 600 KB above the floor: the load below writes past it within a few hundred steps and messages.
    const filler = join(mount, 'filler');
    writeFileSync(filler, Buffer.alloc(Math.max(0, freeBytes(mount) - FLOOR - 600 * 1024)));

    const accounts: string[] = [];
    const messages: { sessionId: string; text: string }[] = [];
    const seen = { ussdRefused: 0, chatRefused: 0, chatRetryAfter: new Set<string>(), otherAnswers: [] as string[] };
    let stop = false;
    let n = 0;
    const ussdCaller = async (c: number) => {
      for (let i = 0; !stop; i++) {
        // Mostly plain dials (a session record each); every tenth an account opening (an asynchronous commit).
        if (i % 10 === 0) {
          const id = await openAccount(server.url, `full-open-${c}-${n++}`);
          if (id) accounts.push(id);
          else seen.ussdRefused++;
          continue;
        }
        const { body } = await postUssd(server.url, {
          sessionId: `full-dial-${c}-${n++}`,
          serviceCode: '*384#',
          phoneNumber: '+254700000001',
          text: '',
        });
        if (body === UNAVAILABLE) seen.ussdRefused++;
        else if (!body.startsWith('CON ')) seen.otherAnswers.push(body);
      }
    };
    const chatCaller = async (sessionId: string) => {
      for (let i = 0; !stop; i++) {
        const text = `message ${i} ${'x'.repeat(8000)}`;
        const res = await call(server, 'POST', `/messages/${sessionId}`, { user: ada, body: { message: text } });
        if (res.status === 200) messages.push({ sessionId, text });
        else if (res.status === 503) {
          seen.chatRefused++;
          seen.chatRetryAfter.add(res.headers.get('retry-after') ?? 'none');
        } else seen.otherAnswers.push(`${res.status} ${JSON.stringify(res.body)}`);
      }
    };
    const load = Promise.all([ussdCaller(0), ussdCaller(1), ...chats.map(chatCaller)]);
    const refusedBoth = until('USSD and chat refusals', async () =>
      seen.ussdRefused >= 20 && seen.chatRefused >= 5 ? true : undefined,
    );
    await Promise.race([refusedBoth, load]);
    await refusedBoth;

    // Below the floor: the answers, /health, the metrics.
    const health = await call(server, 'GET', '/health');
    t.equal(health.status, 503, '/health fails');
    t.match(health.body, {
      status: 'error',
      database: 'disconnected',
      storage: { writable: false, reason: 'low_space' },
    });
    t.ok(health.body.storage.freeBytes < FLOOR, `${health.body.storage.freeBytes} bytes free, below the floor`);
    t.same([...seen.chatRetryAfter], ['5'], 'every refused chat write says Retry-After: 5');
    t.equal((await call(server, 'DELETE', `/sessions/${spare}`, { user: ada })).status, 200, 'a delete still runs');
    // The hosts report their counts every second.
    const below = await until('the refusals in /metrics', async () => {
      const metrics = await scrape(server.url);
      return metrics.value('store_writes_refused_total', { reason: 'low_space' }) > 0 ? metrics : undefined;
    });
    t.equal(below.value('store_writable'), 0, 'store_writable 0');

    // Space comes back: everything recovers by itself, under the same load.
    rmSync(filler);
    await until('/health to recover', async () =>
      (await call(server, 'GET', '/health')).status === 200 ? true : undefined,
    );
    const before = { accounts: accounts.length, messages: messages.length };
    await until('writes to land again', async () =>
      accounts.length > before.accounts && messages.length > before.messages ? true : undefined,
    );
    stop = true;
    await load;
    t.same(seen.otherAnswers, [], 'every answer was a screen, the END text, a 200 or a 503');
    t.ok(
      accounts.length > 0 && messages.length > 0,
      `${accounts.length} accounts, ${messages.length} messages acknowledged`,
    );
    t.ok(
      seen.ussdRefused >= 20 && seen.chatRefused >= 5,
      `${seen.ussdRefused} USSD steps, ${seen.chatRefused} chat writes refused`,
    );
    const after = await scrape(server.url);
    t.equal(after.value('actor_host_restarts_total'), 0, 'no actor host restarted');
    t.equal(after.value('store_writable'), 1, 'store_writable 1');

    // A restart on the same DATA_DIR holds every acknowledged account and message.
    await server.shutdown();
    live = await startOracleServer(t, {
      dataDir,
      env: { ...env, ORACLE_PRIVATE_KEY: server.config.ORACLE_PRIVATE_KEY! },
    });
    const restarted = live;
    for (const [i, id] of accounts.entries()) {
      const s = new GatewaySession(restarted.url, `full-login-${i}`);
      for (const input of [undefined, '2', '1', id]) await s.send(input);
      t.match(await s.send(PIN), /^CON Hello Amina/, `${id} logs in`);
    }
    for (const sessionId of chats) {
      const res = await call(restarted, 'GET', `/messages/${sessionId}`, { user: ada });
      const said = new Set(res.body.messages.filter((m: any) => m.type === 'human').map((m: any) => m.content));
      const acknowledged = messages.filter((m) => m.sessionId === sessionId);
      t.ok(
        acknowledged.every((m) => said.has(m.text)),
        `the transcript holds its ${acknowledged.length} acknowledged messages`,
      );
    }
  },
);
