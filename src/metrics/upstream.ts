// Thread: main
// gateway_upstream_duration_seconds: one series per gRPC path and status, found with two Map lookups per call
// (paths come from the descriptors, so they are bounded).
import { gatewayUpstreamDuration } from './catalogue.js';
import type { HistogramSeries } from './families.js';

const byPath = new Map<string, Map<string, HistogramSeries>>();

/** One finished upstream call: its gRPC path (`/pkg.Service/Method`), status name (`OK`, `NOT_FOUND`...) and duration. */
export function observeUpstream(path: string, code: string, seconds: number): void {
  let byCode = byPath.get(path);
  if (!byCode) byPath.set(path, (byCode = new Map()));
  let series = byCode.get(code);
  if (!series) {
    const slash = path.lastIndexOf('/');
    byCode.set(code, (series = gatewayUpstreamDuration.with(path.slice(1, slash), path.slice(slash + 1), code)));
  }
  series.observe(seconds);
}
