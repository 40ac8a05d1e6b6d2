// The oracle's failure mapping (src/oracle/errors.ts): every declared failure code has an answer on every wire
// face (HTTP, SSE error frame, WebSocket error event), and errors are sorted into those codes.
import t from 'tap';
import { HttpError } from '../dist/src/http/errors.js';
import { CHAT_ERROR_CODES } from '../dist/src/oracle/chat/chat-protocol.js';
import { closingFrames, failedEnding } from '../dist/src/oracle/stream-ending.js';
import { encodeSseFrame } from '../dist/src/oracle/sse-frames.js';
import { CHAT_FAILURE_CODES, chatAnswers, chatFailure, failureOf, wsErrorText } from '../dist/src/oracle/errors.js';
import { errors as natsErrors } from '@nats-io/transport-node';
import { JetStreamApiError } from '@nats-io/jetstream';
import { jserrors } from '@nats-io/jetstream/internal';
import { readOutOfReach } from '../dist/src/cluster/out-of-reach.js';
import { fromWire, toWire } from '../dist/src/runtime/wire-errors.js';
import {
  ActorBusyError,
  DeadlineExceededError,
  DomainError,
  HostUnavailableError,
} from '../dist/src/runtime/errors.js';
import { RevisionConflictError } from '../dist/src/store/revision.js';

t.test('every declared code has an answer on every oracle face', async (t) => {
  for (const code of CHAT_ERROR_CODES)
    t.ok(CHAT_FAILURE_CODES.includes(code), `${code} (a chat actor refusal) is a failure code`);
  t.same(Object.keys(chatAnswers).sort(), ['http', 'sse', 'websocket']);
  for (const [face, table] of Object.entries(chatAnswers)) {
    t.same(Object.keys(table).sort(), [...CHAT_FAILURE_CODES].sort(), `${face} answers exactly the declared codes`);
  }
  for (const code of CHAT_FAILURE_CODES) {
    const failure = { code, message: `refused: ${code}` };
    const http = chatAnswers.http[code](failure);
    t.type(http, HttpError, `${code}: HTTP`);
    t.ok(http.status >= 400 && http.status < 600, `${code}: an error status (${http.status})`);
    t.match(http.body, { statusCode: http.status, message: String, error: String }, `${code}: the wire body`);
    t.match(chatAnswers.sse[code](failure), /\S/, `${code}: SSE error text`);
    t.match(chatAnswers.websocket[code](failure), /\S/, `${code}: WebSocket error text`);
  }
});

t.test(
  'errors are sorted into codes: refusals by their code, runtime errors by class, the rest internal',
  async (t) => {
    t.match(failureOf(new DomainError('credits_exhausted', 'Insufficient credits', { claims: ['c'] })), {
      code: 'credits_exhausted',
      message: 'Insufficient credits',
      details: { claims: ['c'] },
    });
    t.match(failureOf(new ActorBusyError('full')), { code: 'actor_busy', retryAfterSeconds: 1 });
    t.match(failureOf(new HostUnavailableError(0, 'restarting')), { code: 'host_unavailable' });
    t.match(failureOf(new DeadlineExceededError()), { code: 'deadline_exceeded', retryAfterSeconds: 1 });
    const late = chatFailure(new DeadlineExceededError()) as HttpError;
    t.match({ status: late.status, retryAfter: late.headers?.['Retry-After'] }, { status: 504, retryAfter: '1' });
    t.match(
      failureOf(new RevisionConflictError('session s1', 3)),
      { code: 'session_changed' },
      'another node wrote the session first',
    );
    t.equal((chatFailure(new RevisionConflictError('session s1', 3)) as HttpError).status, 409);
    t.match(
      failureOf(new DomainError('some_plugin_code', 'x')),
      { code: 'internal' },
      'an undeclared code is not answered as if declared',
    );
    t.match(failureOf('a string'), { code: 'internal', message: 'a string' });
  },
);

t.test('each face answers from the table', async (t) => {
  const busy = chatFailure(new ActorBusyError('full'));
  if (!(busy instanceof HttpError)) throw new Error('actor_busy maps to an HttpError');
  t.equal(busy.status, 503);
  t.same(busy.headers, { 'Retry-After': '1' });
  // A node cut off from its NATS cluster (a partition, a leader election): a passing state, 503 with Retry-After.
  // The client's errors read so on a thread that connected to NATS (connectCluster adds the reading).
  readOutOfReach();
  for (const error of [new natsErrors.TimeoutError(), new natsErrors.NoRespondersError('x')]) {
    const answer = chatFailure(error);
    t.ok(answer instanceof HttpError && answer.status === 503 && answer.headers?.['Retry-After'], `${error.name}: 503`);
  }
  // Seen in cluster-partitions' logs as 500s: a publish with no JetStream responder (credits' charge) and
  // JetStream without a meta leader (a session's read), also after crossing a node (a remote stream's ending).
  const jetStreamNotEnabled = new jserrors.JetStreamNotEnabled('jetstream is not enabled');
  const notNow = new JetStreamApiError({
    code: 503,
    err_code: 10008,
    description: 'JetStream system temporarily unavailable',
  });
  for (const error of [jetStreamNotEnabled, notNow, fromWire(toWire(notNow))]) {
    const answer = chatFailure(error);
    t.ok(answer instanceof HttpError && answer.status === 503 && answer.headers?.['Retry-After'], `${error.name}: 503`);
  }
  const wrongSequence = new JetStreamApiError({ code: 400, err_code: 10071, description: 'wrong last sequence: 5' });
  t.equal(chatFailure(wrongSequence), wrongSequence, 'a JetStream refusal that is not a 503 stays internal');
  t.equal((chatFailure(new Error('a bug')) as Error).message, 'a bug', 'any other error stays internal');
  t.equal((chatFailure(new DomainError('session_exists', 'Session already exists')) as HttpError).status, 409);
  const unexpected = new Error('bug');
  t.equal(chatFailure(unexpected), unexpected, 'internal: handed to the router as it is (logged, 500)');

  const [error, done] = closingFrames(failedEnding(new HostUnavailableError(1, 'exited with code 1'))).map((frame) =>
    encodeSseFrame(frame),
  );
  t.match(error, /^event: error\ndata: \{"error":"The chat service stopped while answering/);
  t.equal(done, 'event: done\ndata: {"status":"failed","failed":true}\n\n', 'done says the turn failed');
  t.match(
    encodeSseFrame(closingFrames(failedEnding(new Error('secret detail')))[0]!),
    /could not be completed/,
    'internal details stay in the log',
  );

  t.equal(
    wsErrorText(new HostUnavailableError(0, 'restarting')),
    'The chat service is restarting; the result was not delivered',
  );
  t.equal(wsErrorText(new DomainError('session_not_found', 'Session not found')), 'Session not found');
});
