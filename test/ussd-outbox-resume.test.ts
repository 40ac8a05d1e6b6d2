// The outbox against a real local SMS service, with a store that records a removal only when let: a notification
// handed to the outbox again (a takeover's resume told twice, reading the store before the removal landed) after
// its delivery is not sent again, and one whose removal was recorded is forgotten.
import t from 'tap';
import { Outbox } from '../dist/src/ussd/outbox/outbox.js';
import type { OutboxStore, QueuedNotification } from '../dist/src/ussd/outbox/store.js';
import type { OutboxNotification } from '../dist/src/ussd/session.js';
import { json, startBackend } from './helpers/ussd-backend.js';

const quiet = { warn: () => undefined };

/** A store whose removals wait until `release` is called; `removed` lists what it recorded. */
function heldStore() {
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  const removed: string[] = [];
  const store: OutboxStore = {
    pending: () => [],
    tried: async () => true,
    remove: async (queued: QueuedNotification) => {
      await released;
      removed.push(queued.notification.id);
      return true;
    },
  };
  return { store, removed, release };
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (const started = Date.now(); Date.now() - started < 5000; ) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

t.test('a notification added again before its removal is recorded is not sent twice', async (t) => {
  const sms = await startBackend(t, { '/sms': (_req, res) => json(res, 202, { queued: true }) });
  const notification: OutboxNotification = {
    id: 's-1:2:1',
    service: 'shop',
    url: `${sms.url}/sms`,
    headers: [],
    body: '{}',
    attempts: 3,
    timeoutMs: 2000,
  };
  const { store, removed, release } = heldStore();
  const outbox = new Outbox(store, quiet, { backoffMs: 10, serves: () => true, holds: async () => true });
  t.teardown(() => outbox.stop());
  outbox.add('s-1', [notification]);
  // Done with once the endpoint's answer is read, a moment after the endpoint saw the call.
  await until(() => sms.callsTo('/sms').length === 1 && outbox.size === 0, 'the delivery, done with');
  t.equal(outbox.size, 0, 'done with');
  // The removal is not recorded yet: a resume reads the store and hands the notification over again.
  outbox.add('s-1', [notification]);
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.equal(sms.callsTo('/sms').length, 1, 'not sent again while its removal is under way');
  release();
  await until(() => removed.length === 1, 'the removal');
  t.same(removed, ['s-1:2:1'], 'removed once');
  t.same(
    sms.callsTo('/sms').map((call) => call.headers['idempotency-key']),
    ['s-1:2:1'],
    'one delivery, under its key',
  );
});
