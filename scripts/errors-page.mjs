// Writes docs/errors.md from the server's own error tables in dist/ (build first: `npm run docs:errors` does):
// each answer's HTTP status is read from the answer the code builds, never copied. test/docs-errors.test.ts fails
// when the page differs from what this prints. Usage: node scripts/errors-page.mjs [--stdout]
import { writeFileSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';

const dist = new URL('../dist/src/', import.meta.url);
const load = (path) => import(new URL(path, dist).href);

const [
  http,
  door,
  protocol,
  operator,
  oracle,
  chat,
  auth,
  calls,
  gateway,
  grpc,
  ussd,
  ussdOperator,
  errors,
  waiting,
  dial,
] = await Promise.all([
  load('http/errors.js'),
  load('http/door-core.js'),
  load('http/node-client-error.js'),
  load('http/operator-guard.js'),
  load('oracle/errors.js'),
  load('oracle/chat-failures.js'),
  load('oracle/auth/messages.js'),
  load('oracle/calls/errors.js'),
  load('gateway/errors.js'),
  import('@grpc/grpc-js'),
  load('ussd/answers.js'),
  load('ussd/routes/operator.js'),
  load('base/errors.js'),
  load('cluster/waiting-room.js'),
  load('ussd/routes/dial.js'),
]);

const cell = (text) => String(text).replaceAll('|', '\\|').replaceAll('\n', ' ');
const status = (code) => `${code} ${STATUS_CODES[code] ?? ''}`.trim();
const row = (cells) => `| ${cells.map(cell).join(' | ')} |`;
const table = (head, rows) => [row(head), row(head.map(() => '---')), ...rows.map(row)];

/** Terminal or transient, from the answer itself: a Retry-After header, or a status that means "later". */
function kind(error, other) {
  const wait = error.headers?.['Retry-After'];
  if (wait !== undefined) return `transient, Retry-After ${other && other !== wait ? 'as the call says' : `${wait} s`}`;
  return error.status === 503 || error.status === 429 ? 'transient' : 'terminal';
}

/** A factory's answer for a sample argument (a number, or a list for the ones that take issues). */
function sample(make, n) {
  try {
    return make(n);
  } catch {
    return make([]);
  }
}

/** Rows of a table of error factories: each is called twice with sample arguments, to see what varies. */
function factoryRows(factories, meanings) {
  return Object.entries(factories).map(([name, make]) => {
    const one = sample(make, 7);
    const two = sample(make, 11);
    return [`\`${name}\``, status(one.status), kind(one, two.headers?.['Retry-After']), meanings[name]];
  });
}

const chatRows = chat.CHAT_FAILURE_CODES.map((code) => {
  const answer = oracle.chatAnswers.http[code]({ code, message: 'm' });
  return [`\`${code}\``, status(answer.status), kind(answer), chat.CHAT_FAILURE_MEANINGS[code]];
});

const { refused, ...callFactories } = calls.callErrors;
const callRows = [
  ...factoryRows(callFactories, calls.CALL_ERROR_MEANINGS),
  ...Object.entries(calls.CALL_REFUSAL_MEANINGS).map(([code, meaning]) => {
    const answer = refused({ status: Number(code), message: 'm' });
    return ['`refused`', status(answer.status), kind(answer), meaning];
  }),
];

const grpcName = Object.fromEntries(Object.entries(grpc.status).map(([name, code]) => [code, name]));
const grpcRows = Object.entries(gateway.GRPC_ANSWERS)
  .filter(([code]) => Number(code) !== grpc.status.OK)
  .map(([code, answer]) => [
    `${code} \`${grpcName[code]}\``,
    status(answer.http),
    answer.retryable ? 'transient' : 'terminal',
    answer.meaning,
  ]);
const gatewayOwn = Object.entries(gateway.gatewayErrors).map(([name, make]) => {
  const answer = make('m');
  return [`\`${name}\``, `${answer.body.code} \`${grpcName[answer.body.code]}\``, status(answer.status)];
});

/** Each transient code as every face answers it: the front door's 503, the oracle's chat answer, the USSD END. */
const transientRows = Object.entries(errors.TRANSIENT_CODES).map(([code, { meaning }]) => {
  const error = new errors.TransientError(code, 'm');
  const front = http.transientAnswer(error);
  const answer = oracle.chatFailure(error);
  const failure = chat.failureOf(error);
  return [
    `\`${code}\``,
    `${status(front.status)}, Retry-After ${front.headers['Retry-After']} s`,
    `${status(answer.status)} (\`${failure.code}\`)`,
    ussd.answerOf(error) === ussd.SERVICE_UNAVAILABLE ? '`SERVICE_UNAVAILABLE`' : 'other',
    meaning,
  ];
});

const waitingRetry = String(waiting.WAITING_ROOM_RETRY_AFTER_SECONDS);
const [drainRoute, drainReply] = Object.entries(dial.USSD_DRAIN_REFUSALS)[0];
const ussdWhen = [
  ['A step that failed (any failure: terminal, transient or fault)', status(200), 'none', '`SERVICE_UNAVAILABLE`'],
  [
    `The node draining, past SHUTDOWN_SERVE_MS (\`${drainRoute}\`)`,
    status(drainReply.status),
    `${drainReply.headers['Retry-After']} s`,
    `\`${ussd.USSD_ENDS.find(({ text }) => text === drainReply.body)?.name ?? drainReply.body}\``,
  ],
  ['The node starting, waiting for NATS (cluster mode)', status(200), `${waitingRetry} s`, '`SERVICE_UNAVAILABLE`'],
];

const HEAD = ['answer', 'HTTP', 'kind', 'meaning'];
const page = [
  '# Errors',
  '',
  'Every error the server answers, by face: its code, HTTP status, whether asking again can help and what it means.',
  '**Generated** by `npm run docs:errors` (`scripts/errors-page.mjs`) from the tables the code answers with;',
  '`test/docs-errors.test.ts` fails when this page is not what they say. Do not edit it by hand.',
  '',
  '- **terminal**: the same request fails the same way; change it (or the credentials, or the data) first.',
  '- **transient**: the same request may succeed later; wait the `Retry-After` seconds when the answer has one.',
  '',
  'Bodies: the oracle and the front door answer `{ statusCode, message, error }` (NestJS); the gateway',
  '`{ code, message, details }` (grpc-gateway); the USSD routes always answer 200 with an END text.',
  'See [api.md](api.md) for the routes.',
  '',
  '## The failure contract',
  '',
  'Every failure is one of three, by its type (`failureKind`, `src/base/errors.ts`), the same on every thread and',
  'node (the one codec, `src/runtime/wire-errors.ts`): **terminal**, a `DomainError` with a code (the refusals',
  'below); **transient**, a `TransientError` with a code and `retryAfterSeconds`; or a **fault**, anything else',
  '(logged as an error, answered 500 or the USSD END). The transient codes (`TRANSIENT_CODES`) and how each',
  'face answers them: the front door when no face did (`transientAnswer`, `src/http/errors.ts`), the oracle, USSD:',
  '',
  ...table(['code', 'front door', 'oracle HTTP', 'USSD', 'meaning'], transientRows),
  '',
  '## Every face: the front door',
  '',
  'Answers of any route, from `httpErrors` (`src/http/errors.ts`) and the door itself (`src/http/door-core.ts`).',
  '',
  ...table(HEAD, [
    ...factoryRows(http.httpErrors, http.HTTP_ERROR_MEANINGS),
    ['`SHUTTING_DOWN`', status(door.SHUTTING_DOWN.status), kind(door.SHUTTING_DOWN), 'The server is draining'],
    [
      '`WAITING_ROOM`',
      status(waiting.WAITING_ROOM_ANSWER.status),
      `transient, Retry-After ${waitingRetry} s`,
      waiting.WAITING_ROOM_ANSWER.meaning,
    ],
  ]),
  '',
  'A Socket.IO (Engine.IO) handshake or long-poll over the rate limit gets the same `tooManyRequests` answer,',
  `${status(http.httpErrors.tooManyRequests(1).status)} with Retry-After and the CORS headers of its origin, on`,
  'either engine (`src/http/uws-socket-io.ts`, `src/http/node-socket-io.ts`), not the 403 `{"code":4}` of',
  'Engine.IO.',
  '',
  'What the portable engine (`HTTP_ENGINE=node`) answers a request its parser refuses, before any route,',
  'closing the connection (`protocolErrors`, `src/http/node-client-error.ts`):',
  '',
  ...table(HEAD, factoryRows(protocol.protocolErrors, protocol.PROTOCOL_ERROR_MEANINGS)),
  '',
  'The operator routes (`/metrics`, the USSD debug routes) answer with `operatorErrors`',
  '(`src/http/operator-guard.ts`):',
  '',
  ...table(HEAD, factoryRows(operator.operatorErrors, operator.OPERATOR_ERROR_MEANINGS)),
  '',
  '## Oracle: chat failures',
  '',
  'Every way a chat call fails, by its stable code (`CHAT_FAILURE_CODES`, `src/oracle/chat-failures.ts`). Over',
  'HTTP it is the status below; on an open SSE stream an `error` frame, on a WebSocket an `error` event, with',
  'the text of `streamAnswers`.',
  '',
  ...table(['code', 'HTTP', 'kind', 'meaning'], chatRows),
  '',
  '## Oracle: other answers',
  '',
  '`oracleErrors` (`src/oracle/errors.ts`) and the authentication answers, `authErrors`',
  '(`src/oracle/auth/messages.ts`).',
  '',
  ...table(HEAD, [
    ...factoryRows(oracle.oracleErrors, oracle.ORACLE_ERROR_MEANINGS),
    ...factoryRows(auth.authErrors, auth.AUTH_ERROR_MEANINGS),
  ]),
  '',
  '## Oracle: live calls',
  '',
  'The live-call routes (`callErrors`, `src/oracle/calls/errors.ts`; [live-calls.md](live-calls.md)).',
  '',
  ...table(HEAD, callRows),
  '',
  '## Protocol query gateway',
  '',
  "A node's gRPC status becomes the gateway's HTTP status (`GRPC_ANSWERS`, `src/gateway/errors.ts`); the body's",
  "`code` is the gRPC code and `message` the node's own.",
  '',
  ...table(['gRPC code', 'HTTP', 'kind', 'meaning'], grpcRows),
  '',
  "The gateway's own refusals (`gatewayErrors`):",
  '',
  ...table(['answer', 'gRPC code', 'HTTP'], gatewayOwn),
  '',
  '## USSD',
  '',
  'A USSD gateway ends the session on any answer but 200, so every failure is a 200 END text',
  "(`src/ussd/answers.ts`), in the provider's own form on the aggregator routes",
  '([ussd-aggregators.md](ussd-aggregators.md)). Each is terminal for the session: the user dials again.',
  '',
  ...table(
    ['answer', 'text', 'meaning'],
    ussd.USSD_ENDS.map(({ name, text, meaning }) => [`\`${name}\``, `\`${text}\``, meaning]),
  ),
  '',
  'When the USSD step route answers the fault END (`/api/ussd`; the drain answer is `USSD_DRAIN_REFUSALS`,',
  "`src/ussd/routes/dial.ts`, the waiting room's `src/cluster/waiting-room.ts`):",
  '',
  ...table(['when', 'HTTP', 'Retry-After', 'answer'], ussdWhen),
  '',
  'The USSD operator routes answer JSON; their own error (`ussdOperatorErrors`, `src/ussd/routes/operator.ts`):',
  '',
  ...table(HEAD, factoryRows(ussdOperator.ussdOperatorErrors, ussdOperator.USSD_OPERATOR_ERROR_MEANINGS)),
  '',
];

const text = page.join('\n');
if (process.argv.includes('--stdout')) process.stdout.write(text);
else writeFileSync(new URL('../docs/errors.md', import.meta.url), text);
