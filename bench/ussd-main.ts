// The main thread's half of a USSD step, in process: the route's stepOf (src/ussd/routes/dial.ts: the step's
// deadline, the call through the actor runtime and its RPC to one real actor host, the answer) without HTTP, which
// is the same in every build; `concurrency` sessions stepping at once through the bench's six requests
// (bench/ussd.ts). Prints the main thread's CPU per step (/proc/self/task/<pid>/stat) and the process's.
// `ROOT` is the build to measure (default: this one), as for ussd-host.ts:
//   node dist/bench/ussd-main.js [ROOT] [STEPS=90000] [CONCURRENCY=100]
// On a shared machine, run two builds AT THE SAME TIME (`node ... A & node ... B; wait`).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { STEPS } from './ussd.js';

const root = resolve(process.argv[2] ?? join(fileURLToPath(import.meta.url), '../../..'));
const steps = Number(process.argv[3] ?? 90_000);
const concurrency = Number(process.argv[4] ?? 100);

/** A module of the build, at its path there, or at its path before the moves into src/app/ and src/base/. */
const from = (path: string, before = path) =>
  import(join(root, 'dist/src', path)).catch(() => import(join(root, 'dist/src', before)));
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

let sessions = 0;
let done = 0;
let wrong = 0;
async function client(budget: number): Promise<void> {
  while (done < budget) {
    const sessionId = `main-${process.pid}-${++sessions}`;
    for (const text of STEPS) {
      const message = { type: 'dial', sessionId, phoneNumber: '+254700000001', serviceCode: '*123#', text };
      const screen: string = await stepOf(deps, message, undefined);
      if (!/^(CON|END) /.test(screen)) wrong++;
      done++;
    }
  }
}
const run = async (budget: number) => {
  done = 0;
  await Promise.all(Array.from({ length: concurrency }, () => client(budget)));
};
/** This thread's CPU in ms (user + system clock ticks of 10 ms). */
const threadCpuMs = () => {
  const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};

await run(steps / 3); // warm-up: JIT, LMDB pages
const thread0 = threadCpuMs();
const process0 = process.cpuUsage();
const wall0 = performance.now();
await run(steps);
const threadMs = threadCpuMs() - thread0;
const processCpu = process.cpuUsage(process0);
const wallMs = performance.now() - wall0;
console.log(
  JSON.stringify({
    root,
    steps: done,
    mainThreadUsPerStep: +((threadMs * 1000) / done).toFixed(2),
    processUsPerStep: +((processCpu.user + processCpu.system) / done).toFixed(2),
    stepsPerSecond: Math.round((done / wallMs) * 1000),
    wrong,
  }),
);
await runtime.stop(1000);
rmSync(dir, { recursive: true, force: true });
