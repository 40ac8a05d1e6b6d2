// Main thread (the gateway's HTTP/2 client). One HTTP/2 connection (cleartext with prior knowledge, or TLS with
// ALPN h2; RFC 9113) carrying unary gRPC calls. Hand-written for the hot path: node's http2 client builds an AsyncResource and a Duplex per
// call; here a call is one object, two frames out, and all frames of one event-loop turn leave in one write.
import type { Socket } from 'node:net';
import { status as GrpcStatus } from '@grpc/grpc-js';
import {
  ConnectionError, DEFAULT_MAX_FRAME_SIZE, ErrorCode, Flag, FrameReader, FrameType, MAX_WINDOW, PREFACE, SETTINGS_ACK, Setting,
  dataFrame, goawayFrame, headerFrames, pingFrame, readSettings, requestFrames, rstStreamFrame, settingsFrame, unpad, windowUpdateFrame,
} from './frames.js';
import { FrameWriter } from './frame-writer.js';
import { HeaderBlockReader, MAX_HEADER_BLOCK, type HeaderBlock } from './header-block.js';
import { encodeFields, fieldEncoder } from './hpack.js';
import { Keepalive } from './keepalive.js';
import { grpcFrame, type UnaryCall } from './unary-call.js';

/** Our receive windows, announced at once so a 60 KB answer (or many) never waits for a WINDOW_UPDATE. */
const STREAM_WINDOW = 8 * 1024 * 1024;
const CONNECTION_WINDOW = 32 * 1024 * 1024;
const LAST_STREAM_ID = 2 ** 31 - 1;

export interface ConnectionOptions {
  authority: string;
  /** 0: no keepalive PINGs. */
  keepaliveMs: number;
  /** TLS: `:scheme https`, and the socket is ready at 'secureConnect' (with ALPN h2), not at 'connect'. */
  tls: boolean;
  /** Appended to the failure of a plaintext connection that connected and never saw HTTP/2 (it may be a TLS port). */
  plaintextHint?: string;
  describeError(error: Error, connected: boolean): string;
}

export interface ConnectionEvents {
  /** The connection takes no new calls (GOAWAY, failure, close): the channel dials another for the next call. */
  unusable(connection: H2Connection): void;
  /** Calls the node never saw (queued here, or above a GOAWAY's last stream id): to be sent on another connection. */
  retry(calls: UnaryCall[]): void;
  /** The node's first SETTINGS arrived: it speaks HTTP/2. */
  reached(connection: H2Connection): void;
}

export class H2Connection {
  readonly #socket: Socket;
  readonly #events: ConnectionEvents;
  // The fields every call sends, encoded once: pseudo-headers (before `:path`), then the regular ones.
  readonly #pseudoBlock: Buffer;
  readonly #regularBlock: Buffer;
  readonly #reader: FrameReader;
  readonly #streams = new Map<number, UnaryCall>();
  /** Calls waiting for a stream slot (the node's MAX_CONCURRENT_STREAMS). */
  #queue: UnaryCall[] = [];
  /** Streams with message bytes held back by flow control. */
  readonly #blocked = new Set<UnaryCall>();
  #nextStreamId = 1;
  #connected = false;
  /** TCP connected (TLS: handshake done, h2 agreed): calls are written from here on, never before. */
  #ready = false;
  #settingsReceived = false;
  #usable = true;
  #closing = false;
  #destroyed = false;
  // The node's settings and our send window on the connection.
  /** Until the node's SETTINGS arrive, 100 streams at most (as nghttp2 assumes): a burst is not refused wholesale. */
  #maxConcurrent = 100;
  #peerInitialWindow = 65_535;
  #peerMaxFrame = DEFAULT_MAX_FRAME_SIZE;
  #sendWindow = 65_535;
  // Our receive window on the connection.
  #receiveWindow = CONNECTION_WINDOW;
  #unacknowledged = 0;
  readonly #headerBlocks = new HeaderBlockReader();
  /** Write coalescing (the frames of one event-loop turn, written together) and the ACK flood bound. */
  readonly #writer: FrameWriter;
  #keepalive?: Keepalive;
  readonly #options: ConnectionOptions;

  constructor(socket: Socket, options: ConnectionOptions, events: ConnectionEvents) {
    this.#socket = socket;
    this.#writer = new FrameWriter(socket);
    this.#events = events;
    this.#options = options;
    this.#pseudoBlock = encodeFields([[':method', 'POST'], [':scheme', options.tls ? 'https' : 'http'], [':authority', options.authority]]);
    this.#regularBlock = encodeFields([['content-type', 'application/grpc'], ['te', 'trailers']]);
    this.#reader = new FrameReader(DEFAULT_MAX_FRAME_SIZE, (type, flags, streamId, payload) => this.#onFrame(type, flags, streamId, payload));
    socket.setNoDelay(true);
    socket.unref();
    socket.on('connect', () => {
      this.#connected = true;
      // Again on the connected handle: happy-eyeballs connects (a name's records tried in turn) replace the
      // handle that setNoDelay above was given.
      socket.setNoDelay(true);
      if (!options.tls) this.#becomeReady();
    });
    if (options.tls) socket.on('secureConnect', () => this.#becomeReady());
    // The node ended its side (an idle timeout, a restart): no new call may go out on this connection.
    // (Before its SETTINGS, the close that follows reports the failure.)
    socket.on('end', () => {
      if (this.#settingsReceived) this.#becomeUnusable();
    });
    socket.on('data', (chunk: Buffer) => {
      if (this.#destroyed) return;
      try {
        // A TLS record (alert or handshake) where SETTINGS belongs: a plaintext target pointed at a TLS port.
        if (!this.#settingsReceived && !options.tls && (chunk[0] === 0x15 || chunk[0] === 0x16) && chunk[1] === 0x03) {
          throw new Error('the node answered with TLS: write the target as grpcs://host:port');
        }
        this.#reader.push(chunk);
      } catch (error) {
        this.#protocolFailure(error);
      }
    });
    socket.on('error', (error) => this.#destroy(GrpcStatus.UNAVAILABLE, this.#withHint(options.describeError(error, this.#connected)), { retryUnanswered: true }));
    socket.on('close', () => this.#destroy(GrpcStatus.UNAVAILABLE, this.#withHint(this.#connected ? 'Connection to the node closed' : 'No connection established'), { retryUnanswered: true }));
    // The client preface, our settings and the connection window, before any call (allowed with prior knowledge).
    this.#writer.write(PREFACE);
    this.#writer.write(settingsFrame([
      [Setting.ENABLE_PUSH, 0],
      [Setting.INITIAL_WINDOW_SIZE, STREAM_WINDOW],
      [Setting.MAX_HEADER_LIST_SIZE, MAX_HEADER_BLOCK],
    ]));
    this.#writer.write(windowUpdateFrame(0, CONNECTION_WINDOW - 65_535));
    // Pings keep NATs and proxies from dropping a quiet connection (only when asked for: a node with grpc-go's
    // default policy answers pings on an idle connection with GOAWAY too_many_pings). One unanswered drops it.
    if (options.keepaliveMs > 0) {
      const ping = () => this.#writer.write(pingFrame(Buffer.alloc(8), false));
      this.#keepalive = new Keepalive(options.keepaliveMs, ping, () => this.#destroy(GrpcStatus.UNAVAILABLE, 'Keepalive ping not answered'));
    }
  }

  /** The GOAWAY the node sent, if any: its code and debug text (`too_many_pings` doubles the keepalive). */
  goaway?: { code: number; debug: string };

  #becomeReady(): void {
    if (this.#destroyed) return;
    const alpn = (this.#socket as Socket & { alpnProtocol?: string | false }).alpnProtocol;
    if (this.#options.tls && alpn !== 'h2') {
      return this.#destroy(GrpcStatus.UNAVAILABLE, `TLS handshake done but the node did not agree to HTTP/2 (ALPN ${alpn ? JSON.stringify(alpn) : 'none'})`);
    }
    this.#ready = true;
    this.#openQueued();
  }

  #withHint(details: string): string {
    // Only for a node that took the connection and never spoke HTTP/2 (not for a refused connection).
    return this.#settingsReceived || !this.#connected || !this.#options.plaintextHint ? details : `${details} (${this.#options.plaintextHint})`;
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
    call.sendWindow = this.#peerInitialWindow;
    call.receiveWindow = STREAM_WINDOW;
    call.cancel = () => this.#cancel(call);
    this.#streams.set(id, call);
    const block = [this.#pseudoBlock, pathField(call.path), this.#regularBlock, call.metadataBlock];
    const size = 5 + call.message.length;
    if (size <= Math.min(call.sendWindow, this.#sendWindow, this.#peerMaxFrame)) {
      // The usual case: the whole request in one buffer.
      this.#writer.write(requestFrames(id, block, call.message, this.#peerMaxFrame));
      call.sendWindow -= size;
      this.#sendWindow -= size;
      return;
    }
    this.#writer.write(headerFrames(id, block, false, this.#peerMaxFrame));
    call.body = grpcFrame(call.message);
    this.#sendBody(call);
  }

  /** Queued calls take the stream slots that are free (a stream ended, or the node's SETTINGS raised the limit). */
  #openQueued(): void {
    while (this.#ready && this.#queue.length > 0 && this.#streams.size < this.#maxConcurrent && this.#usable) this.#open(this.#queue.shift()!);
  }

  /** The deadline passed (or the answer grew too large): the node is told to stop, the stream is forgotten. */
  #cancel(call: UnaryCall): void {
    if (this.#streams.get(call.id) !== call) return;
    this.#writer.write(rstStreamFrame(call.id, ErrorCode.CANCEL));
    this.#endStream(call);
  }

  /** Sends as much of the message as the windows allow; the rest waits for WINDOW_UPDATE. */
  #sendBody(call: UnaryCall): void {
    while (call.body.length > 0) {
      const size = Math.min(call.body.length, call.sendWindow, this.#sendWindow, this.#peerMaxFrame);
      if (size <= 0) {
        this.#blocked.add(call);
        return;
      }
      const last = size === call.body.length;
      this.#writer.write(dataFrame(call.id, last ? call.body : call.body.subarray(0, size), last));
      call.sendWindow -= size;
      this.#sendWindow -= size;
      call.body = call.body.subarray(size);
    }
    this.#blocked.delete(call);
  }

  #endStream(call: UnaryCall): void {
    this.#streams.delete(call.id);
    this.#blocked.delete(call);
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
    this.#handBack(queued, this.failure, this.#settingsReceived);
  }

  /**
   * Calls the node never saw go to another connection, once each (so a node that refuses every connection
   * cannot make a call go round forever): a second time they fail UNAVAILABLE.
   */
  #handBack(calls: UnaryCall[], details = 'Connection closed by the node before the call was sent', counted = true): void {
    const again: UnaryCall[] = [];
    for (const call of calls) {
      call.cancel = undefined;
      if (!counted) {
        again.push(call);
      } else if (call.retried) {
        call.settle(GrpcStatus.UNAVAILABLE, details);
      } else {
        call.retried = true;
        again.push(call);
      }
    }
    if (again.length > 0) this.#events.retry(again);
  }

  #onFrame(type: number, flags: number, streamId: number, payload: Buffer): void {
    if (this.#destroyed) return;
    if (this.#headerBlocks.pending && type !== FrameType.CONTINUATION) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'header block interrupted by another frame');
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
    this.#receiveWindow -= size;
    if (this.#receiveWindow < 0) throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'DATA past the connection window');
    this.#consumed(size);
    const call = this.#streams.get(streamId);
    if (!call) return; // cancelled or finished here: its bytes still counted above
    call.receiveWindow -= size;
    if (call.receiveWindow < 0) return this.#resetStream(call, ErrorCode.FLOW_CONTROL_ERROR);
    if (!call.onData(unpad(payload, flags))) {
      this.#cancel(call);
      return;
    }
    if (flags & Flag.END_STREAM) return this.#finish(call);
    call.unacknowledged += size;
    if (call.unacknowledged >= STREAM_WINDOW / 2) {
      this.#writer.write(windowUpdateFrame(streamId, call.unacknowledged));
      call.receiveWindow += call.unacknowledged;
      call.unacknowledged = 0;
    }
  }

  /** Received bytes are used at once (kept with their call), so the connection window is credited back at half. */
  #consumed(size: number): void {
    this.#unacknowledged += size;
    if (this.#unacknowledged >= CONNECTION_WINDOW / 2) {
      this.#writer.write(windowUpdateFrame(0, this.#unacknowledged));
      this.#receiveWindow += this.#unacknowledged;
      this.#unacknowledged = 0;
    }
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
    if (payload.length !== 4) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'RST_STREAM of the wrong length');
    this.#checkOpened(streamId, 'RST_STREAM');
    const call = this.#streams.get(streamId);
    if (!call) return;
    const code = payload.readUInt32BE(0);
    if (code === ErrorCode.REFUSED_STREAM && !call.headers) {
      // Refused before any processing: safe to send again (once), as grpc-js retries it transparently.
      this.#endStream(call);
      return this.#handBack([call], 'Received RST_STREAM with code 7');
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
    for (const [id, value] of settings) {
      if (id === Setting.MAX_CONCURRENT_STREAMS) {
        this.#maxConcurrent = value;
      } else if (id === Setting.INITIAL_WINDOW_SIZE) {
        const delta = value - this.#peerInitialWindow;
        this.#peerInitialWindow = value;
        for (const call of this.#streams.values()) call.sendWindow += delta;
      } else if (id === Setting.MAX_FRAME_SIZE) {
        this.#peerMaxFrame = value;
      }
      // HEADER_TABLE_SIZE: this encoder never indexes, so the node's table stays empty at any size.
    }
    this.#writer.acknowledge(SETTINGS_ACK);
    this.#resumeBlocked();
    this.#openQueued();
  }

  #onPing(flags: number, streamId: number, payload: Buffer): void {
    if (streamId !== 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'PING on a stream');
    if (payload.length !== 8) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'PING of the wrong length');
    if (!(flags & Flag.ACK)) return this.#writer.acknowledge(pingFrame(payload, true));
    this.#keepalive?.acknowledged();
  }

  #onGoaway(streamId: number, payload: Buffer): void {
    if (streamId !== 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'GOAWAY on a stream');
    if (payload.length < 8) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'GOAWAY too short');
    const lastStreamId = payload.readUInt32BE(0) & 0x7fffffff;
    this.goaway = { code: payload.readUInt32BE(4), debug: payload.subarray(8, 8 + 200).toString('latin1') };
    this.#becomeUnusable();
    // Streams above the last id were never processed by the node: sent again elsewhere (once), as grpc-js does.
    const unseen = [...this.#streams.values()].filter((call) => call.id > lastStreamId);
    for (const call of unseen) this.#streams.delete(call.id), this.#blocked.delete(call);
    this.#handBack(unseen, `Connection closed by the node (GOAWAY code ${payload.readUInt32BE(4)})`);
    this.#closing = true;
    if (this.#streams.size === 0) this.#writer.end();
  }

  #onWindowUpdate(streamId: number, payload: Buffer): void {
    if (payload.length !== 4) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'WINDOW_UPDATE of the wrong length');
    const increment = payload.readUInt32BE(0) & 0x7fffffff;
    if (streamId === 0) {
      if (increment === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'WINDOW_UPDATE of 0');
      this.#sendWindow += increment;
      if (this.#sendWindow > MAX_WINDOW) throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'connection window past 2^31-1');
      return this.#resumeBlocked();
    }
    this.#checkOpened(streamId, 'WINDOW_UPDATE');
    const call = this.#streams.get(streamId);
    if (!call) return;
    if (increment === 0) return this.#resetStream(call, ErrorCode.PROTOCOL_ERROR);
    call.sendWindow += increment;
    if (call.sendWindow > MAX_WINDOW) return this.#resetStream(call, ErrorCode.FLOW_CONTROL_ERROR);
    if (this.#blocked.has(call)) this.#sendBody(call);
  }

  #resumeBlocked(): void {
    for (const call of [...this.#blocked]) {
      if (this.#sendWindow <= 0) return;
      this.#sendBody(call);
    }
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
    this.#destroy(status, this.#withHint(`${what}: ${message}`), { lastFrame: goawayFrame(0, code, message.slice(0, 200)) });
  }

  /**
   * Every unfinished call fails with `code`; the socket is destroyed. `retryUnanswered` (the connection dropped,
   * no GOAWAY): calls without response headers go out once more on another connection, for the race where the
   * node closed an idle connection as a call was written. Every call of this client is a query, safe to repeat.
   */
  #destroy(code: number, details: string, { lastFrame, retryUnanswered = false }: { lastFrame?: Buffer; retryUnanswered?: boolean } = {}): void {
    if (this.#destroyed) return;
    this.failure = details;
    this.#becomeUnusable();
    this.#destroyed = true;
    this.#keepalive?.stop();
    let calls = [...this.#streams.values()];
    if (retryUnanswered && !this.goaway) {
      const unanswered = calls.filter((call) => !call.headers);
      calls = calls.filter((call) => call.headers);
      this.#handBack(unanswered, details);
    }
    this.#streams.clear();
    this.#blocked.clear();
    const open = !this.#writer.closed;
    this.#writer.discard();
    if (lastFrame && open) {
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
