// Thread: main, at start-up (the composition root's)
// The PIN key resolved once for every actor host, after it and
// the oracle's key were checked against what the records were written with (exit 78 naming the variable when not):
// beside the records, in DATA_DIR's LMDB, or in cluster mode in JetStream where every node's records are. In cluster
// mode the check is made once more after the node joined the partition leases, before it serves: the key commands
// (src/tools/keys.ts) record a rotation, then look for nodes renewing a lease. A node whose first check came just
// before the rotation was recorded is thus either seen by the command (which then refuses) or sees the rotation here
// (and refuses to start): it can never serve with the old key while PINs move to the new one.
import type { ClusterConnection } from '../cluster/connection.js';
import { JetStreamKeyChecks } from '../cluster/key-checks.js';
import type { Config } from './config.js';
import type { Logger } from '../base/log.js';
import { loadOracleIdentity } from '../oracle/identity/identity.js';
import { checkOracleKey } from '../oracle/identity/identity-check.js';
import type { CpuPool } from '../runtime/cpu-pool.js';
import type { Store } from '../store/env.js';
import { LmdbKeyChecks } from '../store/key-checks.js';
import { resolvePinKey, type PinKey } from '../ussd/pin-key.js';
import { checkPinKey, samplePin } from '../ussd/pin-key-check.js';
import { openRecords } from './records.js';

export interface CheckedKeys {
  pinKey: PinKey;
  /** The same checks again (cluster mode: after joining the leases); a no-op on a single node, whose lock suffices. */
  recheck(): Promise<void>;
}

export async function checkedKeys(
  config: Config,
  store: Store,
  cpuPool: CpuPool,
  cluster: ClusterConnection | undefined,
  log: Logger,
): Promise<CheckedKeys> {
  const pinKey = await resolvePinKey(config, log, (secret, salt) =>
    cpuPool.run<Uint8Array>('deriveKey', { secret, salt }).then((key) => Buffer.from(key)),
  );
  const checks = cluster ? await JetStreamKeyChecks.open(cluster) : new LmdbKeyChecks(store);
  const where = cluster ? "the cluster's JetStream" : `DATA_DIR (${config.DATA_DIR})`;
  const customers = await openRecords(store, config, cluster).ussd.customers();
  const sample = () => samplePin(customers);
  if ((await checkPinKey(checks, pinKey, sample, where)) === 'recorded')
    log.info('PIN key check value recorded beside the records');
  // The oracle face loads the same identity again and logs it; here only a key generated now is said.
  const generatedOnly = {
    info: (fields: object, message: string) => message.startsWith('generated') && log.info(fields, message),
    warn: log.warn.bind(log),
  };
  const identity = await loadOracleIdentity(config, generatedOnly as unknown as Logger);
  await checkOracleKey(checks, identity, where);
  const recheck = async () => {
    if (!cluster) return;
    await checkPinKey(checks, pinKey, sample, where);
    await checkOracleKey(checks, identity, where);
  };
  return { pinKey, recheck };
}
