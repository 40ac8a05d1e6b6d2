// Main thread. The chain node's gRPC, over one reused HTTP/2 connection: raw request bytes in, raw response
// bytes out, with the block height passed both ways as `x-cosmos-block-height` metadata.
import { status as GrpcStatus } from '@grpc/grpc-js';
import { observeUpstream } from '../metrics/upstream.js';
import { H2Channel, parseTarget, type H2Outcome } from './grpc-h2.js';

const HEIGHT_KEY = 'x-cosmos-block-height';
const NO_METADATA: Record<string, string> = {};
const STATUS_NAMES: Readonly<Record<number, string>> = Object.fromEntries(
  Object.entries(GrpcStatus).filter(([, code]) => typeof code === 'number').map(([name, code]) => [code, name]),
);

export interface UpstreamAnswer {
  readonly bytes: Buffer;
  /** The height the node answered at (its response metadata), when it sent one. */
  readonly height?: string;
}

/** A failed call: the gRPC status code and message, with the height when the node sent one. */
export type UpstreamError = Error & { code: number; details: string; height?: string };

export class Upstream {
  readonly #channel: H2Channel;

  /** Throws when `target` is not an address this client dials (see parseTarget). */
  constructor(
    readonly target: string,
    private readonly timeoutMs: number,
  ) {
    const address = parseTarget(target);
    if (!address) throw new Error(`gateway: cannot dial gRPC target ${JSON.stringify(target)} (host:port, dns:, ipv4:, ipv6: or unix: with one address)`);
    this.#channel = new H2Channel(address, { maxReceiveBytes: 64 * 1024 * 1024, keepaliveMs: 60_000 });
  }

  /** One unary call with the gateway's deadline; rejects with an UpstreamError. */
  async call(path: string, request: Uint8Array, height?: string): Promise<UpstreamAnswer> {
    const started = performance.now();
    const outcome = await this.#channel.call(path, request, height === undefined ? NO_METADATA : { [HEIGHT_KEY]: height }, this.timeoutMs);
    const name = STATUS_NAMES[outcome.code] ?? String(outcome.code);
    observeUpstream(path, name, (performance.now() - started) / 1000);
    const answerHeight = heightIn(outcome);
    if (outcome.code === GrpcStatus.OK && outcome.bytes) return { bytes: outcome.bytes, height: answerHeight };
    throw Object.assign(new Error(`${outcome.code} ${name}: ${outcome.details}`), { code: outcome.code, details: outcome.details, height: answerHeight });
  }

  close(): void {
    this.#channel.close();
  }
}

/** The height in the response headers, else in the trailers. */
function heightIn(outcome: H2Outcome): string | undefined {
  return outcome.headers?.[HEIGHT_KEY] ?? outcome.trailers?.[HEIGHT_KEY];
}
