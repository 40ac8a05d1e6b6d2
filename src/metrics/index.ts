// Prometheus metrics: the families (catalogue.ts), the front door's per-request observer, the actor hosts'
// reports, LMDB commit timing and the /metrics route.
export * from './catalogue.js';
export { observeRequest } from './http.js';
export { observeUpstream } from './upstream.js';
export { applyHostReport, forgetHost, reportHostMetrics, type HostLoad, type HostReport } from './host-report.js';
export { metricsEnv } from './config.js';
export { metricsRegistry } from './registry.js';
export { METRICS_PATH, registerMetricsRoute } from './route.js';
export { timeStoreCommits } from './store.js';
