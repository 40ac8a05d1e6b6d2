// Thread: any
// The outbox's notifications in LMDB (`ussd-outbox`), keyed by notification id. The session
// repository puts them in the transaction that commits their step (sessions.ts, through
// `putInStep`); the outbox reads them at start and removes each once delivered or given up, each write synced.
import type { Database } from 'lmdb';
import type { Store } from '../../../store/env.js';
import type { UssdSession } from '../../../ussd/session.js';
import type { OutboxStore, QueuedNotification } from '../../../ussd/outbox/store.js';

export const OUTBOX_DB = 'ussd-outbox';

/**
 * Inside a session write's transaction: the notifications its step made, when the step is new (`replaced` is the
 * record it replaces: a rewrite of the same step, such as an input after END, must not queue them again).
 */
export function putInStep(
  db: Database<QueuedNotification, string>,
  session: UssdSession,
  replaced: UssdSession | undefined,
): void {
  if (
    !session.outbox ||
    (replaced !== undefined && replaced.step === session.step && replaced.createdAt === session.createdAt)
  )
    return;
  for (const notification of session.outbox)
    db.putSync(notification.id, { notification, sessionId: session.sessionId, tried: 0 });
}

/** Whether any notification waits in `store` (one key read). */
export function hasPending(store: Store): boolean {
  return [...store.db(OUTBOX_DB).getKeys({ limit: 1 })].length > 0;
}

export class LmdbOutboxStore implements OutboxStore {
  readonly #db: Database<QueuedNotification, string>;

  constructor(private readonly store: Store) {
    this.#db = store.db(OUTBOX_DB);
  }

  pending(): QueuedNotification[] {
    return [...this.#db.getRange()].map(({ value }) => value);
  }

  async tried(queued: QueuedNotification): Promise<undefined> {
    await this.store.turn.write(() => {
      if (this.#db.get(queued.notification.id)) this.#db.putSync(queued.notification.id, queued);
    });
  }

  async remove(queued: QueuedNotification): Promise<undefined> {
    await this.store.turn.write(() => this.#db.removeSync(queued.notification.id));
  }
}
