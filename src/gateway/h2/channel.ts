// Thread: main (the gateway's HTTP/2 client)
// Unary gRPC calls to one node over one HTTP/2 connection of our own
// (./connection.ts), dialled again after a GOAWAY or a drop. Hand-written for the hot path; see bench/README.md.
// Several addresses are used pick-first: the first that connects serves every call until it fails, then the
// next dial starts from the first again.
import type { LookupFunction } from 'node:net';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { H2Connection } from './connection.js';
import { dial, dialError, lookupThrough, type TlsSettings } from './dial.js';
import { encodeFields, fieldEncoder } from './hpack.js';
import { authorityOf, describeAddress, type H2Address } from './target.js';
import { UnaryCall, type H2Outcome } from './unary-call.js';

/**
 * After every address failed, calls fail at once (UNAVAILABLE, with the last attempt's error) until the next
 * round is due, instead of each dialling again: gRPC's connection backoff (grpc-js's defaults: 1 s, times 1.6,
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
/** A connection attempt (TCP, TLS handshake) that has not finished by then fails, so the next address is tried. */
export const CONNECT_TIMEOUT_MS = 5000;
/** The keepalive interval doubles after each GOAWAY too_many_pings, up to this (as grpc-js caps it). */
const MAX_KEEPALIVE_MS = 2 ** 31 - 1;

/** Where the node listens: one address, or several (tried in order), with TLS or without. */
export type H2Target =
  | H2Address
  | { addresses: H2Address[]; tls?: TlsSettings; authority?: string; dnsServer?: string };

export interface ChannelOptions {
  /** Default limit of one answer's message (per call: see call()). */
  maxReceiveBytes: number;
  /** 0: no keepalive PINGs. */
  keepaliveMs: number;
  /** Connection state changes, for the log (a failure once per distinct error, not per call). */
  onState?: (state: ChannelState) => void;
  /** For tests: a shorter backoff, a clock they move, a resolver of their own. */
  backoff?: DialBackoff;
  now?: () => number;
  lookup?: LookupFunction;
}

/** What /health shows of the upstream. */
export interface ChannelState {
  /** ready: a connection reached the node; failing: the last attempt failed; idle: nothing dialled yet. */
  state: 'idle' | 'connecting' | 'ready' | 'failing';
  /** The address of the connection that reached the node (or the last one tried). */
  address?: string;
  /** The last failure (a TLS certificate error names its OpenSSL code); cleared when a connection reaches the node. */
  error?: string;
  keepaliveMs: number;
}

export class H2Channel {
  readonly #addresses: H2Address[];
  readonly #tls?: TlsSettings;
  readonly #lookup?: LookupFunction;
  readonly #authority: string;
  readonly #maxReceiveBytes: number;
  readonly #onState?: (state: ChannelState) => void;
  #keepaliveMs: number;
  readonly #retry = (calls: UnaryCall[]) => {
    for (const call of calls) if (!call.settled) this.#dispatch(call);
  };
  readonly #unusable = (connection: H2Connection) => this.#onUnusable(connection);
  readonly #backoff: DialBackoff;
  readonly #now: () => number;
  #backoffMs: number;
  #nextDialAt = 0;
  /** The address the next dial tries (an index into #addresses); back to 0 after a round or a success. */
  #nextAddress = 0;
  #dialFailure = '';
  #state: ChannelState;
  #connection?: H2Connection;
  #closed = false;

  constructor(target: H2Target, options: ChannelOptions) {
    const multi = 'addresses' in target ? target : { addresses: [target] };
    if (multi.addresses.length === 0) throw new Error('H2Channel: no address');
    this.#addresses = multi.addresses;
    this.#tls = multi.tls;
    this.#lookup = options.lookup ?? (multi.dnsServer ? lookupThrough(multi.dnsServer) : undefined);
    this.#authority = multi.authority ?? authorityOf(multi.addresses[0]);
    this.#backoff = options.backoff ?? DIAL_BACKOFF;
    this.#backoffMs = this.#backoff.initialMs;
    this.#now = options.now ?? Date.now;
    this.#maxReceiveBytes = options.maxReceiveBytes;
    this.#keepaliveMs = options.keepaliveMs;
    this.#onState = options.onState;
    this.#state = { state: 'idle', keepaliveMs: this.#keepaliveMs };
  }

  /** The open connection (for tests: its load), if any. */
  get connection(): H2Connection | undefined {
    return this.#connection;
  }

  get state(): ChannelState {
    return this.#state;
  }

  /**
   * One unary call. Never rejects: transport failures are answered as their gRPC status (UNAVAILABLE when
   * the node cannot be reached, DEADLINE_EXCEEDED past the deadline), as grpc-js reports them. An answer whose
   * message is larger than `maxReceiveBytes` fails RESOURCE_EXHAUSTED as soon as its length prefix arrives.
   */
  call(
    path: string,
    message: Uint8Array,
    metadata: Record<string, string>,
    timeoutMs: number,
    maxReceiveBytes = this.#maxReceiveBytes,
  ): Promise<H2Outcome> {
    return new Promise((resolve) => {
      if (this.#closed) return resolve({ code: GrpcStatus.UNAVAILABLE, details: 'Channel has been shut down' });
      const call = new UnaryCall(path, metadataBlock(timeoutMs, metadata), message, maxReceiveBytes, resolve);
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
      connection = this.#dial();
    }
    connection.start(call);
  }

  #dial(): H2Connection {
    const address = this.#addresses[this.#nextAddress];
    const tls = this.#tls !== undefined;
    const { socket, readyEvent } = dial(address, { tls: this.#tls, lookup: this.#lookup });
    // An address that swallows the SYN (or a TLS handshake that stalls) must not hold the calls to their deadline.
    const timer = setTimeout(
      () =>
        socket.destroy(
          Object.assign(new Error(`connect timed out after ${CONNECT_TIMEOUT_MS} ms`), { code: 'ETIMEDOUT' }),
        ),
      CONNECT_TIMEOUT_MS,
    ).unref();
    socket.once(readyEvent, () => clearTimeout(timer));
    socket.once('close', () => clearTimeout(timer));
    const port = 'socketPath' in address ? 0 : address.port;
    const connection = new H2Connection(
      socket,
      {
        authority: this.#authority,
        keepaliveMs: this.#keepaliveMs,
        tls,
        plaintextHint: tls
          ? undefined
          : port === 443
            ? 'port 443 usually speaks TLS: for a TLS node, write the target as grpcs://host:443'
            : 'if the node speaks TLS, write the target as grpcs://host:port',
        describeError: (error, connected) => dialError(error, tls, connected),
      },
      {
        unusable: this.#unusable,
        retry: this.#retry,
        reached: () =>
          this.#setState({ state: 'ready', address: describeAddress(address), keepaliveMs: this.#keepaliveMs }),
      },
    );
    this.#connection = connection;
    this.#setState({
      state: 'connecting',
      address: describeAddress(address),
      error: this.#state.error,
      keepaliveMs: this.#keepaliveMs,
    });
    return connection;
  }

  #onUnusable(connection: H2Connection): void {
    if (this.#connection === connection) this.#connection = undefined;
    if (connection.goaway?.code === 11 && connection.goaway.debug === 'too_many_pings' && this.#keepaliveMs > 0) {
      // The node's ping policy is stricter than our interval: ping half as often from the next connection on.
      this.#keepaliveMs = Math.min(this.#keepaliveMs * 2, MAX_KEEPALIVE_MS);
    }
    if (connection.reachedNode) {
      this.#backoffMs = this.#backoff.initialMs;
      this.#nextAddress = 0;
      this.#setState({ ...this.#state, state: 'idle', keepaliveMs: this.#keepaliveMs });
      return;
    }
    if (connection.failure === undefined) return;
    this.#dialFailure = connection.failure;
    this.#setState({
      state: 'failing',
      address: this.#state.address,
      error: connection.failure,
      keepaliveMs: this.#keepaliveMs,
    });
    // The next address gets the next dial at once; after the last, the round starts again after the backoff.
    this.#nextAddress++;
    if (this.#nextAddress < this.#addresses.length) return;
    this.#nextAddress = 0;
    const jitter = 1 + this.#backoff.jitter * (2 * Math.random() - 1);
    this.#nextDialAt = this.#now() + this.#backoffMs * jitter;
    this.#backoffMs = Math.min(this.#backoffMs * this.#backoff.multiplier, this.#backoff.maxMs);
  }

  #setState(state: ChannelState): void {
    const previous = this.#state;
    this.#state = state;
    if (previous.state !== state.state || previous.error !== state.error || previous.address !== state.address)
      this.#onState?.(state);
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
