// In-process harness (session 6, perf-ussd-expiry): the LMDB USSD session repository alone, real LMDB (synced
// commits), 5 000 sessions stored, 100 of them stepping at once (each step an update with a new expiry, as the
// session actor writes it). Prints process CPU (all threads: main, lmdb-js writer, GC helpers) per step.
// Usage: node repository-steps.mjs <root of a built checkout> [steps per session]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = process.argv[2];
const stepsPerSession = Number(process.argv[3] ?? 200);
const { openStore } = await import(pathToFileURL(join(root, 'dist/src/store/env.js')).href);
const { LmdbUssdSessionRepository } = await import(pathToFileURL(join(root, 'dist/src/ussd/sessions/lmdb-repository.js')).href);

const TTL = 300_000;
const session = (sessionId, now, step) => ({
  sessionId,
  phoneNumber: '+254712345678',
  serviceCode: '*384#',
  state: step % 2 ? 'knowMore' : 'preMenu',
  context: { sessionId, phoneNumber: '+254712345678', message: `Welcome ${step}`, isAuthenticated: false },
  history: { length: step, digest: 'd'.repeat(43) },
  screen: `CON Welcome ${step}\n1. Know more\n2. Account`,
  createdAt: now,
  updatedAt: now,
  expiresAt: now + TTL,
});

const dir = mkdtempSync(join(tmpdir(), 'repo-steps-'));
const store = openStore(dir);
const repository = new LmdbUssdSessionRepository(store);
const reads = new Map();
const now0 = Date.now();
await Promise.all(
  Array.from({ length: 5000 }, async (_, i) => {
    const value = session(`s-${i}`, now0, 0);
    reads.set(value.sessionId, { value, revision: await repository.begin(value, now0) });
  }),
);

async function stepping(sessionId) {
  for (let step = 1; step <= stepsPerSession; step++) {
    const value = session(sessionId, Date.now(), step);
    reads.set(sessionId, { value, revision: await repository.update(value, reads.get(sessionId)) });
  }
}
const stepping100 = () => Promise.all(Array.from({ length: 100 }, (_, i) => stepping(`s-${i * 50}`)));

await stepping100(); // warm-up
const cpu = process.cpuUsage();
const start = process.hrtime.bigint();
await stepping100();
const { user, system } = process.cpuUsage(cpu);
const wallMs = Number(process.hrtime.bigint() - start) / 1e6;
const steps = 100 * stepsPerSession;
console.log(JSON.stringify({ root, steps, cpuUsPerStep: +((user + system) / steps).toFixed(2), userUsPerStep: +(user / steps).toFixed(2), systemUsPerStep: +(system / steps).toFixed(2), stepsPerSecond: Math.round(steps / (wallMs / 1000)) }));
await store.close();
rmSync(dir, { recursive: true, force: true });
