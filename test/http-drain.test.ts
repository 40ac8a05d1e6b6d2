// SIGTERM under load on keep-alive connections: every request that arrives on an already-open connection
// during the drain is answered (served, or 503 with Connection: close and Retry-After); none is reset.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';

const CONNECTIONS = 100;

interface Answer {
  status: number;
  connection?: string;
  retryAfter?: string;
}

function get(port: number, agent: Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, retryAfter: res.headers['retry-after'] }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('SIGTERM with 100 keep-alive connections sending: zero requests cut', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sar-drain-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', RATE_LIMIT_MAX: '1000000', ACTOR_THREADS: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let output = '';
  const port = await new Promise<number>((resolve) => {
    child.stdout.on('data', (chunk) => {
      output += chunk;
      const match = /"port":(\d+)[^\n]*"msg":"listening"/.exec(output);
      if (match) resolve(Number(match[1]));
    });
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));

  // Every client owns one keep-alive connection; SIGTERM comes once every connection has been answered.
  let warm = 0;
  let signalled = false;
  const served: number[] = [];
  const refusals: Answer[] = [];
  const cut: string[] = [];
  const client = async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    let first = true;
    for (;;) {
      try {
        const answer = await get(port, agent);
        if (first && ++warm === CONNECTIONS) {
          signalled = true;
          child.kill('SIGTERM');
        }
        first = false;
        if (answer.status === 200) {
          served.push(answer.status);
          continue;
        }
        // The drain's answer closes the connection: the client stops here (a load balancer retries elsewhere).
        refusals.push(answer);
        break;
      } catch (error) {
        cut.push(`${(error as NodeJS.ErrnoException).code ?? error} (signalled: ${signalled})`);
        break;
      }
    }
    agent.destroy();
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, client));
  t.equal(await exited, 0, 'clean exit');
  t.same(cut, [], 'no request was reset');
  t.equal(refusals.length, CONNECTIONS, 'every connection heard the drain answer');
  t.same(new Set(refusals.map((a) => `${a.status} ${a.connection} ${a.retryAfter}`)), new Set(['503 close 1']));
  t.ok(served.length >= CONNECTIONS, `${served.length} requests served before the drain`);
  t.match(output, /"msg":"draining"/);
  t.match(output, /"msg":"stopped"/);
});
