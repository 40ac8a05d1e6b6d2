// Thread: any
// The runtime's errors, with stable names: they cross the thread boundary as { name, message } (rpc.ts)
// and the main thread turns them back into these classes (wire-errors.ts), so faces can map them to their answers.
// A full mailbox and an unavailable host pass: they are TransientErrors.
import { TransientError } from '../base/errors.js';

/** A mailbox or a host's queue is full: the call was refused at once, before any work. Retry shortly. */
export class ActorBusyError extends TransientError<'actor_busy'> {
  override readonly name = 'ActorBusyError';
  constructor(message: string) {
    super('actor_busy', message);
  }
}

/** The host cannot take the call: restarting after a crash, stopping, or it did not answer in time. */
export class HostUnavailableError extends TransientError<'host_unavailable'> {
  override readonly name = 'HostUnavailableError';
  constructor(hostIndex: number, reason: string) {
    super('host_unavailable', `Actor host ${hostIndex} unavailable: ${reason}`);
  }
}

/**
 * A call's deadline passed (deadline-signals.ts): the reason its deadline signal fires with, on the caller's thread,
 * in the host and on the owner node alike. Queued work is dropped; running work sees its signal and does not commit.
 */
export class DeadlineExceededError extends TransientError<'deadline_exceeded'> {
  override readonly name = 'DeadlineExceededError';
  constructor(message = 'The call was not answered by its deadline') {
    super('deadline_exceeded', message);
  }
}

/** The caller gave up (its deadline passed) before the actor committed: the work was dropped or rolled back. */
export class CallCancelledError extends Error {
  override readonly name = 'CallCancelledError';
  constructor(reason = 'the caller gave up') {
    super(`Call cancelled: ${reason}`);
  }
}

/** The host is closing: it finishes what it holds and takes nothing new. */
export class HostClosingError extends Error {
  override readonly name = 'HostClosingError';
  constructor() {
    super('Actor host closing');
  }
}

// DomainError lives on the ground floor (src/base/errors.ts): storage throws it too, and storage knows no runtime.
export { DomainError, failureKind, TransientError, transientOf } from '../base/errors.js';
