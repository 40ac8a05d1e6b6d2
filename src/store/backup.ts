// Thread: main
// Operator tool (`npm run backup`), its own process beside a serving server: a consistent copy of DATA_DIR.
// LMDB copies one read transaction's snapshot of the environment, compacted (free pages left out, pages renumbered:
// mdb_env_copy2 with MDB_CP_COMPACT), while the server goes on writing: the copy holds every commit made before it
// began and none half. The other files of DATA_DIR (the development keys a server without PIN_ENCRYPTION_KEY or
// ORACLE_PRIVATE_KEY generates there) are copied beside it, the server's own lock is not. Everything is written to
// a directory beside the target, synced, checked by opening it, and renamed into place: a target that exists is a
// whole backup, never half of one.
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  copyFileSync,
  fchmodSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { open } from 'lmdb';
import { LMDB_FILES, LMDB_OPTIONS } from './env.js';

/** DATA_DIR's files that are no data: LMDB's (the copy has its own) and the server's lock with its scratch files. */
const NOT_COPIED = (name: string) =>
  LMDB_FILES.includes(name) || name === 'server.lock' || name.startsWith('server.lock.');

export interface BackupSummary {
  out: string;
  /** Size of the copied data.mdb. */
  bytes: number;
  /** The other files of DATA_DIR copied with it (key files). */
  files: string[];
  /** Entries of each database in the copy, by name. */
  entries: Record<string, number>;
  ms: number;
}

/** A problem an operator can fix (a path), with the exit code of sysexits.h the command ends with. */
export class BackupProblem extends Error {
  override readonly name = 'BackupProblem';
  constructor(
    message: string,
    readonly exitCode: 64 | 66 | 73,
  ) {
    super(message);
  }
}

/**
 * Copies the environment in `dataDir` (served or not) and its other files to `out`, which must not exist or be an
 * empty directory. Throws BackupProblem for a path an operator gave wrong; any other error leaves nothing at `out`.
 */
export async function backupDataDir(dataDir: string, out: string): Promise<BackupSummary> {
  const started = performance.now();
  if (!existsSync(join(dataDir, 'data.mdb')))
    throw new BackupProblem(`DATA_DIR=${JSON.stringify(dataDir)} holds no LMDB environment (no data.mdb)`, 66);
  if (existsSync(out) && (!statSync(out).isDirectory() || readdirSync(out).length > 0))
    throw new BackupProblem(`--out ${JSON.stringify(out)} exists and is not an empty directory: name a new one`, 73);
  if (resolve(out).startsWith(`${resolve(dataDir)}/`))
    throw new BackupProblem(`--out ${JSON.stringify(out)} is inside DATA_DIR: name a directory outside it`, 64);

  const partial = join(dirname(resolve(out)), `.${basename(out)}.partial-${randomBytes(4).toString('hex')}`);
  try {
    // 0700: the copy may hold key files.
    mkdirSync(partial, { recursive: true, mode: 0o700 });
    const source = open({ path: dataDir, ...LMDB_OPTIONS });
    try {
      await source.backup(partial, true);
    } finally {
      await source.close();
    }
    const files = readdirSync(dataDir, { withFileTypes: true })
      .filter((entry) => entry.isFile() && !NOT_COPIED(entry.name))
      .map((entry) => entry.name);
    // copyFile keeps no mode: chmod follows, so a key file stays readable by its owner alone.
    for (const name of files) {
      copyFileSync(join(dataDir, name), join(partial, name));
      syncFile(join(partial, name), statSync(join(dataDir, name)).mode);
    }
    syncFile(join(partial, 'data.mdb'));
    const entries = await entriesOf(partial);
    rmSync(join(partial, 'lock.mdb'), { force: true });
    syncFile(partial);
    // An empty target gives way (rmdir refuses one that filled up meanwhile).
    if (existsSync(out)) rmdirSync(out);
    renameSync(partial, out);
    syncFile(dirname(resolve(out)));
    const bytes = statSync(join(out, 'data.mdb')).size;
    return { out, bytes, files, entries, ms: Math.round(performance.now() - started) };
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    throw error;
  }
}

/** Opens the copy (proving LMDB reads it) and counts each database's entries; its lock file is removed after. */
async function entriesOf(dir: string): Promise<Record<string, number>> {
  const copy = open({ path: dir, ...LMDB_OPTIONS });
  try {
    const entries: Record<string, number> = {};
    for (const name of copy.getKeys()) {
      if (typeof name !== 'string') continue;
      // create: false (lmdb's, untyped): counting must not add a database to the copy.
      const options = { name, create: false } as { name: string };
      const stats = copy.openDB(options).getStats() as { entryCount: number };
      entries[name] = stats.entryCount;
    }
    return entries;
  } finally {
    await copy.close();
  }
}

/** fsync a file or directory (and set a file's mode first). */
function syncFile(path: string, mode?: number): void {
  const fd = openSync(path, 'r');
  try {
    if (mode !== undefined) fchmodSync(fd, mode & 0o7777);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
