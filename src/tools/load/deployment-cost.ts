// Thread: main
// What the load cost the deployment: CPU per request of every process named (the target and any other server
// whose /metrics it may read, e.g. the other nodes of a cluster, and the NATS servers' monitoring endpoints) and
// NATS messages per request, so that a cluster's cost per step can be measured on the real machines
// (docs/cluster.md, "Capacity model").
// - A server's CPU is exact: process_cpu_seconds_total (every thread of the process) before and after the run.
// - A NATS server has no CPU counter, only /varz's `cpu`, a percentage it recomputes about once a second from its
//   own /proc/<pid>/stat over whole seconds. It is read every second and summed over the time between reads: an
//   estimate, within a tenth of /proc's figure on runs of 10 s, coarse on runs of a few seconds.
//   Its messages are exact: in_msgs + out_msgs (clients' and routes' alike) before and after.
import { HttpClient } from './http.js';
import { parsePrometheus } from './server-metrics.js';

export interface ProcessCost {
  /** The URL it was read from. */
  source: string;
  kind: 'server' | 'nats';
  /** CPU seconds it spent during the run; null when it could not be read (`reason`). */
  cpuSeconds: number | null;
  /** NATS servers: messages in + out during the run. */
  messages?: number;
  reason?: string;
}

export interface DeploymentCost {
  /** The requests answered OK during the run, every capacity step together: the figures below divide by it. */
  requests: number;
  processes: ProcessCost[];
  /** CPU per request summed over every process, in ms; null when one process could not be read. */
  cpuMsPerRequest: number | null;
  /** NATS messages (in + out, every server) per request; null without NATS servers or when one could not be read. */
  natsMessagesPerRequest: number | null;
}

interface Varz {
  cpu: number;
  in_msgs: number;
  out_msgs: number;
}

interface Reading {
  cpuSeconds: number;
  messages: number;
}

/** One process to read: its first and last readings, and why the last read failed (a later one may succeed). */
interface Source {
  url: string;
  kind: ProcessCost['kind'];
  client: HttpClient;
  first?: Reading;
  last?: Reading;
  error?: string;
  /** The read in flight, if any. */
  reading?: Promise<void>;
  /** NATS: cpu% x seconds summed since the first read, and when it was last read. */
  integrated?: { cpuSeconds: number; at: number };
}

const SAMPLE_MS = 1_000;
const READ_TIMEOUT_MS = 2_000;

export class DeploymentCostMeter {
  readonly #sources: Source[];
  #timer: NodeJS.Timeout | undefined;

  /** `servers`: origins whose `metricsPath` is read (the target first); `nats`: monitoring URLs (port 8222). */
  constructor(
    servers: URL[],
    nats: URL[],
    private readonly metricsPath: string,
    private readonly token: string | undefined,
  ) {
    const sourceOf = (kind: ProcessCost['kind']) => (url: URL) => ({
      url: url.origin,
      kind,
      client: new HttpClient(url, READ_TIMEOUT_MS),
    });
    this.#sources = [...servers.map(sourceOf('server')), ...nats.map(sourceOf('nats'))];
  }

  /** Takes the first reading of every source, then samples the NATS servers' CPU every second until `stop`. */
  async start(): Promise<void> {
    await Promise.all(this.#sources.map((source) => this.#read(source)));
    if (this.#sources.some((source) => source.kind === 'nats'))
      this.#timer = setInterval(() => {
        for (const source of this.#sources) if (source.kind === 'nats') void this.#read(source);
      }, SAMPLE_MS);
  }

  /** The last reading of every source, and the cost per request of `requests` answered OK. */
  async stop(requests: number): Promise<DeploymentCost> {
    clearInterval(this.#timer);
    const servers = this.#sources.filter((source) => source.kind === 'server');
    const natsServers = this.#sources.filter((source) => source.kind === 'nats');
    await Promise.all(servers.map((source) => this.#read(source)));
    // A NATS server's cpu% describes the second before it was computed, so the sum lags the load by up to a
    // second: one more sample after the run takes in its last second (and a second of rest, which costs little).
    if (natsServers.length) await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS + 100));
    await Promise.all(natsServers.map((source) => this.#read(source)));
    for (const source of this.#sources) source.client.close();
    const processes = this.#sources.map(costOf);
    const perRequest = (values: (number | null | undefined)[], scale: number) =>
      requests > 0 && values.length > 0 && values.every((v) => typeof v === 'number')
        ? ((values as number[]).reduce((a, b) => a + b, 0) * scale) / requests
        : null;
    const nats = processes.filter((p) => p.kind === 'nats');
    return {
      requests,
      processes,
      cpuMsPerRequest: perRequest(
        processes.map((p) => p.cpuSeconds),
        1_000,
      ),
      natsMessagesPerRequest: perRequest(
        nats.map((p) => (p.reason ? null : p.messages)),
        1,
      ),
    };
  }

  /** Reads `source` after any read of it still in flight (a NATS sample), so that readings stay in order. */
  #read(source: Source): Promise<void> {
    source.reading = (source.reading ?? Promise.resolve()).then(() => this.#readNow(source));
    return source.reading;
  }

  async #readNow(source: Source): Promise<void> {
    try {
      const reading = source.kind === 'server' ? await this.#server(source) : await nats(source);
      source.first ??= reading;
      source.last = reading;
      source.error = undefined;
    } catch (error) {
      // A NATS sample missed mid-run only widens the next one's interval; a first or last read missed is reported.
      source.error = (error as Error).message;
    }
  }

  async #server(source: Source): Promise<Reading> {
    const headers: Record<string, string> = this.token ? { authorization: `Bearer ${this.token}` } : {};
    const answer = await source.client.request('GET', this.metricsPath, { headers });
    if (answer.status === 401 || answer.status === 403)
      throw new Error(
        `GET ${this.metricsPath} answered ${answer.status}: pass the OPERATOR_TOKEN with --metrics-token`,
      );
    if (answer.status !== 200) throw new Error(`GET ${this.metricsPath} answered ${answer.status}`);
    const cpu = parsePrometheus(answer.body).find((sample) => sample.name === 'process_cpu_seconds_total');
    if (!cpu) throw new Error(`GET ${this.metricsPath} has no process_cpu_seconds_total`);
    return { cpuSeconds: cpu.value, messages: 0 };
  }
}

/** A NATS server's reading: its messages so far, and its CPU summed as cpu% times the time since the last read. */
async function nats(source: Source): Promise<Reading> {
  const answer = await source.client.request('GET', '/varz');
  const now = performance.now();
  if (answer.status !== 200) throw new Error(`GET /varz answered ${answer.status}`);
  let varz: Partial<Varz> | undefined;
  try {
    varz = JSON.parse(answer.body) as Partial<Varz>;
  } catch {}
  if (!varz || typeof varz.cpu !== 'number' || typeof varz.in_msgs !== 'number' || typeof varz.out_msgs !== 'number')
    throw new Error('GET /varz has no cpu, in_msgs and out_msgs: is this a NATS monitoring port?');
  const integrated = source.integrated ?? { cpuSeconds: 0, at: now };
  integrated.cpuSeconds += (varz.cpu / 100) * ((now - integrated.at) / 1_000);
  integrated.at = now;
  source.integrated = integrated;
  return { cpuSeconds: integrated.cpuSeconds, messages: varz.in_msgs + varz.out_msgs };
}

function costOf({ url: source, kind, first, last, error }: Source): ProcessCost {
  if (error || !first || !last) return { source, kind, cpuSeconds: null, reason: error ?? 'not read' };
  const cpuSeconds = Math.max(0, last.cpuSeconds - first.cpuSeconds);
  return kind === 'nats'
    ? { source, kind, cpuSeconds, messages: last.messages - first.messages }
    : { source, kind, cpuSeconds };
}
