// Thread: main
// Every answer of the gateway that is not 200 has the Cosmos REST error body { code, message, details }
// (grpc-gateway v1), with the HTTP status of the gRPC code from the reference's table.
import { status as GrpcStatus } from '@grpc/grpc-js';
import { HttpError } from '../http/errors.js';

/** A gRPC status as the gateway answers it: its HTTP status, whether asking again may help, what it means. */
export interface GrpcAnswer {
  readonly http: number;
  readonly retryable: boolean;
  readonly meaning: string;
}

/**
 * Every gRPC status code with the HTTP status grpc-gateway answers for it (the reference's table), whether the
 * same request may succeed later, and its meaning in one line (docs/errors.md, `npm run docs:errors`).
 */
export const GRPC_ANSWERS: Readonly<Record<number, GrpcAnswer>> = {
  [GrpcStatus.OK]: { http: 200, retryable: false, meaning: 'Not an error' },
  [GrpcStatus.CANCELLED]: { http: 408, retryable: true, meaning: 'The call was cancelled before it finished' },
  [GrpcStatus.UNKNOWN]: { http: 500, retryable: false, meaning: 'The node failed without a known code' },
  [GrpcStatus.INVALID_ARGUMENT]: { http: 400, retryable: false, meaning: 'A path or query value the node refused' },
  [GrpcStatus.DEADLINE_EXCEEDED]: {
    http: 504,
    retryable: true,
    meaning: 'The node did not answer within GATEWAY_TIMEOUT_MS',
  },
  [GrpcStatus.NOT_FOUND]: { http: 404, retryable: false, meaning: 'No such route, or no such object on chain' },
  [GrpcStatus.ALREADY_EXISTS]: { http: 409, retryable: false, meaning: 'The object exists already' },
  [GrpcStatus.PERMISSION_DENIED]: { http: 403, retryable: false, meaning: 'The caller may not ask this' },
  [GrpcStatus.RESOURCE_EXHAUSTED]: {
    http: 429,
    retryable: true,
    meaning: "The node's quota is spent (502 when the answer is past GATEWAY_MAX_RESPONSE_BYTES: terminal)",
  },
  [GrpcStatus.FAILED_PRECONDITION]: { http: 400, retryable: false, meaning: 'The node is not in a state to answer' },
  [GrpcStatus.ABORTED]: { http: 409, retryable: true, meaning: 'The call was aborted by a concurrent one' },
  [GrpcStatus.OUT_OF_RANGE]: { http: 400, retryable: false, meaning: 'A value past the valid range (a height)' },
  [GrpcStatus.UNIMPLEMENTED]: { http: 501, retryable: false, meaning: 'The node does not serve this method' },
  [GrpcStatus.INTERNAL]: {
    http: 500,
    retryable: false,
    meaning: 'The node failed, or its answer is not the declared response type',
  },
  [GrpcStatus.UNAVAILABLE]: { http: 503, retryable: true, meaning: 'The node cannot be reached now' },
  [GrpcStatus.DATA_LOSS]: { http: 500, retryable: false, meaning: 'The node lost or corrupted data' },
  [GrpcStatus.UNAUTHENTICATED]: { http: 401, retryable: false, meaning: 'No API key, or the node wants credentials' },
};

/** The HTTP status grpc-gateway answers for a gRPC status code (unknown codes: 500). */
export function httpStatusOf(code: number): number {
  return GRPC_ANSWERS[code]?.http ?? 500;
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
