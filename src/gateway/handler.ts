// Thread: main
// One HTTP GET -> route match -> request message -> upstream gRPC -> Cosmos JSON, with the block height
// passed through, and identical requests in flight sharing one upstream call.
import { status as GrpcStatus } from '@grpc/grpc-js';
import { reply, type Handler, type Reply } from '../http/types.js';
import { InFlight } from '../base/in-flight.js';
import type { CosmosJson } from './cosmos-json.js';
import { cosmosError, fromGrpcError, gatewayErrors } from './errors.js';
import type { Gate } from './gate.js';
import type { RouteTable } from './route-table.js';
import type { Upstream, UpstreamError } from './upstream.js';
import type { Context } from '../telemetry/index.js';

const HEIGHT = /^\d{1,20}$/;
/** The height header as our clients send it, and as grpc-gateway (a v0.50 node's REST) spells it. */
const HEIGHT_HEADER = 'x-cosmos-block-height';
const GATEWAY_HEIGHT_HEADER = 'grpc-metadata-x-cosmos-block-height';
const JSON_TYPE = 'application/json';

export interface GatewayHandlerOptions {
  readonly table: RouteTable;
  readonly upstream: Upstream;
  readonly json: CosmosJson;
  /** GATEWAY_PREFIX, '' or like '/api/protocol'. */
  readonly prefix: string;
  readonly gate?: Gate;
}

export function createGatewayHandler(options: GatewayHandlerOptions): Handler {
  const inFlight = new InFlight<Reply>();
  return function gatewayRequest(req) {
    options.gate?.(req.headers);
    const height = req.headers[HEIGHT_HEADER] || req.headers[GATEWAY_HEIGHT_HEADER] || undefined;
    if (height !== undefined && !HEIGHT.test(height)) {
      throw gatewayErrors.invalidArgument('x-cosmos-block-height must be a block height (a non-negative integer)');
    }
    const key = `${req.path}?${req.rawQuery}\n${height ?? ''}`;
    // Identical requests share the first one's call, and so its span (under the first request's trace).
    return inFlight.run(key, () =>
      dispatch(options, req.path.slice(options.prefix.length), req.rawQuery, height, undefined, req.trace),
    );
  };
}

/**
 * One path (after the prefix) and query string -> its answer; every refusal throws its HttpError. `timeoutMs`
 * shortens the upstream deadline (GATEWAY_TIMEOUT_MS) for this call. The HTTP routes and the in-process
 * queries (query.ts) both answer here.
 */
export async function dispatch(
  options: Pick<GatewayHandlerOptions, 'table' | 'upstream' | 'json'>,
  path: string,
  rawQuery: string,
  height: string | undefined,
  timeoutMs?: number,
  trace?: Context,
): Promise<Reply> {
  const match = options.table.match(path);
  if (!match) throw gatewayErrors.routeNotFound();
  const { method, mapper } = match.route;
  const request = mapper.encode(match.bound, rawQuery);
  let answered: Awaited<ReturnType<typeof options.upstream.call>>;
  try {
    answered = await options.upstream.call(method.grpcPath, request, height, undefined, timeoutMs, trace);
  } catch (error) {
    const failure = error as UpstreamError;
    throw fromGrpcError(failure, heightHeaders(failure.height));
  }
  const headers = heightHeaders(answered.height);
  let body: string;
  try {
    body = options.json.stringify(method.responseType, method.responseType.decode(answered.bytes));
  } catch (error) {
    // The node answered bytes that are not the declared response type (descriptors out of step with it).
    throw cosmosError(
      GrpcStatus.INTERNAL,
      `cannot decode the node's ${method.responseType.fullName.slice(1)}: ${(error as Error).message}`,
      headers,
    );
  }
  return reply.raw(200, JSON_TYPE, body, headers);
}

/** The node's answer height under both names clients read it by. */
function heightHeaders(height: string | undefined): Record<string, string> | undefined {
  return height ? { 'X-Cosmos-Block-Height': height, 'Grpc-Metadata-X-Cosmos-Block-Height': height } : undefined;
}
