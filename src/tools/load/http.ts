// Thread: main
// A small HTTP client over node:http(s) with keep-alive and no socket cap: an open-loop run must be able to open
// a new connection for every request that is due while earlier ones wait (fetch's pool would queue them, which
// hides a stall exactly like a closed loop). Failures reject with a LoadError whose `kind` names the error.
import http from 'node:http';
import https from 'node:https';
import type { Recorder } from './recorder.js';

export class LoadError extends Error {
  constructor(
    readonly kind: string,
    message = kind,
  ) {
    super(message);
  }
}

export function errorKind(error: unknown): string {
  if (error instanceof LoadError) return error.kind;
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'connection reset';
  return code ? code.toLowerCase() : 'client error';
}

export interface HttpAnswer {
  status: number;
  body: string;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  body?: string;
  /** Called with each chunk of the body as it arrives (SSE); the answer's `body` is then empty. */
  onChunk?: (chunk: string) => void;
}

export class HttpClient {
  private readonly agent: http.Agent;
  private readonly transport: typeof http | typeof https;

  constructor(
    readonly target: URL,
    private readonly timeoutMs: number,
  ) {
    this.transport = target.protocol === 'https:' ? https : http;
    this.agent = new this.transport.Agent({ keepAlive: true, maxSockets: Infinity });
  }

  request(method: string, path: string, options: RequestOptions = {}): Promise<HttpAnswer> {
    const { headers = {}, body, onChunk } = options;
    const url = new URL(path, this.target);
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (error: Error | undefined, answer?: HttpAnswer) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error) reject(error);
        else resolve(answer!);
      };
      const req = this.transport.request(url, {
        method,
        agent: this.agent,
        headers: body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(body) },
      });
      const timer = setTimeout(() => {
        settle(new LoadError('timeout', `no complete answer within ${this.timeoutMs} ms`));
        req.destroy();
      }, this.timeoutMs);
      req.on('error', (error) => settle(error));
      req.once('response', (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (onChunk ? onChunk(chunk) : (text += chunk)));
        res.once('end', () => settle(undefined, { status: res.statusCode ?? 0, body: text }));
        res.on('error', (error) => settle(error));
        // A connection cut (or timed out) mid-answer may close without 'end' or 'error'.
        res.once('close', () => settle(new LoadError('connection closed mid-answer')));
      });
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Counts one request on the recorder around `call`: latency from `since`, failures by kind. */
export async function timed<T>(recorder: Recorder, since: number, call: () => Promise<T>): Promise<T> {
  recorder.sending();
  try {
    const value = await call();
    recorder.answered(since);
    return value;
  } catch (error) {
    recorder.failed(since, errorKind(error));
    throw error;
  }
}

/** Rejects unless the answer has the expected status. */
export function expectStatus(answer: HttpAnswer, ...expected: number[]): HttpAnswer {
  if (!expected.includes(answer.status))
    throw new LoadError(`http ${answer.status}`, `HTTP ${answer.status}: ${answer.body.slice(0, 200)}`);
  return answer;
}
