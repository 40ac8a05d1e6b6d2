// Main thread (the gateway's HTTP/2 client). One cleartext HTTP/2 connection (prior knowledge, RFC 9113) carrying
// unary gRPC calls. Hand-written for the hot path: node's http2 client builds an AsyncResource and a Duplex per
// call; here a call is one object, two frames out, and all frames of one event-loop turn leave in one write.
import type { Socket } from 'node:net';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { readGoaway, readPing, readResetCode, readSettings, readWindowIncrement } from './control-frames.js';
import {
  ConnectionError, DEFAULT_MAX_FRAME_SIZE, ErrorCode, Flag, FrameReader, FrameType, SETTINGS_ACK,
  goawayFrame, headerFrames, pingFrame, requestFrames, rstStreamFrame, unpad,
} from './frames.js';
import { type HeaderBlock, HeaderBlocks } from './header-blocks.js';
import { clientOpening, FlowControl } from './flow-control.js';
import { FrameWriter } from './frame-writer.js';
import { encodeFields, fieldEncoder } from './hpack.js';
import { grpcFrame, toRetry, type UnaryCall } from './unary-call.js';

const LAST_STREAM_ID = 2 ** 31 - 1;

export interface ConnectionEvents {
  /** The connection takes no new calls (GOAWAY, failure, close): the channel dials another for the next call. */
  unusable(connection: H2Connection): void;
  /** Calls the node never saw (queued here, or above a GOAWAY's last stream id): to be sent on another connection. */
  retry(calls: UnaryCall[]): void;
}

export class H2Connection {
  readonly #socket: Socket;
  readonly #events: ConnectionEvents;
  // The fields every call sends, encoded once: pseudo-headers (before `:path`), then the regular ones.
  readonly #pseudoBlock: Buffer;
  readonly #regularBlock: Buffer;
  readonly #headerBlocks = new HeaderBlocks();
  readonly #reader: FrameReader;
  readonly #streams = new Map<number, UnaryCall>();
  /** Calls waiting for a stream slot (the node's MAX_CONCURRENT_STREAMS). */
  #queue: UnaryCall[] = [];
  #nextStreamId = 1;
  #connected = false;
  #settingsReceived = false;
  #usable = true;
  #closing = false;
  #destroyed = false;
  /** Our side of the socket ended (after a GOAWAY, once the last stream finished): nothing more is written. */
  #ended = false;
  /** Until the node's SETTINGS arrive, 100 streams at most (as nghttp2 assumes): a burst is not refused wholesale. */
  #maxConcurrent = 100;
  readonly #writer: FrameWriter;
  readonly #flow: FlowControl;
  #keepalive?: NodeJS.Timeout;
  #pingOutstanding = false;

  constructor(socket: Socket, options: { authority: string; keepaliveMs: number }, events: ConnectionEvents) {
    this.#socket = socket;
    this.#writer = new FrameWriter(socket);
    this.#flow = new FlowControl((frame) => this.#write(frame));
    this.#events = events;
    this.#pseudoBlock = encodeFields([[':method', 'POST'], [':scheme', 'http'], [':authority', options.authority]]);
    this.#regularBlock = encodeFields([['content-type', 'application/grpc'], ['te', 'trailers']]);
    this.#reader = new FrameReader(DEFAULT_MAX_FRAME_SIZE, (type, flags, streamId, payload) => this.#onFrame(type, flags, streamId, payload));
    socket.setNoDelay(true);
    socket.unref();
    socket.on('connect', () => {
      this.#connected = true;
    });
    socket.on('data', (chunk: Buffer) => {
      if (this.#destroyed) return;
      try {
        this.#reader.push(chunk);
      } catch (error) {
        this.#protocolFailure(error);
      }
    });
    socket.on('error', (error) => this.#destroy(GrpcStatus.UNAVAILABLE, this.#connected ? `Connection to the node failed: ${error.message}` : `No connection established: ${error.message}`));
    socket.on('close', () => this.#destroy(GrpcStatus.UNAVAILABLE, this.#connected ? 'Connection to the node closed' : 'No connection established'));
    // The client preface, our settings and the connection window, before any call (allowed with prior knowledge).
    this.#write(clientOpening());
    // Pings keep NATs and proxies from dropping a quiet connection; one unanswered for a whole period drops it.
    this.#keepalive = setInterval(() => {
      if (this.#pingOutstanding) return this.#destroy(GrpcStatus.UNAVAILABLE, 'Keepalive ping not answered');
      this.#pingOutstanding = true;
      this.#write(pingFrame(Buffer.alloc(8), false));
    }, options.keepaliveMs).unref();
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
    if (this.#streams.size >= this.#maxConcurrent) {
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
    this.#flow.open(call);
    call.cancel = () => this.#cancel(call);
    this.#streams.set(id, call);
    const block = [this.#pseudoBlock, pathField(call.path), this.#regularBlock, call.metadataBlock];
    const size = 5 + call.message.length;
    if (this.#flow.takeWhole(call, size)) {
      // The usual case: the whole request in one buffer.
      this.#write(requestFrames(id, block, call.message, this.#flow.peerMaxFrame));
      return;
    }
    this.#write(headerFrames(id, block, false, this.#flow.peerMaxFrame));
    call.body = grpcFrame(call.message);
    this.#flow.sendBody(call);
  }

  /** Queued calls take the stream slots that are free (a stream ended, or the node's SETTINGS raised the limit). */
  #openQueued(): void {
    while (this.#queue.length > 0 && this.#streams.size < this.#maxConcurrent && this.#usable) this.#open(this.#queue.shift()!);
  }

  /** The deadline passed (or the answer grew too large): the node is told to stop, the stream is forgotten. */
  #cancel(call: UnaryCall): void {
    if (this.#streams.get(call.id) !== call) return;
    this.#write(rstStreamFrame(call.id, ErrorCode.CANCEL));
    this.#endStream(call);
  }

  #endStream(call: UnaryCall): void {
    this.#streams.delete(call.id);
    this.#flow.forget(call);
    call.cancel = undefined;
    this.#openQueued();
    if (this.#closing && this.#streams.size === 0) this.#end();
  }

  /** Flushes what is queued and ends our side; the node closes its side in turn. */
  #end(): void {
    if (this.#ended || this.#destroyed) return;
    this.#writer.flush();
    this.#writer.stop();
    this.#ended = true;
    this.#socket.end();
  }

  /** No new calls; the open ones finish; the socket ends after the last. */
  close(): void {
    if (this.#destroyed || this.#closing) return;
    this.#closing = true;
    this.#becomeUnusable();
    this.#write(goawayFrame(0, ErrorCode.NO_ERROR));
    if (this.#streams.size === 0) this.#end();
  }

  #becomeUnusable(): void {
    if (!this.#usable) return;
    this.#usable = false;
    this.#events.unusable(this);
    const queued = this.#queue;
    this.#queue = [];
    this.#handBack(queued);
  }

  /** Calls the node never saw go to another connection (once each: see toRetry). */
  #handBack(calls: UnaryCall[], details = 'Connection closed by the node before the call was sent'): void {
    const again = toRetry(calls, details);
    if (again.length > 0) this.#events.retry(again);
  }

  #write(frame: Buffer): void {
    this.#writer.write(frame);
  }

  #onFrame(type: number, flags: number, streamId: number, payload: Buffer): void {
    if (this.#destroyed) return;
    if (this.#headerBlocks.open && type !== FrameType.CONTINUATION) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'header block interrupted by another frame');
    if (!this.#settingsReceived && type !== FrameType.SETTINGS) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'the node did not start with SETTINGS');
    switch (type) {
      case FrameType.DATA: return this.#onData(flags, streamId, payload);
      case FrameType.HEADERS:
        this.#checkOpened(streamId, 'HEADERS');
        return this.#onHeaderBlock(this.#headerBlocks.headers(flags, streamId, payload));
      case FrameType.CONTINUATION: return this.#onHeaderBlock(this.#headerBlocks.continuation(flags, streamId, payload));
      case FrameType.RST_STREAM: return this.#onReset(streamId, payload);
      case FrameType.SETTINGS: return this.#onSettings(flags, streamId, payload);
      case FrameType.PING: return this.#onPing(flags, streamId, payload);
      case FrameType.GOAWAY: return this.#onGoaway(streamId, payload);
      case FrameType.WINDOW_UPDATE: return this.#onWindowUpdate(streamId, payload);
      case FrameType.PUSH_PROMISE: throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'PUSH_PROMISE with push disabled');
      default: return; // PRIORITY and unknown types carry nothing for this client.
    }
  }

  /** A stream id the node may not use yet (never opened by us) is a connection error. */
  #checkOpened(streamId: number, kind: string): void {
    if (streamId === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, `${kind} on stream 0`);
    if (streamId % 2 === 0 || streamId >= this.#nextStreamId) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, `${kind} on idle stream ${streamId}`);
  }

  #onData(flags: number, streamId: number, payload: Buffer): void {
    this.#checkOpened(streamId, 'DATA');
    // Flow control counts the whole payload, padding included.
    const size = payload.length;
    this.#flow.received(size);
    const call = this.#streams.get(streamId);
    if (!call) return; // cancelled or finished here: its bytes still counted above
    if (!this.#flow.receivedOnStream(call, size)) return this.#resetStream(call, ErrorCode.FLOW_CONTROL_ERROR);
    if (!call.onData(unpad(payload, flags))) {
      this.#cancel(call);
      return;
    }
    if (flags & Flag.END_STREAM) return this.#finish(call);
    this.#flow.creditStream(call, size);
  }

  #onHeaderBlock(block: HeaderBlock | undefined): void {
    const call = block && this.#streams.get(block.streamId);
    if (!call) return;
    call.onHeaders(block.headers);
    if (block.endStream) this.#finish(call);
  }

  #finish(call: UnaryCall, rstCode?: number): void {
    // The node ended its side; if ours is still held by flow control it is no longer wanted.
    if (call.body.length > 0 && rstCode === undefined) this.#write(rstStreamFrame(call.id, ErrorCode.NO_ERROR));
    this.#endStream(call);
    call.finish(rstCode);
  }

  /** A stream error found here: the node is told, the call ends as grpc-js would report the reset. */
  #resetStream(call: UnaryCall, code: number): void {
    this.#write(rstStreamFrame(call.id, code));
    this.#endStream(call);
    call.finish(code);
  }

  #onReset(streamId: number, payload: Buffer): void {
    const code = readResetCode(payload);
    this.#checkOpened(streamId, 'RST_STREAM');
    const call = this.#streams.get(streamId);
    if (!call) return;
    if (code === ErrorCode.REFUSED_STREAM && !call.headers) {
      // Refused before any processing: safe to send again (once), as grpc-js retries it transparently.
      this.#endStream(call);
      return this.#handBack([call], 'Received RST_STREAM with code 7');
    }
    this.#finish(call, code);
  }

  #onSettings(flags: number, streamId: number, payload: Buffer): void {
    const settings = readSettings(flags, streamId, payload);
    if (settings === 'ack') return;
    if (!this.#settingsReceived) this.#maxConcurrent = Infinity; // the node's own limit, if any, follows
    this.#settingsReceived = true;
    if (settings.maxConcurrent !== undefined) this.#maxConcurrent = settings.maxConcurrent;
    if (settings.initialWindow !== undefined) this.#flow.setInitialWindow(settings.initialWindow, this.#streams.values());
    if (settings.maxFrame !== undefined) this.#flow.peerMaxFrame = settings.maxFrame;
    this.#write(SETTINGS_ACK);
    this.#flow.resume();
    this.#openQueued();
  }

  #onPing(flags: number, streamId: number, payload: Buffer): void {
    if (readPing(flags, streamId, payload).ack) this.#pingOutstanding = false;
    else this.#write(pingFrame(payload, true));
  }

  #onGoaway(streamId: number, payload: Buffer): void {
    const { lastStreamId, code } = readGoaway(streamId, payload);
    this.#becomeUnusable();
    // Streams above the last id were never processed by the node: sent again elsewhere (once), as grpc-js does.
    const unseen = [...this.#streams.values()].filter((call) => call.id > lastStreamId);
    for (const call of unseen) this.#streams.delete(call.id), this.#flow.forget(call);
    this.#handBack(unseen, `Connection closed by the node (GOAWAY code ${code})`);
    this.#closing = true;
    if (this.#streams.size === 0) this.#end();
  }

  #onWindowUpdate(streamId: number, payload: Buffer): void {
    const increment = readWindowIncrement(payload);
    if (streamId === 0) return this.#flow.connectionIncrement(increment);
    this.#checkOpened(streamId, 'WINDOW_UPDATE');
    const call = this.#streams.get(streamId);
    if (!call) return;
    const wrong = this.#flow.streamIncrement(call, increment);
    if (wrong !== undefined) this.#resetStream(call, wrong);
  }

  /**
   * The node broke the protocol: it is told why (GOAWAY), the connection is dropped, its calls fail INTERNAL. Before
   * its first SETTINGS the peer is not an HTTP/2 node at all (an HTTP/1 port, say): UNAVAILABLE, as grpc-js answers
   * a connection that never became ready, so a misconfigured upstream reads as one that cannot be reached.
   */
  #protocolFailure(error: unknown): void {
    const code = error instanceof ConnectionError ? error.code : ErrorCode.INTERNAL_ERROR;
    const message = (error as Error).message;
    const [status, what] = this.#settingsReceived ? [GrpcStatus.INTERNAL, 'HTTP/2 protocol error from the node'] : [GrpcStatus.UNAVAILABLE, 'The node does not speak HTTP/2'];
    this.#destroy(status, `${what}: ${message}`, goawayFrame(0, code, message.slice(0, 200)));
  }

  /** Every unfinished call fails with `code`; the socket is destroyed. */
  #destroy(code: number, details: string, lastFrame?: Buffer): void {
    if (this.#destroyed) return;
    this.failure = details;
    this.#becomeUnusable();
    this.#destroyed = true;
    clearInterval(this.#keepalive);
    const calls = [...this.#streams.values()];
    this.#streams.clear();
    this.#flow.clear();
    this.#writer.stop();
    if (lastFrame && !this.#ended) {
      // Told why, then dropped: a node that does not close its side is not waited for.
      const socket = this.#socket;
      socket.end(lastFrame);
      setTimeout(() => socket.destroy(), 1000).unref();
    } else {
      this.#socket.destroy();
    }
    for (const call of calls) {
      call.cancel = undefined;
      call.settle(code, details);
    }
  }
}

/** `:path` fields encoded once per path (the gateway's routes are a bounded set). */
const pathField = fieldEncoder(':path', 4096);
