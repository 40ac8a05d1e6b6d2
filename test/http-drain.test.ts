// SIGTERM under load on keep-alive connections: every request that arrives on an already-open connection during
// the drain is served until SHUTDOWN_SERVE_MS, its answer with Connection: close (none refused, none reset); past
// that deadline it is refused: the JSON 503 with Retry-After, and a USSD step the contract's END text.
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import t from 'tap';
import { formatKey, generateKey } from '../dist/src/tools/mint-ucan.js';
import { SERVICE_UNAVAILABLE } from '../dist/src/ussd/answers.js';
import { startChildServer } from './helpers/child-server.js';
import { testEngine } from './helpers/engine.js';
import { newUser, type User } from './helpers/oracle.js';

const CONNECTIONS = 100;

interface Answer {
  status: number;
  body: string;
  connection?: string;
  retryAfter?: string;
}

function send(
  port: number,
  agent: Agent,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          body: text,
          connection: res.headers.connection,
          retryAfter: res.headers['retry-after'],
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const ussdBody = (n: number) =>
  JSON.stringify({ sessionId: `drain-${n}`, serviceCode: '*384#', phoneNumber: `+2547000${n}`, text: '' });

t.test('SIGTERM with 100 keep-alive connections sending USSD and chat: every request served', async (t) => {
  const oracleKey = await generateKey();
  const { child, port, exited, output } = await startChildServer(t, {
    ACTOR_THREADS: '1',
    ORACLE_PRIVATE_KEY: formatKey(oracleKey),
  });
  // Half the connections dial USSD, half chat (a JSON turn each, one session per connection).
  const user: User = await newUser(oracleKey.did());
  const setup = new Agent({ keepAlive: true, maxSockets: 8 });
  const sessions = await Promise.all(
    Array.from({ length: CONNECTIONS / 2 }, async () => {
      const created = await send(port, setup, 'POST', '/sessions', user.headers());
      t.equal(created.status, 201, 'a chat session');
      return JSON.parse(created.body).sessionId as string;
    }),
  );
  setup.destroy();

  // SIGTERM comes once every connection has been answered once; each then keeps sending until an answer says
  // Connection: close (a client then goes to another node).
  let warm = 0;
  let signalled = false;
  let servedBefore = 0;
  const inDrain: Answer[] = [];
  const cut: string[] = [];
  const client = async (n: number) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const chat = n % 2 === 1;
    let first = true;
    for (;;) {
      const wasSignalled = signalled;
      try {
        const answer = chat
          ? await send(
              port,
              agent,
              'POST',
              `/messages/${sessions[(n - 1) / 2]}`,
              { ...user.headers(), 'content-type': 'application/json' },
              JSON.stringify({ message: `hello ${n}` }),
            )
          : await send(port, agent, 'POST', '/api/ussd', { 'content-type': 'application/json' }, ussdBody(n));
        if (first && ++warm === CONNECTIONS) {
          signalled = true;
          child.kill('SIGTERM');
        }
        first = false;
        if (wasSignalled || answer.connection === 'close') inDrain.push(answer);
        else servedBefore++;
        if (answer.connection === 'close') break;
      } catch (error) {
        cut.push(`${(error as NodeJS.ErrnoException).code ?? error} (signalled: ${signalled})`);
        break;
      }
    }
    agent.destroy();
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, (_, n) => client(n)));
  t.equal(await exited, 0, 'clean exit');
  t.same(cut, [], 'no request was reset');
  t.ok(servedBefore >= CONNECTIONS, `${servedBefore} requests served before the drain`);
  t.ok(inDrain.length >= CONNECTIONS, `${inDrain.length} requests sent during the drain`);
  const refused = inDrain.filter((a) => a.status !== 200 || a.body === SERVICE_UNAVAILABLE);
  t.same(refused, [], 'none refused: every request during the drain was served');
  t.equal(inDrain.filter((a) => a.connection === 'close').length, CONNECTIONS, 'each connection closed once');
  t.ok(
    inDrain.every((a) => /^(CON|END) /.test(a.body) || typeof JSON.parse(a.body).message?.content === 'string'),
    'USSD screens and chat replies',
  );
  if (testEngine() !== 'auto') t.match(output(), `"httpEngine":"${testEngine()}"`, 'on the engine asked for');
  t.match(output(), /"msg":"draining"/);
  t.notMatch(output(), /serving deadline passed/, 'the drain ended within its serving time');
  t.match(output(), /"msg":"stopped"/);
});

/** One raw keep-alive connection: writes a request, reads one answer (status, headers, Content-Length body). */
class RawConnection {
  readonly socket: Socket;
  #buffer = '';
  #waiting: (() => void) | undefined;
  #closed = false;

  constructor(port: number) {
    this.socket = connect(port, '127.0.0.1');
    this.socket.setEncoding('latin1');
    this.socket.on('data', (chunk: string) => {
      this.#buffer += chunk;
      this.#waiting?.();
    });
    this.socket.on('close', () => {
      this.#closed = true;
      this.#waiting?.();
    });
    this.socket.on('error', () => {});
  }

  write(text: string): void {
    this.socket.write(text);
  }

  async answer(): Promise<{ status: number; headers: Record<string, string>; body: string }> {
    for (;;) {
      const end = this.#buffer.indexOf('\r\n\r\n');
      if (end >= 0) {
        const [statusLine, ...lines] = this.#buffer.slice(0, end).split('\r\n');
        const headers = Object.fromEntries(
          lines.map((line) => [
            line.slice(0, line.indexOf(':')).toLowerCase(),
            line.slice(line.indexOf(':') + 1).trim(),
          ]),
        );
        const length = Number(headers['content-length'] ?? 0);
        if (this.#buffer.length >= end + 4 + length) {
          const body = this.#buffer.slice(end + 4, end + 4 + length);
          this.#buffer = this.#buffer.slice(end + 4 + length);
          return { status: Number(statusLine.split(' ')[1]), headers, body: Buffer.from(body, 'latin1').toString() };
        }
      }
      if (this.#closed) throw new Error(`closed before a whole answer: ${JSON.stringify(this.#buffer)}`);
      await new Promise<void>((resolve) => (this.#waiting = resolve));
    }
  }
}

const ussdRequest = (n: number, text = '') => {
  const body = JSON.stringify({ sessionId: `late-${n}`, serviceCode: '*384#', phoneNumber: `+2547001${n}`, text });
  return `POST /api/ussd HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
};

t.test('past SHUTDOWN_SERVE_MS: the JSON 503, a USSD step the END text; what was taken is served', async (t) => {
  const { child, port, exited, output } = await startChildServer(t, {
    ACTOR_THREADS: '1',
    SHUTDOWN_SERVE_MS: '200',
    SHUTDOWN_QUIET_MS: '0',
  });
  const ussd = new RawConnection(port);
  const health = new RawConnection(port);
  const slow = new RawConnection(port);
  t.teardown(() => {
    for (const c of [ussd, health, slow]) c.socket.destroy();
  });
  ussd.write(ussdRequest(1));
  t.equal((await ussd.answer()).status, 200, 'the USSD connection is open');
  health.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
  t.equal((await health.answer()).status, 200, 'the /health connection is open');
  // A USSD step whose body has not all come: in flight across the deadline, it keeps the drain going.
  const slowStep = ussdRequest(2);
  const cutAt = slowStep.length - 5;
  slow.write(slowStep.slice(0, cutAt));
  await new Promise((resolve) => setTimeout(resolve, 100));

  child.kill('SIGTERM');
  while (!/serving deadline passed/.test(output())) await new Promise((resolve) => setTimeout(resolve, 20));

  ussd.write(ussdRequest(1, '1'));
  const step = await ussd.answer();
  t.equal(step.status, 200, 'a USSD step past the deadline: 200, as every USSD answer');
  t.equal(step.body, SERVICE_UNAVAILABLE, 'the END text');
  t.equal(step.headers.connection, 'close');
  health.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
  const refused = await health.answer();
  t.equal(refused.status, 503);
  t.match(JSON.parse(refused.body), { statusCode: 503, message: /shutting down/, error: 'Service Unavailable' });
  t.equal(refused.headers.connection, 'close');
  t.equal(refused.headers['retry-after'], '1');

  slow.write(slowStep.slice(cutAt));
  const taken = await slow.answer();
  t.equal(taken.status, 200);
  t.match(taken.body, /^CON /, 'the step taken before the deadline is served');
  t.equal(taken.headers.connection, 'close');
  t.equal(await exited, 0, 'clean exit');
});
