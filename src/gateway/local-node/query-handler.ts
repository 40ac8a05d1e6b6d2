// Thread: main
// What a query of the embedded node is: request message in, response object out, or a NodeError.
import { status } from '@grpc/grpc-js';
import { PaginationError } from './pagination.js';
import type { RecordKind } from './records.js';
import type { ChainState } from './state.js';

// biome-ignore lint/suspicious/noExplicitAny: protobufjs messages, read by field name per query
export type Message = Record<string, any>;
export type QueryHandler = (request: Message, state: ChainState) => Message;

/** A gRPC status the node answers with. */
export class NodeError extends Error {
  constructor(
    readonly code: status,
    message: string,
  ) {
    super(message);
    this.name = 'NodeError';
  }
}

export const nodeErrors = {
  notFound: (what: string, id: string) => new NodeError(status.NOT_FOUND, `${what} ${id} not found`),
  emptyField: (field: string) => new NodeError(status.INVALID_ARGUMENT, `${field} cannot be empty`),
  invalidArgument: (message: string) => new NodeError(status.INVALID_ARGUMENT, message),
};

/** Throws INVALID_ARGUMENT when a required request field is empty. */
export function required(request: Message, ...fields: string[]): void {
  for (const field of fields) if (!request[field]) throw nodeErrors.emptyField(field);
}

/** A list page; a bad page request is INVALID_ARGUMENT, as on the chain. */
export function pageOf<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof PaginationError) throw nodeErrors.invalidArgument(error.message);
    throw error;
  }
}

/** A stored record, or NOT_FOUND naming `what`. */
export function found(state: ChainState, kind: RecordKind, key: string, what: string): Message {
  const record = state.get(kind, key);
  if (!record) throw nodeErrors.notFound(what, key);
  return record;
}

/** A query of one record, keyed by the (required) request fields joined with `/`, answered as `{ [answer]: record }`. */
export function recordBy(kind: RecordKind, answer: string, what: string, ...keyFields: string[]): QueryHandler {
  return (request, state) => {
    required(request, ...keyFields);
    return { [answer]: found(state, kind, keyFields.map((field) => request[field]).join('/'), what) };
  };
}

/** A list query: a page of a family, or of the records under the (required) request fields, as `{ [answer]: items, pagination }`. */
export function pageBy(kind: RecordKind, answer: string, ...withinFields: string[]): QueryHandler {
  return (request, state) => {
    required(request, ...withinFields);
    const within = withinFields.map((field) => `${request[field]}/`).join('');
    const page = pageOf(() => state.page(kind, request.pagination, within));
    return { [answer]: page.items, pagination: page.pagination };
  };
}
