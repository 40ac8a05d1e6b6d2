// Front door alone, one thread: HttpServer + the USSD routes with actors that answer at once (a resolved promise).
// Its POST /api/ussd uWS handler is called with fake res/req. Prints main-thread CPU µs per request.
// usage: node front-door-harness.mjs <builddir> <requests> <rounds>
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
const [, , dir, nArg = '300000', roundsArg = '5'] = process.argv;
const require = createRequire(join(dir, 'package.json'));
const uWS = require('uWebSockets.js');
const handlers = new Map();
const fakeApp = new Proxy({}, { get: (t, k) => (p, h) => { handlers.set(`${String(k)} ${p}`, h); return fakeApp; } });
const { HttpServer } = await import(join(dir, 'dist/src/http/server.js'));
const { Router } = await import(join(dir, 'dist/src/http/router.js'));
const { registerUssdRoutes } = await import(join(dir, 'dist/src/ussd/routes/index.js'));
const { createLogger } = await import(join(dir, 'dist/src/log.js'));
const log = createLogger('info');
const http = new HttpServer({ host: '127.0.0.1', port: 0, bodyLimitBytes: 65536, corsOrigin: '*', drainQuietMs: 0,
  streamLimits: { maxBufferBytes: 1 << 20, stallTimeoutMs: 30000 }, metrics: true, rateLimit: { max: 100, windowSeconds: 60, allowlist: ['127.0.0.0/8', '::1'] }, log });
Object.defineProperty(http, 'app', { value: fakeApp });
const router = new Router();
const ANSWER = 'CON Welcome\n1. Know More\n2. Account Menu\n*. Exit';
let messages = 0;
const actors = { send: () => Promise.resolve(ANSWER), ref: (p, id) => ({ send: (m) => { messages++; return Promise.resolve(ANSWER); } }), signal() {}, stream() {}, onEvent() {} };
registerUssdRoutes(router, { actors, sessions: {}, operatorOnly: () => {}, log });
http.mount(router);
const handler = handlers.get('post /api/ussd');
const ADDR = new TextEncoder().encode('0000:0000:0000:0000:0000:ffff:7f00:0001').buffer;
const ADDR_BIN = new Uint8Array([0,0,0,0,0,0,0,0,0,0,255,255,127,0,0,1]).buffer;
const STEPS = ['', '1', '1*1', '1*1*0', '1*1*0*2', '1*1*0*2*00'];
// Bodies prepared ahead (the client's cost is not the server's): 600 sessions x 6 steps.
const bodies = [];
for (let s = 0; s < 600; s++) for (const text of STEPS) bodies.push(Buffer.from(JSON.stringify({ sessionId: `ussd-${process.pid}-${s}`, serviceCode: '*123#', phoneNumber: '+254700000001', text })));
let done = 0, wrong = 0;
function cpu(f) { const s = readFileSync(f, 'utf8'); const x = s.slice(s.lastIndexOf(')') + 2).split(' '); return (+x[11] + +x[12]) / 100; }
function request(i, onDone) {
  const src = bodies[i % bodies.length];
  // uWS hands a fresh ArrayBuffer per chunk; a copy here stands for it (counted, as small as uWS's own).
  const body = new ArrayBuffer(src.length); new Uint8Array(body).set(src);
  const len = String(src.length);
  const res = {
    onAborted() { return res; }, onData(cb) { cb(body, true); return res; }, onWritable() { return res; },
    getRemoteAddressAsText() { return ADDR; }, getRemoteAddress() { return ADDR_BIN; },
    cork(cb) { cb(); return res; }, writeStatus() { return res; }, writeHeader() { return res; },
    end(b) { if (b !== ANSWER) wrong++; done++; onDone(); return res; },
  };
  const req = { getCaseSensitiveMethod: () => 'POST', getMethod: () => 'post', getUrl: () => '/api/ussd', getQuery: () => '', getParameter: () => '',
    getHeader: (n) => (n === 'content-type' ? 'application/json' : n === 'content-length' ? len : n === 'host' ? '127.0.0.1:3000' : ''),
    forEach(cb) { cb('host', '127.0.0.1:3000'); cb('content-type', 'application/json'); cb('content-length', len); } };
  handler(res, req);
}
function run(n) {
  return new Promise((resolve) => {
    let started = 0, finished = 0;
    const next = () => { if (started >= n) { if (++finished === 100) resolve(); return; } const i = started++; request(i, () => queueMicrotask(next)); };
    const kick = () => { for (let i = 0; i < 100; i++) next(); };
    setImmediate(kick);
  });
}
await run(50000);
const self = `/proc/${process.pid}/task/${process.pid}/stat`;
const out = [];
for (let r = 0; r < +roundsArg; r++) {
  const c0 = cpu(self); const d0 = done;
  await run(+nArg);
  out.push(((cpu(self) - c0) * 1e6) / (done - d0));
}
console.log(`FRONT ${dir} ${out.map((x) => x.toFixed(2)).join(' ')} µs/req wrong ${wrong} messages ${messages}`);
process.exit(0);
