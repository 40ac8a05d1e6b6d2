// SSE turns with the built-in agent against a bare uWebSockets.js SSE stream of the same number of frames of
// the same size, both read by the same client (concurrent callers, each POSTing and reading streams to `done`
// in a loop). One probe turn first tells the baseline how many frames and bytes a turn sends.
import { Agent } from 'node:http';
import type { BenchOptions } from './lib/options.js';
import { createSessions, oracleKeys, startOracle, ucanHeaders, warmInvocation } from './lib/oracle.js';
import { startNode, withProcess } from './lib/process.js';
import { printRows, row, type Row } from './lib/report.js';
import { measureSse, streamOnce } from './lib/sse-load.js';

/** Headers and body of one streamed chat turn (POST /messages/:id) with a warm invocation. */
export function turnRequest(invocation: string): { headers: Record<string, string>; body: string } {
  return {
    headers: { ...ucanHeaders(invocation), 'content-type': 'application/json' },
    body: JSON.stringify({ message: 'hello there, how are you today?', stream: true }),
  };
}

export async function benchSse(options: BenchOptions): Promise<Row[]> {
  const { seconds, streams: concurrency } = options;
  const keys = await oracleKeys();
  const invocation = await warmInvocation(keys);
  const { headers, body } = turnRequest(invocation);

  const server = await startOracle(keys);
  try {
    // One session per caller: a second turn on a session would abort the first.
    const sessions = await createSessions(server, invocation, concurrency);
    const probe = new Agent({ keepAlive: false });
    const sample = await streamOnce(server.port, probe, `/messages/${sessions[0]}`, headers, body);
    const frames = sample.text.split('\n\n').length - 1;
    const frameBytes = Math.round(sample.text.length / frames);

    const baseline = row(
      'sse',
      `bare uWS SSE, ${frames} frames`,
      await withProcess(
        startNode('dist/bench/baselines/bare-uws-sse.js', { FRAMES: String(frames), FRAME_BYTES: String(frameBytes) }),
        (bare) => measureSse(bare, { seconds, concurrency, request: () => ({ path: '/messages/x', headers, body }) }),
      ),
    );
    const turn = row(
      'sse',
      `SSE turn, built-in agent, ${frames} frames`,
      await measureSse(server, {
        seconds,
        concurrency,
        request: (index) => ({ path: `/messages/${sessions[index]}`, headers, body }),
      }),
      baseline,
    );
    const rows = [baseline, turn];
    printRows(`Oracle SSE: ${concurrency} concurrent streams, ${seconds} s each, ~${frameBytes} B per frame`, rows);
    return rows;
  } finally {
    await server.stop();
  }
}
