// In-process: the real server (startServer), its POST /api/ussd uWS handler called with fake res/req (no sockets),
// 100 sessions in flight stepping as the bench does. Prints main-thread and host-thread CPU µs per step.
// usage: [H_PROF=out.cpuprofile] node step-harness.mjs <builddir> <steps> [rounds]
import { createRequire } from 'node:module';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const [, , dir, stepsArg = '60000', roundsArg = '3'] = process.argv;
const require = createRequire(join(dir, 'package.json'));
const uWS = require('uWebSockets.js');
const handlers = new Map();
const realApp = uWS.App;
uWS.App = (...a) => {
  const app = realApp(...a);
  return new Proxy(app, { get(t, k) { const v = t[k]; if (typeof v !== 'function') return v;
    if (['post', 'get', 'any', 'options', 'put', 'del', 'patch'].includes(k)) return (p, h) => { handlers.set(`${k} ${p}`, h); v.call(t, p, h); return app; };
    return v.bind(t); } });
};
const { loadConfig } = await import(join(dir, 'dist/src/config.js'));
const { createLogger } = await import(join(dir, 'dist/src/log.js'));
const { startServer } = await import(join(dir, 'dist/src/server.js'));
const dataDir = mkdtempSync(join(tmpdir(), 'pu-in-'));
const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', ACTOR_THREADS: '1', RATE_LIMIT_ALLOWLIST: '127.0.0.0/8,::1', ...(JSON.parse(process.env.H_ENV ?? '{}')) });
const server = await startServer(config, createLogger('warn'));
const handler = handlers.get('post /api/ussd');
const ADDR = new TextEncoder().encode('0000:0000:0000:0000:0000:ffff:7f00:0001').buffer;
const ADDR_BIN = new Uint8Array([0,0,0,0,0,0,0,0,0,0,255,255,127,0,0,1]).buffer;
const STEPS = ['', '1', '1*1', '1*1*0', '1*1*0*2', '1*1*0*2*00'];
const enc = new TextEncoder();
let done = 0, wrong = 0, sessions = 0;
function cpu(f) { const s = readFileSync(f, 'utf8'); const x = s.slice(s.lastIndexOf(')') + 2).split(' '); return (+x[11] + +x[12]) / 100; }
const tids = () => readdirSync(`/proc/${process.pid}/task`).map(Number);
function threads() { const m = new Map(); for (const t of tids()) { try { m.set(t, cpu(`/proc/${process.pid}/task/${t}/stat`)); } catch {} } return m; }
function request(conn, onDone) {
  const step = conn.step;
  if (step === 0) conn.sessionId = `s-${process.pid}-${++sessions}`;
  const body = enc.encode(JSON.stringify({ sessionId: conn.sessionId, serviceCode: '*123#', phoneNumber: '+254700000001', text: STEPS[step] })).buffer;
  const headers = [['host', '127.0.0.1:3000'], ['content-type', 'application/json'], ['content-length', String(body.byteLength)]];
  let out = '';
  const res = {
    onAborted() { return res; }, onData(cb) { cb(body, true); return res; }, onWritable() { return res; },
    getRemoteAddressAsText() { return ADDR; }, getRemoteAddress() { return ADDR_BIN; },
    cork(cb) { cb(); return res; }, writeStatus(s) { out += s; return res; }, writeHeader(n, v) { return res; },
    end(b) { if (!/^(CON|END) /.test(b) || /Invalid|unavailable|expired/i.test(b)) { wrong++; if (wrong < 3) console.log("ANSWER", JSON.stringify(b)); } conn.step = (step + 1) % STEPS.length; done++; onDone(); return res; },
  };
  const req = { getCaseSensitiveMethod: () => 'POST', getMethod: () => 'post', getUrl: () => '/api/ussd', getQuery: () => '', getHeader: (n) => headers.find((h) => h[0] === n)?.[1] ?? '', getParameter: () => '',
    forEach(cb) { for (const [n, v] of headers) cb(n, v); } };
  handler(res, req);
}
async function run(n) {
  return new Promise((resolve) => {
    let started = 0, finished = 0;
    const next = (conn) => { if (started >= n) { if (++finished === 100) resolve(); return; } started++; setImmediate(() => request(conn, () => next(conn))); };
    for (let i = 0; i < 100; i++) next({ step: 0 });
  });
}
await run(5000);
let session;
if (process.env.H_PROF) { const { Session } = await import('node:inspector'); session = new Session(); session.connect();
  const post = (m, p) => new Promise((res, rej) => session.post(m, p, (e, r) => e ? rej(e) : res(r)));
  await post('Profiler.enable'); await post('Profiler.setSamplingInterval', { interval: 100 }); await post('Profiler.start'); session.stopProf = async () => { const { profile } = await post('Profiler.stop'); (await import('node:fs')).writeFileSync(process.env.H_PROF, JSON.stringify(profile)); }; }
for (let r = 0; r < +roundsArg; r++) {
  const before = threads(); const t0 = performance.now(); const d0 = done;
  await run(+stepsArg);
  const after = threads(); const n = done - d0; const ms = performance.now() - t0;
  const main = (after.get(process.pid) - before.get(process.pid)) * 1e6 / n;
  const others = [...after].filter(([t]) => t !== process.pid).map(([t, s]) => s - (before.get(t) ?? 0)).sort((a, b) => b - a);
  console.log(`RESULT ${dir} main ${main.toFixed(2)} host ${(others[0] * 1e6 / n).toFixed(2)} rest ${(others.slice(1).reduce((a, b) => a + b, 0) * 1e6 / n).toFixed(2)} µs/step  ${(n / ms * 1000).toFixed(0)}/s wrong ${wrong}`);
}
if (session) await session.stopProf();
await server.shutdown('done');
rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
