// Thread: main
// The --html report: one self-contained file (uPlot and the data inlined; nothing is fetched when it is opened)
// with throughput and latency over time, the latency distribution, errors over time, the rate-vs-latency curve
// of a capacity search and the server's CPU, memory and mailbox depth from /metrics.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { LoadReport } from './report-json.js';

const require = createRequire(import.meta.url);
const asset = (path: string) => readFileSync(require.resolve(path), 'utf8');

/** Text safe inside a <script> element. */
const scriptSafe = (text: string) => text.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');

// Runs in the browser: draws every chart from REPORT with uPlot and lists them in window.charts (for tests).
const CLIENT = `
const R = REPORT;
const COLORS = { a: '#1f77b4', b: '#d62728', c: '#2ca02c', d: '#9467bd' };
window.charts = [];
function chart(id, title, xLabel, series, data, extra = {}) {
  const box = document.createElement('section');
  box.className = 'chart';
  box.id = id;
  box.innerHTML = '<h2></h2>';
  box.querySelector('h2').textContent = title;
  document.getElementById('charts').append(box);
  const points = data[0].length;
  if (!points) {
    box.insertAdjacentHTML('beforeend', '<p class="note">no data</p>');
    return;
  }
  const plot = new uPlot({
    width: 860, height: 260,
    scales: { x: { time: false } },
    axes: [{ label: xLabel, ...(extra.xAxis || {}) }, { label: series[0].unit || '' }],
    series: [{ label: xLabel, ...(extra.xSeries || {}) }, ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2, points: { show: points < 40 } }))],
  }, data, box);
  window.charts.push({ id, points, colors: series.map((s) => s.color), plot });
}

// Over time: a capacity search concatenates its steps on one time line.
const runs = R.capacity ? R.capacity.steps : [R];
const timeline = runs.flatMap((run) => run.series.map((p) => ({ ...p, t: +(run.startOffsetS + p.t).toFixed(3), target: run.rate ?? null })));
const col = (key) => timeline.map((p) => p[key]);
const t = col('t');
const throughput = [{ label: 'answered req/s', color: COLORS.a, unit: 'req/s' }];
const throughputData = [t, col('rps')];
if (timeline.some((p) => p.target !== null)) {
  throughput.push({ label: 'target journeys/s', color: COLORS.c });
  throughputData.push(col('target'));
}
chart('throughput', 'Throughput over time', 's', throughput, throughputData);
chart('latency', 'Latency percentiles over time (each second)', 's', [{ label: 'p50 ms', color: COLORS.a, unit: 'ms' }, { label: 'p99 ms', color: COLORS.b }], [t, col('p50'), col('p99')]);

// Distribution: x is -log10(1 - p), so 90%, 99%, 99.9% ... are evenly spaced.
const dist = R.distribution.filter((d) => d.percentile < 100);
const toPct = (x) => (100 * (1 - Math.pow(10, -x))).toFixed(Math.max(0, Math.ceil(x) - 2)) + '%';
chart('distribution', 'Latency distribution (by percentile; max ' + R.latencyMs.max + ' ms)', 'percentile',
  [{ label: 'latency ms', color: COLORS.b, unit: 'ms' }],
  [dist.map((d) => -Math.log10(1 - d.percentile / 100)), dist.map((d) => d.ms)],
  { xAxis: { splits: () => [0, 1, 2, 3, 4, 5], values: (u, splits) => splits.map(toPct) }, xSeries: { value: (u, x) => x == null ? '' : toPct(x) } });
chart('errors', 'Errors over time', 's', [{ label: 'errors/s', color: COLORS.b, unit: 'errors' }], [t, col('errors')]);

if (R.capacity) {
  const steps = [...R.capacity.steps].sort((a, b) => a.rate - b.rate);
  chart('capacity', 'Rate vs latency (capacity search, ' + R.capacity.slo + ')', 'journeys/s',
    [{ label: 'p50 ms', color: COLORS.a, unit: 'ms' }, { label: 'p99 ms', color: COLORS.b }],
    [steps.map((s) => s.rate), steps.map((s) => s.latencyMs.p50), steps.map((s) => s.latencyMs.p99)]);
}

if (R.server.available) {
  const s = R.server.series;
  const st = s.map((p) => p.t);
  chart('server-cpu', 'Server CPU (% of one core)', 's', [{ label: 'CPU %', color: COLORS.d, unit: '%' }], [st, s.map((p) => p.cpuPercent)]);
  chart('server-rss', 'Server resident memory (MiB)', 's', [{ label: 'RSS MiB', color: COLORS.c, unit: 'MiB' }], [st, s.map((p) => p.rssBytes == null ? null : +(p.rssBytes / 1048576).toFixed(1))]);
  chart('server-mailbox', 'Actor mailbox depth (all hosts)', 's', [{ label: 'messages waiting', color: COLORS.b, unit: 'messages' }], [st, s.map((p) => p.mailboxDepth)]);
} else {
  document.getElementById('charts').insertAdjacentHTML('beforeend', '<section class="chart" id="server-unavailable"><h2>Server</h2><p class="note"></p></section>');
  document.querySelector('#server-unavailable .note').textContent = 'server metrics unavailable: ' + R.server.reason;
}
document.body.dataset.ready = 'true';
`;

const escapeHtml = (s: string | number) =>
  String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
const table = (columns: string[], rows: (string | number)[][]) =>
  `<table><tr>${columns.map((c) => `<th>${escapeHtml(c)}</th>`).join('')}</tr>${rows.map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`).join('')}</table>`;

/** The SLO verdict on top, flagged when it broke (an error rate over the objective first of all), and the hints. */
function verdict(report: LoadReport): string[] {
  const lines: string[] = [];
  const { objective, violations } = report.slo;
  if (violations.length)
    lines.push(
      `<p class="note slo-broken"><strong>Over the SLO (${escapeHtml(objective)}):</strong> ${escapeHtml(violations.join('; '))}</p>`,
    );
  else lines.push(`<p class="slo-held">Within the SLO (${escapeHtml(objective)}).</p>`);
  for (const hint of report.hints) lines.push(`<p class="note hint">${escapeHtml(hint)}</p>`);
  return lines;
}

function tables(report: LoadReport): string {
  const l = report.latencyMs;
  const mode =
    report.mode === 'open'
      ? `open loop at ${report.rate}/s (latency from each scheduled start)`
      : `closed loop, ${report.connections} connections (latency from each send)`;
  const parts = [
    ...verdict(report),
    `<p>${escapeHtml(report.scenario)} against ${escapeHtml(report.target)}, ${escapeHtml(mode)}, ${report.durationS.toFixed(1)} s, started ${escapeHtml(report.startedAt)}</p>`,
    table(
      ['sent', 'ok', 'errors', 'error %', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'p99.9 ms', 'max ms'],
      [
        [
          report.requests.sent,
          report.requests.ok,
          report.requests.errors,
          (report.errorRate * 100).toFixed(3),
          report.throughput.rps,
          l.p50,
          l.p90,
          l.p99,
          l.p999,
          l.max,
        ],
      ],
    ),
  ];
  const timings = Object.entries(report.timings);
  if (timings.length)
    parts.push(
      table(
        ['timing', 'count', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
        timings.map(([n, t]) => [n, t.count, t.p50, t.p90, t.p99, t.max]),
      ),
    );
  const errors = Object.entries(report.errorsByKind);
  if (errors.length) parts.push(table(['error', 'count'], errors));
  const counts = Object.entries(report.counts);
  if (counts.length) parts.push(table(['count', 'value'], counts));
  if (report.capacity) {
    parts.push(
      `<h2>Capacity for ${escapeHtml(report.capacity.slo)}: ${report.capacity.highestRate === null ? 'no rate tried held' : `${report.capacity.highestRate}/s held`}</h2>`,
    );
    parts.push(
      table(
        ['rate/s', 'held', 'req/s', 'p50 ms', 'p99 ms', 'error %', 'broke'],
        report.capacity.steps.map((s) => [
          s.rate!,
          s.held ? 'yes' : 'no',
          s.throughput.rps,
          s.latencyMs.p50,
          s.latencyMs.p99,
          (s.errorRate * 100).toFixed(3),
          s.violations.join('; ') || '-',
        ]),
      ),
    );
  }
  return parts.join('\n');
}

export function renderHtml(report: LoadReport): string {
  const data = JSON.stringify(report).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Load report: ${escapeHtml(report.scenario)} ${escapeHtml(report.target)}</title>
<style>${asset('uplot/dist/uPlot.min.css')}
body { font: 14px system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; } td, th { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
.chart { margin: 1.5em 0; } .note { color: #a33; } .slo-broken { border: 2px solid #a33; padding: 0.5em; background: #fdecea; } h2 { font-size: 1.1em; }</style></head>
<body><h1>Load report</h1>
${tables(report)}
<div id="charts"></div>
<script>${scriptSafe(asset('uplot/dist/uPlot.iife.min.js'))}</script>
<script>const REPORT = ${data};
${scriptSafe(CLIENT)}</script>
</body></html>
`;
}

export function writeHtml(path: string, report: LoadReport): void {
  writeFileSync(path, renderHtml(report));
}
