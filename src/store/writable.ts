// Thread: main
// Whether DATA_DIR takes writes, for /health and /metrics (store_writable; the free bytes are
// store_disk_available_bytes, metrics/store.ts), and the one log line that says why not.
// Two signs: the free space against its floor (free-space.ts, the one the write guard refuses by), and a real
// write that needs new space: a file of PROBE_BYTES written and synced beside the records. LMDB's own probe write
// (health.ts) lands in pages freed by its last one, so it passed while no record could be written; this one
// catches a disk statfs misjudges (quotas, no inodes left, a read-only remount). It is rate-limited: a result is
// kept PASSED_FOR_MS (FAILED_FOR_MS after a failure, so a recovery is seen soon).
import { randomBytes } from 'node:crypto';
import { open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../base/log.js';
import { storeWritable } from '../metrics/catalogue.js';
import type { FreeSpace } from './free-space.js';

const PROBE_BYTES = 64 * 1024;
const PASSED_FOR_MS = 5_000;
const FAILED_FOR_MS = 1_000;
/** How often the free space is looked at for the log line when nothing asks (no /health poll, no write). */
const WATCH_MS = 1_000;
/** Left in DATA_DIR only while a probe runs. */
export const PROBE_FILE = 'write-probe.tmp';

export interface StorageHealth {
  writable: boolean;
  freeBytes: number;
  minFreeBytes: number;
  /** Why not writable: `low_space` (below DATA_DIR_MIN_FREE_BYTES) or `write_failed` (the probe write, its code). */
  reason?: string;
}

export class StorageWatch {
  #probed: { at: number; error?: string } | undefined;
  #probing: Promise<void> | undefined;
  /** The state the last log line told; undefined until the first look. */
  #told: string | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly dataDir: string,
    private readonly space: FreeSpace,
    private readonly log: Logger,
  ) {
    storeWritable.collect = (family) => {
      family.with().value = this.#now().writable ? 1 : 0;
    };
  }

  /** Looks every WATCH_MS (unref'd), so the log line comes when the floor is crossed, polled or not. */
  start(): void {
    this.#timer ??= setInterval(() => this.#now(), WATCH_MS).unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** The state now, probing first when the last probe result is too old (one probe at a time). */
  async check(): Promise<StorageHealth> {
    if (this.space.roomy && this.#stale())
      await (this.#probing ??= this.#probe().finally(() => (this.#probing = undefined)));
    return this.#now();
  }

  #stale(): boolean {
    const probed = this.#probed;
    return !probed || performance.now() - probed.at > (probed.error ? FAILED_FOR_MS : PASSED_FOR_MS);
  }

  /** From what is known, without probing; logs a change. */
  #now(): StorageHealth {
    const reading = this.space.reading();
    let reason: string | undefined;
    if (!this.space.roomy) reason = 'low_space';
    else if (this.#probed?.error) reason = `write_failed: ${this.#probed.error}`;
    const health: StorageHealth = { writable: reason === undefined, ...reading, ...(reason ? { reason } : {}) };
    this.#tell(health);
    return health;
  }

  #tell(health: StorageHealth): void {
    const state = health.reason ?? 'writable';
    if (state === this.#told) return;
    const first = this.#told === undefined;
    this.#told = state;
    const { freeBytes, minFreeBytes } = health;
    if (health.writable) {
      if (!first) this.log.info({ freeBytes, minFreeBytes }, 'DATA_DIR takes writes again');
    } else if (health.reason === 'low_space') {
      this.log.warn(
        { freeBytes, minFreeBytes },
        `DATA_DIR has ${freeBytes} bytes free, below DATA_DIR_MIN_FREE_BYTES (${minFreeBytes}): writes are refused (USSD END, chat 503) until space is freed`,
      );
    } else {
      this.log.warn(
        { freeBytes, minFreeBytes, reason: health.reason },
        `DATA_DIR did not take a ${PROBE_BYTES}-byte probe write (${health.reason}): /health reports it not writable`,
      );
    }
  }

  async #probe(): Promise<void> {
    const path = join(this.dataDir, PROBE_FILE);
    let error: string | undefined;
    try {
      const file = await open(path, 'w');
      try {
        await file.write(randomBytes(PROBE_BYTES));
        await file.datasync();
      } finally {
        await file.close();
      }
    } catch (err) {
      error = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    } finally {
      await unlink(path).catch(() => {});
    }
    this.space.wrote();
    this.#probed = { at: performance.now(), ...(error ? { error } : {}) };
  }
}
