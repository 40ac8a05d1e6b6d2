// An answered NATS request ends without nats-core building a RequestError (src/cluster/settled-requests.ts), and
// everything else about requests stays nats-core's: answers arrive, timeouts and "no responders" still reject with
// nats-core's errors, and no answered or failed request stays registered on the connection's inbox.
import t from 'tap';
import { RequestOne } from '@nats-io/nats-core/internal';
import { NoRespondersError, RequestError, TimeoutError } from '@nats-io/transport-node';
import { connectCluster } from '../dist/src/cluster/connection.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';

const nats = await startTestNatsCluster(t, 1);
const client = await connectCluster({ NATS_URL: [nats.urls], NATS_PREFIX: 'sr' }, 'settled-requests');
t.teardown(() => client.close());
client.nc.subscribe('sr.echo', { callback: (_error, msg) => void msg.respond(msg.data) });
client.nc.subscribe('sr.silent', { callback: () => undefined });
await client.nc.flush();

/** Requests registered on the connection's shared inbox (nats-core keeps them by token). */
const pending = () =>
  (client.nc as unknown as { protocol: { muxSubscriptions: { reqs: Map<string, unknown> } } }).protocol.muxSubscriptions
    .reqs.size;

t.test('answered requests resolve, build no RequestError and leave the inbox', async (t) => {
  let cancels = 0;
  const cancel = RequestOne.prototype.cancel;
  RequestOne.prototype.cancel = function (this: RequestOne, error?: Error) {
    cancels++;
    return cancel.call(this, error);
  };
  t.teardown(() => {
    RequestOne.prototype.cancel = cancel;
  });
  const answers = await Promise.all(
    Array.from({ length: 50 }, (_, i) => client.nc.request('sr.echo', String(i), { timeout: 2_000 })),
  );
  t.same(
    answers.map((msg) => msg.string()),
    Array.from({ length: 50 }, (_, i) => String(i)),
    'every request got its own answer',
  );
  t.equal(cancels, 0, 'no answered request went through the cancel that builds an error');
  t.equal(pending(), 0, 'no request stays registered');
});

t.test('a request nobody answers still times out with TimeoutError', async (t) => {
  const error = await client.nc.request('sr.silent', 'x', { timeout: 100 }).catch((e: unknown) => e);
  t.ok(error instanceof TimeoutError, `timed out (${String(error)})`);
  t.equal(pending(), 0, 'and is no longer registered');
});

t.test('a request to no subscriber still fails as no responders', async (t) => {
  const error = await client.nc.request('sr.nobody', 'x', { timeout: 2_000 }).catch((e: unknown) => e);
  t.ok(error instanceof RequestError && error.cause instanceof NoRespondersError, `no responders (${String(error)})`);
  t.equal(pending(), 0, 'and is no longer registered');
});

t.test('a JetStream call still answers through the same path', async (t) => {
  const info = await client.jsm.getAccountInfo();
  t.type(info.streams, 'number', 'account info read');
  t.equal(pending(), 0);
});
