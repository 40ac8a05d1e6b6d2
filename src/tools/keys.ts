// Thread: main (an operator's command)
// The key commands, run with the server stopped: on a single node's DATA_DIR
// (they take its lock), or in cluster mode (NATS_URL set) on the deployment's records in JetStream, with every node
// stopped (they refuse while any node renews its lease: cluster/serving-nodes.ts):
//   npm run rotate-pin-key    every stored PIN encrypted again under NEW_PIN_ENCRYPTION_KEY (src/ussd/pin-rotation.ts)
//   npm run adopt-oracle-key  forget the oracle key the records were started with; the next start records the one it has
// Steps, and what to do after: docs/operations.md ("Changing keys"). Exit 78 when a variable, the directory or a
// serving node is the problem (one line naming it), 1 on anything else.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../app/config.js';
import { clusterModeOn } from '../cluster/config.js';
import { connectCluster } from '../cluster/connection.js';
import { JetStreamKeyChecks } from '../cluster/key-checks.js';
import { servingNodes } from '../cluster/serving-nodes.js';
import { crashPoint } from '../base/crash-point.js';
import { StartupRefusal } from '../base/errors.js';
import { ORACLE_CHECK } from '../oracle/identity/identity-check.js';
import { lockDataDir } from '../store/data-dir-lock.js';
import { openStore } from '../store/env.js';
import { LmdbKeyChecks, type KeyChecks } from '../store/key-checks.js';
import { JetStreamCustomerRepository } from '../cluster/records/ussd/customers.js';
import { LmdbCustomerRepository } from '../ussd/customers/lmdb-repository.js';
import type { CustomerRepository } from '../ussd/customers/repository.js';
import type { PendingCreations } from '../ussd/pin-rotation-pending.js';
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
  await withRecords(config, async (records) => {
    const current = await resolvePinKey(config, console_);
    const next = await keyFromValue('NEW_PIN_ENCRYPTION_KEY', newValue);
    const done = await rotatePinKey(records.checks, records.customers, { current, next }, records.where, {
      pageSize,
      ...(records.pending ? { pending: records.pending } : {}),
      // Cluster mode: the rotation is recorded, so from now on no node starts; one that started just before, or
      // serves still, is looked for again (a node checks the record once more after joining the leases).
      recorded: () => records.refuseWhileServing({ newcomers: false }),
      onPage: (progress) => console.log(`rewritten ${progress.rewritten} PINs`),
      afterPage: () => crashPoint('pin-rotation-page'),
      afterPages: () => crashPoint('pin-rotation-pages'),
    });
    if (done.unreadable.length > 0)
      console.warn(
        `${done.unreadable.length} customers' PINs open with neither key and were left as they are (they could not log in before either): ${done.unreadable.slice(0, 10).join(', ')}${done.unreadable.length > 10 ? ', ...' : ''}`,
      );
    console.log(
      `done: ${done.rewritten} PINs encrypted under the new key (${done.already} found done by an earlier run). ` +
        `Now set PIN_ENCRYPTION_KEY to the new key (and unset NEW_PIN_ENCRYPTION_KEY), then start ${records.servers}`,
    );
  });
}

async function adoptOracleKey(): Promise<void> {
  const config = loadConfig();
  await withRecords(config, async (records) => {
    const recorded = await records.checks.get<{ keyDid: string }>(ORACLE_CHECK);
    await records.checks.remove(ORACLE_CHECK);
    // A node that started meanwhile with the old key records it again (its check after joining the leases).
    // Nodes joining now are watched for too: one started with the old key records it again after joining.
    await records.refuseWhileServing({
      ifFound: 'it may have recorded its key again: stop it and run npm run adopt-oracle-key again',
      newcomers: true,
    });
    console.log(
      recorded
        ? `forgot the oracle key ${recorded.keyDid}: the next start records the key it is given (UCANs delegated to the old DID are refused from then on)`
        : 'no oracle key was recorded: the next start records the key it is given',
    );
  });
}

/** The records the key commands work on: a single node's DATA_DIR, or the cluster's JetStream. */
interface KeyRecords {
  checks: KeyChecks;
  customers: CustomerRepository;
  pending?: PendingCreations;
  /** Names the records in messages. */
  where: string;
  /** What to start afterwards. */
  servers: string;
  /**
   * Cluster mode: refuses (exit 78) while any node serves; `ifFound` says what follows from one found, `newcomers`
   * whether nodes joining during the look count (cluster/serving-nodes.ts).
   */
  refuseWhileServing(options?: { ifFound?: string; newcomers?: boolean }): Promise<void>;
}

function withRecords(config: Config, use: (records: KeyRecords) => Promise<void>): Promise<void> {
  return clusterModeOn(config) ? withCluster(config, use) : withDataDir(config, use);
}

async function withDataDir(config: Config, use: (records: KeyRecords) => Promise<void>): Promise<void> {
  const lock = lockDataDir(config.DATA_DIR);
  const store = openStore(config.DATA_DIR, { minFreeBytes: config.DATA_DIR_MIN_FREE_BYTES });
  try {
    await use({
      checks: new LmdbKeyChecks(store),
      customers: new LmdbCustomerRepository(store),
      where: `DATA_DIR (${config.DATA_DIR})`,
      servers: 'the server',
      // The lock taken above is the proof that no server runs on the directory.
      refuseWhileServing: async () => undefined,
    });
  } finally {
    await store.close();
    lock.release();
  }
}

async function withCluster(config: Config, use: (records: KeyRecords) => Promise<void>): Promise<void> {
  const connection = await connectCluster(config, 'key-tool');
  try {
    const refuseWhileServing = async ({ ifFound = 'nothing was changed', newcomers = false } = {}) => {
      console.log('looking for serving nodes in the lease table (up to a few seconds)');
      const serving = await servingNodes(connection, { newcomers });
      if (serving.length > 0)
        throw new RotationRefused(
          `nodes serve the deployment (NATS_PREFIX=${connection.prefix}): ${serving.join(', ')} renewed their lease ` +
            `just now; stop every node first (docs/operations.md, "Changing keys"); ${ifFound}`,
        );
    };
    // A node joining meanwhile is seen by the second look (after the change is recorded), or sees the change itself.
    await refuseWhileServing();
    const customers = await JetStreamCustomerRepository.open(connection);
    await use({
      checks: await JetStreamKeyChecks.open(connection),
      customers,
      pending: customers,
      where: "the cluster's JetStream",
      servers: 'every node with it',
      refuseWhileServing,
    });
  } finally {
    await connection.close();
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
