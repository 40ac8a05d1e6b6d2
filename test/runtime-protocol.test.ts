// A DomainError thrown in an actor host reaches the main thread as a DomainError with its code and details
// (runtime/rpc.ts), over a real MessageChannel as between threads; other errors keep their name and message.
import t from 'tap';
import { MessageChannel } from 'node:worker_threads';
import { batchingEndpoint } from '../dist/src/runtime/batching-endpoint.js';
import { RpcClient, serve, type CallPolicy } from '../dist/src/runtime/rpc.js';
import { DomainError } from '../dist/src/runtime/errors.js';

t.test('a thrown DomainError crosses with its code and details', async (t) => {
  const { port1, port2 } = new MessageChannel();
  t.teardown(() => {
    port1.close();
    port2.close();
  });
  serve(
    {
      refuse: () => {
        throw new DomainError('session_not_found', 'Session not found', { sessionId: 's1' });
      },
      crash: () => {
        throw new TypeError('boom');
      },
    },
    batchingEndpoint(port2),
  );
  const client = new RpcClient<{ refuse(): void; crash(): void }>(batchingEndpoint(port1));
  const policy: CallPolicy = { graceMs: 0, timedOut: () => new Error('timed out'), fromRemote: (error) => error };
  const remote = {
    refuse: () => client.call('refuse', [], 5_000, policy),
    crash: () => client.call('crash', [], 5_000, policy),
  };
  const refused = await remote.refuse().then(
    () => undefined,
    (error: unknown) => error,
  );
  t.type(refused, DomainError);
  t.match(refused, {
    name: 'DomainError',
    code: 'session_not_found',
    message: 'Session not found',
    details: { sessionId: 's1' },
  });
  await t.rejects(remote.crash(), { name: 'TypeError', message: 'boom' }, 'other errors keep their name and message');
  t.notOk((await remote.crash().catch((e: unknown) => e)) instanceof DomainError);
});
