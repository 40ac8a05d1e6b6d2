// Many concurrent SSE streams: `concurrency` callers, each sending POSTs in a loop for `seconds` and reading
// each streamed answer to its end (`event: done`). Latency is to the end of the stream; the time to the
// first frame is kept as an extra figure.
import { Agent, request } from 'node:http';
import { percentile } from './load.js';
import { cpuPerOpByPart, cpuSnapshot, portFor, type LoadTarget } from './process.js';
import { monotonicUs, type Measured } from './report.js';

export interface SseLoadOptions {
  seconds: number;
  concurrency: number;
  /** Path, headers and body of caller `index`'s next request. */
  request(index: number): { path: string; headers: Record<string, string>; body: string };
}

/** One streamed answer: ms to the first chunk and to the end; rejects unless it ends with `done`. */
export function streamOnce(
  port: number,
  agent: Agent,
  path: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ first: number; done: number; text: string }> {
  return new Promise((resolve, reject) => {
    const sent = performance.now();
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path,
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        agent,
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          return reject(new Error(`status ${res.statusCode}`));
        }
        let first = 0;
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (!first) first = performance.now() - sent;
          text += chunk;
        });
        res.on('end', () =>
          text.includes('event: done')
            ? resolve({ first, done: performance.now() - sent, text })
            : reject(new Error('stream ended without done')),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export async function measureSse(target: LoadTarget, options: SseLoadOptions): Promise<Measured> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const firsts: number[] = [];
  const dones: number[] = [];
  let errors = 0;
  let bytes = 0;
  const cpuBefore = cpuSnapshot(target);
  const mainBefore = target.mainThreadCpuSeconds();
  const started = performance.now();
  const startUs = monotonicUs();
  const end = started + options.seconds * 1000;
  await Promise.all(
    Array.from({ length: options.concurrency }, async (_, index) => {
      while (performance.now() < end) {
        const { path, headers, body } = options.request(index);
        try {
          const timing = await streamOnce(portFor(target, index), agent, path, headers, body);
          firsts.push(timing.first);
          dones.push(timing.done);
          bytes = timing.text.length;
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const window = { startUs, endUs: monotonicUs() };
  const cpuAfter = cpuSnapshot(target);
  const cpu = cpuAfter.seconds - cpuBefore.seconds;
  const main = target.mainThreadCpuSeconds() - mainBefore;
  agent.destroy();
  firsts.sort((a, b) => a - b);
  dones.sort((a, b) => a - b);
  return {
    unit: 'stream',
    count: dones.length,
    throughput: dones.length / elapsed,
    p50Ms: percentile(dones, 0.5),
    p99Ms: percentile(dones, 0.99),
    cpuMsPerOp: dones.length ? (cpu * 1000) / dones.length : NaN,
    rssBytes: target.rssBytes(),
    errors,
    extra: {
      mainThreadCpuMsPerOp: dones.length ? (main * 1000) / dones.length : NaN,
      ...cpuPerOpByPart(cpuBefore, cpuAfter, dones.length),
      firstFrameP50Ms: percentile(firsts, 0.5),
      bytesPerStream: bytes,
    },
    window,
  };
}
