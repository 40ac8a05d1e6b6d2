// Thread: main
// Server-side figures during a run, scraped from the target's Prometheus /metrics once a second: CPU (from
// process_cpu_seconds_total), resident memory and the actors' mailbox depth (actor_mailbox_depth, by host).
// Only three families are read, so a few lines of parsing do instead of a Prometheus client.
import type { HttpClient } from './http.js';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface ServerPoint {
  /** Seconds since the load started. */
  t: number;
  /** CPU of the whole server process since the previous scrape, in percent of one core. */
  cpuPercent: number | null;
  rssBytes: number | null;
  /** Sum over the hosts, and each host's depth. */
  mailboxDepth: number | null;
  mailboxByHost: Record<string, number>;
}

export interface ServerMetrics {
  available: boolean;
  /** Why not, when unavailable ("server metrics unavailable: ..."). */
  reason?: string;
  series: ServerPoint[];
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Samples of a Prometheus text exposition (comments and malformed lines skipped). */
export function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = LINE.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(LABEL))
      labels[key] = value.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    const value = Number(match[3]);
    if (!Number.isNaN(value)) samples.push({ name: match[1], labels, value });
  }
  return samples;
}

export class MetricsScraper {
  readonly result: ServerMetrics = { available: false, series: [] };
  private timer: NodeJS.Timeout | undefined;
  private previousCpu: { seconds: number; at: number } | undefined;
  /** `origin`: the performance.now() time the series' `t` counts from. */
  constructor(
    private readonly client: HttpClient,
    private readonly path: string,
    private readonly token: string | undefined,
    private readonly origin: number,
  ) {}

  /** The first scrape says whether the server has metrics; then one a second until `stop`. */
  async start(): Promise<ServerMetrics> {
    const first = await this.scrape();
    if (first !== true) {
      this.result.reason = first;
      return this.result;
    }
    this.result.available = true;
    this.timer = setInterval(() => void this.scrape(), 1000);
    return this.result;
  }

  async stop(): Promise<ServerMetrics> {
    clearInterval(this.timer);
    if (this.result.available) await this.scrape();
    return this.result;
  }

  /** true, or why the metrics cannot be read. */
  private async scrape(): Promise<true | string> {
    let answer: Awaited<ReturnType<typeof this.client.request>>;
    try {
      answer = await this.client.request('GET', this.path, {
        headers: this.token ? { authorization: `Bearer ${this.token}` } : {},
      });
    } catch (error) {
      return `GET ${this.path} failed: ${(error as Error).message}`;
    }
    if (answer.status === 404) return `GET ${this.path} answered 404 (this server has no /metrics)`;
    if (answer.status === 401 || answer.status === 403)
      return `GET ${this.path} answered ${answer.status}: pass the server's OPERATOR_TOKEN with --metrics-token`;
    if (answer.status !== 200) return `GET ${this.path} answered ${answer.status}`;
    this.record(parsePrometheus(answer.body));
    return true;
  }

  private record(samples: Sample[]): void {
    const now = performance.now();
    const one = (name: string) => samples.find((s) => s.name === name)?.value ?? null;
    const cpuSeconds = one('process_cpu_seconds_total');
    let cpuPercent: number | null = null;
    if (cpuSeconds !== null && this.previousCpu) {
      cpuPercent =
        Math.round(
          Math.max(0, ((cpuSeconds - this.previousCpu.seconds) / ((now - this.previousCpu.at) / 1000)) * 1000),
        ) / 10;
    }
    if (cpuSeconds !== null) this.previousCpu = { seconds: cpuSeconds, at: now };
    const mailboxes = samples.filter((s) => s.name === 'actor_mailbox_depth');
    const mailboxByHost = Object.fromEntries(mailboxes.map((s) => [s.labels.host ?? '', s.value]));
    this.result.series.push({
      t: Math.round((now - this.origin) / 100) / 10,
      cpuPercent,
      rssBytes: one('process_resident_memory_bytes'),
      mailboxDepth: mailboxes.length ? mailboxes.reduce((sum, s) => sum + s.value, 0) : null,
      mailboxByHost,
    });
  }
}
