// SIGTERM under load on keep-alive connections: every request that arrives on an already-open connection
// during the drain is answered (served, or 503 with Connection: close and Retry-After); none is reset.
import { Agent, request } from 'node:http';
import t from 'tap';
import { startChildServer } from './helpers/child-server.js';

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
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          connection: res.headers.connection,
          retryAfter: res.headers['retry-after'],
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('SIGTERM with 100 keep-alive connections sending: zero requests cut', async (t) => {
  const { child, port, exited, output } = await startChildServer(t, { ACTOR_THREADS: '1' });

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
  t.match(output(), /"msg":"draining"/);
  t.match(output(), /"msg":"stopped"/);
});
