
// Many concurrent SSE streams: `concurrency` callers, each sending POSTs in a loop for `seconds` and
// reading each streamed answer to its end. Measures time to the first byte of the stream (the first frame)
// and to `done`, streams per second and server CPU per stream.
import { printMarkdownTable } from './table.js';
import { Agent, request } from 'node:http';
import type { BenchProcess } from './process.js';

export interface SseLoadResult {
  name: string;
  streams: number;
  streamsPerSecond: number;
  firstFrameP50: number;
  firstFrameP99: number;
  doneP50: number;
  doneP99: number;
  errors: number;
  cpuMsPerStream: number;
  /** Bytes of one stream (the last one read). */
  bytesPerStream: number;
}

export interface SseLoadOptions {
  seconds: number;
  concurrency: number;
  /** Path and headers of caller `index`'s next request. */
  request(index: number): { path: string; headers: Record<string, string>; body: string };
}

const percentile = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : NaN);

/** One streamed answer: ms to the first chunk and to the end; rejects unless it ends with `done`. */
export function streamOnce(port: number, agent: Agent, path: string, headers: Record<string, string>, body: string): Promise<{ first: number; done: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const sent = performance.now();
    const req = request({ host: '127.0.0.1', port, method: 'POST', path, headers: { ...headers, 'content-length': Buffer.byteLength(body) }, agent }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return reject(new Error(`status ${res.statusCode}`));
      }
      let first = 0;
      let bytes = 0;
      let tail = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (!first) first = performance.now() - sent;
        bytes += chunk.length;
        tail = (tail + chunk).slice(-64);
      });
      res.on('end', () => (tail.includes('event: done') ? resolve({ first, done: performance.now() - sent, bytes }) : reject(new Error('stream ended without done'))));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

export async function measureSse(name: string, target: BenchProcess, options: SseLoadOptions): Promise<SseLoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const firsts: number[] = [];
  const dones: number[] = [];
  let errors = 0;
  let bytesPerStream = 0;
  const cpuBefore = target.cpuSeconds();
  const started = performance.now();
  const end = started + options.seconds * 1000;
  await Promise.all(
    Array.from({ length: options.concurrency }, async (_, index) => {
      while (performance.now() < end) {
        const { path, headers, body } = options.request(index);
        try {
          const timing = await streamOnce(target.port, agent, path, headers, body);
          firsts.push(timing.first);
          dones.push(timing.done);
          bytesPerStream = timing.bytes;
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const cpu = target.cpuSeconds() - cpuBefore;
  agent.destroy();
  firsts.sort((a, b) => a - b);
  dones.sort((a, b) => a - b);
  return {
    name,
    streams: dones.length,
    streamsPerSecond: dones.length / elapsed,
    firstFrameP50: percentile(firsts, 0.5),
    firstFrameP99: percentile(firsts, 0.99),
    doneP50: percentile(dones, 0.5),
    doneP99: percentile(dones, 0.99),
    errors,
    cpuMsPerStream: dones.length ? (cpu * 1000) / dones.length : NaN,
    bytesPerStream,
  };
}

export function printSseTable(title: string, baseline: SseLoadResult, rows: SseLoadResult[]): void {
  const columns = ['run', 'streams', 'streams/s', 'first frame p50 ms', 'p99 ms', 'done p50 ms', 'p99 ms', 'server CPU ms/stream',
    'bytes/stream', 'errors', 'streams/s vs baseline', 'CPU/stream vs baseline'];
  printMarkdownTable(title, columns, [baseline, ...rows].map((r) => [
    r.name, r.streams, r.streamsPerSecond.toFixed(0), r.firstFrameP50.toFixed(1), r.firstFrameP99.toFixed(1),
    r.doneP50.toFixed(1), r.doneP99.toFixed(1), r.cpuMsPerStream.toFixed(3), r.bytesPerStream, r.errors,
    `${((r.streamsPerSecond / baseline.streamsPerSecond) * 100).toFixed(1)}%`, `${(r.cpuMsPerStream / baseline.cpuMsPerStream).toFixed(2)}x`,
  ]));
}
