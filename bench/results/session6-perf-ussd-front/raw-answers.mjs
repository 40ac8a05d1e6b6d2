// usage: node raw-answers.mjs <builddir> <builddir>. Raw answers of two builds to the same requests, compared byte for byte but for Date and X-Request-Id.
import { spawn } from 'node:child_process'; import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs'; import { tmpdir } from 'node:os'; import { join } from 'node:path';
const dirs = process.argv.slice(2);
async function start(dir) {
  const dataDir = mkdtempSync(join(tmpdir(), 'pu-raw-'));
  const child = spawn(process.execPath, [join(dir, 'dist/src/main.js')], { env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', RATE_LIMIT_MAX: '1000', RATE_LIMIT_ALLOWLIST: '', BODY_LIMIT_BYTES: '2048', CORS_ORIGIN: 'https://a.example,https://b.example', PIN_ENCRYPTION_KEY: 'a'.repeat(64) }, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve) => { let b = ''; child.stdout.on('data', (c) => { b += c; const m = /"port":(\d+)[^\n]*"msg":"listening"/.exec(b); if (m) resolve(+m[1]); }); });
  return { child, port, dataDir };
}
function exchange(port, pieces) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1'); let out = Buffer.alloc(0);
    s.on('data', (d) => (out = Buffer.concat([out, d])));
    s.on('close', () => resolve(out.toString('latin1')));
    (async () => { for (const p of pieces) { s.write(p); await new Promise((r) => setTimeout(r, 30)); } setTimeout(() => s.end(), 300); })();
  });
}
const json = (o) => JSON.stringify(o);
const ussd = { sessionId: 'raw-1', serviceCode: '*123#', phoneNumber: '+254700000001', text: '' };
const post = (body, type = 'application/json', extra = '') => [`POST /api/ussd HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`];
const cases = {
  ussdJson: post(json(ussd)),
  ussdForm: post('sessionId=raw-2&serviceCode=*123%23&phoneNumber=%2B254700000001&text=', 'application/x-www-form-urlencoded'),
  ussdBom: post('\ufeff' + json({ ...ussd, sessionId: 'raw-3' })),
  ussdBad: post(json({ ...ussd, phoneNumber: '07' })),
  ussdMalformed: post('{"sessionId":'),
  ussdInvalidUtf8: (() => { const b = Buffer.from('{"sessionId":"raw-\xff\xfe\xc3-4","serviceCode":"*123#","phoneNumber":"+254700000001","text":""}', 'latin1'); return [Buffer.concat([Buffer.from(`POST /api/ussd HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${b.length}\r\n\r\n`), b])]; })(),
  ussdInspect: ['GET /api/ussd/sessions/raw-%EF%BF%BD%EF%BF%BD%EF%BF%BD-4 HTTP/1.1\r\nHost: x\r\n\r\n'],
  ussdChunked: ['POST /api/ussd HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nOrigin: https://b.example\r\n\r\n', '10\r\n{"sessionId":"ra\r\n', `${(json({ ...ussd, sessionId: 'raw-5' }).length - 16).toString(16)}\r\n${json({ ...ussd, sessionId: 'raw-5' }).slice(16)}\r\n`, '0\r\n\r\n'],
  ussdSplit: (() => { const b = json({ ...ussd, sessionId: 'raw-é6' }); const full = `POST /api/ussd HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(b)}\r\n\r\n${b}`; const buf = Buffer.from(full); const cut = buf.indexOf('é') + 1; return [buf.subarray(0, cut), buf.subarray(cut)]; })(),
  tooLarge: post(json({ ...ussd, text: 'x'.repeat(3000) })),
  notFound: ['GET /nowhere?x=1 HTTP/1.1\r\nHost: x\r\nOrigin: https://a.example\r\n\r\n'],
  preflight: ['OPTIONS /api/ussd HTTP/1.1\r\nHost: x\r\nOrigin: https://a.example\r\nAccess-Control-Request-Method: POST\r\n\r\n'],
  health: ['GET /health HTTP/1.1\r\nHost: x\r\nX-Request-Id: given-id\r\n\r\n'],
  head: ['HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n'],

};
const servers = [];
for (const d of dirs) servers.push(await start(d));
const mask = (s) => s.replace(/Date: [^\r]*/g, 'Date: -').replace(/Retry-After: \d+/g, 'Retry-After: -').replace(/X-Request-Id: [0-9a-f-]{36}/g, 'X-Request-Id: -').replace(/"(uptimeSeconds|uptime|timestamp|time)":[^,}]*/g, '"$1":-');
let same = 0, differ = 0;
for (const [name, pieces] of Object.entries(cases)) {
  const outs = [];
  for (const s of servers) outs.push(mask(await exchange(s.port, pieces)));
  if (outs.every((o) => o === outs[0])) { same++; console.log(`same   ${name}: ${JSON.stringify(outs[0].slice(0, 160))}`); }
  else { differ++; console.log(`DIFFER ${name}:\n${outs.map((o) => JSON.stringify(o)).join('\n')}`); }
}
console.log(`${same} same, ${differ} differ`);
for (const s of servers) { s.child.kill(); }
await new Promise((r) => setTimeout(r, 1000)); for (const s of servers) rmSync(s.dataDir, { recursive: true, force: true });
process.exit(0);
