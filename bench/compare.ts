// Compares two `npm run bench -- --json` files row by row (rows matched by benchmark and name): for each, the
// figures of both runs and after / before, for throughput, p50, server CPU per operation and the ratio to the
// row's own baseline (the figure a goal is written in, and the one least moved by a busier machine).
//   node dist/bench/compare.js BEFORE.json AFTER.json
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { printMarkdownTable } from './lib/table.js';
import { fixed, type Row, type RunMeta } from './lib/report.js';

type Run = RunMeta & { rows: Row[] };

function read(path: string): Run {
  const run = JSON.parse(readFileSync(path, 'utf8')) as Run & { tool?: string };
  if (run.tool !== 'npm run bench' || !Array.isArray(run.rows))
    throw new Error(`${path} is not a file of npm run bench --json`);
  return run;
}

const change = (after: number | null | undefined, before: number | null | undefined) =>
  after == null || before == null || !Number.isFinite(after) || !Number.isFinite(before) || before === 0
    ? '-'
    : `${(after / before).toFixed(2)}x`;

/** One line per row present in both runs: before → after (after/before) for each figure. */
export function compareRuns(before: Run, after: Run): (string | number)[][] {
  const key = (r: Row) => `${r.bench}\u0000${r.name}`;
  const old = new Map(before.rows.map((r) => [key(r), r]));
  return after.rows.flatMap((r) => {
    const b = old.get(key(r));
    if (!b) return [];
    const pair = (x: number | null | undefined, y: number | null | undefined, digits: number) =>
      `${fixed(x, digits)} → ${fixed(y, digits)} (${change(y, x)})`;
    return [
      [
        `${r.bench}: ${r.name}`,
        pair(b.throughput, r.throughput, 0),
        pair(b.p50Ms, r.p50Ms, 1),
        pair(b.cpuMsPerOp, r.cpuMsPerOp, 4),
        r.ratio ? `${fixed(b.ratio?.cpu, 2)}x → ${fixed(r.ratio.cpu, 2)}x` : '-',
        r.ratio ? `${fixed(b.ratio?.throughput, 2)}x → ${fixed(r.ratio.throughput, 2)}x` : '-',
      ],
    ];
  });
}

export function main(argv: string[]): void {
  if (argv.length !== 2) throw new Error('usage: node dist/bench/compare.js BEFORE.json AFTER.json');
  const [before, after] = argv.map(read);
  console.log(
    `before: ${before.commit} ${before.date} (load ${before.loadAverage.join(' ')}); after: ${after.commit} ${after.date} (load ${after.loadAverage.join(' ')})`,
  );
  printMarkdownTable(
    'before → after',
    ['row', '/s', 'p50 ms', 'server CPU ms/op', 'CPU vs its baseline', '/s vs its baseline'],
    compareRuns(before, after),
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    main(process.argv.slice(2));
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  }
}
