// kill -9 between the commit of a new account and the commit of the session step that made it (CRASH_AT
// test hook, in a child-process server), then the gateway's retry against the restarted server on the same
// DATA_DIR: exactly one account, and the retry answers the screen with that account's ID.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { openStore } from '../dist/src/store/env.js';
import { GatewaySession } from './helpers/ussd-gateway.js';

/** The compiled server as its own process; resolves once it listens. */
async function startChild(t: { teardown(fn: () => unknown): void }, dataDir: string, env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['dist/src/app/main.js'], {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      ACTOR_THREADS: '1',
      RATE_LIMIT_MAX: '100000',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      output += chunk;
      const match = /"port":(\d+)[^\n]*"msg":"listening"/.exec(output);
      if (match) resolve(Number(match[1]));
    });
    void exited.then(() => reject(new Error(`the server exited before listening:\n${output}`)));
  });
  return { child, url: `http://127.0.0.1:${port}`, exited };
}

t.test('a crash between the account commit and the session commit: the retry makes no second account', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sar-crash-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));

  const doomed = await startChild(t, dataDir, { CRASH_AT: 'ussd-account-committed' });
  const gateway = new GatewaySession(doomed.url, 'crash-create-1');
  await gateway.send();
  await gateway.send('2'); // Account Menu
  await gateway.send('2'); // Create account
  await gateway.send('Amina Wanjiru');
  await gateway.send('00'); // skip email
  await gateway.send('48207');
  gateway.inputs.push('48207'); // PIN confirmation: the account is committed, then the process dies
  await t.rejects(gateway.resend(), 'the confirmation is never answered');
  t.same(await doomed.exited, { code: null, signal: 'SIGKILL' }, 'killed at the marked point');

  const restarted = await startChild(t, dataDir);
  const retry = new GatewaySession(restarted.url, gateway.sessionId);
  retry.inputs.push(...gateway.inputs);
  const screen = await retry.resend(); // the gateway's retry of the unanswered request
  const customerId = /C[0-9A-F]{8}/.exec(screen)?.[0];
  t.match(screen, /^CON .*C[0-9A-F]{8}/s, 'the retry answers the created account');
  t.equal(await retry.resend(), screen, 'a further retry answers the same screen');

  restarted.child.kill('SIGTERM');
  t.equal((await restarted.exited).code, 0);
  const store = openStore(dataDir);
  t.teardown(() => store.close());
  const accounts = [...store.db<{ customerId: string; fullName: string }>('ussd-customers').getRange()].map(
    ({ value }) => value,
  );
  t.equal(accounts.length, 1, 'exactly one account');
  t.equal(accounts[0]?.customerId, customerId, 'the one the retry showed');
  t.equal(accounts[0]?.fullName, 'Amina Wanjiru');
});
