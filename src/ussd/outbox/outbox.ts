// Thread: actor host
// Delivers the notifications that `notify` actions left in committed steps, after the step's answer,
// with backoff (base × 2^tries, at most a minute, ±20%) until the endpoint accepts one (any 2xx) or its attempts are
// spent. With a store (one node: LMDB) what is pending survives a crash and is delivered after the restart. In
// cluster mode the store is the session's own record (actor/outbox-records.ts): what its steps committed, or what a
// takeover found there, is delivered while this host still writes the session's partition.
import { ussdOutboxDelivered, ussdOutboxGivenUp, ussdOutboxPending } from '../../metrics/catalogue.js';
import type { Logger } from '../../base/log.js';
import type { OutboxNotification } from '../session.js';
import { headersOf } from '../services/webhook/request.js';
import { postJson } from '../services/webhook/client.js';
import type { OutboxStore, QueuedNotification } from './lmdb-store.js';

/** What an accepting endpoint's answer may be at most: it is read and dropped. */
const MAX_ACK_BYTES = 16 * 1024;
const MAX_BACKOFF_MS = 60_000;

export interface OutboxOptions {
  /** The pause after the first failed delivery (USSD_OUTBOX_BACKOFF_MS). */
  backoffMs: number;
  /** The notifications this host delivers of those stored (its share of the sessions). */
  serves(sessionId: string): boolean;
  /**
   * Asked before each delivery (cluster mode): false when the session's partition is no longer this host's, which
   * then leaves the notification to the new owner. A failure to tell skips that attempt.
   */
  holds?(sessionId: string): Promise<boolean>;
}

export class Outbox {
  readonly #pending = new Map<string, QueuedNotification>();
  #stopped = false;

  constructor(
    private readonly store: OutboxStore | undefined,
    private readonly log: Pick<Logger, 'warn'>,
    private readonly options: OutboxOptions,
  ) {}

  /** Schedules what the store holds for this host: the notifications of steps committed before a crash. */
  start(): void {
    for (const queued of this.store?.pending() ?? [])
      if (this.options.serves(queued.sessionId)) this.#schedule(queued, 0);
  }

  /** The notifications a step just committed: delivered once its answer is on its way. */
  add(sessionId: string, notifications: readonly OutboxNotification[]): void {
    for (const notification of notifications)
      if (!this.#pending.has(notification.id))
        this.#schedule({ notification, sessionId, tried: notification.tried ?? 0 }, 0);
  }

  /** The highest step number of the session's notifications waiting here (ids `<sessionId>:<step>:<n>`); 0: none. */
  lastStep(sessionId: string): number {
    let last = 0;
    for (const queued of this.#pending.values())
      if (queued.sessionId === sessionId)
        last = Math.max(last, Number(queued.notification.id.slice(sessionId.length + 1).split(':')[0]) || 0);
    return last;
  }

  /** How many wait for delivery on this host. */
  get size(): number {
    return this.#pending.size;
  }

  stop(): void {
    this.#stopped = true;
  }

  #schedule(queued: QueuedNotification, delayMs: number): void {
    if (this.#pending.has(queued.notification.id) && queued.tried === 0) return;
    this.#pending.set(queued.notification.id, queued);
    setTimeout(() => void this.#deliver(queued), delayMs).unref();
  }

  async #deliver(queued: QueuedNotification): Promise<void> {
    if (this.#stopped) return;
    const { notification } = queued;
    const mine = this.options.holds ? await this.options.holds(queued.sessionId).catch(() => undefined) : true;
    if (mine === false) return void this.#pending.delete(notification.id);
    if (mine === undefined) return void this.#later(queued, this.#backoff(queued.tried + 1));
    const headers = headersOf(notification.headers, notification.id);
    const result = headers
      ? await postJson({
          url: notification.url,
          headers,
          body: notification.body,
          timeoutMs: notification.timeoutMs,
          maxBytes: MAX_ACK_BYTES,
        })
      : undefined;
    const accepted = result !== undefined && 'status' in result && result.status >= 200 && result.status < 300;
    const next = { ...queued, tried: queued.tried + 1 };
    if (accepted || next.tried >= notification.attempts) {
      // Done: counted here, where it was delivered (or given up); its removal is the store's to finish.
      this.#pending.delete(notification.id);
      (accepted ? ussdOutboxDelivered : ussdOutboxGivenUp).with(notification.service).inc();
      if (!accepted)
        this.log.warn(
          { id: notification.id, service: notification.service, tries: next.tried },
          'notification given up',
        );
      return this.#removed(accepted ? queued : next, 0);
    }
    try {
      if ((await this.store?.tried(next)) === false) return void this.#pending.delete(notification.id);
      this.#pending.set(notification.id, next);
      this.#later(next, this.#backoff(next.tried));
    } catch (err) {
      // The store refused the write (a full disk, NATS away): tried again later, as a failed delivery would be.
      this.log.warn({ err, id: notification.id }, 'outbox write failed');
      this.#later(queued, this.#backoff(next.tried));
    }
  }

  /** Removes a notification done with from the store, the write tried again (with backoff) while it fails. */
  async #removed(queued: QueuedNotification, failures: number): Promise<void> {
    try {
      await this.store?.remove(queued);
    } catch (err) {
      this.log.warn({ err, id: queued.notification.id }, 'outbox write failed');
      if (!this.#stopped && failures < 8)
        setTimeout(() => void this.#removed(queued, failures + 1), this.#backoff(failures + 1)).unref();
    }
  }

  #later(queued: QueuedNotification, delayMs: number): void {
    setTimeout(() => void this.#deliver(queued), delayMs).unref();
  }

  #backoff(tried: number): number {
    const base = Math.min(this.options.backoffMs * 2 ** (tried - 1), MAX_BACKOFF_MS);
    return Math.round(base * (0.8 + Math.random() * 0.4));
  }
}

/** The outbox's pending gauge reads the host's outbox at each report. */
export function countPending(outbox: Outbox): void {
  ussdOutboxPending.collect = (gauge) => void (gauge.with().value = outbox.size);
}
