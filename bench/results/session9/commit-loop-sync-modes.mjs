// node commit-loop-sync-modes.mjs sync|nometasync|nosync [PUTS=27] : CPU and wall time of one synced LMDB transaction of PUTS
// record-sized puts (keys in start order), by sync mode, on this thread (process.cpuUsage). Measurement only: the
// server opens its environment with full syncs.
import { open, TransactionFlags } from '../../../node_modules/lmdb/index.js';
import { mkdtempSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
const mode = process.argv[2] ?? 'sync';
const n = Number(process.argv[3] ?? 27);
const dir = mkdtempSync('/tmp/lmdbx-');
const opts = { path: dir, maxDbs: 10 };
if (mode === 'nometasync') opts.noMetaSync = true;
if (mode === 'nosync') opts.noSync = true;
const root = open(opts);
const db = root.openDB({ name: 'a' });
const val = { state: 'menu', phone: '+254700000000', context: { a: 1, b: 'xyz'.repeat(20) }, createdAt: Date.now(), updatedAt: Date.now(), expiresAt: Date.now() + 1e5, history: randomBytes(32).toString('hex') };
const flags = TransactionFlags.ABORTABLE | TransactionFlags.SYNCHRONOUS_COMMIT;
let k = 0;
const commits = Number(process.env.COMMITS ?? 2000);
// warm
for (let i = 0; i < 200; i++) root.transactionSync(() => { for (let j = 0; j < n; j++) db.put(`${Date.now()}:${k++}`, val); }, flags);
const c0 = process.cpuUsage(); const t0 = performance.now();
for (let i = 0; i < commits; i++) root.transactionSync(() => { for (let j = 0; j < n; j++) db.put(`${1e14 + (k++)}`, val); }, flags);
const c = process.cpuUsage(c0); const t = performance.now() - t0;
console.log(mode, 'n', n, 'per commit: wall', (t / commits * 1000).toFixed(0), 'us, cpu user', (c.user / commits).toFixed(0), 'sys', (c.system / commits).toFixed(0), 'us; per put', ((c.user + c.system) / commits / n).toFixed(1));
