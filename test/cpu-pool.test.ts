// The CPU pool (src/runtime/cpu-pool.ts) keeps one task waiting in a busy thread's own inbox.
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import t from 'tap';
import { VERIFY_TASK } from '../dist/src/oracle/auth/index.js';
import { CpuPool } from '../dist/src/runtime/cpu-pool.js';

const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const raw = new Uint8Array(publicKey.export({ format: 'der', type: 'spki' }).subarray(-32));
const data = new Uint8Array(randomBytes(200));
const check = { publicKey: raw, data, signature: new Uint8Array(sign(null, data, privateKey)) };
/** A task that keeps the thread busy for a while (a few hundred checks). */
const busy = () => Array.from({ length: 400 }, () => check);

t.test('a busy thread is handed its next task at once; the one after waits in the pool queue', async (t) => {
  const pool = new CpuPool({ maxThreads: 1 });
  t.teardown(() => pool.close());
  t.same(await pool.run(VERIFY_TASK, [check]), [true], 'the thread is up');
  const first = pool.run<boolean[]>(VERIFY_TASK, busy());
  const second = pool.run<boolean[]>(VERIFY_TASK, busy());
  t.equal(pool.queueSize, 0, 'the second task went to the busy thread');
  const third = pool.run<boolean[]>(VERIFY_TASK, [check]);
  t.equal(pool.queueSize, 1, 'the third waits in the pool');
  const results = await Promise.all([first, second, third]);
  t.ok(results.flat().every(Boolean) && results.flat().length === 801, 'every check answered, in order per task');
});
