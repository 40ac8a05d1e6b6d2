// Thread: any
// The LMDB environment: one per process, opened by every thread (lmdb-js shares it between threads).
// Each record family gets its own named database; names are listed here so they stay unique.
import { mkdirSync } from 'node:fs';
import { open, type Database, type DatabaseOptions, type RootDatabase } from 'lmdb';
import { FreeSpace } from './free-space.js';
import { TurnCommit } from './turn-commit.js';
import { absorbCommitRejections, assertRoom, guardWrites } from './write-guard.js';

export const DATABASES = [
  /** USSD sessions by start (src/records/lmdb/ussd/sessions.ts): records, session ID -> start, expiry index. */
  'ussd-sessions-by-start',
  'ussd-session-starts',
  'ussd-session-expiry-index',
  /**
   * Older layouts, read once to move their sessions to the three above, then empty: records by session ID without
   * entry versions (`ussd-sessions`) and with them (`ussd-session-records`); the expiry index by exact expiry
   * (`ussd-session-expiry`) and by bucket and session ID (`ussd-session-expiry-buckets`).
   */
  'ussd-sessions',
  'ussd-session-records',
  'ussd-session-expiry',
  'ussd-session-expiry-buckets',
  'ussd-customers',
  'ussd-account-creations',
  /** USSD service definitions by version, and the current set (src/ussd/services/published.ts). */
  'ussd-services',
  /** The language each phone number chose (src/ussd/services/languages.ts). */
  'ussd-languages',
  /** Where a phone left a USSD service, and their expiry index (src/ussd/services/resume-points.ts). */
  'ussd-resume-points',
  'ussd-resume-expiry',
  /** USSD notifications not yet delivered, written with their step (src/records/lmdb/ussd/outbox.ts). */
  'ussd-outbox',
  'health',
  'oracle-sessions',
  'oracle-transcripts',
  'oracle-delegations',
  'oracle-revocations',
  'oracle-preferences',
  'oracle-credits',
  'oracle-identity',
  /** Live calls by id, and the index of each user's calls per session (src/records/lmdb/oracle/calls.ts). */
  'oracle-calls',
  'oracle-call-sessions',
  /** Streamed turns in flight (src/oracle/runs/open-runs.ts). */
  'oracle-open-runs',
  'gateway-local-node',
  /** Which keys the records were written with (key-checks.ts): the PIN key's check value, the oracle's key DID. */
  'key-checks',
] as const;
export type DatabaseName = (typeof DATABASES)[number];

/**
 * Databases opened with options of their own. USSD session records (a write per USSD step): the revision is
 * LMDB's entry version, so a revision-checked write is a conditional put that LMDB checks inside the transaction,
 * with no read and no decoding of the stored record; and their msgpack record shapes are stored once, under a
 * symbol key (no string key equals it), instead of inside every record.
 */
const SESSION_RECORDS: DatabaseOptions = { useVersions: true, sharedStructuresKey: Symbol.for('structures') };
const OPTIONS: Partial<Record<DatabaseName, DatabaseOptions>> = {
  'ussd-sessions-by-start': SESSION_RECORDS,
  'ussd-session-records': SESSION_RECORDS,
};

export interface Store {
  readonly root: RootDatabase;
  db<V = unknown>(name: DatabaseName): Database<V, string>;
  /** Writes applied at the end of this event-loop turn in one synced transaction on this thread (turn-commit.ts). */
  readonly turn: TurnCommit;
  /** DATA_DIR's free space as this thread last read it; below its floor, writes are refused (write-guard.ts). */
  readonly space: FreeSpace;
  /** Throws StorageUnavailableError when a write would be refused: for work that is only worth doing if it can be stored. */
  assertWritable(): void;
  /** True once close() was called: writes would fail (lmdb throws them from a later tick). */
  readonly closed: boolean;
  close(): Promise<void>;
}

/**
 * How every process opens DATA_DIR's environment (the server, `npm run backup`): one set of flags, as LMDB reads the
 * file by them. Commits are synced to disk (lmdb's default): an answer is only sent after its write is durable.
 * noSubdir: false, or lmdb takes a path whose last part has a dot for a file.
 */
export const LMDB_OPTIONS = { noSubdir: false, maxDbs: 32, mapSize: 2 ** 32 } as const;
/** The files LMDB keeps in DATA_DIR. */
export const LMDB_FILES: readonly string[] = ['data.mdb', 'lock.mdb'];

export interface StoreOptions {
  /** DATA_DIR_MIN_FREE_BYTES: below this much free space, writes that may need new pages are refused (0: never). */
  minFreeBytes?: number;
}

export function openStore(dataDir: string, { minFreeBytes = 0 }: StoreOptions = {}): Store {
  mkdirSync(dataDir, { recursive: true });
  const space = new FreeSpace(dataDir, minFreeBytes);
  absorbCommitRejections();
  const root = guardWrites(open({ path: dataDir, ...LMDB_OPTIONS }), space);
  // biome-ignore lint/suspicious/noExplicitAny: each database holds its own value type; openDb gives it back typed
  const cache = new Map<string, Database<any, string>>();
  let closing: Promise<void> | undefined;
  return {
    root,
    space,
    assertWritable: () => assertRoom(space),
    turn: new TurnCommit(root),
    db<V>(name: DatabaseName) {
      let db = cache.get(name);
      if (!db) {
        db = guardWrites(root.openDB<V, string>({ name, ...OPTIONS[name] }), space);
        cache.set(name, db);
      }
      return db as Database<V, string>;
    },
    get closed() {
      return closing !== undefined;
    },
    close() {
      return (closing ??= root.close());
    },
  };
}
