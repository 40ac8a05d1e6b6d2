// Thread: main, at start-up
// The oracle's key must be the one the records were started with. UCANs are delegated to
// the oracle's DID, so a key changed by accident (ORACLE_PRIVATE_KEY set on a DATA_DIR that generated its own, a
// paste of another deployment's) would refuse every user's delegation. The key's DID is recorded beside the records
// at the first start; another key refuses to start (exit 78) until it is adopted on purpose (npm run adopt-oracle-key).
import { StartupRefusal } from '../../base/errors.js';
import type { KeyChecks } from '../../store/key-checks.js';
import type { OracleIdentity } from './identity.js';

export const ORACLE_CHECK = 'oracle';

export interface OracleCheckRecord {
  keyDid: string;
  did: string;
  at: string;
}

export async function checkOracleKey(
  checks: KeyChecks,
  identity: Pick<OracleIdentity, 'keyDid' | 'did' | 'keySource'>,
  where: string,
): Promise<void> {
  const recorded = await checks.putIfAbsent<OracleCheckRecord>(ORACLE_CHECK, {
    keyDid: identity.keyDid,
    did: identity.did,
    at: new Date().toISOString(),
  });
  if (recorded.keyDid === identity.keyDid) return;
  const source =
    identity.keySource === 'env'
      ? 'ORACLE_PRIVATE_KEY'
      : `the key in DATA_DIR/oracle-key (${identity.keySource === 'generated' ? 'generated just now: the file was gone' : 'ORACLE_PRIVATE_KEY is unset'})`;
  throw new StartupRefusal(
    'ORACLE_PRIVATE_KEY',
    `ORACLE_PRIVATE_KEY: ${source} is ${identity.keyDid}, but ${where} was started with the oracle key ` +
      `${recorded.keyDid} (recorded ${recorded.at}; UCANs delegated to it would be refused): set that key, or adopt ` +
      'the new one on purpose with npm run adopt-oracle-key (docs/operations.md)',
  );
}
