// The process's Prometheus registry: our families (catalogue.ts) plus prom-client's default process and
// event-loop metrics. Built on first use, once per process (the default metrics start a timer of their own), on the
// main thread only.
import { collectDefaultMetrics, Registry, type Metric } from 'prom-client';
import { ALL_FAMILIES } from './catalogue.js';
import { sumHostReports } from './host-report.js';

let registry: Registry | undefined;

export function metricsRegistry(): Registry {
  if (!registry) {
    registry = new Registry();
    sumHostReports();
    for (const family of ALL_FAMILIES) registry.registerMetric(family as unknown as Metric);
    collectDefaultMetrics({ register: registry });
  }
  return registry;
}
