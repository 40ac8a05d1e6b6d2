// node commit-loop.mjs [MODE=sync] [PUTS=27] [RANDOM=0] : CPU and wall time of one LMDB transaction of PUTS record-sized
// puts (keys in start order) plus RANDOM puts at random keys into a second database of 50,000 entries (what a
// commit's new sessions add to ussd-session-starts), on this thread (process.cpuUsage). Measurement only.
// MODE: sync (the turn commit: ABORTABLE | SYNCHRONOUS_COMMIT), plain (ABORTABLE alone), nsf (ABORTABLE |
// NO_SYNC_FLUSH), nometasync or nosync (the environment opened so, transactions as sync). Under
// `strace -f -y -e trace=fdatasync,pwrite64` sync, plain and nsf all flush twice per commit: an fdatasync of data.mdb
// and an O_DSYNC write to a meta page.
import { open, TransactionFlags } from '../../../node_modules/lmdb/index.js';
import { mkdtempSync } from 'node:fs';
import { randomBytes } from 'node:crypto';

const [mode = 'sync', puts = 27, randoms = 0] = process.argv.slice(2).map((arg, i) => (i === 0 ? arg : Number(arg)));
const { ABORTABLE, SYNCHRONOUS_COMMIT, NO_SYNC_FLUSH } = TransactionFlags;
const flags = { plain: ABORTABLE, nsf: ABORTABLE | NO_SYNC_FLUSH }[mode] ?? ABORTABLE | SYNCHRONOUS_COMMIT;
const root = open({ path: mkdtempSync('/tmp/commit-loop-'), maxDbs: 10, noMetaSync: mode === 'nometasync', noSync: mode === 'nosync' });
const records = root.openDB({ name: 'records' });
const starts = root.openDB({ name: 'starts' });
const record = { state: 'menu', phone: '+254700000000', context: { a: 1, b: 'xyz'.repeat(20) }, createdAt: Date.now(), updatedAt: Date.now(), expiresAt: Date.now() + 1e5, history: randomBytes(32).toString('hex') };
const randomId = () => `ATUid_${randomBytes(16).toString('hex')}`;

if (randoms > 0) root.transactionSync(() => { for (let i = 0; i < 50_000; i++) starts.put(randomId(), 1e12 + i); });
let k = 0;
const commit = () =>
  root.transactionSync(() => {
    for (let j = 0; j < puts; j++) records.put(`${1e14 + k++}`, record);
    for (let j = 0; j < randoms; j++) starts.put(randomId(), 1e12 + k);
  }, flags);

const commits = Number(process.env.COMMITS ?? 2000);
for (let i = 0; i < 200; i++) commit(); // warm-up
const cpu = process.cpuUsage();
const started = performance.now();
for (let i = 0; i < commits; i++) commit();
const { user, system } = process.cpuUsage(cpu);
const wall = performance.now() - started;
console.log(`${mode} puts=${puts} random=${randoms}: per commit wall ${((wall / commits) * 1000).toFixed(0)} µs, CPU user ${(user / commits).toFixed(0)} sys ${(system / commits).toFixed(0)} µs`);
