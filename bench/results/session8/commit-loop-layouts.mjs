// node commit-loop-layouts.mjs old|new : synced LMDB transactions of 27 steps with random session IDs, records keyed by ID (old) or by start with a start entry per session (new); CPU per step
import { open, TransactionFlags } from 'lmdb';
import { rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
const mode = process.argv[2]; const dir = '/tmp/s8/lm/db3-' + mode; rmSync(dir, { recursive: true, force: true });
const root = open({ path: dir, compression: false });
const recs = root.openDB('r', { useVersions: true }); const starts = root.openDB('s');
const H = 'h2.' + randomBytes(32).toString('base64url');
const rec = (id) => ({ sessionId: id, phoneNumber: '+254700000000', serviceCode: '*384#', state: 'menu', context: { a: 1, lang: 'en' }, history: H, createdAt: Date.now(), updatedAt: Date.now(), expiresAt: Date.now() + 300000 });
const pad = (n) => String(n).padStart(15, '0');
let clock = 1e12;
const newSession = () => ({ id: 'ATUid_' + randomBytes(16).toString('hex'), t: ++clock, n: 0 });
const write = (s) => {
  if (mode === 'old') recs.putSync(s.id, rec(s.id), s.n + 1);
  else { if (s.n === 0) starts.putSync(s.id, s.t); recs.putSync(pad(s.t) + ':' + s.id, rec(s.id), s.n + 1); }
};
// preload 60k finished sessions
root.transactionSync(() => { for (let i = 0; i < 60000; i++) { const s = newSession(); for (let k = 0; k < 6; k++) { write(s); s.n++; } } });
const SYNCED = TransactionFlags.ABORTABLE | TransactionFlags.SYNCHRONOUS_COMMIT;
const active = Array.from({ length: 100 }, newSession);
const c0 = process.cpuUsage(); const t0 = performance.now(); let steps = 0; let commits = 0;
while (steps < 60000) {
  root.transactionSync(() => { for (let k = 0; k < 27; k++) { const i = (steps + k * 37) % 100; const a = active[i]; write(a); a.n++; if (a.n === 6) active[i] = newSession(); } }, SYNCED);
  steps += 27; commits++;
}
const c = process.cpuUsage(c0); const ms = performance.now() - t0;
console.log(mode, 'cpu us/step', ((c.user + c.system) / steps).toFixed(2), 'sys', (c.system / steps).toFixed(2), 'wall ms/commit', (ms / commits).toFixed(3));
