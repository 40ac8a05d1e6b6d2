// The live-call repository contract against LMDB, and a call read back after the environment is closed and opened
// again (its write was synced before it was acknowledged).
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLmdbCalls } from '../dist/src/records/lmdb/oracle/calls.js';
import { openStore } from '../dist/src/store/env.js';
import { callRepositoryContract, pendingCall } from './contracts/calls.js';
import { tempStore } from './helpers/store.js';

callRepositoryContract(t, async (t) => openLmdbCalls(tempStore(t, 'repo-calls-')));

t.test('a call and its session entry are there after a reopen', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'repo-calls-reopen-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const call = pendingCall('$kept:example.org@!room:example.org', 'did:key:zAda', 's-1', 1);
  const first = openStore(dir);
  await openLmdbCalls(first).create(call);
  await first.close();
  const again = openStore(dir);
  t.teardown(() => again.close());
  t.same((await openLmdbCalls(again).get(call.callId))?.value, call);
  t.same(await openLmdbCalls(again).listSession('did:key:zAda', 's-1', 10), [call]);
});
