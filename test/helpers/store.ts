// A fresh LMDB environment in a temporary directory, closed and removed when the test ends.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store } from '../../dist/src/store/env.js';

export function tempStore(t: { teardown(fn: () => unknown): void }, prefix = 'sar-store-'): Store {
  // mkdtemp, not t.testdir(): lmdb treats a path whose last segment has a dot (".test.ts-...") as a file.
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const store = openStore(dir);
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}
