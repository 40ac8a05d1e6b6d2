// Thread: any (each thread that opens the store keeps its own)
// How much room DATA_DIR's filesystem has left for the
// data file to grow, read with statfs at most every REFRESH_MS, and again after a write while the room left above
// the floor is under WRITE_SLACK: the write guard (write-guard.ts) asks before every write that may need new pages,
// and /health asks too. Far from the floor a write does not read it again: statfs after every commit was a twentieth
// of an actor host's CPU in an SSE turn (three commits each; 50 us per turn on an overlay filesystem).
import { statfsSync } from 'node:fs';

/** How stale a reading may be when nothing was written since; a write makes the next question read again. */
const REFRESH_MS = 250;
/** Room above the floor within which every write makes the next question read again (no write of ours comes near). */
const WRITE_SLACK = 64 * 1024 * 1024;

export interface SpaceReading {
  /** Bytes an unprivileged writer may still use (statfs `bavail` × block size). */
  freeBytes: number;
  /** DATA_DIR_MIN_FREE_BYTES: below it, writes are refused. */
  minFreeBytes: number;
}

export class FreeSpace {
  #readAt = Number.NEGATIVE_INFINITY;
  #wrote = true;
  #freeBytes = Number.POSITIVE_INFINITY;

  constructor(
    private readonly dir: string,
    readonly minFreeBytes: number,
  ) {}

  /** Free bytes now (a reading at most REFRESH_MS old; near the floor, none older than the last write). */
  get freeBytes(): number {
    const now = performance.now();
    const near = this.#freeBytes - this.minFreeBytes < WRITE_SLACK;
    if ((this.#wrote && near) || now - this.#readAt > REFRESH_MS) {
      this.#wrote = false;
      this.#readAt = now;
      try {
        const { bavail, bsize } = statfsSync(this.dir);
        this.#freeBytes = bavail * bsize;
      } catch {
        // DATA_DIR unreadable for statfs (it is open already): LMDB's own errors will say more than this could.
        this.#freeBytes = Number.POSITIVE_INFINITY;
      }
    }
    return this.#freeBytes;
  }

  /** False below the floor (the floor 0: never). */
  get roomy(): boolean {
    return this.minFreeBytes === 0 || this.freeBytes >= this.minFreeBytes;
  }

  reading(): SpaceReading {
    return { freeBytes: this.freeBytes, minFreeBytes: this.minFreeBytes };
  }

  /** A write went to LMDB: the next question reads the filesystem again. */
  wrote(): void {
    this.#wrote = true;
  }
}
