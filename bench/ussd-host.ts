// The actor host's half of a USSD step, in process: an ActorHost with the USSD kind and real LMDB on this
// thread (no HTTP, no RPC hop), `concurrency` sessions stepping at once through the bench's six requests
// (bench/ussd.ts). Prints this thread's CPU per step (/proc/self/task/<pid>/stat: the host's JS thread),
// the process's (adds LMDB's writer and V8's GC helpers), the scavenges and GC time.
// `ROOT` is the build to measure (default: this one), so the same harness runs against a built copy of main:
//   node dist/bench/ussd-host.js [ROOT] [STEPS=100000] [CONCURRENCY=100]
// On a shared machine, run two builds AT THE SAME TIME (`node ... A & node ... B; wait`): both see the same load,
// and the pair's difference is far steadier than that of runs one after the other.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { buildRoot, measured, moduleOf, sessionSteps } from './lib/in-process-steps.js';

const root = buildRoot(process.argv);
const steps = Number(process.argv[3] ?? 100_000);
const concurrency = Number(process.argv[4] ?? 100);

const from = moduleOf(root);
const { loadConfig } = await from('app/config.js', 'config.js');
const { openStore } = await from('store/env.js');
const { ActorHost } = await from('runtime/actor-host.js');
const { openRecords } = await from('app/records.js', 'records.js');
const { ussdActorKind } = await from('ussd/actor/session-actor.js');
const { createLogger } = await from('base/log.js', 'log.js');

const dir = mkdtempSync(join(tmpdir(), 'sar-ussd-host-'));
const config = loadConfig({ DATA_DIR: dir, PIN_ENCRYPTION_KEY: randomBytes(32).toString('hex'), LOG_LEVEL: 'warn' });
const store = openStore(dir);
const host = new ActorHost(
  [ussdActorKind],
  { hostIndex: 0, config, store, records: openRecords(store, config), log: createLogger('warn'), publish() {} },
  60_000,
  {
    mailboxLimit: config.ACTOR_MAILBOX_LIMIT,
  },
);

const { counts, run } = sessionSteps('host', concurrency, (sessionId, text) => {
  const message = { type: 'dial', sessionId, phoneNumber: '+254700000001', serviceCode: '*123#', text };
  return host.send('ussd', sessionId, message, Date.now() + 10_000);
});

await run(steps / 3); // warm-up: JIT, LMDB pages
let scavenges = 0;
let gcMs = 0;
const gc = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    if (
      (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR
    )
      scavenges++;
    gcMs += entry.duration;
  }
});
gc.observe({ entryTypes: ['gc'] });
const { threadMs, processCpu, wallMs } = await measured(() => run(steps));
await new Promise((resolve) => setTimeout(resolve, 50)); // the last GC entries
gc.disconnect();
console.log(
  JSON.stringify({
    root,
    steps: counts.done,
    hostThreadUsPerStep: +((threadMs * 1000) / counts.done).toFixed(2),
    processUsPerStep: +((processCpu.user + processCpu.system) / counts.done).toFixed(2),
    scavenges,
    gcMsPer1000Steps: +((gcMs / counts.done) * 1000).toFixed(2),
    stepsPerSecond: Math.round((counts.done / wallMs) * 1000),
    wrong: counts.wrong,
  }),
);
await host.close(1000);
rmSync(dir, { recursive: true, force: true });
