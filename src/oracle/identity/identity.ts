// Thread: any
// The oracle's identity: its Ed25519 key (ORACLE_PRIVATE_KEY, or a key generated once into DATA_DIR), the
// DID that UCANs must be addressed to (ORACLE_DID, default the key's did:key) and its name.
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ed25519 } from '@ucanto/principal';
import type { DID, Signer } from '@ucanto/interface';
import { StartupRefusal } from '../../base/errors.js';
import { generateSigner, parseSigner } from '../auth/node-signer.js';
import type { Logger } from '../../base/log.js';

export const ORACLE_KEY_FILE = 'oracle-key';

export interface OracleIdentityEnv {
  ORACLE_PRIVATE_KEY?: string;
  ORACLE_DID?: string;
  ORACLE_NAME?: string;
  DATA_DIR?: string;
}

export interface OracleIdentity {
  /** The audience UCANs must name. */
  readonly did: string;
  /** did:key of the oracle's key. */
  readonly keyDid: `did:key:${string}`;
  readonly name: string;
  /** Signs as `did` (the key wrapped under ORACLE_DID when one is set). */
  readonly signer: Signer;
  /** Where the key came from. */
  readonly keySource: 'env' | 'file' | 'generated';
}

/** Loads the identity; without ORACLE_PRIVATE_KEY the key lives in DATA_DIR/oracle-key (created on first start). */
export async function loadOracleIdentity(
  env: OracleIdentityEnv,
  log?: Pick<Logger, 'info' | 'warn'>,
): Promise<OracleIdentity> {
  const { key, keySource } = env.ORACLE_PRIVATE_KEY
    ? { key: parseSigner(env.ORACLE_PRIVATE_KEY), keySource: 'env' as const }
    : await keyFromDataDir(env.DATA_DIR ?? './data', log);
  const keyDid = key.did();
  const did = env.ORACLE_DID || keyDid;
  // A did:key is its key: another one would name a DID this oracle cannot sign as (a did:ixo names its key on chain).
  if (did.startsWith('did:key:') && did !== keyDid)
    throw new StartupRefusal(
      'ORACLE_DID',
      `ORACLE_DID=${did}: is not the DID of the oracle's key (${keyDid}, from ${keySource === 'env' ? 'ORACLE_PRIVATE_KEY' : 'DATA_DIR/oracle-key'}); a did:key must be the key's own, or leave ORACLE_DID unset`,
    );
  const identity: OracleIdentity = {
    did,
    keyDid,
    name: env.ORACLE_NAME || 'oracle',
    signer: did === keyDid ? key : key.withDID(did as DID),
    keySource,
  };
  log?.info({ oracleDid: did, keyDid, oracleName: identity.name, keySource }, `oracle identity ${did}`);
  return identity;
}

async function keyFromDataDir(dataDir: string, log?: Pick<Logger, 'info' | 'warn'>) {
  const path = join(dataDir, ORACLE_KEY_FILE);
  const existing = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (existing !== undefined) {
    if (((await stat(path)).mode & 0o077) !== 0) {
      log?.warn({ path }, 'oracle key file is readable by others; restricting it to mode 0600');
      await chmod(path, 0o600);
    }
    return { key: parseSigner(existing), keySource: 'file' as const };
  }
  await mkdir(dataDir, { recursive: true });
  const key = generateSigner();
  try {
    // 'wx': two processes starting together must not overwrite each other's key.
    await writeFile(path, `${ed25519.format(key)}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return keyFromDataDir(dataDir, log);
    throw error;
  }
  log?.info({ path }, 'generated a new oracle key (set ORACLE_PRIVATE_KEY to choose one)');
  return { key, keySource: 'generated' as const };
}
