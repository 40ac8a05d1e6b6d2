// Thread: main
// Per-request metrics of the front door. A request costs two Map lookups and a few additions: the series of a
// (route, method, status) are looked up once and kept, never rebuilt from label objects per request.
import { httpRequestDuration, httpRequests } from './catalogue.js';
import type { HistogramSeries, Series } from './families.js';

interface RouteLike {
  readonly pattern: string;
}

/** Method labels outside this set (uWS's catch-all accepts any token) are reported as OTHER, to bound them. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

class RouteSeries {
  readonly byStatus = new Map<number, Series>();
  readonly duration: HistogramSeries;

  constructor(
    readonly pattern: string,
    readonly method: string,
  ) {
    this.duration = httpRequestDuration.with(pattern, method);
  }

  answered(status: number, seconds: number): void {
    let requests = this.byStatus.get(status);
    if (!requests) this.byStatus.set(status, (requests = httpRequests.with(this.pattern, this.method, String(status))));
    requests.value++;
    this.duration.observe(seconds);
  }
}

const byRoute = new Map<RouteLike, Map<string, RouteSeries>>();

/** One answered request: its route as declared (the pattern), its method, its status and its duration. */
export function observeRequest(route: RouteLike, method: string, status: number, seconds: number): void {
  let byMethod = byRoute.get(route);
  if (!byMethod) byRoute.set(route, (byMethod = new Map()));
  const label = METHODS.has(method) ? method : 'OTHER';
  let series = byMethod.get(label);
  if (!series) byMethod.set(label, (series = new RouteSeries(route.pattern, label)));
  series.answered(status, seconds);
}
