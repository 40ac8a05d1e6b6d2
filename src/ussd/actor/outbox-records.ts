// Thread: actor host
// Cluster mode: the session record is the outbox's store. A step's notifications are committed in its
// record; each later step carries on those not yet done with; the outbox records a failed delivery (`tried`) and
// takes one out once delivered or given up, each a write of the record by the session's own actor (its mailbox
// orders it with the steps, its append is fenced like theirs). So a node that takes the partition over finds in the
// records exactly what is left to deliver (docs/ussd-actions.md).
import type { HostContext } from '../../runtime/actor-host.js';
import type { OutboxStore, QueuedNotification } from '../outbox/lmdb-store.js';
import { USSD_ACTOR, type OutboxRecordMessage } from '../protocol.js';
import type { OutboxNotification, UssdSession } from '../session.js';

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

/** The session with `message` applied to its notifications; undefined when it holds no such notification. */
export function withOutboxRecord(session: UssdSession, message: OutboxRecordMessage): UssdSession | undefined {
  const outbox = session.outbox;
  if (!outbox?.some(({ id }) => id === message.id)) return undefined;
  const kept: OutboxNotification[] = message.done
    ? outbox.filter(({ id }) => id !== message.id)
    : outbox.map((notification) =>
        notification.id === message.id ? { ...notification, tried: message.tried } : notification,
      );
  const { outbox: _, ...rest } = session;
  return kept.length > 0 ? { ...rest, outbox: kept } : rest;
}

/** The outbox's store in cluster mode: each record a message to the session's actor on this host. */
export function recordsInSessions(host: HostContext): OutboxStore {
  const record = async ({ sessionId, notification, tried }: QueuedNotification, done: boolean) => {
    if (!host.send) throw new Error('this host cannot send to its own actors');
    const message: OutboxRecordMessage = { type: 'outboxRecord', id: notification.id, done, tried };
    return (await host.send(USSD_ACTOR.kind, sessionId, message)) as boolean;
  };
  return {
    pending: () => [],
    tried: (queued) => record(queued, false),
    remove: (queued) => record(queued, true),
  };
}
