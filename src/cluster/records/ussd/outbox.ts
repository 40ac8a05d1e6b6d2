// Thread: any, cluster mode
// The outbox in the session records: a step's notifications are committed in its record; each later step carries on
// those not yet done with (carryOutbox, through the store's `carried`); the outbox records a failed delivery (`tried`)
// and takes one out once delivered or given up, each a write of the record by the session's own actor (its mailbox
// orders it with the steps, its append is fenced like theirs). So a node that takes the partition over finds in the
// records exactly what is left to deliver (docs/ussd-actions.md).
import type { OutboxStore, RecordInSession } from '../../../ussd/outbox/store.js';
import type { UssdSession } from '../../../ussd/session.js';

/**
 * `next` with the notifications of `before` still pending carried on (those first, as recorded there, then the
 * ones this step made that `before` does not hold).
 */
export function carryOutbox(before: UssdSession | undefined, next: UssdSession): UssdSession {
  const carried = before?.outbox;
  if (!carried?.length) return next;
  const made = (next.outbox ?? []).filter((notification) => !carried.some(({ id }) => id === notification.id));
  return { ...next, outbox: [...carried, ...made] };
}

/** The outbox's store: nothing to schedule at start (a takeover resumes what it finds), each record a message. */
export function outboxInRecords(record: RecordInSession): OutboxStore {
  return {
    pending: () => [],
    tried: (queued) => record(queued, false),
    remove: (queued) => record(queued, true),
  };
}
