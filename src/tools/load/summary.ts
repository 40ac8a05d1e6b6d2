// Thread: main
// The summary printed at the end of a run.
import type { DeploymentCost } from './deployment-cost.js';
import type { LoadReport } from './report-json.js';
import type { LatencySummary } from './recorder.js';

const row = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;
const table = (columns: string[], rows: (string | number)[][]) =>
  [row(columns), `|${columns.map(() => '---').join('|')}|`, ...rows.map(row)].join('\n');
const latencyCells = (l: LatencySummary) => [l.p50, l.p90, l.p99, l.p999, l.max].map((v) => v.toFixed(1));

export function formatSummary(report: LoadReport): string {
  const mode =
    report.mode === 'open'
      ? `open loop at ${report.rate}/s`
      : `closed loop, ${report.connections} connections (${report.driver})`;
  const out = [`\n## ${report.scenario} against ${report.target}: ${mode}, ${report.durationS.toFixed(1)} s`];
  out.push(
    table(
      ['sent', 'ok', 'errors', 'error %', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'p99.9 ms', 'max ms'],
      [
        [
          report.requests.sent,
          report.requests.ok,
          report.requests.errors,
          (report.errorRate * 100).toFixed(3),
          report.throughput.rps.toFixed(1),
          ...latencyCells(report.latencyMs),
        ],
      ],
    ),
  );
  const timings = Object.entries(report.timings);
  if (timings.length)
    out.push(
      '',
      table(
        ['timing', 'count', 'p50 ms', 'p90 ms', 'p99 ms', 'p99.9 ms', 'max ms'],
        timings.map(([name, l]) => [name, l.count, ...latencyCells(l)]),
      ),
    );
  const errors = Object.entries(report.errorsByKind);
  if (errors.length)
    out.push(
      '',
      table(
        ['error', 'count'],
        errors.sort((a, b) => b[1] - a[1]),
      ),
    );
  const counts = Object.entries(report.counts);
  if (counts.length)
    out.push(
      '',
      table(
        ['count', 'value'],
        counts.sort(([a], [b]) => a.localeCompare(b)),
      ),
    );
  if (report.capacity) {
    const { capacity } = report;
    out.push(
      '',
      `### Capacity for ${capacity.slo}: ${capacity.highestRate === null ? 'no rate tried held' : `highest rate that held ${capacity.highestRate}/s`}`,
    );
    out.push(
      table(
        ['rate/s', 'held', 'req/s', 'p50 ms', 'p99 ms', 'error %', 'broke'],
        capacity.steps.map((s) => [
          s.rate!,
          s.held ? 'yes' : 'no',
          s.throughput.rps.toFixed(1),
          s.latencyMs.p50.toFixed(1),
          s.latencyMs.p99.toFixed(1),
          (s.errorRate * 100).toFixed(3),
          s.violations.join('; ') || '-',
        ]),
      ),
    );
  }
  if (!report.capacity) {
    out.push(
      '',
      report.slo.violations.length
        ? `SLO ${report.slo.objective} broken: ${report.slo.violations.join('; ')}`
        : `SLO ${report.slo.objective} held`,
    );
  }
  for (const hint of report.hints) out.push('', `NOTE: ${hint}`);
  out.push(
    '',
    report.server.available
      ? `server metrics: ${report.server.series.length} scrapes of /metrics`
      : `server metrics unavailable: ${report.server.reason}`,
  );
  if (report.cost) out.push(...costLines(report.cost));
  return out.join('\n');
}

const ms = (value: number | null) => (value === null ? '-' : value.toFixed(3));

/** CPU per request of each process read, and their sum (shown when one figure could be read at all). */
function costLines(cost: DeploymentCost): string[] {
  if (!cost.processes.some((p) => p.cpuSeconds !== null)) return [];
  const perRequest = (seconds: number | null) =>
    seconds === null || !cost.requests ? null : (seconds * 1_000) / cost.requests;
  const nats = cost.natsMessagesPerRequest === null ? '' : `, NATS messages ${cost.natsMessagesPerRequest.toFixed(2)}`;
  return [
    '',
    `Cost per OK request (${cost.requests} requests): CPU ${ms(cost.cpuMsPerRequest)} ms in all${nats}`,
    table(
      ['process', 'kind', 'CPU s', 'CPU ms per request', 'messages per request', 'note'],
      cost.processes.map((p) => [
        p.source,
        p.kind,
        p.cpuSeconds === null ? '-' : p.cpuSeconds.toFixed(3),
        ms(perRequest(p.cpuSeconds)),
        p.messages === undefined || !cost.requests ? '-' : (p.messages / cost.requests).toFixed(2),
        p.reason ?? (p.kind === 'nats' ? 'CPU estimated from /varz cpu%, sampled each second' : '-'),
      ]),
    ),
  ];
}
