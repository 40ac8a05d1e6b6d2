// Reading /metrics in tests: promtool (Prometheus's own checker) judges the format; the small parser below reads
// the samples. (parse-prometheus-text-format was tried: it merges the series of a labelled histogram into one.)
import { spawnSync } from 'node:child_process';
import { ensureSystemTool } from './system-tools.js';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** `name{a="x",b="y\"z"} 1.5` (no timestamps: prom-client writes none). */
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/gy;

function parseSample(line: string): Sample {
  const match = SAMPLE.exec(line);
  if (!match) throw new Error(`not a sample line: ${line}`);
  const labels: Record<string, string> = {};
  const text = match[2] ?? '';
  LABEL.lastIndex = 0;
  let read = 0;
  for (let label: RegExpExecArray | null; (label = LABEL.exec(text)); read = LABEL.lastIndex) {
    labels[label[1]] = label[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  }
  if (read !== text.length) throw new Error(`malformed labels: ${line}`);
  const value = match[3] === '+Inf' ? Infinity : match[3] === '-Inf' ? -Infinity : Number(match[3]);
  // prom-client writes NaN as `Nan`; Prometheus reads it case-insensitively.
  if (Number.isNaN(value) && !/^nan$/i.test(match[3])) throw new Error(`malformed value: ${line}`);
  return { name: match[1], labels, value };
}

/** One scrape, parsed. Values are looked up by sample name and a subset of the labels. */
export class Scrape {
  readonly samples: Sample[] = [];
  /** Family name -> TYPE. */
  readonly types = new Map<string, string>();

  constructor(readonly text: string) {
    for (const line of text.split('\n')) {
      if (line === '' || line.startsWith('# HELP ')) continue;
      if (line.startsWith('# TYPE ')) {
        const [name, type] = line.slice(7).split(' ');
        this.types.set(name, type);
      } else {
        this.samples.push(parseSample(line));
      }
    }
  }

  /** Sum of the samples named `name` whose labels include `labels` (0 when none does). */
  value(name: string, labels: Record<string, string> = {}): number {
    if (!this.types.has(name)) throw new Error(`no metric ${name} in the scrape`);
    return this.#sum(name, labels);
  }

  #sum(name: string, labels: Record<string, string>): number {
    let sum = 0;
    for (const sample of this.samples) {
      if (sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
        sum += sample.value;
    }
    return sum;
  }

  /** Observation count of the histogram series whose labels include `labels`. */
  count(name: string, labels: Record<string, string> = {}): number {
    if (this.types.get(name) !== 'histogram') throw new Error(`${name} is not a histogram`);
    return this.#sum(`${name}_count`, labels);
  }
}

export async function scrape(url: string, headers: Record<string, string> = {}): Promise<Scrape> {
  const res = await fetch(`${url}/metrics`, { headers });
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}: ${await res.text()}`);
  return new Scrape(await res.text());
}

/**
 * `promtool check metrics` on an exposition: its exit status (0 clean, 3 lint problems, 1 unparsable) and the
 * problems it names, one per line.
 */
export function promtoolCheck(text: string): { status: number | null; problems: string[] } {
  const promtool = ensureSystemTool('promtool', 'prometheus');
  const run = spawnSync(promtool, ['check', 'metrics'], { input: text, encoding: 'utf8', timeout: 30_000 });
  const problems = `${run.stdout}${run.stderr}`.split('\n').filter(Boolean);
  return { status: run.status, problems };
}
