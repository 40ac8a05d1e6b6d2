// The CustomerRepository contract against LMDB.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../dist/src/store/env.js';
import { LmdbCustomerRepository } from '../dist/src/ussd/customers/lmdb-repository.js';
import { customerRepositoryContract } from './contracts/customers.js';

customerRepositoryContract(t, async (t) => {
  // mkdtemp, not t.testdir(): lmdb treats a path whose last segment has a dot as a file.
  const dir = mkdtempSync(join(tmpdir(), 'repo-customers-'));
  const store = openStore(dir);
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return new LmdbCustomerRepository(store);
});
