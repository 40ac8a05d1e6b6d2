// Event channel test clients: the real `ws` client on /ws and the real socket.io-client (websocket
// transport unless told otherwise), each keeping every event it receives so a test can wait for the next
// one of a name, and check what else arrived.
import WebSocket from 'ws';
import { io, type Socket } from 'socket.io-client';
import type { User } from './oracle.js';

export interface ChannelEvent {
  event: string;
  data: any;
}

/** Received events with waiting: `take` hands out each event once, in order of arrival. */
class Inbox {
  readonly all: ChannelEvent[] = [];
  #taken = new Set<number>();
  #waiters: (() => void)[] = [];

  push(item: ChannelEvent): void {
    this.all.push(item);
    for (const wake of this.#waiters.splice(0)) wake();
  }

  /** The first event named `event` (and matching `test`) not taken yet; waits for it. */
  async take(event: string, test: (data: any) => boolean = () => true, what = event): Promise<any> {
    for (;;) {
      const index = this.all.findIndex((item, i) => !this.#taken.has(i) && item.event === event && test(item.data));
      if (index >= 0) {
        this.#taken.add(index);
        return this.all[index].data;
      }
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no ${what} event; received: ${this.names().join(', ')}`)),
          10_000,
        );
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  names(): string[] {
    return this.all.map((item) => item.event);
  }
}

/** What both clients share: the inbox, a round trip, closing. */
abstract class ChannelTestClient {
  readonly inbox = new Inbox();

  constructor(readonly socket: { close(): void }) {}

  abstract send(event: string, data?: unknown): void;

  take(event: string, test?: (data: any) => boolean): Promise<any> {
    return this.inbox.take(event, test);
  }

  /** A round trip: every event sent to this socket before it is in the inbox afterwards. */
  async sync(): Promise<void> {
    this.send('ping');
    await this.take('pong');
  }

  close(): void {
    this.socket.close();
  }
}

export interface Credentials {
  invocation?: string;
  ucanDelegation?: string;
}

export class NativeClient extends ChannelTestClient {
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(override readonly socket: WebSocket) {
    super(socket);
    socket.on('message', (raw, isBinary) => {
      if (!isBinary) this.inbox.push(JSON.parse(String(raw)));
    });
    this.closed = new Promise((resolve) =>
      socket.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
    );
  }

  /** Opens a socket and waits for `connected`; rejects with the refusal's status and body. */
  static async connect(
    baseUrl: string,
    query: Record<string, string | undefined>,
    options: { headers?: Record<string, string>; autoPong?: boolean } = {},
  ): Promise<NativeClient> {
    const url = new URL('/ws', baseUrl.replace(/^http/, 'ws'));
    for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, value);
    return NativeClient.open(url.href, options);
  }

  /** Opens a socket on a complete URL and waits for `connected`. */
  static async open(
    url: string,
    options: { headers?: Record<string, string>; autoPong?: boolean } = {},
  ): Promise<NativeClient> {
    const socket = new WebSocket(url, { headers: options.headers, autoPong: options.autoPong ?? true });
    const client = new NativeClient(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk));
        res.on('end', () =>
          reject(
            Object.assign(new Error(`refused with ${res.statusCode}`), {
              status: res.statusCode,
              body: JSON.parse(body),
            }),
          ),
        );
      });
      socket.once('error', reject);
    });
    await client.inbox.take('connected');
    return client;
  }

  send(event: string, data?: unknown): void {
    this.socket.send(JSON.stringify(data === undefined ? { event } : { event, data }));
  }

  sendRaw(raw: string | Buffer): void {
    this.socket.send(raw);
  }
}

export class SocketIoClient extends ChannelTestClient {
  private constructor(override readonly socket: Socket) {
    super(socket);
    socket.onAny((event: string, data: unknown) => this.inbox.push({ event, data }));
  }

  static async connect(
    baseUrl: string,
    query: Record<string, string | undefined>,
    auth: Credentials,
    options: { transports?: ('websocket' | 'polling')[]; extraHeaders?: Record<string, string> } = {},
  ): Promise<SocketIoClient> {
    const definedQuery = Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined)) as Record<
      string,
      string
    >;
    const socket = io(baseUrl, {
      transports: options.transports ?? ['websocket'],
      query: definedQuery,
      auth: { ...auth },
      extraHeaders: options.extraHeaders,
      reconnection: false,
      forceNew: true,
    });
    const client = new SocketIoClient(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('connect_error', (error: Error & { data?: unknown }) => {
        socket.close();
        reject(error);
      });
    });
    await client.inbox.take('connected');
    return client;
  }

  send(event: string, data?: unknown): void {
    if (data === undefined) this.socket.emit(event);
    else this.socket.emit(event, data);
  }
}

/** The invocation of a test user (from its headers). */
export function invocationOf(user: User): string {
  return user.headers().authorization.replace(/^Bearer /, '');
}

/** Closes clients at the end of a test. */
export function closeAll(t: { teardown(fn: () => unknown): void }, ...clients: { close(): void }[]): void {
  t.teardown(() => {
    for (const client of clients) client.close();
  });
}
