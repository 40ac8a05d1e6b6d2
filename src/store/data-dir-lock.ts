// Thread: main, at start-up
// One process owns a DATA_DIR. LMDB lets several processes open one environment, and two
// servers on one directory each run actors for the same sessions (steps alternating between them meet revision
// conflicts). The owner writes DATA_DIR/server.lock (its pid and how to tell it from a later process with the same
// pid); a second process refuses to start, naming the owner, unless the owner is gone.
//
// Whether the owner is alive: in the same pid namespace of the same boot, its pid must still run with the start
// time it recorded (a reused pid has another); from elsewhere (another container or host sharing the volume), the
// owner refreshes the file's mtime every REFRESH_MS and a lock not refreshed for STALE_MS is a dead owner's.
import { randomBytes } from 'node:crypto';
import {
  linkSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  rmdirSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { StartupRefusal } from '../base/errors.js';

export const LOCK_FILE = 'server.lock';
const REFRESH_MS = 10_000;
const STALE_MS = 30_000;
/** A takeover guard older than this was left by a process that died taking over. */
const GUARD_STALE_MS = 5_000;

interface Owner {
  pid: number;
  host: string;
  /** The kernel's boot id and pid namespace: where `pid` and `startTicks` mean something. */
  boot: string;
  pidNamespace: string;
  /** Start time of the process in clock ticks since boot (/proc/<pid>/stat field 22). */
  startTicks: string;
  since: string;
}

export interface DataDirLock {
  readonly path: string;
  /** Removes the lock file if it is still this process's. Idempotent. */
  release(): void;
}

/** Paths this process holds, so a second server in the same process is refused like a second process. */
const held = new Set<string>();

/**
 * Takes DATA_DIR (creating it). Throws StartupRefusal (exit 78) naming DATA_DIR when another live process holds it,
 * or when the directory cannot be created or written (permissions, read-only, disk full).
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const path = join(dataDir, LOCK_FILE);
  const mine = ownerRecord();
  const text = `${JSON.stringify(mine)}\n`;
  const scratch = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    mkdirSync(dataDir, { recursive: true });
    // Written whole, then linked into place: link fails if the lock exists, and nobody ever reads half a record.
    writeFileSync(scratch, text, { mode: 0o644 });
    try {
      // Bounded by a takeover guard's life: another process taking over finishes, or its guard goes stale.
      const deadline = Date.now() + GUARD_STALE_MS * 2;
      for (;;) {
        try {
          linkSync(scratch, path);
          break;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        }
        const found = readOwner(path);
        if (Date.now() > deadline)
          throw new StartupRefusal('DATA_DIR', `DATA_DIR=${JSON.stringify(dataDir)}: could not take ${path}`);
        if (found === 'gone') continue;
        if (held.has(path) || isAlive(found, mine)) throw refusal(dataDir, path, found);
        takeOver(path, found.text);
      }
    } finally {
      unlinkQuietly(scratch);
    }
  } catch (error) {
    if (error instanceof StartupRefusal) throw error;
    throw dataDirProblem(dataDir, error);
  }
  held.add(path);
  const refresh = setInterval(() => {
    const now = new Date();
    try {
      utimesSync(path, now, now);
    } catch {
      // Gone or unwritable: nothing to refresh; the next start judges the lock by its owner's pid.
    }
  }, REFRESH_MS);
  refresh.unref();
  let released = false;
  return {
    path,
    release() {
      if (released) return;
      released = true;
      clearInterval(refresh);
      held.delete(path);
      try {
        if (readFileSync(path, 'utf8') === text) unlinkSync(path);
      } catch {
        // Already gone.
      }
    },
  };
}

/** An operator's problem with DATA_DIR itself, as one line naming it; other errors pass unchanged. */
export function dataDirProblem(dataDir: string, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException)?.code;
  const why: Record<string, string> = {
    EACCES: 'this process may not write there (EACCES): give its user write access or choose another directory',
    EPERM: 'this process may not write there (EPERM): give its user write access or choose another directory',
    EROFS: 'it is on a read-only file system (EROFS): choose a writable directory',
    ENOSPC: 'its disk is full (ENOSPC): free space or choose another disk',
    EDQUOT: "its user's disk quota is used up (EDQUOT): free space or raise the quota",
    ENOTDIR: 'a part of the path is a file, not a directory (ENOTDIR)',
    EEXIST: 'a part of the path is a file, not a directory (EEXIST)',
  };
  if (typeof code !== 'string' || !why[code]) return error;
  return new StartupRefusal('DATA_DIR', `DATA_DIR=${JSON.stringify(dataDir)}: cannot be used: ${why[code]}`);
}

function refusal(dataDir: string, path: string, owner: Owner & { text: string }): StartupRefusal {
  const where = owner.host === hostname() ? '' : ` on ${owner.host}`;
  return new StartupRefusal(
    'DATA_DIR',
    `DATA_DIR=${JSON.stringify(dataDir)} is in use by process ${owner.pid}${where} (since ${owner.since}; ${path}): ` +
      'one server per data directory. Stop that process, or give this one a DATA_DIR of its own',
  );
}

function ownerRecord(): Owner {
  return {
    pid: process.pid,
    host: hostname(),
    boot: readOr('/proc/sys/kernel/random/boot_id', ''),
    pidNamespace: linkOr('/proc/self/ns/pid'),
    startTicks: startTicksOf(process.pid) ?? '',
    since: new Date().toISOString(),
  };
}

/** The owner the file names; 'gone' when it vanished meanwhile. An unreadable record counts as a dead owner's. */
function readOwner(path: string): (Owner & { text: string; ageMs: number }) | 'gone' {
  let text: string;
  let ageMs: number;
  try {
    text = readFileSync(path, 'utf8');
    ageMs = Date.now() - statSync(path).mtimeMs;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw error;
  }
  try {
    const owner = JSON.parse(text) as Owner;
    if (typeof owner.pid === 'number') return { ...owner, text, ageMs };
  } catch {
    // Not a record of ours: treated as stale below (pid 0 never runs).
  }
  return { pid: 0, host: '?', boot: '', pidNamespace: '', startTicks: '', since: '?', text, ageMs: Infinity };
}

function isAlive(owner: Owner & { ageMs: number }, mine: Owner): boolean {
  if (owner.pid === 0) return false;
  const sameKernelView = owner.boot !== '' && owner.boot === mine.boot && owner.pidNamespace === mine.pidNamespace;
  if (sameKernelView) return startTicksOf(owner.pid) === owner.startTicks;
  return owner.ageMs < STALE_MS;
}

/**
 * Removes a dead owner's lock. Two processes may judge it dead together: the guard directory lets one remove it at
 * a time, and only while it still holds the record judged dead (not a lock the other has just taken).
 */
function takeOver(path: string, deadText: string): void {
  const guard = `${path}.takeover`;
  try {
    mkdirSync(guard);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const since = statSync(guard, { throwIfNoEntry: false })?.mtimeMs ?? Date.now();
    if (Date.now() - since > GUARD_STALE_MS) rmdirQuietly(guard);
    else sleep(20);
    return;
  }
  try {
    if (readOr(path, '') === deadText.trim()) unlinkQuietly(path);
  } finally {
    rmdirQuietly(guard);
  }
}

function startTicksOf(pid: number): string | undefined {
  const stat = readOr(`/proc/${pid}/stat`, '');
  // The command name (field 2) is in parentheses and may hold spaces: count fields after its closing one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return stat ? fields[19] : undefined;
}

function readOr(path: string, fallback: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return fallback;
  }
}

function linkOr(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return '';
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {}
}

function rmdirQuietly(path: string): void {
  try {
    rmdirSync(path);
  } catch {}
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
