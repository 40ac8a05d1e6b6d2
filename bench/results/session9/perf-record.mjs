// BENCH_NODE_ARGS=--perf-basic-prof node perf-record.mjs ussd|bare : `perf record -e cpu-clock -g` of the server
// under the bench's USSD client for 4 s (written to /tmp/perf-<which>.data); read it with `perf script`.
import { spawn } from 'node:child_process';
const root = new URL('../../..', import.meta.url).pathname;
const { startServerProcess, startNode } = await import(`${root}/dist/bench/lib/process.js`);
const { ussdSessions } = await import(`${root}/dist/bench/ussd.js`);
const autocannon = (await import(`${root}/node_modules/autocannon/autocannon.js`)).default;
const which = process.argv[2] ?? 'ussd';
const server = which === 'bare' ? await startNode('dist/bench/baselines/bare-uws.js') : await startServerProcess();
const run = (duration) => new Promise((res, rej) => { const c = ussdSessions('d'); autocannon({ url: `http://127.0.0.1:${server.port}`, connections: 100, duration, requests: c.requests }, (e, r) => e ? rej(e) : res(r)); });
await run(1);
const st = spawn('perf', ['record', '-e', 'cpu-clock', '-F', '2000', '-g', '-p', String(server.pid), '-o', `/tmp/perf-${which}.data`], { stdio: 'ignore' });
await new Promise((r) => setTimeout(r, 300));
const r = await run(4);
st.kill('SIGINT');
await new Promise((r) => st.on('exit', r));
console.log(which, 'requests', r.requests.total);
await server.stop();
