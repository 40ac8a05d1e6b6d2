// Thread: main
// Every answer of the gateway that is not 200 has the Cosmos REST error body { code, message, details }
// (grpc-gateway v1), with the HTTP status of the gRPC code from the reference's table.
import { status as GrpcStatus } from '@grpc/grpc-js';
import { HttpError } from '../http/errors.js';

const HTTP_STATUS: Readonly<Record<number, number>> = {
  [GrpcStatus.OK]: 200,
  [GrpcStatus.CANCELLED]: 408,
  [GrpcStatus.UNKNOWN]: 500,
  [GrpcStatus.INVALID_ARGUMENT]: 400,
  [GrpcStatus.DEADLINE_EXCEEDED]: 504,
  [GrpcStatus.NOT_FOUND]: 404,
  [GrpcStatus.ALREADY_EXISTS]: 409,
  [GrpcStatus.PERMISSION_DENIED]: 403,
  [GrpcStatus.RESOURCE_EXHAUSTED]: 429,
  [GrpcStatus.FAILED_PRECONDITION]: 400,
  [GrpcStatus.ABORTED]: 409,
  [GrpcStatus.OUT_OF_RANGE]: 400,
  [GrpcStatus.UNIMPLEMENTED]: 501,
  [GrpcStatus.INTERNAL]: 500,
  [GrpcStatus.UNAVAILABLE]: 503,
  [GrpcStatus.DATA_LOSS]: 500,
  [GrpcStatus.UNAUTHENTICATED]: 401,
};

/** The HTTP status grpc-gateway answers for a gRPC status code (unknown codes: 500). */
export function httpStatusOf(code: number): number {
  return HTTP_STATUS[code] ?? 500;
}

/** The body of every gateway error. */
export interface CosmosErrorBody {
  code: number;
  message: string;
  details: unknown[];
}

export function cosmosError(
  code: number,
  message: string,
  headers?: Record<string, string>,
  httpStatus = httpStatusOf(code),
): HttpError {
  const body: CosmosErrorBody = { code, message, details: [] };
  return new HttpError(httpStatus, body, headers);
}

/** The gateway's own errors, each with its gRPC code (and so its HTTP status). */
export const gatewayErrors = {
  /** No annotated route matches the path (404, code NOT_FOUND). */
  routeNotFound: () => cosmosError(GrpcStatus.NOT_FOUND, 'Not Found'),
  /** A path or query value that does not parse as its field's type (400). */
  invalidArgument: (message: string) => cosmosError(GrpcStatus.INVALID_ARGUMENT, message),
  /** Gating on and no `x-api-key` header (401). */
  missingApiKey: () => cosmosError(GrpcStatus.UNAUTHENTICATED, 'missing API key: send it in the x-api-key header'),
  /** Gating on and a key that is not configured (403). */
  unknownApiKey: () => cosmosError(GrpcStatus.PERMISSION_DENIED, 'unknown API key'),
};

/**
 * Maps an upstream call failure to its HTTP answer; the node's message is passed through. `httpStatus` overrides
 * the code's status: an answer past GATEWAY_MAX_RESPONSE_BYTES is RESOURCE_EXHAUSTED (code 8) with 502, not 429,
 * since the client is not over any quota and cannot fix it by asking less often.
 */
export function fromGrpcError(
  error: { code?: number; details?: string; message: string; httpStatus?: number },
  headers?: Record<string, string>,
): HttpError {
  const code = typeof error.code === 'number' ? error.code : GrpcStatus.UNKNOWN;
  return cosmosError(code, error.details || error.message, headers, error.httpStatus);
}
