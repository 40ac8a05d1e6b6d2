// Reading the server's Prometheus text (GET /metrics) and turning two consecutive scrapes into the figures the
// dashboard plots. Hand-written because only a few lines of the exposition format are needed (samples with
// labels; no exemplars, no timestamps used), and the maintained parsers are Node-only or far larger.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
const SPECIAL: Record<string, number> = { '+Inf': Infinity, '-Inf': -Infinity, NaN: NaN };

export function parsePrometheusText(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(LABEL)) {
      labels[name] = value.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    samples.push({ name: match[1], labels, value: match[3] in SPECIAL ? SPECIAL[match[3]] : Number(match[3]) });
  }
  return samples;
}

/** One scrape, reduced to what the dashboard needs. */
export interface Scrape {
  at: number;
  requests: number;
  /** Cumulative request counts per bucket bound (seconds), summed over routes. */
  buckets: Map<number, number>;
  ussdSessions: number;
  sseStreams: number;
  sockets: number;
  actors: number;
  mailboxDepth: number;
}

/** The dashboard polls /metrics itself: its own requests are left out of the traffic it shows. */
const OWN_ROUTE = '/metrics';

type GaugeField = 'ussdSessions' | 'sseStreams' | 'sockets' | 'actors' | 'mailboxDepth';
/** Gauges shown as totals over their labels (actors of every kind, mailboxes of every host, both transports). */
const GAUGES: Record<string, GaugeField> = {
  ussd_sessions_active: 'ussdSessions',
  sse_streams_active: 'sseStreams',
  ws_connections_active: 'sockets',
  actors_active: 'actors',
  actor_mailbox_depth: 'mailboxDepth',
};

export function reduceScrape(samples: Sample[], at: number): Scrape {
  const scrape: Scrape = {
    at,
    requests: 0,
    buckets: new Map(),
    ussdSessions: 0,
    sseStreams: 0,
    sockets: 0,
    actors: 0,
    mailboxDepth: 0,
  };
  for (const { name, labels, value } of samples) {
    if (labels.route === OWN_ROUTE) continue;
    if (name === 'http_requests_total') scrape.requests += value;
    else if (name === 'http_request_duration_seconds_bucket') {
      const bound = labels.le === '+Inf' ? Infinity : Number(labels.le);
      scrape.buckets.set(bound, (scrape.buckets.get(bound) ?? 0) + value);
    } else if (Object.hasOwn(GAUGES, name)) scrape[GAUGES[name]] += value;
  }
  return scrape;
}

/**
 * The q-quantile of the requests between two scrapes, from the bucket counts' increase, interpolated linearly
 * inside the bucket as Prometheus' histogram_quantile does; null when no request completed in between.
 */
export function quantile(q: number, before: Map<number, number>, after: Map<number, number>): number | null {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((bound) => Math.max(0, (after.get(bound) ?? 0) - (before.get(bound) ?? 0)));
  const total = counts.at(-1) ?? 0;
  if (total === 0) return null;
  const rank = q * total;
  for (let i = 0; i < bounds.length; i++) {
    if (counts[i] < rank) continue;
    const upper = bounds[i];
    const lower = i === 0 ? 0 : bounds[i - 1];
    // Past the last finite bound nothing is known but "slower than it": answer that bound.
    if (upper === Infinity) return lower;
    const below = i === 0 ? 0 : counts[i - 1];
    const inBucket = counts[i] - below;
    return inBucket === 0 ? upper : lower + (upper - lower) * ((rank - below) / inBucket);
  }
  return bounds.at(-1) ?? null;
}

export interface Figures {
  requestsPerSecond: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

/** Rates and latency percentiles between two scrapes (a counter that went down means a restart: start over). */
export function figuresBetween(before: Scrape, after: Scrape): Figures {
  const seconds = Math.max(0.001, (after.at - before.at) / 1000);
  const restarted = after.requests < before.requests;
  const previous = restarted ? new Map<number, number>() : before.buckets;
  return {
    requestsPerSecond: (restarted ? after.requests : after.requests - before.requests) / seconds,
    p50: quantile(0.5, previous, after.buckets),
    p95: quantile(0.95, previous, after.buckets),
    p99: quantile(0.99, previous, after.buckets),
  };
}
