// The start-up verdict on NATS acknowledgements (src/cluster/ack-durability.ts) from what servers say: INFO's
// version and /varz from monitoring endpoints (here small HTTP servers answering as nats-server 2.9 and 2.10 do).
import { createServer, type Server } from 'node:http';
import t, { type Test } from 'tap';
import { checkAckDurability, compareVersions } from '../dist/src/cluster/ack-durability.js';

async function varzServer(t: Test, body: unknown): Promise<string> {
  const server: Server = createServer((_, response) =>
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

const synced = {
  server_name: 'n1',
  version: '2.10.27',
  jetstream: { config: { sync_interval: 120e9, sync_always: true } },
};
const unsynced = { server_name: 'n2', version: '2.10.27', jetstream: { config: { sync_interval: 120e9 } } };
const old = { server_name: 'n3', version: '2.9.10', jetstream: { config: {} } };

t.test('versions compare by number, not by text', async (t) => {
  t.equal(compareVersions('2.10.23', '2.9.10'), 1);
  t.equal(compareVersions('2.10.22', '2.10.23'), -1);
  t.equal(compareVersions('v2.10.23', '2.10.23'), 0);
  t.equal(compareVersions('2.11.0-beta.1', '2.10.23'), 1);
});

t.test('every server syncing is synced; one that does not is unsynced; one unread is unknown', async (t) => {
  const a = await varzServer(t, synced);
  const b = await varzServer(t, { ...synced, server_name: 'n2' });
  const info = { version: '2.10.27', server_name: 'n1' };
  t.match(await checkAckDurability(info, [a, b]), { verdict: 'synced' });

  const c = await varzServer(t, unsynced);
  const mixed = await checkAckDurability(info, [a, c]);
  t.equal(mixed.verdict, 'unsynced');
  t.match(mixed.reasons.join('\n'), /n2 .* acknowledges before fsync \(sync_interval 120 s, not always\)/);

  const d = await varzServer(t, old);
  t.match(
    (await checkAckDurability(info, [a, d])).reasons.join('\n'),
    /nats-server 2\.9\.10 at n3 .* is older than 2\.10\.23/,
  );
  t.match(
    await checkAckDurability({ version: '2.9.10' }, [a]),
    { verdict: 'unsynced' },
    "the connected server's version alone can refuse",
  );

  const none = await checkAckDurability(info, []);
  t.equal(none.verdict, 'unknown');
  t.match(none.reasons.join('\n'), /NATS_MONITOR_URL is not set/);
  const silent = await checkAckDurability(info, [a, 'http://127.0.0.1:1'], { timeoutMs: 1_000 });
  t.equal(silent.verdict, 'unknown', 'a monitoring endpoint that does not answer: cannot tell');
});
