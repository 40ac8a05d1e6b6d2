// The one error codec across threads and nodes (runtime/wire-errors.ts): each of the runtime's errors comes back
// as its own class with the sender's message, a DomainError with its code and details; the stack only on request.
import t from 'tap';
import { DomainError } from '../dist/src/errors.js';
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
