// Thread: actor host
// Delivers the notifications that `notify` actions left in committed steps, after the step's answer,
// with backoff (base × 2^tries, at most a minute, ±20%) until the endpoint accepts one (any 2xx) or its attempts are
// spent. With a store (one node: LMDB) what is pending survives a crash and is delivered after the restart; the
// partition's owner in cluster mode delivers what its own steps committed (docs/ussd-actions.md says what that
// leaves out).
import { ussdOutboxDelivered, ussdOutboxGivenUp, ussdOutboxPending } from '../../metrics/catalogue.js';
import type { Logger } from '../../log.js';
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
    for (const notification of notifications) this.#schedule({ notification, sessionId, tried: 0 }, 0);
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
    try {
      if (accepted) {
        await this.store?.remove(notification.id);
        this.#pending.delete(notification.id);
        ussdOutboxDelivered.with(notification.service).inc();
        return;
      }
      const next = { ...queued, tried: queued.tried + 1 };
      if (next.tried >= notification.attempts) {
        await this.store?.remove(notification.id);
        this.#pending.delete(notification.id);
        ussdOutboxGivenUp.with(notification.service).inc();
        this.log.warn(
          { id: notification.id, service: notification.service, tries: next.tried },
          'notification given up',
        );
        return;
      }
      await this.store?.tried(next);
      this.#pending.set(notification.id, next);
      setTimeout(() => void this.#deliver(next), this.#backoff(next.tried)).unref();
    } catch (err) {
      // The store refused the write (a full disk): tried again later, as a failed delivery would be.
      this.log.warn({ err, id: notification.id }, 'outbox write failed');
      setTimeout(() => void this.#deliver(queued), this.#backoff(queued.tried + 1)).unref();
    }
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
