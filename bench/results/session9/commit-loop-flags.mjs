// node commit-loop-flags.mjs sync|plain|nsf : a synced transaction of 27 puts with ABORTABLE|SYNCHRONOUS_COMMIT (the turn
// commit), ABORTABLE alone, or ABORTABLE|NO_SYNC_FLUSH; CPU per transaction. Under strace (-e trace=fdatasync,pwrite64 -y)
// all three flush twice per commit: an fdatasync of data.mdb and an O_DSYNC write to a meta page.
import { open, TransactionFlags } from '../../../node_modules/lmdb/index.js';
import { mkdtempSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
const mode = process.argv[2];
const n = 27;
const dir = mkdtempSync('/tmp/lmdbx-');
const root = open({ path: dir, maxDbs: 10 });
const db = root.openDB({ name: 'a' });
const val = { state: 'menu', phone: '+254700000000', context: { a: 1, b: 'xyz'.repeat(20) }, createdAt: Date.now(), updatedAt: Date.now(), expiresAt: Date.now() + 1e5, history: randomBytes(32).toString('hex') };
const flags = mode === 'sync' ? TransactionFlags.ABORTABLE | TransactionFlags.SYNCHRONOUS_COMMIT : mode === 'plain' ? TransactionFlags.ABORTABLE : mode === 'nsf' ? TransactionFlags.ABORTABLE | TransactionFlags.NO_SYNC_FLUSH : 0;
console.log(mode, 'flags', flags, Object.keys(TransactionFlags));
let k = 0;
const commits = Number(process.env.COMMITS ?? 2000);
const step = () => root.transactionSync(() => { for (let j = 0; j < n; j++) db.put(`${1e14 + (k++)}`, val); }, flags);
for (let i = 0; i < 100; i++) step();
const c0 = process.cpuUsage(); const t0 = performance.now();
for (let i = 0; i < commits; i++) step();
const c = process.cpuUsage(c0); const t = performance.now() - t0;
console.log(mode, 'per commit: wall', (t / commits * 1000).toFixed(0), 'us, cpu user', (c.user / commits).toFixed(0), 'sys', (c.system / commits).toFixed(0));
