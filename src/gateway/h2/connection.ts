// Thread: main (the gateway's HTTP/2 client)
// One HTTP/2 connection (cleartext with prior knowledge, or TLS with
// ALPN h2; RFC 9113) carrying unary gRPC calls. Hand-written for the hot path: node's http2 client builds an AsyncResource and a Duplex per
// call; here a call is one object, two frames out, and all frames of one event-loop turn leave in one write.
import type { Socket } from 'node:net';
import { status as GrpcStatus } from '@grpc/grpc-js';
import {
  ConnectionError,
  DEFAULT_MAX_FRAME_SIZE,
  ErrorCode,
  Flag,
  FrameReader,
  FrameType,
  SETTINGS_ACK,
  checkPing,
  clientOpening,
  goawayFrame,
  headerFrames,
  pingFrame,
  readGoaway,
  readRstStream,
  readSettings,
  readWindowIncrement,
  requestFrames,
  rstStreamFrame,
  unpad,
} from './frames.js';
import { FrameWriter } from './frame-writer.js';
import { failCalls, handBack } from './hand-back.js';
import { HeaderBlockReader, MAX_HEADER_BLOCK, type HeaderBlock } from './header-block.js';
import { Keepalive } from './keepalive.js';
import { CONNECTION_WINDOW, ReceiveWindows, STREAM_WINDOW } from './receive-windows.js';
import { RequestHeaders } from './request-headers.js';
import { SendWindows } from './send-windows.js';
import { grpcFrame, type UnaryCall } from './unary-call.js';
import type { ConnectionEvents, ConnectionOptions } from './connection-options.js';
import { protocolFailure, withPlaintextHint } from './failures.js';
import { listenToSocket } from './socket-events.js';

export type { ConnectionEvents, ConnectionOptions } from './connection-options.js';

const LAST_STREAM_ID = 2 ** 31 - 1;

export class H2Connection {
  readonly #socket: Socket;
  readonly #events: ConnectionEvents;
  readonly #requestHeaders: RequestHeaders;
  readonly #reader: FrameReader;
  readonly #streams = new Map<number, UnaryCall>();
  /** Calls waiting for a stream slot (the node's MAX_CONCURRENT_STREAMS). */
  #queue: UnaryCall[] = [];
  #nextStreamId = 1;
  #connected = false;
  /** TCP connected (TLS: handshake done, h2 agreed): calls are written from here on, never before. */
  #ready = false;
  #settingsReceived = false;
  #usable = true;
  #closing = false;
  #destroyed = false;
  /** Until the node's SETTINGS arrive, 100 streams at most (as nghttp2 assumes): a burst is not refused wholesale. */
  #maxConcurrent = 100;
  readonly #send: SendWindows;
  readonly #receive: ReceiveWindows;
  readonly #headerBlocks = new HeaderBlockReader();
  /** Write coalescing (the frames of one event-loop turn, written together) and the ACK flood bound. */
  readonly #writer: FrameWriter;
  #keepalive?: Keepalive;
  readonly #options: ConnectionOptions;

  constructor(socket: Socket, options: ConnectionOptions, events: ConnectionEvents) {
    this.#socket = socket;
    this.#writer = new FrameWriter(socket);
    this.#send = new SendWindows(this.#writer);
    this.#receive = new ReceiveWindows(this.#writer);
    this.#events = events;
    this.#options = options;
    this.#requestHeaders = new RequestHeaders(options.tls, options.authority);
    this.#reader = new FrameReader(DEFAULT_MAX_FRAME_SIZE, (type, flags, streamId, payload) =>
      this.#onFrame(type, flags, streamId, payload),
    );
    listenToSocket(socket, options.tls, {
      connected: () => {
        this.#connected = true;
        if (!options.tls) this.#becomeReady();
      },
      secured: () => this.#becomeReady(),
      // The node ended its side (an idle timeout, a restart): no new call may go out on this connection.
      // (Before its SETTINGS, the close that follows reports the failure.)
      ended: () => {
        if (this.#settingsReceived) this.#becomeUnusable();
      },
      data: (chunk) => this.#onBytes(chunk),
      failed: (error) =>
        this.#destroy(GrpcStatus.UNAVAILABLE, this.#withHint(options.describeError(error, this.#connected)), {
          retryUnanswered: true,
        }),
      closed: () =>
        this.#destroy(
          GrpcStatus.UNAVAILABLE,
          this.#withHint(this.#connected ? 'Connection to the node closed' : 'No connection established'),
          { retryUnanswered: true },
        ),
    });
    for (const frame of clientOpening(STREAM_WINDOW, CONNECTION_WINDOW, MAX_HEADER_BLOCK)) this.#writer.write(frame);
    // Pings keep NATs and proxies from dropping a quiet connection (only when asked for: a node with grpc-go's
    // default policy answers pings on an idle connection with GOAWAY too_many_pings). One unanswered drops it.
    if (options.keepaliveMs > 0) {
      this.#keepalive = new Keepalive(options.keepaliveMs, this.#writer, () =>
        this.#destroy(GrpcStatus.UNAVAILABLE, 'Keepalive ping not answered'),
      );
    }
  }

  /** The GOAWAY the node sent, if any: its code and debug text (`too_many_pings` doubles the keepalive). */
  goaway?: { code: number; debug: string };

  #onBytes(chunk: Buffer): void {
    if (this.#destroyed) return;
    try {
      // A TLS record (alert or handshake) where SETTINGS belongs: a plaintext target pointed at a TLS port.
      if (
        !this.#settingsReceived &&
        !this.#options.tls &&
        (chunk[0] === 0x15 || chunk[0] === 0x16) &&
        chunk[1] === 0x03
      ) {
        throw new Error('the node answered with TLS: write the target as grpcs://host:port');
      }
      this.#reader.push(chunk);
    } catch (error) {
      this.#protocolFailure(error);
    }
  }

  #becomeReady(): void {
    if (this.#destroyed) return;
    const alpn = (this.#socket as Socket & { alpnProtocol?: string | false }).alpnProtocol;
    if (this.#options.tls && alpn !== 'h2') {
      return this.#destroy(
        GrpcStatus.UNAVAILABLE,
        `TLS handshake done but the node did not agree to HTTP/2 (ALPN ${alpn ? JSON.stringify(alpn) : 'none'})`,
      );
    }
    this.#ready = true;
    this.#openQueued();
  }

  #withHint(details: string): string {
    return withPlaintextHint(details, this.#connected && !this.#settingsReceived, this.#options.plaintextHint);
  }

  /** Why the connection failed (the details its calls got), once it has; undefined after a graceful end. */
  failure?: string;

  /** The node answered with its SETTINGS: the connection was ready at some point. */
  get reachedNode(): boolean {
    return this.#settingsReceived;
  }

  /** Takes new calls: no GOAWAY either way, not failed, stream ids left. */
  get usable(): boolean {
    return this.#usable;
  }

  /** Open and queued calls (for tests and leak checks). */
  get load(): { open: number; queued: number } {
    return { open: this.#streams.size, queued: this.#queue.length };
  }

  start(call: UnaryCall): void {
    if (!this.#ready || this.#streams.size >= this.#maxConcurrent) {
      this.#queue.push(call);
      call.cancel = () => {
        this.#queue = this.#queue.filter((queued) => queued !== call);
      };
      return;
    }
    this.#open(call);
  }

  #open(call: UnaryCall): void {
    const id = this.#nextStreamId;
    this.#nextStreamId += 2;
    if (this.#nextStreamId > LAST_STREAM_ID) this.#becomeUnusable();
    call.id = id;
    call.sendWindow = this.#send.initialStreamWindow;
    call.receiveWindow = STREAM_WINDOW;
    call.cancel = () => this.#cancel(call);
    this.#streams.set(id, call);
    const block = this.#requestHeaders.block(call.path, call.metadataBlock);
    const size = 5 + call.message.length;
    if (this.#send.takeWhole(call, size)) {
      // The usual case: the whole request in one buffer.
      this.#writer.write(requestFrames(id, block, call.message, this.#send.maxFrame));
      return;
    }
    this.#writer.write(headerFrames(id, block, false, this.#send.maxFrame));
    call.body = grpcFrame(call.message);
    this.#send.sendBody(call);
  }

  /** Queued calls take the stream slots that are free (a stream ended, or the node's SETTINGS raised the limit). */
  #openQueued(): void {
    while (this.#ready && this.#queue.length > 0 && this.#streams.size < this.#maxConcurrent && this.#usable)
      this.#open(this.#queue.shift()!);
  }

  /** The deadline passed (or the answer grew too large): the node is told to stop, the stream is forgotten. */
  #cancel(call: UnaryCall): void {
    if (this.#streams.get(call.id) !== call) return;
    this.#writer.write(rstStreamFrame(call.id, ErrorCode.CANCEL));
    this.#endStream(call);
  }

  #endStream(call: UnaryCall): void {
    this.#streams.delete(call.id);
    this.#send.forget(call);
    call.cancel = undefined;
    this.#openQueued();
    if (this.#closing && this.#streams.size === 0) this.#writer.end();
  }

  /** No new calls; the open ones finish; the socket ends after the last. */
  close(): void {
    if (this.#destroyed || this.#closing) return;
    this.#closing = true;
    this.#becomeUnusable();
    this.#writer.write(goawayFrame(0, ErrorCode.NO_ERROR));
    if (this.#streams.size === 0) this.#writer.end();
  }

  #becomeUnusable(): void {
    if (!this.#usable) return;
    this.#usable = false;
    this.#events.unusable(this);
    const queued = this.#queue;
    this.#queue = [];
    // Never written: a connection that never became ready sends them on at no cost (the channel's dial round
    // and backoff bound how often).
    handBack(queued, this.#events, this.failure, this.#settingsReceived);
  }

  #onFrame(type: number, flags: number, streamId: number, payload: Buffer): void {
    if (this.#destroyed) return;
    if (this.#headerBlocks.pending && type !== FrameType.CONTINUATION)
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'header block interrupted by another frame');
    if (!this.#settingsReceived && type !== FrameType.SETTINGS)
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'the node did not start with SETTINGS');
    switch (type) {
      case FrameType.DATA:
        return this.#onData(flags, streamId, payload);
      case FrameType.HEADERS:
        this.#checkOpened(streamId, 'HEADERS');
        return this.#onHeaderBlock(this.#headerBlocks.headers(flags, streamId, payload));
      case FrameType.CONTINUATION:
        return this.#onHeaderBlock(this.#headerBlocks.continuation(flags, streamId, payload));
      case FrameType.RST_STREAM:
        return this.#onReset(streamId, payload);
      case FrameType.SETTINGS:
        return this.#onSettings(flags, streamId, payload);
      case FrameType.PING:
        return this.#onPing(flags, streamId, payload);
      case FrameType.GOAWAY:
        return this.#onGoaway(streamId, payload);
      case FrameType.WINDOW_UPDATE:
        return this.#onWindowUpdate(streamId, payload);
      case FrameType.PUSH_PROMISE:
        throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'PUSH_PROMISE with push disabled');
      default:
        return; // PRIORITY and unknown types carry nothing for this client.
    }
  }

  /** A stream id the node may not use yet (never opened by us) is a connection error. */
  #checkOpened(streamId: number, kind: string): void {
    if (streamId === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, `${kind} on stream 0`);
    if (streamId % 2 === 0 || streamId >= this.#nextStreamId)
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, `${kind} on idle stream ${streamId}`);
  }

  #onData(flags: number, streamId: number, payload: Buffer): void {
    this.#checkOpened(streamId, 'DATA');
    // Flow control counts the whole payload, padding included.
    const size = payload.length;
    this.#receive.received(size);
    const call = this.#streams.get(streamId);
    if (!call) return; // cancelled or finished here: its bytes still counted above
    call.receiveWindow -= size;
    if (call.receiveWindow < 0) return this.#resetStream(call, ErrorCode.FLOW_CONTROL_ERROR);
    if (!call.onData(unpad(payload, flags))) {
      this.#cancel(call);
      return;
    }
    if (flags & Flag.END_STREAM) return this.#finish(call);
    this.#receive.consumed(call, size);
  }

  #onHeaderBlock(block: HeaderBlock | undefined): void {
    const call = block && this.#streams.get(block.streamId);
    if (!call) return;
    call.onHeaders(block.headers);
    if (block.endStream) this.#finish(call);
  }

  #finish(call: UnaryCall, rstCode?: number): void {
    // The node ended its side; if ours is still held by flow control it is no longer wanted.
    if (call.body.length > 0 && rstCode === undefined) this.#writer.write(rstStreamFrame(call.id, ErrorCode.NO_ERROR));
    this.#endStream(call);
    call.finish(rstCode);
  }

  /** A stream error found here: the node is told, the call ends as grpc-js would report the reset. */
  #resetStream(call: UnaryCall, code: number): void {
    this.#writer.write(rstStreamFrame(call.id, code));
    this.#endStream(call);
    call.finish(code);
  }

  #onReset(streamId: number, payload: Buffer): void {
    const code = readRstStream(payload);
    this.#checkOpened(streamId, 'RST_STREAM');
    const call = this.#streams.get(streamId);
    if (!call) return;
    if (code === ErrorCode.REFUSED_STREAM && !call.headers) {
      // Refused before any processing: safe to send again (once), as grpc-js retries it transparently.
      this.#endStream(call);
      return handBack([call], this.#events, 'Received RST_STREAM with code 7');
    }
    this.#finish(call, code);
  }

  #onSettings(flags: number, streamId: number, payload: Buffer): void {
    const settings = readSettings(flags, streamId, payload);
    if (!settings) return;
    if (!this.#settingsReceived) {
      this.#maxConcurrent = Infinity; // the node's own limit, if any, follows
      this.#settingsReceived = true;
      this.#events.reached(this);
    }
    const maxConcurrent = this.#send.applySettings(settings, this.#streams.values());
    if (maxConcurrent !== undefined) this.#maxConcurrent = maxConcurrent;
    this.#writer.acknowledge(SETTINGS_ACK);
    this.#send.resumeBlocked();
    this.#openQueued();
  }

  #onPing(flags: number, streamId: number, payload: Buffer): void {
    checkPing(streamId, payload);
    if (!(flags & Flag.ACK)) return this.#writer.acknowledge(pingFrame(payload, true));
    this.#keepalive?.acknowledged();
  }

  #onGoaway(streamId: number, payload: Buffer): void {
    const { lastStreamId, code, debug } = readGoaway(streamId, payload);
    this.goaway = { code, debug };
    this.#becomeUnusable();
    // Streams above the last id were never processed by the node: sent again elsewhere (once), as grpc-js does.
    const unseen = [...this.#streams.values()].filter((call) => call.id > lastStreamId);
    for (const call of unseen) this.#streams.delete(call.id), this.#send.forget(call);
    handBack(unseen, this.#events, `Connection closed by the node (GOAWAY code ${code})`);
    this.#closing = true;
    if (this.#streams.size === 0) this.#writer.end();
  }

  #onWindowUpdate(streamId: number, payload: Buffer): void {
    const increment = readWindowIncrement(payload);
    if (streamId === 0) return this.#send.creditConnection(increment);
    this.#checkOpened(streamId, 'WINDOW_UPDATE');
    const call = this.#streams.get(streamId);
    if (!call) return;
    const streamError = this.#send.creditStream(call, increment);
    if (streamError !== undefined) this.#resetStream(call, streamError);
  }

  /** The node broke the protocol: it is told why (GOAWAY), the connection is dropped (protocolFailure says how). */
  #protocolFailure(error: unknown): void {
    const failure = protocolFailure(error, this.#settingsReceived);
    this.#destroy(failure.status, this.#withHint(failure.details), { lastFrame: failure.lastFrame });
  }

  /** Every unfinished call fails with `code` (or, `retryUnanswered`, goes out again: failCalls); the socket is destroyed. */
  #destroy(
    code: number,
    details: string,
    { lastFrame, retryUnanswered = false }: { lastFrame?: Buffer; retryUnanswered?: boolean } = {},
  ): void {
    if (this.#destroyed) return;
    this.failure = details;
    this.#becomeUnusable();
    this.#destroyed = true;
    this.#keepalive?.stop();
    const calls = [...this.#streams.values()];
    this.#streams.clear();
    this.#send.clear();
    this.#writer.abort(lastFrame);
    failCalls(calls, code, details, retryUnanswered && !this.goaway, this.#events);
  }
}
