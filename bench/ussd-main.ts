// The main thread's half of a USSD step, in process: the route's stepOf (src/ussd/routes/dial.ts: the step's
// deadline, the call through the actor runtime and its RPC to one real actor host, the answer) without HTTP, which
// is the same in every build; `concurrency` sessions stepping at once through the bench's six requests
// (bench/ussd.ts). Prints the main thread's CPU per step (/proc/self/task/<pid>/stat) and the process's.
// `ROOT` is the build to measure (default: this one), as for ussd-host.ts:
//   node dist/bench/ussd-main.js [ROOT] [STEPS=90000] [CONCURRENCY=100]
// On a shared machine, run two builds AT THE SAME TIME (`node ... A & node ... B; wait`).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildRoot, measured, moduleOf, sessionSteps } from './lib/in-process-steps.js';

const root = buildRoot(process.argv);
const steps = Number(process.argv[3] ?? 90_000);
const concurrency = Number(process.argv[4] ?? 100);

const from = moduleOf(root);
const { loadConfig } = await from('app/config.js', 'config.js');
const { createLogger } = await from('base/log.js', 'log.js');
const { ActorRuntime } = await from('runtime/actor-runtime.js');
const { stepOf } = await from('ussd/routes/dial.js');

const dir = mkdtempSync(join(tmpdir(), 'sar-ussd-main-'));
const env = {
  DATA_DIR: dir,
  PIN_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
  LOG_LEVEL: 'warn',
  ACTOR_THREADS: '1',
};
const config = loadConfig(env);
const log = createLogger('warn');
const runtime = new ActorRuntime({ threads: 1, config, log });
await runtime.start();
const deps = { actors: runtime, stepTimeoutMs: config.USSD_STEP_TIMEOUT_MS, log };

const { counts, run } = sessionSteps('main', concurrency, (sessionId, text) => {
  const message = { type: 'dial', sessionId, phoneNumber: '+254700000001', serviceCode: '*123#', text };
  return stepOf(deps, message, undefined);
});

await run(steps / 3); // warm-up: JIT, LMDB pages
const { threadMs, processCpu, wallMs } = await measured(() => run(steps));
console.log(
  JSON.stringify({
    root,
    steps: counts.done,
    mainThreadUsPerStep: +((threadMs * 1000) / counts.done).toFixed(2),
    processUsPerStep: +((processCpu.user + processCpu.system) / counts.done).toFixed(2),
    stepsPerSecond: Math.round((counts.done / wallMs) * 1000),
    wrong: counts.wrong,
  }),
);
await runtime.stop(1000);
rmSync(dir, { recursive: true, force: true });
