// node wake-cost.mjs : a worker thread's CPU per message it echoes, from /proc (10 ms ticks, so ±10 ms over each
// phase's total), and its sleeps per message. `sleepy`: one message every ~1 ms, so each wakes the worker from a
// sleep of ~1 ms. `pingpong`: the next message as soon as the echo arrives; the worker still sleeps about once per
// message, for a few µs. Neither phase keeps the worker busy, so this bounds what a wake-up costs, not isolates it.
import { Worker, MessageChannel, isMainThread, workerData } from 'node:worker_threads';
import { readFileSync } from 'node:fs';
if (isMainThread) {
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(new URL(import.meta.url), { workerData: { port: port2 }, transferList: [port2] });
  const tid = await new Promise((r) => port1.once('message', r));
  const cpuOf = () => { const f = readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8').split(') ')[1].split(' '); return (Number(f[11]) + Number(f[12])) * 10; };
  const wakesOf = () => Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`/proc/${process.pid}/task/${tid}/status`, 'utf8'))[1]);
  const N = 3000;
  const sleepy = async () => { for (let i = 0; i < N; i++) { await new Promise((r) => { port1.once('message', r); port1.postMessage(i); }); await new Promise((r) => setTimeout(r, 1)); } };
  const pingpong = async () => { for (let i = 0; i < N * 10; i++) await new Promise((r) => { port1.once('message', r); port1.postMessage(i); }); };
  for (const [name, run, n] of [['sleepy', sleepy, N], ['pingpong', pingpong, N * 10], ['sleepy', sleepy, N], ['pingpong', pingpong, N * 10]]) {
    const c0 = cpuOf(), w0 = wakesOf(); await run(); const c = cpuOf() - c0, w = wakesOf() - w0;
    console.log(name, 'worker CPU per message', (c * 1000 / n).toFixed(1), 'us; sleeps per message', (w / n).toFixed(2));
  }
  process.exit(0);
} else {
  const { port } = workerData;
  const { readlinkSync } = await import('node:fs');
  port.postMessage(Number(readlinkSync('/proc/thread-self').split('/').pop()));
  port.on('message', (m) => port.postMessage(m));
}
