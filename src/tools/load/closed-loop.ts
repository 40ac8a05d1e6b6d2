// Thread: main
// Closed loop (maximum throughput): --connections users, each sending its next request as soon as the last one
// is answered. Plain request scenarios run on autocannon; journeys that stream or hold sockets (chat, ws, mix,
// several USSD paths) run as that many back-to-back journey loops. Latency here counts from each send, so a
// stall is felt by only one request per connection: the figure is throughput, not what users would see.
import autocannon from 'autocannon';
import type { Recorder } from './recorder.js';
import { runIteration, type Scenario } from './scenarios/types.js';

export interface ClosedLoopOptions {
  target: URL;
  connections: number;
  durationMs: number;
  timeoutMs: number;
}

function runAutocannon(requests: autocannon.Request[], recorder: Recorder, options: ClosedLoopOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: options.target.href,
        connections: options.connections,
        duration: options.durationMs / 1000,
        timeout: Math.max(1, Math.ceil(options.timeoutMs / 1000)),
        requests,
      },
      (error) => (error ? reject(error) : resolve()),
    );
    instance.on('response', (_client, status, _bytes, responseTime) => {
      recorder.sending();
      const since = performance.now() - responseTime;
      if (status >= 200 && status < 300) recorder.answered(since);
      else recorder.failed(since, `http ${status}`);
    });
    instance.on('reqError', (error: Error) =>
      recorder.unanswered(
        /timed out/.test(error.message)
          ? 'timeout'
          : ((error as NodeJS.ErrnoException).code?.toLowerCase() ?? 'client error'),
      ),
    );
  });
}

export async function runClosedLoop(
  scenario: Scenario,
  recorder: Recorder,
  options: ClosedLoopOptions,
): Promise<'autocannon' | 'journeys'> {
  const requests = scenario.autocannonRequests?.();
  if (requests) {
    await runAutocannon(requests, recorder, options);
    return 'autocannon';
  }
  const end = performance.now() + options.durationMs;
  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      while (performance.now() < end) await runIteration(scenario, recorder, performance.now());
    }),
  );
  return 'journeys';
}
