// Thread: main
// The chain node's gRPC, over one reused HTTP/2 connection (cleartext or TLS, pick-first over
// several addresses): raw request bytes in, raw response bytes out, with the block height passed both ways as
// `x-cosmos-block-height` metadata. The gateway's routes, its descriptor read and the chain client all use it.
import { status as GrpcStatus } from '@grpc/grpc-js';
import { observeUpstream } from '../metrics/upstream.js';
import { H2Channel, parseTarget, tlsContext, type ChannelState, type H2Outcome, type TlsFiles } from './grpc-h2.js';
import { type Context, tracing } from '../telemetry/index.js';

const HEIGHT_KEY = 'x-cosmos-block-height';
const NO_METADATA: Record<string, string> = {};
const STATUS_NAMES: Readonly<Record<number, string>> = Object.fromEntries(
  Object.entries(GrpcStatus)
    .filter(([, code]) => typeof code === 'number')
    .map(([name, code]) => [code, name]),
);

export interface UpstreamAnswer {
  readonly bytes: Buffer;
  /** The height the node answered at (its response metadata), when it sent one. */
  readonly height?: string;
}

/**
 * A failed call: the gRPC status code and message, with the height when the node sent one. `httpStatus` when the
 * gateway answers other than the code's usual status: 502 for an answer larger than GATEWAY_MAX_RESPONSE_BYTES.
 */
export type UpstreamError = Error & { code: number; details: string; height?: string; httpStatus?: number };

export interface UpstreamOptions {
  timeoutMs: number;
  /** GATEWAY_MAX_RESPONSE_BYTES (default 4 MiB). */
  maxResponseBytes?: number;
  /** GATEWAY_KEEPALIVE_MS (default 0: no pings). */
  keepaliveMs?: number;
  /** For TLS targets (grpcs://, https://). */
  tls?: TlsFiles;
  /** Connection state changes (the gateway logs them). */
  onState?: (state: ChannelState) => void;
}

export class Upstream {
  readonly #channel: H2Channel;
  readonly #timeoutMs: number;
  readonly tls: boolean;

  /** Throws when `target` is not an address this client dials (see parseTarget), or a TLS file cannot be read. */
  constructor(
    readonly target: string,
    options: UpstreamOptions | number,
  ) {
    const {
      timeoutMs,
      maxResponseBytes = 4 * 1024 * 1024,
      keepaliveMs = 0,
      tls = {},
      onState,
    } = typeof options === 'number' ? { timeoutMs: options } : options;
    const parsed = parseTarget(target);
    if (!parsed) throw new Error(`gateway: cannot dial gRPC target ${JSON.stringify(target)}`);
    if (Boolean(tls.certFile) !== Boolean(tls.keyFile))
      throw new Error(
        'gateway: GATEWAY_GRPC_CERT_FILE and GATEWAY_GRPC_KEY_FILE go together (a client certificate and its key)',
      );
    this.tls = parsed.tls;
    this.#timeoutMs = timeoutMs;
    this.#channel = new H2Channel(
      { ...parsed, tls: parsed.tls ? { secureContext: tlsContext(tls) } : undefined },
      { maxReceiveBytes: maxResponseBytes, keepaliveMs, onState },
    );
  }

  /** The connection's state, for /health. */
  get state(): ChannelState {
    return this.#channel.state;
  }

  /**
   * One unary call with the gateway's deadline; rejects with an UpstreamError. `maxResponseBytes` overrides the
   * limit for one call (the start-up descriptor read: a whole app's descriptors pass a few MB); `timeoutMs` shortens
   * the deadline for one call (a USSD step's time left), never lengthens it.
   */
  async call(
    path: string,
    request: Uint8Array,
    height?: string,
    maxResponseBytes?: number,
    timeoutMs?: number,
    parent?: Context,
  ): Promise<UpstreamAnswer> {
    const started = performance.now();
    let metadata = height === undefined ? NO_METADATA : { [HEIGHT_KEY]: height };
    // Tracing on, the caller in a recorded trace: the call's span, whose context (traceparent, tracestate) the
    // node receives.
    const span = parent
      ? tracing?.start(`grpc ${path}`, 'client', { 'rpc.system': 'grpc', 'rpc.method': path }, parent)
      : undefined;
    if (span) {
      metadata = { ...metadata };
      tracing!.inject(metadata, tracing!.contextOf(span, parent));
    }
    const deadline = timeoutMs === undefined ? this.#timeoutMs : Math.max(1, Math.min(timeoutMs, this.#timeoutMs));
    const outcome = await this.#channel.call(path, request, metadata, deadline, maxResponseBytes);
    const name = STATUS_NAMES[outcome.code] ?? String(outcome.code);
    observeUpstream(path, name, (performance.now() - started) / 1000);
    if (span) {
      span.setAttributes({ 'rpc.grpc.status_code': outcome.code, 'rpc.grpc.status': name });
      if (outcome.code !== GrpcStatus.OK) span.setStatus({ code: 2, message: outcome.details });
      span.end();
    }
    const answerHeight = heightIn(outcome);
    if (outcome.code === GrpcStatus.OK && outcome.bytes) return { bytes: outcome.bytes, height: answerHeight };
    const details = outcome.tooLarge
      ? `the node's answer is larger than GATEWAY_MAX_RESPONSE_BYTES: ${outcome.details}`
      : outcome.details;
    throw Object.assign(new Error(`${outcome.code} ${name}: ${details}`), {
      code: outcome.code,
      details,
      height: answerHeight,
      ...(outcome.tooLarge ? { httpStatus: 502 } : {}),
    });
  }

  close(): void {
    this.#channel.close();
  }
}

/** The height in the response headers, else in the trailers. */
function heightIn(outcome: H2Outcome): string | undefined {
  return outcome.headers?.[HEIGHT_KEY] ?? outcome.trailers?.[HEIGHT_KEY];
}
