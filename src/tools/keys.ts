// The key commands of a single node's DATA_DIR, run with the server stopped (they take its lock):
//   npm run rotate-pin-key    every stored PIN encrypted again under NEW_PIN_ENCRYPTION_KEY (src/ussd/pin-rotation.ts)
//   npm run adopt-oracle-key  forget the oracle key DATA_DIR was started with; the next start records the one it has
// Steps, and what to do after: docs/operations.md ("Changing keys"). Exit 78 when a variable or the directory is
// the problem (one line naming it), 1 on anything else.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { clusterModeOn } from '../cluster/config.js';
import { crashPoint } from '../crash-point.js';
import { StartupRefusal } from '../errors.js';
import { ORACLE_CHECK } from '../oracle/identity-check.js';
import { lockDataDir } from '../store/data-dir-lock.js';
import { openStore } from '../store/env.js';
import { LmdbKeyChecks } from '../store/key-checks.js';
import { LmdbCustomerRepository } from '../ussd/customers/lmdb-repository.js';
import { keyFromValue, pinKeyProblem, resolvePinKey } from '../ussd/pin-key.js';
import { RotationRefused, rotatePinKey } from '../ussd/pin-rotation.js';

const console_ = {
  info: (_: unknown, message: string) => console.log(message),
  warn: (_: unknown, message: string) => console.warn(message),
};

async function rotate(pageSize: number): Promise<void> {
  const config = loadConfig();
  const newValue = process.env.NEW_PIN_ENCRYPTION_KEY?.trim() ?? '';
  if (!newValue)
    throw new StartupRefusal(
      'NEW_PIN_ENCRYPTION_KEY',
      'NEW_PIN_ENCRYPTION_KEY="": is required: the key to encrypt the PINs with (openssl rand -hex 32)',
    );
  const problem = pinKeyProblem(newValue);
  if (problem)
    throw new StartupRefusal(
      'NEW_PIN_ENCRYPTION_KEY',
      `NEW_PIN_ENCRYPTION_KEY=<${newValue.length} characters, not shown>: ${problem}`,
    );
  await withDataDir(config, async (store) => {
    const current = await resolvePinKey(config, console_);
    const next = await keyFromValue('NEW_PIN_ENCRYPTION_KEY', newValue);
    const where = `DATA_DIR (${config.DATA_DIR})`;
    const done = await rotatePinKey(
      new LmdbKeyChecks(store),
      new LmdbCustomerRepository(store),
      { current, next },
      where,
      {
        pageSize,
        onPage: (progress) => console.log(`rewritten ${progress.rewritten} PINs`),
        afterPage: () => crashPoint('pin-rotation-page'),
        afterPages: () => crashPoint('pin-rotation-pages'),
      },
    );
    if (done.unreadable.length > 0)
      console.warn(
        `${done.unreadable.length} customers' PINs open with neither key and were left as they are (they could not log in before either): ${done.unreadable.slice(0, 10).join(', ')}${done.unreadable.length > 10 ? ', ...' : ''}`,
      );
    console.log(
      `done: ${done.rewritten} PINs encrypted under the new key (${done.already} found done by an earlier run). ` +
        'Now set PIN_ENCRYPTION_KEY to the new key (and unset NEW_PIN_ENCRYPTION_KEY), then start the server',
    );
  });
}

async function adoptOracleKey(): Promise<void> {
  const config = loadConfig();
  await withDataDir(config, async (store) => {
    const checks = new LmdbKeyChecks(store);
    const recorded = await checks.get<{ keyDid: string }>(ORACLE_CHECK);
    await checks.remove(ORACLE_CHECK);
    console.log(
      recorded
        ? `forgot the oracle key ${recorded.keyDid}: the next start records the key it is given (UCANs delegated to the old DID are refused from then on)`
        : 'no oracle key was recorded: the next start records the key it is given',
    );
  });
}

async function withDataDir(config: Config, use: (store: ReturnType<typeof openStore>) => Promise<void>): Promise<void> {
  if (clusterModeOn(config))
    throw new StartupRefusal(
      'NATS_URL',
      "NATS_URL is set: the key commands work on a single node's DATA_DIR (cluster mode keeps its PINs in JetStream and is not covered yet)",
    );
  const lock = lockDataDir(config.DATA_DIR);
  const store = openStore(config.DATA_DIR, { minFreeBytes: config.DATA_DIR_MIN_FREE_BYTES });
  try {
    await use(store);
  } finally {
    await store.close();
    lock.release();
  }
}

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { 'page-size': { type: 'string', default: '500' } },
});
try {
  if (positionals[0] === 'rotate-pin-key') await rotate(Math.max(1, Number(values['page-size']) || 500));
  else if (positionals[0] === 'adopt-oracle-key') await adoptOracleKey();
  else {
    console.error('usage: node dist/src/tools/keys.js rotate-pin-key [--page-size 500] | adopt-oracle-key');
    process.exitCode = 64;
  }
} catch (error) {
  if (error instanceof ConfigError || error instanceof StartupRefusal || error instanceof RotationRefused) {
    console.error(error.message);
    process.exitCode = 78;
  } else {
    console.error(error);
    process.exitCode = 1;
  }
}
