// Thread: any
// Metric families whose labelled series are created once and then updated by a plain addition. prom-client's
// labelled children hash their label object on every inc/observe (a new string per call); on the request path we
// keep the series object instead. prom-client still writes the exposition (its Registry accepts any object with a
// name and get()) and collects the default process metrics.

export type Labels = Readonly<Record<string, string>>;
type MetricType = 'counter' | 'gauge' | 'histogram';

/** What prom-client's Registry reads of a metric. */
interface MetricData {
  name: string;
  help: string;
  type: MetricType;
  values: { labels: Labels; value: number; metricName?: string }[];
  aggregator: 'sum';
}

/** One labelled counter or gauge value. */
export class Series {
  value = 0;
  constructor(readonly labels: Labels) {}
  inc(by = 1): void {
    this.value += by;
  }
  dec(by = 1): void {
    this.value -= by;
  }
}

/** One labelled histogram: counts per bucket (not cumulative; the last one is +Inf), sum and count. */
export class HistogramSeries {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(
    readonly labels: Labels,
    readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]) i++;
    this.counts[i]++;
    this.sum += value;
    this.count++;
  }

  /** Adds what another thread observed (see take()). */
  add(counts: ArrayLike<number>, sum: number, count: number): void {
    for (let i = 0; i < this.counts.length; i++) this.counts[i] += counts[i] ?? 0;
    this.sum += sum;
    this.count += count;
  }
}

abstract class Family<S extends { labels: Labels }> {
  readonly #series = new Map<string, S>();
  abstract readonly type: MetricType;

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[] = [],
  ) {}

  /** The series for these label values (in labelNames order), created on first use: keep it, don't ask per event. */
  with(...values: string[]): S {
    const key = values.join('\u0000');
    let series = this.#series.get(key);
    if (!series) {
      if (values.length !== this.labelNames.length)
        throw new TypeError(`${this.name} takes labels ${this.labelNames.join(', ')}`);
      const labels: Record<string, string> = {};
      this.labelNames.forEach((name, i) => {
        labels[name] = values[i];
      });
      series = this.create(labels);
      this.#series.set(key, series);
    }
    return series;
  }

  series(): IterableIterator<S> {
    return this.#series.values();
  }

  protected abstract create(labels: Labels): S;
  protected abstract values(): MetricData['values'];

  /** Called by prom-client's Registry at each scrape. */
  get(): MetricData {
    return { name: this.name, help: this.help, type: this.type, values: this.values(), aggregator: 'sum' };
  }
}

/** A counter; on an actor host, take() hands the increments since the last call to the main thread. */
export class CounterFamily extends Family<Series> {
  readonly type = 'counter';

  protected create(labels: Labels): Series {
    return new Series(labels);
  }

  protected values() {
    return [...this.series()];
  }

  /** The label values and increments since the last take(), zeroing them (worker side). */
  take(): [string[], number][] {
    const taken: [string[], number][] = [];
    for (const series of this.series()) {
      if (series.value === 0) continue;
      taken.push([this.labelNames.map((name) => series.labels[name]), series.value]);
      series.value = 0;
    }
    return taken;
  }

  add(taken: [string[], number][]): void {
    for (const [values, by] of taken) this.with(...values).inc(by);
  }
}

/** A gauge; `collect` (when given) sets its values at each scrape. */
export class GaugeFamily extends Family<Series> {
  readonly type = 'gauge';
  collect?: (family: GaugeFamily) => void;

  protected create(labels: Labels): Series {
    return new Series(labels);
  }

  protected values() {
    this.collect?.(this);
    return [...this.series()];
  }
}

export type TakenHistogram = [string[], number[], number, number][];

export class HistogramFamily extends Family<HistogramSeries> {
  readonly type = 'histogram';

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    readonly bounds: readonly number[],
  ) {
    super(name, help, labelNames);
  }

  protected create(labels: Labels): HistogramSeries {
    return new HistogramSeries(labels, this.bounds);
  }

  protected values() {
    const values: MetricData['values'] = [];
    for (const series of this.series()) {
      let cumulative = 0;
      for (let i = 0; i <= this.bounds.length; i++) {
        cumulative += series.counts[i];
        const le = i < this.bounds.length ? String(this.bounds[i]) : '+Inf';
        values.push({ labels: { ...series.labels, le }, value: cumulative, metricName: `${this.name}_bucket` });
      }
      values.push({ labels: series.labels, value: series.sum, metricName: `${this.name}_sum` });
      values.push({ labels: series.labels, value: series.count, metricName: `${this.name}_count` });
    }
    return values;
  }

  /** Label values, bucket counts, sum and count observed since the last take(), zeroing them (worker side). */
  take(): TakenHistogram {
    const taken: TakenHistogram = [];
    for (const series of this.series()) {
      if (series.count === 0) continue;
      taken.push([this.labelNames.map((name) => series.labels[name]), [...series.counts], series.sum, series.count]);
      series.counts.fill(0);
      series.sum = 0;
      series.count = 0;
    }
    return taken;
  }

  add(taken: TakenHistogram): void {
    for (const [values, counts, sum, count] of taken) this.with(...values).add(counts, sum, count);
  }
}
