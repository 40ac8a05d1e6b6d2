// Main thread (the gateway's HTTP/2 client). Unary gRPC calls to one node over one HTTP/2 connection of our own
// (./connection.ts), dialled again after a GOAWAY or a drop. Hand-written for the hot path; see bench/README.md.
import { connect as netConnect } from 'node:net';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { H2Connection } from './connection.js';
import { encodeFields, fieldEncoder } from './hpack.js';
import { UnaryCall, type H2Outcome } from './unary-call.js';

/**
 * After a connection attempt fails, calls fail at once (UNAVAILABLE, with that attempt's error) until the next
 * attempt is due, instead of each dialling again: gRPC's connection backoff (grpc-js's defaults: 1 s, times 1.6,
 * +-20% jitter), capped at 5 s rather than 120 s so a node back from a restart serves the gateway's clients
 * within seconds. A connection that reached the node resets it.
 */
export interface DialBackoff {
  initialMs: number;
  maxMs: number;
  multiplier: number;
  jitter: number;
}
export const DIAL_BACKOFF: DialBackoff = { initialMs: 1000, maxMs: 5000, multiplier: 1.6, jitter: 0.2 };

/** Where the node listens: host and port, or a unix socket. */
export type H2Target = { host: string; port: number } | { socketPath: string };

export class H2Channel {
  readonly #target: H2Target;
  readonly #authority: string;
  readonly #maxReceiveBytes: number;
  readonly #keepaliveMs: number;
  readonly #retry = (calls: UnaryCall[]) => {
    for (const call of calls) if (!call.settled) this.#dispatch(call);
  };
  readonly #unusable = (connection: H2Connection) => {
    if (this.#connection === connection) this.#connection = undefined;
    if (connection.reachedNode) {
      this.#backoffMs = this.#backoff.initialMs;
    } else if (connection.failure !== undefined) {
      const jitter = 1 + this.#backoff.jitter * (2 * Math.random() - 1);
      this.#nextDialAt = this.#now() + this.#backoffMs * jitter;
      this.#dialFailure = connection.failure;
      this.#backoffMs = Math.min(this.#backoffMs * this.#backoff.multiplier, this.#backoff.maxMs);
    }
  };
  readonly #backoff: DialBackoff;
  readonly #now: () => number;
  #backoffMs: number;
  #nextDialAt = 0;
  #dialFailure = '';
  #connection?: H2Connection;
  #closed = false;

  /** `backoff` and `now` are for tests (a shorter backoff, a clock they move). */
  constructor(target: H2Target, options: { maxReceiveBytes: number; keepaliveMs: number; backoff?: DialBackoff; now?: () => number }) {
    this.#target = target;
    this.#backoff = options.backoff ?? DIAL_BACKOFF;
    this.#backoffMs = this.#backoff.initialMs;
    this.#now = options.now ?? Date.now;
    this.#authority = 'socketPath' in target ? 'localhost' : target.host.includes(':') ? `[${target.host}]:${target.port}` : `${target.host}:${target.port}`;
    this.#maxReceiveBytes = options.maxReceiveBytes;
    this.#keepaliveMs = options.keepaliveMs;
  }

  /** The open connection (for tests: its load), if any. */
  get connection(): H2Connection | undefined {
    return this.#connection;
  }

  /**
   * One unary call. Never rejects: transport failures are answered as their gRPC status (UNAVAILABLE when
   * the node cannot be reached, DEADLINE_EXCEEDED past the deadline), as grpc-js reports them.
   */
  call(path: string, message: Uint8Array, metadata: Record<string, string>, timeoutMs: number): Promise<H2Outcome> {
    return new Promise((resolve) => {
      if (this.#closed) return resolve({ code: GrpcStatus.UNAVAILABLE, details: 'Channel has been shut down' });
      const call = new UnaryCall(path, metadataBlock(timeoutMs, metadata), message, this.#maxReceiveBytes, resolve);
      call.deadline = setTimeout(() => {
        const cancel = call.cancel;
        call.settle(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded');
        cancel?.();
      }, timeoutMs);
      this.#dispatch(call);
    });
  }

  #dispatch(call: UnaryCall): void {
    if (this.#closed) return call.settle(GrpcStatus.UNAVAILABLE, 'Channel has been shut down');
    let connection = this.#connection;
    if (!connection?.usable) {
      if (this.#now() < this.#nextDialAt) return call.settle(GrpcStatus.UNAVAILABLE, this.#dialFailure);
      const target = this.#target;
      const socket = 'socketPath' in target ? netConnect(target.socketPath) : netConnect(target.port, target.host);
      connection = new H2Connection(socket, { authority: this.#authority, keepaliveMs: this.#keepaliveMs }, { unusable: this.#unusable, retry: this.#retry });
      this.#connection = connection;
    }
    connection.start(call);
  }

  /** No new calls; open ones finish. */
  close(): void {
    this.#closed = true;
    this.#connection?.close();
    this.#connection = undefined;
  }
}

/** `grpc-timeout` encoded once per timeout (the gateway uses one). */
const timeoutField = fieldEncoder('grpc-timeout', 64);

/** The per-call fields after the fixed ones and `:path`: `grpc-timeout` and the call's metadata. */
function metadataBlock(timeoutMs: number, metadata: Record<string, string>): Buffer {
  for (const _ in metadata) return encodeFields([['grpc-timeout', `${timeoutMs}m`], ...Object.entries(metadata)]);
  return timeoutField(`${timeoutMs}m`);
}
