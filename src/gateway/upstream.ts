// The chain node's gRPC, over one reused channel: raw request bytes in, raw response bytes out, with the
// block height passed both ways as `x-cosmos-block-height` metadata.
import * as grpc from '@grpc/grpc-js';
import { observeUpstream } from '../metrics/upstream.js';

const HEIGHT_KEY = 'x-cosmos-block-height';
const identity = (bytes: Buffer) => bytes;

export interface UpstreamAnswer {
  readonly bytes: Buffer;
  /** The height the node answered at (its response metadata), when it sent one. */
  readonly height?: string;
}

/** A failed call: the gRPC status, with the height when the node sent one. */
export type UpstreamError = grpc.ServiceError & { height?: string };

export class Upstream {
  readonly #client: grpc.Client;

  constructor(
    readonly target: string,
    private readonly timeoutMs: number,
  ) {
    this.#client = new grpc.Client(target, grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': 64 * 1024 * 1024,
      'grpc.keepalive_time_ms': 60_000,
    });
  }

  /** One unary call with the gateway's deadline; rejects with an UpstreamError. */
  call(path: string, request: Uint8Array, height?: string): Promise<UpstreamAnswer> {
    const metadata = new grpc.Metadata();
    if (height !== undefined) metadata.set(HEIGHT_KEY, height);
    const options = { deadline: Date.now() + this.timeoutMs };
    const started = performance.now();
    return new Promise((resolve, reject) => {
      let answerHeight: string | undefined;
      let outcome: { error: grpc.ServiceError | null; bytes?: Buffer } | undefined;
      const call = this.#client.makeUnaryRequest(path, identity, identity, Buffer.from(request.buffer, request.byteOffset, request.byteLength), metadata, options, (error, bytes) => {
        outcome = { error, bytes };
      });
      call.on('metadata', (received: grpc.Metadata) => {
        answerHeight ??= heightIn(received);
      });
      // grpc-js emits 'status' (with the trailers) right after the callback: settle here to see both.
      call.on('status', (status: grpc.StatusObject) => {
        answerHeight ??= heightIn(status.metadata);
        observeUpstream(path, grpc.status[status.code] ?? String(status.code), (performance.now() - started) / 1000);
        if (outcome && !outcome.error && outcome.bytes) resolve({ bytes: outcome.bytes, height: answerHeight });
        else reject(Object.assign(outcome?.error ?? new Error(status.details), { code: status.code, details: status.details, height: answerHeight }));
      });
    });
  }

  close(): void {
    this.#client.close();
  }
}

function heightIn(metadata: grpc.Metadata | undefined): string | undefined {
  const value = metadata?.get(HEIGHT_KEY)[0];
  return value === undefined ? undefined : String(value);
}
