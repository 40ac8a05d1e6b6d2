// node diag.mjs ROOT [seconds] : starts ROOT's server, warms 1 s, measures N s of USSD, prints per-thread CPU and wake-ups per step
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
const root = process.argv[2]; const seconds = Number(process.argv[3] ?? 5);
const { startServerProcess } = await import(join(root, 'dist/bench/lib/process.js'));
// IDS=random|seq (session 8): session IDs made here, gateway-shaped or from a counter, whatever ROOT's bench makes.
const { randomBytes } = await import('node:crypto');
const STEPS = ['', '1', '1*1', '1*1*0', '1*1*0*2', '1*1*0*2*00'];
let made = 0;
const newId = () => (process.env.IDS === 'random' ? `ATUid_${randomBytes(16).toString('hex')}` : `d-${process.pid}-${++made}`);
const ownSessions = () => ({ requests: STEPS.map((text, step) => ({ method: 'POST', path: '/api/ussd', headers: { 'content-type': 'application/json' }, setupRequest(req, ctx) { if (step === 0) ctx.sessionId = newId(); req.body = JSON.stringify({ sessionId: ctx.sessionId, serviceCode: '*123#', phoneNumber: '+254700000001', text }); return req; } })) });
const ussdSessions = process.env.IDS ? ownSessions : (await import(join(root, 'dist/bench/ussd.js'))).ussdSessions;
const autocannon = (await import(join(root, 'node_modules/autocannon/autocannon.js'))).default;
const server = await startServerProcess();
const snap = (pid) => Object.fromEntries(readdirSync(`/proc/${pid}/task`).map((tid) => {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const st = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
    const v = Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(st)[1]); const nv = Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(st)[1]);
    return [tid, { comm, cpu: (Number(f[11]) + Number(f[12])) * 10, v, nv }];
  } catch { return [tid, undefined]; }
}));
const run = (duration) => new Promise((res, rej) => { const c = ussdSessions('d'); autocannon({ url: `http://127.0.0.1:${server.port}`, connections: 100, duration, requests: c.requests }, (e, r) => e ? rej(e) : res(r)); });
await run(1);
const a = snap(server.pid); const t0 = process.hrtime.bigint();
const r = await run(seconds);
const b = snap(server.pid);
const n = r.requests.total;
const groups = {};
for (const [tid, x] of Object.entries(b)) { if (!x) continue; const y = a[tid] ?? { cpu: 0, v: 0, nv: 0 }; const name = tid == server.pid ? 'main' : x.comm + '-' + tid; const g = (groups[name] ??= { n: 0, cpu: 0, v: 0, nv: 0 }); g.n++; g.cpu += x.cpu - y.cpu; g.v += x.v - y.v; g.nv += x.nv - y.nv; }
const others = Object.entries(groups).filter(([k]) => k !== 'main').sort((x, y) => y[1].cpu - x[1].cpu);
const total = Object.values(groups).reduce((s, g) => s + g.cpu, 0);
const host = others[0][1]; const rest = others.slice(1).reduce((s, [, g]) => s + g.cpu, 0); const restWakes = others.slice(1).reduce((s, [, g]) => s + g.v, 0);
const us = (x) => (x * 1000 / n).toFixed(1);
console.log(JSON.stringify({ tag: process.argv[4] ?? root, load: readFileSync('/proc/loadavg', 'utf8').split(' ')[0], perSec: Math.round(n / seconds), p50: r.latency.p50, total: +us(total), main: +us(groups.main.cpu), host: +us(host.cpu), rest: +us(rest), wMain: +(groups.main.v / n).toFixed(3), wHost: +(host.v / n).toFixed(3), wRest: +(restWakes / n).toFixed(3) }));
if (process.env.VERBOSE) console.log(`${root} steps ${n} /s ${Math.round(n / seconds)} p50 ${r.latency.p50}`);
if (process.env.VERBOSE) for (const [name, g] of Object.entries(groups)) if (g.cpu || g.v > 10) console.log(`  ${name.padEnd(16)} x${g.n} cpu ${(g.cpu * 1000 / n).toFixed(1)} us/step  wakes ${(g.v / n).toFixed(3)}/step  preempt ${(g.nv / n).toFixed(3)}/step`);
// METRICSCRAPE
const text = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
const pick = (re) => Number((text.match(re) ?? [])[1]);
const sum = pick(/http_request_duration_seconds_sum\{[^}]*route="\/api\/ussd"[^}]*\} ([\d.e+-]+)/);
const cnt = pick(/http_request_duration_seconds_count\{[^}]*route="\/api\/ussd"[^}]*\} ([\d.e+-]+)/);
const csum = pick(/store_commit_duration_seconds_sum ([\d.e+-]+)/); const ccnt = pick(/store_commit_duration_seconds_count ([\d.e+-]+)/);
console.log(`server residence mean ${(sum / cnt * 1000).toFixed(2)} ms over ${cnt}; commits ${ccnt} mean ${(csum / ccnt * 1000).toFixed(3)} ms, steps per commit ${(cnt / ccnt).toFixed(1)}`);
await server.stop();
