// The one error codec across threads and nodes (runtime/wire-errors.ts): each of the runtime's errors comes back
// as its own class with the sender's message, a DomainError with its code and details, a TransientError with its
// code and retryAfterSeconds; the stack only on request. Each is classified by its type (failureKind).
import { TimeoutError } from '@nats-io/transport-node';
import t from 'tap';
import { outOfReach, readOutOfReach } from '../dist/src/cluster/out-of-reach.js';
import { DomainError, failureKind, TransientError } from '../dist/src/base/errors.js';
import { StorageUnavailableError } from '../dist/src/store/write-guard.js';
import { RevisionConflictError } from '../dist/src/store/revision.js';
import {
  ActorBusyError,
  CallCancelledError,
  HostClosingError,
  HostUnavailableError,
} from '../dist/src/runtime/errors.js';
import { fromWire, toWire } from '../dist/src/runtime/wire-errors.js';

const roundTrip = (error: unknown, withStack = false) => fromWire(structuredClone(toWire(error, withStack)));

t.test('the runtime classes come back as themselves', async (t) => {
  const cases: [Error, new (...args: never[]) => Error][] = [
    [new ActorBusyError('queue full'), ActorBusyError],
    [new HostUnavailableError(2, 'restarting'), HostUnavailableError],
    [new CallCancelledError('deadline'), CallCancelledError],
    [new HostClosingError(), HostClosingError],
  ];
  for (const [sent, type] of cases) {
    const got = roundTrip(sent);
    t.ok(got instanceof type, `${sent.name} is revived`);
    t.equal(got.message, sent.message, `${sent.name} keeps the sender's message`);
    t.equal(got.name, sent.name);
  }
});

t.test('a DomainError keeps its code and details', async (t) => {
  const got = roundTrip(new DomainError('credits_exhausted', 'No credits', { balance: 0 }));
  t.ok(got instanceof DomainError);
  t.match(got, { code: 'credits_exhausted', message: 'No credits', details: { balance: 0 } });
});

t.test('other errors keep name and message; the stack crosses only when asked', async (t) => {
  const sent = new TypeError('bad');
  const plain = toWire(sent);
  t.same(Object.keys(plain).sort(), ['message', 'name'], 'no stack by default (between nodes)');
  const got = roundTrip(sent, true);
  t.equal(got.name, 'TypeError');
  t.equal(got.message, 'bad');
  t.equal(got.stack, sent.stack, 'between threads the stack crosses');
  t.same(toWire('just a string'), { name: 'Error', message: 'just a string' });
});

t.test('a TransientError keeps its code, details and retryAfterSeconds, and stays transient', async (t) => {
  const cases: [Error, string, number][] = [
    [new ActorBusyError('queue full'), 'actor_busy', 1],
    [new HostUnavailableError(1, 'restarting'), 'host_unavailable', 1],
    [new StorageUnavailableError('low_space', 'disk full'), 'storage_unavailable', 5],
    [new RevisionConflictError('s1', 3), 'revision_conflict', 0],
    [new TransientError('cluster_unreachable', 'no leader', 2, { stream: 'x' }), 'cluster_unreachable', 2],
  ];
  for (const [sent, code, retryAfterSeconds] of cases) {
    const got = roundTrip(sent);
    t.ok(got instanceof TransientError, `${code}: a TransientError`);
    t.match(got, { code, retryAfterSeconds, message: sent.message }, `${code}: its code and retry`);
    t.equal(failureKind(got), 'transient', `${code}: transient after crossing`);
  }
  t.same((roundTrip(new RevisionConflictError('s1', 3)) as TransientError).details, { key: 's1', expected: 3 });
});

t.test('terminal, transient and fault are told apart by type, never by name', async (t) => {
  t.equal(failureKind(new DomainError('session_exists', 'exists')), 'terminal');
  t.equal(failureKind(new ActorBusyError('full')), 'transient');
  t.equal(failureKind(new Error('boom')), 'fault');
  t.equal(failureKind(Object.assign(new Error('late'), { name: 'TimeoutError' })), 'fault', 'a name is no type');
  t.equal(failureKind(new DOMException('aborted', 'TimeoutError')), 'fault', "an abort's TimeoutError too");
});

t.test("the NATS client's timeout reads as cluster_unreachable and crosses as that", async (t) => {
  t.equal(outOfReach(new Error('timeout')), undefined, 'a plain error is not read');
  t.match(outOfReach(new TimeoutError()), { code: 'cluster_unreachable', retryAfterSeconds: 1 });
  readOutOfReach();
  const got = roundTrip(new TimeoutError());
  t.ok(got instanceof TransientError, 'crossed as a TransientError');
  t.match(got, { name: 'TransientError', code: 'cluster_unreachable', message: 'timeout' });
  t.equal(failureKind(new TimeoutError()), 'transient', 'on the thread that reads it');
});
