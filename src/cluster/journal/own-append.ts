// Thread: any (an actor host in practice)
// The publishes of a partition journal's writer to its own subject
// (journal.ts): its first message, and every append after it, each expecting the subject's last sequence. What
// makes them safe to send again: a publish with no responder did not land; one that timed out may have, and is
// sent again as it was until what became of it is known.
import { JetStreamApiCodes, JetStreamApiError, type PubAck } from '@nats-io/jetstream';
import { jserrors } from '@nats-io/jetstream/internal';
import { TimeoutError } from '@nats-io/transport-node';
import { RevisionConflictError } from '../../store/revision.js';
import type { ClusterConnection } from '../connection.js';
import { encodeMessage, type JournalMessage, type JournalStream, lastOnSubject, nextOnSubject } from './stream.js';

/** How often an append whose subject moved is tried again (each time after reading what moved it). */
const MAX_APPEND_ATTEMPTS = 8;

/** A writer's own subject, as its appends need it. */
export interface OwnSubject {
  readonly stream: JournalStream;
  readonly subject: string;
  /** The sequence of the newest message on the subject, as far as the writer knows. */
  last(): number;
  /** An append of the writer's landed at `seq`: the writer moves its last sequence, and answers it. */
  appended(seq: number): { seq: number };
  /** Reads the subject beyond what the writer knows, through `last` (fences, its own appends it never heard of). */
  readTail(last: number): Promise<void>;
}

/**
 * How long an append (or a writer's first message) waits for its stream to have a leader: nats-server elected a new
 * one 3-6 s after the old one's server died (measured), a new stream's first one within moments, and meanwhile a
 * publish has no responder.
 */
const LEADER_ELECTION_WAIT_MS = 8_000;
/** The JetStream client's error for a publish that no server took (no responders: no stream leader now). */
const noStreamLeader = (error: unknown) => error instanceof jserrors.JetStreamNotEnabled;
/** The client's error for a request not answered within its API timeout: the publish may still have landed. */
const timedOut = (error: unknown) => error instanceof TimeoutError;
/**
 * nats-server >= 2.11's answer to a publish whose message id the stream leader holds in process (proposed, not
 * stored yet): "duplicate message id is in process". 2.10 answers a duplicate ack with sequence 0 instead.
 */
const DUPLICATE_IN_PROCESS = 10158;
const inProcess = (error: unknown) => error instanceof JetStreamApiError && error.code === DUPLICATE_IN_PROCESS;

/** The attempts of one publish: how long since the first, and the pauses between them (50 ms, doubling to 500). */
class Attempts {
  readonly #started = Date.now();
  #pauseMs = 50;

  /** Whether less than `budgetMs` passed since the first attempt. */
  within(budgetMs: number): boolean {
    return Date.now() - this.#started < budgetMs;
  }

  /** Pauses and answers true, or answers false at once when `budgetMs` passed since the first attempt. */
  async pause(budgetMs: number): Promise<boolean> {
    if (!this.within(budgetMs)) return false;
    await new Promise((resolve) => setTimeout(resolve, this.#pauseMs));
    this.#pauseMs = Math.min(this.#pauseMs * 2, 500);
    return true;
  }
}

const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((byte, i) => byte === b[i]);

const movedSubject = (error: unknown) =>
  error instanceof JetStreamApiError &&
  (error.code === JetStreamApiCodes.StreamWrongLastSequence ||
    error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown);

/** Publishes a writer's first message to `subject` (which must be empty), waiting out a new stream's election. */
export async function firstMessage(connection: ClusterConnection, subject: string, data: Uint8Array): Promise<number> {
  // A stream just created may not have a leader yet: its first publish has no responder, so nothing landed.
  const attempts = new Attempts();
  for (;;) {
    try {
      return (await connection.js.publish(subject, data, { expect: { lastSubjectSequence: 0 } })).seq;
    } catch (error) {
      if (!(noStreamLeader(error) && (await attempts.pause(LEADER_ELECTION_WAIT_MS)))) throw error;
    }
  }
}

/**
 * Appends a message to a writer's own subject, after reading back what moved it when it moved (fences, or an
 * append of its own that timed out); `prepare` decides before each attempt what to send (undefined: nothing).
 *
 * A publish that timed out may or may not have landed. It is sent again as it was (the same bytes, message id and
 * expected sequence) until what became of it is known, for up to the election wait plus one API timeout from the
 * first attempt (so one that timed out near the end of the wait is still sent once more). The answer to a resend
 * says which: stored (the first did not land); the first still in process at the stream leader (asked again after
 * a pause); or the subject moved past the expected sequence, or a duplicate ack, when something landed there. The
 * first message on the subject after the expected sequence then tells: the one that timed out (its message id
 * and its bytes) is success at its sequence; anything else (a fence) moved the subject, and is read back.
 * nats-server 2.10 checks the expected sequence before the message id in a replicated stream, so a resend of one
 * that landed is refused as "wrong last sequence" there, not answered as a duplicate (measured); 2.11 and later
 * check the message id first.
 */
export async function appendOwn<T>(
  own: OwnSubject,
  prepare: () => JournalMessage<T> | undefined,
): Promise<{ seq: number } | undefined> {
  const attempts = new Attempts();
  const resendMs = LEADER_ELECTION_WAIT_MS + (own.stream.connection.js.getOptions().timeout ?? 5_000);
  let moves = 0;
  /** The publish that timed out: sent again as it was until what became of it is known. */
  let unanswered: { data: Uint8Array; expected: number; msgID: string } | undefined;
  for (;;) {
    let sent = unanswered;
    if (!sent) {
      const message = prepare();
      if (!message) return undefined;
      sent = { data: encodeMessage(message), expected: own.last(), msgID: `${own.subject}@${own.last()}` };
    }
    const { data, expected, msgID } = sent;
    let ack: PubAck | undefined;
    let failure: unknown;
    try {
      ack = await own.stream.connection.js.publish(own.subject, data, {
        expect: { lastSubjectSequence: expected },
        msgID,
      });
    } catch (error) {
      failure = error;
    }
    if (ack && !ack.duplicate) return own.appended(ack.seq);
    // A first attempt's duplicate is another message with this id that landed before (an append that timed out
    // and was given up): the subject moved.
    if (ack && !unanswered) failure = new RevisionConflictError(own.subject, expected);
    // A timeout may or may not have landed: send it again as it was. No responders: nobody took this attempt, so
    // it did not land (the stream is electing a leader: its server died), though one that timed out before it may
    // have: send it again after a pause.
    if (timedOut(failure)) unanswered = sent;
    if (timedOut(failure) || noStreamLeader(failure)) {
      const budgetMs = unanswered ? resendMs : LEADER_ELECTION_WAIT_MS;
      if (timedOut(failure) ? attempts.within(budgetMs) : await attempts.pause(budgetMs)) continue;
      throw failure;
    }
    if (unanswered && (inProcess(failure) || ack?.seq === 0)) {
      if (await attempts.pause(resendMs)) continue;
      throw new Error(`journal ${own.stream.name}: an append that timed out is still in process after ${resendMs} ms`);
    }
    // Something landed after `expected` on this subject: the one that timed out, or a fence.
    if (unanswered && (ack || movedSubject(failure))) {
      const landed = await nextOnSubject(own.stream, own.subject, expected);
      if (landed && landed.msgID === msgID && sameBytes(landed.data, data)) return own.appended(landed.seq);
      failure ??= new RevisionConflictError(own.subject, expected);
    }
    if (!(movedSubject(failure) || failure instanceof RevisionConflictError) || ++moves >= MAX_APPEND_ATTEMPTS) {
      throw failure;
    }
    unanswered = undefined;
    await own.readTail(await lastOnSubject(own.stream, own.subject));
  }
}
