// Thread: actor host
// What the session's actor does where the session record is the outbox's store (a cluster: the engine's
// outboxInRecords, src/cluster/records/ussd/outbox.ts): the outbox's record of a delivery is a message to the actor,
// which applies it to the record and writes it, fenced like a step.
import type { HostContext } from '../../runtime/actor-host.js';
import type { RecordInSession } from '../outbox/store.js';
import { USSD_ACTOR, type OutboxRecordMessage } from '../protocol.js';
import type { OutboxNotification, UssdSession } from '../session.js';

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

/** Records a notification's delivery in its session's record: a message to the session's actor on this host. */
export function recordInSession(host: HostContext): RecordInSession {
  return async ({ sessionId, notification, tried }, done) => {
    if (!host.send) throw new Error('this host cannot send to its own actors');
    const message: OutboxRecordMessage = { type: 'outboxRecord', id: notification.id, done, tried };
    return (await host.send(USSD_ACTOR.kind, sessionId, message)) as boolean;
  };
}
