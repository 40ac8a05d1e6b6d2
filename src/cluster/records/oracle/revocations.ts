// Thread: any, cluster mode (main thread: each authentication reads it)
// Revocations in the JetStream KV bucket
// `oracle_revocations`, by revocation key. Every node watches the bucket into a local map, so a check reads memory. Before it
// answers, the map is brought up to the bucket's last write as of the check (its sequence, one request that only the
// stream leader answers), so a revocation acknowledged on any node before the check is refused here too; without a
// leader the check fails rather than trust a server cut off from the others. Checks that arrive while such a probe
// is in flight share the next one: at most one probe is outstanding, however many requests authenticate.
import type { ClusterConnection } from '../../connection.js';
import { KvRecordStore, type RecordChange } from '../../record-store.js';
import { stillRevoked, type Revocation, type RevocationRepository } from '../../../oracle/identity/revocations.js';

/** How long a check waits for the watch to deliver a write the bucket already holds. */
const CATCH_UP_TIMEOUT_MS = 5_000;

export class JetStreamRevocationRepository implements RevocationRepository {
  readonly #revoked = new Map<string, Revocation>();
  /** The bucket sequence of the last write the watch delivered. */
  #seen = 0;
  #waiters: { sequence: number; resolve: () => void }[] = [];
  /** The probe in flight, and the one the checks that came after it wait for. */
  #probe: Promise<void> | undefined;
  #nextProbe: Promise<void> | undefined;
  #watch: Promise<void> | undefined;
  #stopWatch = () => {};
  #closed = false;
  readonly #listeners: ((cid: string) => void)[] = [];

  private constructor(private readonly store: KvRecordStore<Revocation>) {}

  /** Opens (or creates) the bucket; the watch starts on first use, so actor hosts, which never check, keep none. */
  static async open(connection: ClusterConnection): Promise<JetStreamRevocationRepository> {
    return new JetStreamRevocationRepository(
      await KvRecordStore.open<Revocation>(connection, { name: 'oracle_revocations' }),
    );
  }

  async isRevoked(cid: string, nowSeconds = Date.now() / 1000): Promise<boolean> {
    await this.#watching();
    await this.#caughtUp();
    return stillRevoked(this.#revoked.get(cid), nowSeconds);
  }

  async firstRevoked(keys: readonly string[], nowSeconds = Date.now() / 1000): Promise<string | undefined> {
    await this.#watching();
    await this.#caughtUp();
    return keys.find((key) => stillRevoked(this.#revoked.get(key), nowSeconds));
  }

  async revoke(cid: string, expiration?: number): Promise<void> {
    await this.#watching();
    const revision = await this.store.put([cid], { until: expiration ?? null, revokedAt: new Date().toISOString() });
    await this.#reached(revision);
  }

  /** Every revocation the watch delivers, this node's and the others'; the watch starts with the first check. */
  onRevoked(listener: (cid: string) => void): void {
    this.#listeners.push(listener);
  }

  /** Stops the watch. */
  close(): void {
    this.#closed = true;
    this.#stopWatch();
  }

  #watching(): Promise<void> {
    this.#watch ??= this.store
      .watch([], (change) => this.#saw(change))
      .then(
        (watch) => {
          this.#stopWatch = () => watch.stop();
          if (this.#closed) watch.stop();
        },
        (error: unknown) => {
          this.#watch = undefined; // the next check tries again
          throw error;
        },
      );
    return this.#watch;
  }

  #saw({ key, value, revision }: RecordChange<Revocation>): void {
    if (value) {
      this.#revoked.set(key[0], value);
      for (const listener of this.#listeners) listener(key[0]);
    } else this.#revoked.delete(key[0]);
    this.#seen = Math.max(this.#seen, revision);
    this.#waiters = this.#waiters.filter((waiter) =>
      waiter.sequence <= this.#seen ? (waiter.resolve(), false) : true,
    );
  }

  /** Resolves once the map holds every write acknowledged before this call (a probe sent after it). */
  #caughtUp(): Promise<void> {
    if (!this.#probe) {
      this.#probe = this.#probeOnce().finally(() => (this.#probe = undefined));
      return this.#probe;
    }
    // A probe is in flight, but it may have been sent before this call: wait for the one after it.
    this.#nextProbe ??= this.#probe
      .catch(() => {})
      .then(() => {
        this.#nextProbe = undefined;
        return this.#caughtUp();
      });
    return this.#nextProbe;
  }

  async #probeOnce(): Promise<void> {
    await this.#reached(await this.store.lastSequence());
  }

  #reached(sequence: number): Promise<void> {
    if (sequence <= this.#seen) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`revocation watch did not reach write ${sequence} in time`)),
        CATCH_UP_TIMEOUT_MS,
      );
      this.#waiters.push({ sequence, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }
}
