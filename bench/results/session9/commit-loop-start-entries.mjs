// node commit-loop-start-entries.mjs [RANDOM=5] : a synced transaction of 27 record puts in start order plus RANDOM
// puts at random keys into a second database of 50,000 entries (what a commit's new sessions add to
// ussd-session-starts), CPU per transaction.
import { open, TransactionFlags } from '../../../node_modules/lmdb/index.js';
import { mkdtempSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
const randoms = Number(process.argv[2] ?? 5);
const n = 27;
const dir = mkdtempSync('/tmp/lmdbx-');
const root = open({ path: dir, maxDbs: 10 });
const db = root.openDB({ name: 'a' });
const starts = root.openDB({ name: 's' });
const val = { state: 'menu', phone: '+254700000000', context: { a: 1, b: 'xyz'.repeat(20) }, createdAt: Date.now(), updatedAt: Date.now(), expiresAt: Date.now() + 1e5, history: randomBytes(32).toString('hex') };
const flags = TransactionFlags.ABORTABLE | TransactionFlags.SYNCHRONOUS_COMMIT;
let k = 0;
// preload 50k start entries
root.transactionSync(() => { for (let i = 0; i < 50000; i++) starts.put(`ATUid_${randomBytes(16).toString('hex')}`, 1e12 + i); });
const commits = 2000;
const step = () => root.transactionSync(() => { for (let j = 0; j < n; j++) db.put(`${1e14 + (k++)}`, val); for (let j = 0; j < randoms; j++) starts.put(`ATUid_${randomBytes(16).toString('hex')}`, 1e12 + k); }, flags);
for (let i = 0; i < 200; i++) step();
const c0 = process.cpuUsage(); const t0 = performance.now();
for (let i = 0; i < commits; i++) step();
const c = process.cpuUsage(c0); const t = performance.now() - t0;
console.log('randoms', randoms, 'per commit: wall', (t / commits * 1000).toFixed(0), 'us, cpu user', (c.user / commits).toFixed(0), 'sys', (c.system / commits).toFixed(0));
