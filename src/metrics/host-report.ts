// Thread: any
// Metrics of the actor hosts reach the main thread's registry without a round trip at scrape time: every
// REPORT_INTERVAL_MS each host posts one compact report (its counter and histogram increments since the last
// report, and a snapshot of its actors and mailboxes) on a port of its own; the main thread adds it in.
import type { MessagePort } from 'node:worker_threads';
import {
  actorMailboxDepth,
  actorsActive,
  journalAppends,
  journalFenced,
  journalLoads,
  journalRecords,
  storeCommitDuration,
  storeWritesRefused,
  ussdServiceSessionsEnded,
  ussdServiceSteps,
  ussdSessionsActive,
  ussdSteps,
  ussdUnknownCodes,
  ussdOutboxDelivered,
  ussdOutboxGivenUp,
  ussdOutboxPending,
  ussdWebhookCalls,
  ussdWebhookDuration,
  ussdQueryCalls,
  ussdQueryDuration,
} from './catalogue.js';
import type { GaugeFamily, TakenHistogram } from './families.js';

export const REPORT_INTERVAL_MS = 1_000;

/** Unlabelled gauges a host computes (their collect, set by the host's code) and the main thread sums over the hosts. */
const HOST_GAUGES = [ussdSessionsActive, ussdOutboxPending];

/** Counters a host counts and the main thread adds in, in this order in a report. */
const HOST_COUNTERS = [
  ussdSteps,
  journalAppends,
  journalRecords,
  journalLoads,
  journalFenced,
  ussdServiceSteps,
  ussdServiceSessionsEnded,
  ussdUnknownCodes,
  storeWritesRefused,
  ussdWebhookCalls,
  ussdOutboxDelivered,
  ussdOutboxGivenUp,
  ussdQueryCalls,
];

/** What an actor host holds right now. */
export interface HostLoad {
  /** Actors in memory, by kind. */
  actors: Record<string, number>;
  /** Messages queued or running in its mailboxes. */
  mailboxDepth: number;
}

export interface HostReport extends HostLoad {
  /** The values of HOST_GAUGES on this host. */
  gauges: number[];
  /** The increments of HOST_COUNTERS since the last report. */
  counters: [string[], number][][];
  storeCommits: TakenHistogram;
  webhookDurations: TakenHistogram;
  queryDurations: TakenHistogram;
}

/** Worker side: posts a report every REPORT_INTERVAL_MS until the thread ends. */
export function reportHostMetrics(port: MessagePort, load: () => HostLoad): void {
  const timer = setInterval(() => {
    const gauges = HOST_GAUGES.map((gauge) => gauge.get().values[0]?.value ?? 0);
    const report: HostReport = {
      ...load(),
      gauges,
      counters: HOST_COUNTERS.map((counter) => counter.take()),
      storeCommits: storeCommitDuration.take(),
      webhookDurations: ussdWebhookDuration.take(),
      queryDurations: ussdQueryDuration.take(),
    };
    port.postMessage(report);
  }, REPORT_INTERVAL_MS);
  timer.unref();
}

/** Main side: what the main thread adds itself to a HOST_GAUGE (cluster mode: the front door counts the USSD sessions). */
const mainThreadParts = new Map<GaugeFamily, () => number>();

/** Main side: `part()` is added to the hosts' sum of `gauge` at each scrape, until the answered function is called. */
export function addMainThreadPart(gauge: GaugeFamily, part: () => number): () => void {
  mainThreadParts.set(gauge, part);
  return () => mainThreadParts.delete(gauge);
}

/** Main side: each host's last report; actors_active and HOST_GAUGES sum them at scrape. */
const lastReports = new Map<number, HostReport>();

/** Main side (the registry calls it): the gauges the hosts report read their sums at scrape. */
export function sumHostReports(): void {
  actorsActive.collect = (family) => {
    for (const series of family.series()) series.value = 0;
    for (const { actors } of lastReports.values()) for (const kind in actors) family.with(kind).value += actors[kind];
  };
  HOST_GAUGES.forEach((gauge, i) => {
    gauge.collect = (family) => {
      let sum = mainThreadParts.get(gauge)?.() ?? 0;
      for (const { gauges } of lastReports.values()) sum += gauges[i] ?? 0;
      family.with().value = sum;
    };
  });
}

/** Main side: adds one host's report to the registry. */
export function applyHostReport(host: number, report: HostReport): void {
  lastReports.set(host, report);
  actorMailboxDepth.with(String(host)).value = report.mailboxDepth;
  HOST_COUNTERS.forEach((counter, i) => {
    counter.add(report.counters[i] ?? []);
  });
  storeCommitDuration.add(report.storeCommits);
  ussdWebhookDuration.add(report.webhookDurations ?? []);
  ussdQueryDuration.add(report.queryDurations ?? []);
}

/** Main side: a host that exited holds no actors and no messages any more. */
export function forgetHost(host: number): void {
  lastReports.delete(host);
  actorMailboxDepth.with(String(host)).value = 0;
}
