// Thread: main
// One request's run through its route's steps, the same on both engines: rate limit -> body -> handler -> reply.
// An engine subclasses Exchange with the three things that touch its sockets: writing an answer, reading the
// body and opening a stream. One object per request, no closures: the steps are its methods.
import { observeRequest } from '../metrics/http.js';
import type { DecodedBody } from './body.js';
import { decodeBody } from './body.js';
import type { CorsPairs } from './cors.js';
import type { DoorCore, RouteSteps } from './door-core.js';
import { httpErrors } from './errors.js';
import { nextRequestId } from './request-id.js';
import { type Context, type Span, tracing } from '../telemetry/index.js';
import type { HttpRequest, HttpResponse, Reply, StreamWriter } from './types.js';

/** Not a status any client receives: the metric label of a request its client abandoned before the answer. */
const CLIENT_CLOSED_REQUEST = 499;
/** The params of a route without any: one frozen object shared by its requests. */
export const NO_PARAMS: Record<string, string> = Object.freeze(Object.create(null));
const NO_BODY: DecodedBody = { body: undefined };
/** What a handler streaming to a HEAD request writes to: nothing goes out, and it says so. */
const CLOSED_STREAM: StreamWriter = {
  write: () => false,
  onDrain() {},
  onClose(listener) {
    queueMicrotask(listener);
  },
  end() {},
  closed: true,
};

export abstract class Exchange implements HttpResponse {
  readonly started: number;
  readonly requestId: string;
  readonly cors: CorsPairs;
  readonly ip: string;
  /** The AbortController is created only when a handler asks for the signal: most requests never do. */
  #controller: AbortController | undefined;
  aborted = false;
  finished = false;
  /** Counted in http_requests_total: when answered or when a stream's headers went out, else when abandoned. */
  #observed = false;
  /** Cluster mode: the count every node shares, asked while the body is read. */
  #admitted: Promise<number> | undefined;
  /** Tracing on: the request's server span. */
  #span: Span | undefined;
  /** Tracing on and the request sampled: the context its handler's calls are made in (HttpRequest.trace). */
  trace: Context | undefined;

  constructor(
    readonly door: DoorCore,
    readonly steps: RouteSteps,
    readonly method: string,
    readonly path: string,
    readonly rawQuery: string,
    readonly headers: Readonly<Record<string, string>>,
    readonly params: Readonly<Record<string, string>>,
    peer: string,
  ) {
    this.started = door.accessLog || door.metrics ? performance.now() : 0;
    this.ip = door.clientAddress(peer, headers);
    this.requestId = headers['x-request-id'] || nextRequestId();
    this.cors = door.cors(headers.origin);
    door.taken();
    if (tracing) this.#traced(tracing);
  }

  /** The server span, under the caller's W3C context when it sent one (traceparent, tracestate). */
  #traced(t: NonNullable<typeof tracing>): void {
    const route = this.steps.route;
    const headers = this.headers;
    const parent = t.extract((name) => headers[name]);
    // A new trace that is not sampled: no span at all (nothing is allocated for the 99% at 1% sampling).
    if (!parent && !t.sampleRoot()) return;
    this.#span = t.start(
      `${this.method} ${route.pattern}`,
      'server',
      {
        'http.request.method': this.method,
        'http.route': route.pattern,
        'http.engine': this.door.engine,
        'http.request_id': this.requestId,
      },
      parent,
    );
    // A caller's unsampled trace: nothing under it is recorded, so its handler gets no context (no hop carries one).
    if (this.#span.isRecording()) this.trace = t.contextOf(this.#span, parent);
  }

  /** Writes the whole answer; `closeConnection` drops the connection after it (the rest of a body is not read). */
  protected abstract write(reply: Reply, closeConnection: boolean): void;
  /** Reads the body (already known to be declared within `limit`): `bodyRead` with its text, or `tooLarge`. */
  protected abstract readBody(limit: number): void;
  /** Starts a streamed answer with these headers (X-Request-Id included) and the CORS headers. */
  protected abstract openStream(status: number, headers: Record<string, string>): StreamWriter;

  /** The engine's signal that the client went away before the answer was complete. */
  clientGone(): void {
    this.aborted = true;
    this.#controller?.abort(new Error('client disconnected'));
    // Gone before its answer (e.g. mid-body or while its handler ran): counted as 499, nginx's "client closed
    // request", so the counter's total is every request the front door took, answered or not.
    if (!this.#observed) this.#observe(CLIENT_CLOSED_REQUEST);
    this.finish();
  }

  signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.aborted) this.#controller.abort(new Error('client disconnected'));
    }
    return this.#controller.signal;
  }

  finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.door.done();
    this.#span?.end();
  }

  #observe(status: number): void {
    this.#observed = true;
    if (this.#span) {
      this.#span.setAttribute('http.response.status_code', status);
      if (status >= 500) this.#span.setStatus({ code: 2 });
    }
    if (this.door.metrics)
      observeRequest(this.steps.route, this.method, status, (performance.now() - this.started) / 1000);
  }

  send(reply: Reply, closeConnection = false): void {
    if (this.aborted || this.finished) return;
    this.write(reply, closeConnection || this.door.draining);
    this.#observe(reply.status);
    this.finish();
    if (this.door.accessLog) {
      const { requestId, method, path, ip } = this;
      this.door.options.log.debug(
        {
          reqId: requestId,
          method,
          path,
          status: reply.status,
          ip,
          ms: +(performance.now() - this.started).toFixed(2),
        },
        'request',
      );
    }
  }

  /** HttpResponse: the handler's way to a streamed answer. */
  stream(status: number, headers: Record<string, string>): StreamWriter {
    // HEAD of a streamed GET: its status and headers, no body, and a stream already closed to the handler.
    if (this.method === 'HEAD') {
      const { 'Content-Type': contentType = 'text/event-stream', ...rest } = headers;
      this.send({ status, contentType, body: '', headers: rest });
      return CLOSED_STREAM;
    }
    this.#observe(status);
    return this.openStream(status, { ...headers, 'X-Request-Id': headers['X-Request-Id'] ?? this.requestId });
  }

  /** Step 1: drain and rate limit; then the body (when the route takes one), then the handler. */
  begin(): void {
    const door = this.door;
    // Draining: served (send closes the connection) until the serving deadline, refused after it.
    if (door.draining) {
      door.lastRequestAt = Date.now();
      if (door.refusing) return this.send(this.steps.refusal, true);
    }
    // Requests with the operator's token (probes, scrapes) are not counted. Cluster mode: the shared count is asked
    // now, while the body (if any) is read; the handler runs once both are in.
    if (!door.exempt(this.headers)) {
      this.#admitted = door.sharedRateLimit?.(this.ip);
      if (!this.#admitted) {
        const retryAfter = door.rateLimiter.hit(this.ip);
        if (retryAfter > 0) return this.send(httpErrors.tooManyRequests(retryAfter).toReply());
      }
    }
    if (!this.steps.readsBody(this.method)) return this.bodyRead(undefined);
    const limit = door.options.bodyLimitBytes;
    if (Number(this.headers['content-length'] ?? 0) > limit) return this.tooLarge();
    this.readBody(limit);
  }

  tooLarge(): void {
    this.send(httpErrors.payloadTooLarge(this.door.options.bodyLimitBytes).toReply(), true);
  }

  /** Step 2: the body is in (or there is none); in cluster mode, wait for the shared count. */
  bodyRead(text: string | undefined): void {
    if (!this.#admitted) return this.#run(text);
    void this.#admitted.then((wait) => {
      if (wait > 0) this.send(httpErrors.tooManyRequests(wait).toReply());
      else if (!this.aborted) this.#run(text);
    });
  }

  /** Step 3: the handler, and its answer. */
  #run(text: string | undefined): void {
    const decoded = text === undefined ? NO_BODY : decodeBody(text, this.headers['content-type'] ?? '');
    const request = new IncomingRequest(this, decoded);
    let result: ReturnType<RouteSteps['route']['handler']>;
    try {
      result = this.steps.route.handler(request, this);
    } catch (error) {
      return this.send(this.door.errorReply(error, this.requestId));
    }
    if (result instanceof Promise) {
      result.then(
        (value) => value && this.send(value),
        (error) => this.send(this.door.errorReply(error, this.requestId)),
      );
    } else if (result) {
      this.send(result);
    }
  }
}

/** A request as handlers see it; a class, so its lazy getters are shared, not new functions per request. */
class IncomingRequest implements HttpRequest {
  #query: URLSearchParams | undefined;
  readonly method: string;
  readonly path: string;
  readonly rawQuery: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly params: Readonly<Record<string, string>>;
  readonly ip: string;
  readonly requestId: string;
  readonly body: unknown;
  readonly bodyError?: string;
  readonly trace: Context | undefined;

  constructor(
    private readonly exchange: Exchange,
    decoded: DecodedBody,
  ) {
    this.method = exchange.method;
    this.path = exchange.path;
    this.rawQuery = exchange.rawQuery;
    this.headers = exchange.headers;
    this.params = exchange.params;
    this.ip = exchange.ip;
    this.requestId = exchange.requestId;
    this.body = decoded.body;
    this.trace = exchange.trace;
    if (decoded.bodyError !== undefined) this.bodyError = decoded.bodyError;
  }

  get signal(): AbortSignal {
    return this.exchange.signal();
  }

  get query(): URLSearchParams {
    return (this.#query ??= new URLSearchParams(this.rawQuery));
  }
}

export function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
