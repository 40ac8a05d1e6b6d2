// Main thread (the gateway's HTTP/2 client). The node's connection-level frames (SETTINGS, PING, GOAWAY,
// WINDOW_UPDATE, RST_STREAM) read and checked: a malformed one is a ConnectionError, as RFC 9113 says.
import { ConnectionError, DEFAULT_MAX_FRAME_SIZE, ErrorCode, Flag, MAX_WINDOW, Setting } from './frames.js';

/** The node's settings this client acts on (absent: not in this frame). */
export interface PeerSettings {
  maxConcurrent?: number;
  initialWindow?: number;
  maxFrame?: number;
}

/** A SETTINGS frame: 'ack' for the node's acknowledgement of ours, else the settings it changes. */
export function readSettings(flags: number, streamId: number, payload: Buffer): PeerSettings | 'ack' {
  if (streamId !== 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'SETTINGS on a stream');
  if (flags & Flag.ACK) {
    if (payload.length !== 0) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'SETTINGS ack with a payload');
    return 'ack';
  }
  if (payload.length % 6 !== 0) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'SETTINGS of a wrong length');
  const settings: PeerSettings = {};
  for (let at = 0; at < payload.length; at += 6) {
    const id = payload.readUInt16BE(at);
    const value = payload.readUInt32BE(at + 2);
    if (id === Setting.MAX_CONCURRENT_STREAMS) {
      settings.maxConcurrent = value;
    } else if (id === Setting.INITIAL_WINDOW_SIZE) {
      if (value > MAX_WINDOW) throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'SETTINGS_INITIAL_WINDOW_SIZE too large');
      settings.initialWindow = value;
    } else if (id === Setting.MAX_FRAME_SIZE) {
      if (value < DEFAULT_MAX_FRAME_SIZE || value > 16_777_215) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'SETTINGS_MAX_FRAME_SIZE out of range');
      settings.maxFrame = value;
    }
    // HEADER_TABLE_SIZE: this encoder never indexes, so the node's table stays empty at any size.
  }
  return settings;
}

/** A PING frame: whether it acknowledges ours. */
export function readPing(flags: number, streamId: number, payload: Buffer): { ack: boolean } {
  if (streamId !== 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'PING on a stream');
  if (payload.length !== 8) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'PING of the wrong length');
  return { ack: (flags & Flag.ACK) !== 0 };
}

/** A GOAWAY frame: the last stream the node processed, and why it goes. */
export function readGoaway(streamId: number, payload: Buffer): { lastStreamId: number; code: number } {
  if (streamId !== 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'GOAWAY on a stream');
  if (payload.length < 8) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'GOAWAY too short');
  return { lastStreamId: payload.readUInt32BE(0) & 0x7fffffff, code: payload.readUInt32BE(4) };
}

/** A WINDOW_UPDATE frame's increment (0 is the caller's to judge: a connection or a stream error). */
export function readWindowIncrement(payload: Buffer): number {
  if (payload.length !== 4) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'WINDOW_UPDATE of the wrong length');
  return payload.readUInt32BE(0) & 0x7fffffff;
}

/** A RST_STREAM frame's error code. */
export function readResetCode(payload: Buffer): number {
  if (payload.length !== 4) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'RST_STREAM of the wrong length');
  return payload.readUInt32BE(0);
}
