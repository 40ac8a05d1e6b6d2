// Thread: main
// The gateway answering one Cosmos REST path in process (src/base/chain-rest.ts), for the USSD `query`
// action: the same route match, request mapping, upstream gRPC call and Cosmos JSON as an HTTP GET (handler.ts),
// within the caller's deadline. No API key gate (the caller is this process) and no block height (the latest).
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { RestAnswer } from '../base/chain-rest.js';
import { HttpError } from '../http/errors.js';
import { dispatch, type GatewayHandlerOptions } from './handler.js';

/** The longest answer passed back (a screen shows under 200 characters of it); a longer one is a 502, code 8. */
export const MAX_IN_PROCESS_ANSWER = 64 * 1024;

/** Never rejects: a refusal is its HTTP status and Cosmos error body, as an HTTP client would read them. */
export async function queryInProcess(
  options: Pick<GatewayHandlerOptions, 'table' | 'upstream' | 'json'>,
  pathAndQuery: string,
  timeoutMs: number,
): Promise<RestAnswer> {
  const mark = pathAndQuery.indexOf('?');
  const path = mark === -1 ? pathAndQuery : pathAndQuery.slice(0, mark);
  const rawQuery = mark === -1 ? '' : pathAndQuery.slice(mark + 1);
  if (!options.table.match(path)) return { ...errorAnswer(404, GrpcStatus.NOT_FOUND, 'Not Found'), unrouted: true };
  try {
    const answer = await dispatch(options, path, rawQuery, undefined, timeoutMs);
    const body = typeof answer.body === 'string' ? answer.body : Buffer.from(answer.body).toString('utf8');
    if (body.length > MAX_IN_PROCESS_ANSWER)
      return errorAnswer(502, GrpcStatus.RESOURCE_EXHAUSTED, `the answer is over ${MAX_IN_PROCESS_ANSWER} bytes`);
    return { status: answer.status, body };
  } catch (error) {
    if (error instanceof HttpError) return { status: error.status, body: JSON.stringify(error.body) };
    return errorAnswer(500, GrpcStatus.INTERNAL, (error as Error).message);
  }
}

const errorAnswer = (status: number, code: number, message: string): RestAnswer => ({
  status,
  body: JSON.stringify({ code, message, details: [] }),
});
