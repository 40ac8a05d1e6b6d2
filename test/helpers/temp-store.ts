// A real LMDB environment in a fresh temp directory, closed and removed when the test ends. mkdtemp, not
// t.testdir(): lmdb treats a path whose last segment has a dot (".test.ts-...") as a file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store } from '../../dist/src/store/env.js';

export function tempStore(t: { teardown(fn: () => unknown): void }, name = 'repo'): Store {
  const dir = mkdtempSync(join(tmpdir(), `${name}-`));
  const store = openStore(dir);
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}
