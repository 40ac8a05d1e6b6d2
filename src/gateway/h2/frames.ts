// Thread: main (the gateway's HTTP/2 client)
// HTTP/2 frames (RFC 9113 section 4 and 6) to and from bytes,
// hand-written for the hot path: each unary call is a HEADERS and a DATA frame out, two HEADERS and a DATA back.

export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export const FrameType = {
  DATA: 0,
  HEADERS: 1,
  PRIORITY: 2,
  RST_STREAM: 3,
  SETTINGS: 4,
  PUSH_PROMISE: 5,
  PING: 6,
  GOAWAY: 7,
  WINDOW_UPDATE: 8,
  CONTINUATION: 9,
} as const;

export const Flag = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const;

export const Setting = {
  HEADER_TABLE_SIZE: 1,
  ENABLE_PUSH: 2,
  MAX_CONCURRENT_STREAMS: 3,
  INITIAL_WINDOW_SIZE: 4,
  MAX_FRAME_SIZE: 5,
  MAX_HEADER_LIST_SIZE: 6,
} as const;

/** Error codes (RFC 9113 section 7). */
export const ErrorCode = {
  NO_ERROR: 0,
  PROTOCOL_ERROR: 1,
  INTERNAL_ERROR: 2,
  FLOW_CONTROL_ERROR: 3,
  SETTINGS_TIMEOUT: 4,
  STREAM_CLOSED: 5,
  FRAME_SIZE_ERROR: 6,
  REFUSED_STREAM: 7,
  CANCEL: 8,
  COMPRESSION_ERROR: 9,
  CONNECT_ERROR: 10,
  ENHANCE_YOUR_CALM: 11,
  INADEQUATE_SECURITY: 12,
  HTTP_1_1_REQUIRED: 13,
} as const;

export const FRAME_HEADER_SIZE = 9;
export const DEFAULT_MAX_FRAME_SIZE = 16_384;
export const MAX_WINDOW = 2 ** 31 - 1;

/** A connection error this end detected: the connection is closed with GOAWAY carrying `code`. */
export class ConnectionError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

function header(target: Buffer, at: number, length: number, type: number, flags: number, streamId: number): void {
  target[at] = length >>> 16;
  target[at + 1] = (length >>> 8) & 0xff;
  target[at + 2] = length & 0xff;
  target[at + 3] = type;
  target[at + 4] = flags;
  target.writeUInt32BE(streamId, at + 5);
}

/** A frame with the given payload. */
export function frame(type: number, flags: number, streamId: number, payload?: Uint8Array): Buffer {
  const length = payload?.length ?? 0;
  const out = Buffer.allocUnsafe(FRAME_HEADER_SIZE + length);
  header(out, 0, length, type, flags, streamId);
  if (payload) out.set(payload, FRAME_HEADER_SIZE);
  return out;
}

export function settingsFrame(settings: ReadonlyArray<readonly [id: number, value: number]>): Buffer {
  const payload = Buffer.allocUnsafe(6 * settings.length);
  settings.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, i * 6);
    payload.writeUInt32BE(value, i * 6 + 2);
  });
  return frame(FrameType.SETTINGS, 0, 0, payload);
}

export const SETTINGS_ACK = frame(FrameType.SETTINGS, Flag.ACK, 0);

export function windowUpdateFrame(streamId: number, increment: number): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER_SIZE + 4);
  header(out, 0, 4, FrameType.WINDOW_UPDATE, 0, streamId);
  out.writeUInt32BE(increment, FRAME_HEADER_SIZE);
  return out;
}

export function rstStreamFrame(streamId: number, code: number): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER_SIZE + 4);
  header(out, 0, 4, FrameType.RST_STREAM, 0, streamId);
  out.writeUInt32BE(code, FRAME_HEADER_SIZE);
  return out;
}

export function goawayFrame(lastStreamId: number, code: number, debug = ''): Buffer {
  const text = Buffer.from(debug);
  const out = Buffer.allocUnsafe(FRAME_HEADER_SIZE + 8 + text.length);
  header(out, 0, 8 + text.length, FrameType.GOAWAY, 0, 0);
  out.writeUInt32BE(lastStreamId, FRAME_HEADER_SIZE);
  out.writeUInt32BE(code, FRAME_HEADER_SIZE + 4);
  text.copy(out, FRAME_HEADER_SIZE + 8);
  return out;
}

export function pingFrame(payload: Uint8Array, ack: boolean): Buffer {
  return frame(FrameType.PING, ack ? Flag.ACK : 0, 0, payload);
}

/**
 * A header block as HEADERS plus CONTINUATION frames of at most `maxFrameSize` payload each, in one buffer.
 * `parts` are concatenated as the block (cached fixed fields, then per-call ones) without joining them first.
 */
export function headerFrames(
  streamId: number,
  parts: readonly Uint8Array[],
  endStream: boolean,
  maxFrameSize: number,
): Buffer {
  const length = blockLength(parts);
  const out = Buffer.allocUnsafe(headerFramesSize(length, maxFrameSize));
  writeHeaderFrames(out, streamId, parts, length, endStream, maxFrameSize);
  return out;
}

/**
 * A unary gRPC request whose message fits the windows and the frame size: its header frames, then one DATA frame
 * (END_STREAM) of the 5-byte prefix and the message, in one buffer (one allocation, one copy of the message).
 */
export function requestFrames(
  streamId: number,
  parts: readonly Uint8Array[],
  message: Uint8Array,
  maxFrameSize: number,
): Buffer {
  const length = blockLength(parts);
  const headersSize = headerFramesSize(length, maxFrameSize);
  const out = Buffer.allocUnsafe(headersSize + FRAME_HEADER_SIZE + 5 + message.length);
  writeHeaderFrames(out, streamId, parts, length, false, maxFrameSize);
  header(out, headersSize, 5 + message.length, FrameType.DATA, Flag.END_STREAM, streamId);
  const prefix = headersSize + FRAME_HEADER_SIZE;
  out[prefix] = 0; // not compressed
  out.writeUInt32BE(message.length, prefix + 1);
  out.set(message, prefix + 5);
  return out;
}

function blockLength(parts: readonly Uint8Array[]): number {
  let length = 0;
  for (const part of parts) length += part.length;
  return length;
}

function headerFramesSize(blockLength: number, maxFrameSize: number): number {
  return blockLength + Math.max(1, Math.ceil(blockLength / maxFrameSize)) * FRAME_HEADER_SIZE;
}

function writeHeaderFrames(
  out: Buffer,
  streamId: number,
  parts: readonly Uint8Array[],
  length: number,
  endStream: boolean,
  maxFrameSize: number,
): void {
  const frames = Math.max(1, Math.ceil(length / maxFrameSize));
  let at = 0;
  let partIndex = 0;
  let partAt = 0;
  for (let i = 0; i < frames; i++) {
    const size = Math.min(maxFrameSize, length - i * maxFrameSize);
    const last = i === frames - 1;
    const flags = (last ? Flag.END_HEADERS : 0) | (i === 0 && endStream ? Flag.END_STREAM : 0);
    header(out, at, size, i === 0 ? FrameType.HEADERS : FrameType.CONTINUATION, flags, streamId);
    at += FRAME_HEADER_SIZE;
    for (let left = size; left > 0; ) {
      const part = parts[partIndex];
      const take = Math.min(left, part.length - partAt);
      out.set(part.subarray(partAt, partAt + take), at);
      at += take;
      left -= take;
      partAt += take;
      if (partAt === part.length) {
        partIndex++;
        partAt = 0;
      }
    }
  }
}

/** A DATA frame carrying `payload` (at most the peer's max frame size). */
export function dataFrame(streamId: number, payload: Uint8Array, endStream: boolean): Buffer {
  return frame(FrameType.DATA, endStream ? Flag.END_STREAM : 0, streamId, payload);
}

export type FrameHandler = (type: number, flags: number, streamId: number, payload: Buffer) => void;

/**
 * Splits the bytes read from a socket into frames. Payloads are views into the received chunks; a frame that
 * spans chunks is copied once, from its own bytes only. A frame longer than `maxFrameSize` is a FRAME_SIZE_ERROR.
 */
export class FrameReader {
  /** The start of a frame cut by the end of the last chunk. */
  #pending: Buffer | undefined;

  constructor(
    private readonly maxFrameSize: number,
    private readonly onFrame: FrameHandler,
  ) {}

  push(chunk: Buffer): void {
    let data = chunk;
    if (this.#pending) {
      const rest = this.#completePending(chunk);
      if (rest === undefined) return;
      data = rest;
    }
    let at = 0;
    const end = data.length;
    while (end - at >= FRAME_HEADER_SIZE) {
      const length = this.#lengthAt(data, at);
      if (end - at < FRAME_HEADER_SIZE + length) break;
      at = this.#dispatch(data, at, length);
    }
    if (at < end) this.#pending = data.subarray(at);
  }

  /** Finishes the pending frame with the chunk's first bytes; the rest of the chunk, or undefined if it is not yet whole. */
  #completePending(chunk: Buffer): Buffer | undefined {
    let pending = this.#pending!;
    let used = 0;
    if (pending.length < FRAME_HEADER_SIZE) {
      used = Math.min(FRAME_HEADER_SIZE - pending.length, chunk.length);
      pending = Buffer.concat([pending, chunk.subarray(0, used)]);
      if (pending.length < FRAME_HEADER_SIZE) {
        this.#pending = pending;
        return undefined;
      }
    }
    const length = this.#lengthAt(pending, 0);
    const need = FRAME_HEADER_SIZE + length - pending.length;
    if (chunk.length - used < need) {
      this.#pending = Buffer.concat([pending, chunk.subarray(used)]);
      return undefined;
    }
    this.#pending = undefined;
    this.#dispatch(Buffer.concat([pending, chunk.subarray(used, used + need)]), 0, length);
    return chunk.subarray(used + need);
  }

  #lengthAt(data: Buffer, at: number): number {
    const length = (data[at] << 16) | (data[at + 1] << 8) | data[at + 2];
    if (length > this.maxFrameSize)
      throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, `frame of ${length} bytes exceeds ${this.maxFrameSize}`);
    return length;
  }

  /** Hands the frame at `at` to the handler; returns where the next one starts. */
  #dispatch(data: Buffer, at: number, length: number): number {
    const start = at + FRAME_HEADER_SIZE;
    this.onFrame(
      data[at + 3],
      data[at + 4],
      data.readUInt32BE(at + 5) & 0x7fffffff,
      data.subarray(start, start + length),
    );
    return start + length;
  }
}

/**
 * A SETTINGS frame's entries, checked (RFC 9113 section 6.5); undefined for an ACK. Throws the connection error
 * for a malformed frame or an out-of-range value.
 */
export function readSettings(
  flags: number,
  streamId: number,
  payload: Buffer,
): [id: number, value: number][] | undefined {
  if (streamId !== 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'SETTINGS on a stream');
  if (flags & Flag.ACK) {
    if (payload.length !== 0) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'SETTINGS ack with a payload');
    return undefined;
  }
  if (payload.length % 6 !== 0) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'SETTINGS of a wrong length');
  const settings: [number, number][] = [];
  for (let at = 0; at < payload.length; at += 6) {
    const id = payload.readUInt16BE(at);
    const value = payload.readUInt32BE(at + 2);
    if (id === Setting.INITIAL_WINDOW_SIZE && value > MAX_WINDOW)
      throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'SETTINGS_INITIAL_WINDOW_SIZE too large');
    if (id === Setting.MAX_FRAME_SIZE && (value < DEFAULT_MAX_FRAME_SIZE || value > 16_777_215))
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'SETTINGS_MAX_FRAME_SIZE out of range');
    settings.push([id, value]);
  }
  return settings;
}

/**
 * What a client sends before any call (allowed with prior knowledge): the preface, its SETTINGS (no push, the
 * window of each stream, the header list bound) and the connection window raised from its initial 65,535.
 */
export function clientOpening(streamWindow: number, connectionWindow: number, maxHeaderList: number): Buffer[] {
  const settings = settingsFrame([
    [Setting.ENABLE_PUSH, 0],
    [Setting.INITIAL_WINDOW_SIZE, streamWindow],
    [Setting.MAX_HEADER_LIST_SIZE, maxHeaderList],
  ]);
  return [PREFACE, settings, windowUpdateFrame(0, connectionWindow - 65_535)];
}

/** RST_STREAM's error code; throws FRAME_SIZE_ERROR when the payload is not 4 bytes. */
export function readRstStream(payload: Buffer): number {
  if (payload.length !== 4) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'RST_STREAM of the wrong length');
  return payload.readUInt32BE(0);
}

/** Checks a PING: on stream 0, 8 bytes. */
export function checkPing(streamId: number, payload: Buffer): void {
  if (streamId !== 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'PING on a stream');
  if (payload.length !== 8) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'PING of the wrong length');
}

/** GOAWAY's last stream id, error code and debug text (its first 200 bytes). */
export function readGoaway(streamId: number, payload: Buffer): { lastStreamId: number; code: number; debug: string } {
  if (streamId !== 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'GOAWAY on a stream');
  if (payload.length < 8) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'GOAWAY too short');
  return {
    lastStreamId: payload.readUInt32BE(0) & 0x7fffffff,
    code: payload.readUInt32BE(4),
    debug: payload.subarray(8, 8 + 200).toString('latin1'),
  };
}

/** WINDOW_UPDATE's increment (0 is an error the caller reports: a connection or a stream one). */
export function readWindowIncrement(payload: Buffer): number {
  if (payload.length !== 4) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'WINDOW_UPDATE of the wrong length');
  return payload.readUInt32BE(0) & 0x7fffffff;
}

/** The payload without its padding (DATA and HEADERS with PADDED); throws PROTOCOL_ERROR when the pad is too long. */
export function unpad(payload: Buffer, flags: number): Buffer {
  if (!(flags & Flag.PADDED)) return payload;
  if (payload.length < 1) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'padded frame without a pad length');
  const pad = payload[0];
  if (pad >= payload.length) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'padding longer than the frame');
  return payload.subarray(1, payload.length - pad);
}
