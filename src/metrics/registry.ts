// Thread: main
// The process's Prometheus registry: our families (catalogue.ts) plus prom-client's default process and
// event-loop metrics. Built on first use, once per process (the default metrics start a timer of their own), on the
// main thread only.
import { collectDefaultMetrics, Registry, type Metric } from 'prom-client';
import { ALL_FAMILIES } from './catalogue.js';
import { sumHostReports } from './host-report.js';

let registry: Registry | undefined;

const DEFAULTS_NAMED_LIKE_COUNTERS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

export function metricsRegistry(): Registry {
  if (!registry) {
    registry = new Registry();
    sumHostReports();
    for (const family of ALL_FAMILIES) registry.registerMetric(family as unknown as Metric);
    collectDefaultMetrics({ register: registry });
    // Gauges named like counters, which promtool refuses (`promtool check metrics` exits 3); the same counts stay
    // by type in nodejs_active_handles, nodejs_active_requests and nodejs_active_resources.
    for (const name of DEFAULTS_NAMED_LIKE_COUNTERS) registry.removeSingleMetric(name);
  }
  return registry;
}
