// Thread: main (bench harness)
// What bench/ussd-host.ts and bench/ussd-main.ts share: a build's modules loaded by path (this build's or an older
// checkout's), sessions stepping at once through the USSD row's six requests, and this thread's own CPU.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { STEPS } from '../ussd.js';

/** The build to measure: `argv[2]`, or this one. */
export const buildRoot = (argv: string[]) => resolve(argv[2] ?? join(fileURLToPath(import.meta.url), '../../../..'));

/** A module of the build at `root`, at its path there, or at its path before the moves into src/app/ and src/base/. */
export const moduleOf =
  (root: string) =>
  (path: string, before = path) =>
    import(join(root, 'dist/src', path)).catch(() => import(join(root, 'dist/src', before)));

/** `concurrency` sessions, each through STEPS in turn by `step`, until `budget` steps are done. */
export function sessionSteps(
  prefix: string,
  concurrency: number,
  step: (sessionId: string, text: string) => Promise<string>,
) {
  const counts = { done: 0, wrong: 0 };
  let sessions = 0;
  const client = async (budget: number) => {
    while (counts.done < budget) {
      const sessionId = `${prefix}-${process.pid}-${++sessions}`;
      for (const text of STEPS) {
        if (!/^(CON|END) /.test(await step(sessionId, text))) counts.wrong++;
        counts.done++;
      }
    }
  };
  const run = async (budget: number) => {
    counts.done = 0;
    await Promise.all(Array.from({ length: concurrency }, () => client(budget)));
  };
  return { counts, run };
}

/** This thread's CPU in ms (user + system clock ticks of 10 ms). */
export function threadCpuMs(): number {
  const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** `work`'s cost: this thread's CPU, the process's (`process.cpuUsage`, us) and the wall time, in ms. */
export async function measured(work: () => Promise<void>) {
  const thread0 = threadCpuMs();
  const process0 = process.cpuUsage();
  const wall0 = performance.now();
  await work();
  return {
    threadMs: threadCpuMs() - thread0,
    processCpu: process.cpuUsage(process0),
    wallMs: performance.now() - wall0,
  };
}
