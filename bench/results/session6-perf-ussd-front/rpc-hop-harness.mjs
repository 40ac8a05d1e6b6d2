// The hop alone: RpcClient over batchingEndpoint to a worker running serve() with a 'send' that answers a fixed
// screen; 100 calls in flight, each answered call issues the next. Main-thread and worker CPU µs per call.
// usage: [INFLIGHT=100] node rpc-hop-harness.mjs <builddir> <calls> <rounds>
import { Worker, MessageChannel } from 'node:worker_threads';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
const [, , dir, nArg = '200000', roundsArg = '4'] = process.argv;
const { RpcClient } = await import(join(dir, 'dist/src/runtime/rpc.js'));
const { batchingEndpoint } = await import(join(dir, 'dist/src/runtime/batching-endpoint.js'));
const { port1, port2 } = new MessageChannel();
const w = new Worker(`
const { workerData } = require('node:worker_threads');
Promise.all([import(workerData.dir + '/dist/src/runtime/rpc.js'), import(workerData.dir + '/dist/src/runtime/batching-endpoint.js')]).then(([{ serve }, { batchingEndpoint }]) => {
  const ANSWER = 'CON Welcome\\n1. Know More\\n2. Account Menu\\n*. Exit';
  serve({ send(kind, id, message, deadline) { if (message.sessionId !== id) throw new Error('bad'); return Promise.resolve(ANSWER); } }, batchingEndpoint(workerData.port));
});`, { eval: true, workerData: { dir, port: port2 }, transferList: [port2] });
const client = new RpcClient(batchingEndpoint(port1));
const policy = { graceMs: 5000, timedOut: () => new Error('t'), fromRemote: (e) => e, settled() {} };
function cpu(f) { const s = readFileSync(f, 'utf8'); const x = s.slice(s.lastIndexOf(')') + 2).split(' '); return (+x[11] + +x[12]) / 100; }
const threads = () => new Map(readdirSync(`/proc/${process.pid}/task`).map((t) => { try { return [+t, cpu(`/proc/${process.pid}/task/${t}/stat`)]; } catch { return [+t, 0]; } }));
let id = 0; const INFLIGHT = +(process.env.INFLIGHT ?? 100);
function run(n) {
  return new Promise((resolve) => {
    let started = 0, finished = 0;
    const next = () => {
      if (started >= n) { if (++finished === INFLIGHT) resolve(); return; }
      started++;
      const sid = `ussd-${++id}`;
      client.call('send', ['ussd', sid, { type: 'dial', sessionId: sid, phoneNumber: '+254700000001', serviceCode: '*123#', text: '1*1*0' }, Date.now() + 15000], 15000, policy).then(next);
    };
    setImmediate(() => { for (let i = 0; i < INFLIGHT; i++) next(); });
  });
}
await run(30000);
const mains = [], others = [];
for (let r = 0; r < +roundsArg; r++) {
  const b = threads(); await run(+nArg); const a = threads();
  mains.push(((a.get(process.pid) - b.get(process.pid)) * 1e6) / +nArg);
  others.push(([...a].filter(([t]) => t !== process.pid).map(([t, s]) => s - (b.get(t) ?? 0)).sort((x, y) => y - x)[0] * 1e6) / +nArg);
}
console.log(`RPC ${dir} main ${mains.map((x) => x.toFixed(2)).join(' ')} worker ${others.map((x) => x.toFixed(2)).join(' ')} µs/call`);
process.exit(0);
