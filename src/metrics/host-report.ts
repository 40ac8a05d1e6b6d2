// Metrics of the actor hosts reach the main thread's registry without a round trip at scrape time: every
// REPORT_INTERVAL_MS each host posts one compact report (its counter and histogram increments since the last
// report, and a snapshot of its actors and mailboxes) on a port of its own; the main thread adds it in.
import type { MessagePort } from 'node:worker_threads';
import { actorMailboxDepth, actorsActive, storeCommitDuration, ussdSteps } from './catalogue.js';
import type { TakenHistogram } from './families.js';

export const REPORT_INTERVAL_MS = 1_000;

/** What an actor host holds right now. */
export interface HostLoad {
  /** Actors in memory, by kind. */
  actors: Record<string, number>;
  /** Messages queued or running in its mailboxes. */
  mailboxDepth: number;
}

export interface HostReport extends HostLoad {
  ussdSteps: [string[], number][];
  storeCommits: TakenHistogram;
}

/** Worker side: posts a report every REPORT_INTERVAL_MS until the thread ends. */
export function reportHostMetrics(port: MessagePort, load: () => HostLoad): void {
  const timer = setInterval(() => {
    const report: HostReport = { ...load(), ussdSteps: ussdSteps.take(), storeCommits: storeCommitDuration.take() };
    port.postMessage(report);
  }, REPORT_INTERVAL_MS);
  timer.unref();
}

/** Main side: the actors of each host as last reported; actors_active sums them at scrape. */
const actorsByHost = new Map<number, Record<string, number>>();

actorsActive.collect = (family) => {
  for (const series of family.series()) series.value = 0;
  for (const actors of actorsByHost.values()) for (const kind in actors) family.with(kind).value += actors[kind];
};

/** Main side: adds one host's report to the registry. */
export function applyHostReport(host: number, report: HostReport): void {
  actorsByHost.set(host, report.actors);
  actorMailboxDepth.with(String(host)).value = report.mailboxDepth;
  ussdSteps.add(report.ussdSteps);
  storeCommitDuration.add(report.storeCommits);
}

/** Main side: a host that exited holds no actors and no messages any more. */
export function forgetHost(host: number): void {
  actorsByHost.delete(host);
  actorMailboxDepth.with(String(host)).value = 0;
}
