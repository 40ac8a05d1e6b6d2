// Summarises the bench pairs of this folder (pair<N>-base.json, pair<N>-branch.json): the USSD durable step's CPU per
// step and per thread (main, actor host, the rest), its ratios to the bare route, and the means of each side.
import { readdirSync, readFileSync } from 'node:fs';

const dir = new URL('.', import.meta.url);
const pairs = [...new Set(readdirSync(dir).map((f) => /^pair(\d+)-/.exec(f)?.[1]).filter(Boolean))].map(Number).sort((a, b) => a - b);
const rows = [];
for (const pair of pairs) {
  for (const side of ['base', 'branch']) {
    const run = JSON.parse(readFileSync(new URL(`pair${pair}-${side}.json`, dir), 'utf8'));
    const bare = run.rows.find((r) => r.name.startsWith('bare'));
    const step = run.rows.find((r) => r.name === 'USSD durable step');
    const { mainThreadCpuMsPerOp: main, thread2CpuMsPerOp: host } = step.extra;
    rows.push({ pair, side, load: run.loadAverage[0], bare: bare.cpuMsPerOp, step: step.cpuMsPerOp, main, host, rest: step.cpuMsPerOp - main - host, cpuX: step.cpuMsPerOp / bare.cpuMsPerOp, rateX: step.throughput / bare.throughput });
  }
}
const f = (n) => n.toFixed(4);
console.log('| pair | side | load | bare ms/op | step ms/op | main | host | rest | CPU vs bare | /s vs bare |');
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.pair} | ${r.side} | ${r.load} | ${f(r.bare)} | ${f(r.step)} | ${f(r.main)} | ${f(r.host)} | ${f(r.rest)} | ${r.cpuX.toFixed(2)}x | ${r.rateX.toFixed(2)}x |`);
for (const side of ['base', 'branch']) {
  const of = rows.filter((r) => r.side === side);
  const mean = (k) => of.reduce((sum, r) => sum + r[k], 0) / of.length;
  console.log(`| mean | ${side} | | ${f(mean('bare'))} | ${f(mean('step'))} | ${f(mean('main'))} | ${f(mean('host'))} | ${f(mean('rest'))} | ${mean('cpuX').toFixed(2)}x | ${mean('rateX').toFixed(2)}x |`);
}
const wins = pairs.filter((p) => rows.find((r) => r.pair === p && r.side === 'branch').step < rows.find((r) => r.pair === p && r.side === 'base').step).length;
console.log(`\nbranch step CPU lower in ${wins} of ${pairs.length} pairs`);
