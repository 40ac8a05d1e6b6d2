// Thread: main
// One error type that knows its answer. The default body follows the NestJS shape existing clients parse:
// { statusCode, message, error }.
import { STATUS_CODES } from 'node:http';
import { transientOf } from '../base/errors.js';
import { reply, type Reply } from './types.js';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers?: Record<string, string>,
  ) {
    super(
      typeof body === 'object' && body && 'message' in body
        ? String((body as { message: unknown }).message)
        : String(body),
    );
    this.name = 'HttpError';
  }

  toReply(): Reply {
    return reply.json(this.status, this.body, this.headers);
  }

  /** `{ statusCode, message, error }` with the standard reason phrase as `error`. */
  static of(
    status: number,
    message: string | string[],
    extra?: Record<string, unknown>,
    headers?: Record<string, string>,
  ): HttpError {
    return new HttpError(
      status,
      { statusCode: status, message, error: STATUS_CODES[status] ?? 'Error', ...extra },
      headers,
    );
  }
}

export const httpErrors = {
  badRequest: (message: string | string[]) => HttpError.of(400, message),
  unauthorized: (message: string) => HttpError.of(401, message),
  forbidden: (message: string) => HttpError.of(403, message),
  notFound: (message: string) => HttpError.of(404, message),
  /** No route matches the method and path. */
  noRoute: (method: string, path: string) => HttpError.of(404, `Cannot ${method} ${path}`),
  payloadTooLarge: (limit: number) => HttpError.of(413, `Request body larger than ${limit} bytes`),
  tooManyRequests: (retryAfterSeconds: number) =>
    HttpError.of(429, 'Too many requests, please try again later.', undefined, {
      'Retry-After': String(retryAfterSeconds),
    }),
  internal: () => HttpError.of(500, 'Internal server error'),
  /** A passing outage (a node cut off from its cluster): the client may try again, here or on another node. */
  temporarilyUnavailable: (retryAfterSeconds = 1) =>
    HttpError.of(503, 'The service is temporarily unavailable; try again in a moment', undefined, {
      'Retry-After': String(retryAfterSeconds),
    }),
};

/** Each of httpErrors in one line, for docs/errors.md (`npm run docs:errors`). */
export const HTTP_ERROR_MEANINGS: { readonly [K in keyof typeof httpErrors]: string } = {
  badRequest: 'A request the route refuses for a reason it names',
  unauthorized: 'A credential is missing or wrong',
  forbidden: 'The credential is right but not for this',
  notFound: 'No such resource',
  noRoute: 'No route matches the method and path (`Cannot GET /x`)',
  payloadTooLarge: 'The body is larger than the limit of its route',
  tooManyRequests: 'RATE_LIMIT_MAX requests per RATE_LIMIT_WINDOW_SECONDS and client address exceeded',
  internal: 'An unexpected error (logged with the request id)',
  temporarilyUnavailable: 'A passing outage (NATS out of reach, a full disk): try again here or on another node',
};

/**
 * The front door's answer to a failure that passes (errors.ts: a TransientError, or a library's error read as one)
 * which no face answered: 503 with its Retry-After, at least 1 s. Undefined for any other failure (a 500).
 */
export function transientAnswer(error: unknown): HttpError | undefined {
  const transient = transientOf(error);
  return transient && httpErrors.temporarilyUnavailable(Math.max(1, transient.retryAfterSeconds));
}
