// Thread: actor host
// The USSD session actor, one per session id, on the actor host its id hashes to. It owns the
// session record; every change is committed through the UssdSessionRepository before the screen is answered.
import { ussdServiceSessionsEnded, ussdSessionsActive, ussdStep, ussdUnknownCodes } from '../../metrics/catalogue.js';
import { actorKind, preparedPerHost, type Actor } from '../../runtime/actor-host.js';
import { shardOf } from '../../runtime/shard.js';
import { INVALID_INPUT, SESSION_EXPIRED } from '../answers.js';
import {
  USSD_ACTOR,
  type AskAnswerMessage,
  type DialMessage,
  type GatewayEndMessage,
  type GatewayEndOutcome,
  type InspectMessage,
  type OutboxRecordMessage,
  type OutboxResumeMessage,
  type SessionView,
  type UssdShape,
} from '../protocol.js';
import { ENDED_RETENTION_MS, ENDED_STATE, isLive, type UssdSession } from '../session.js';
import type { UssdSessionStore } from '../sessions/repository.js';
import { isRevisionConflict, type Versioned } from '../../store/revision.js';
import { CustomerAccounts } from './customer-accounts.js';
import { LiveSessions } from './live-sessions.js';
import { answer, answerAsk, type MenuDeps } from './menu/index.js';
import type { AskNeeded } from '../services/ask.js';
import { askOf, countStep, countTimedOut } from './step-outcomes.js';
import { PinCipher } from './pin-cipher.js';
import { openHostCatalog } from '../services/host-catalog.js';
import type { ResumePoints } from '../services/resume-points.js';
import { callsDeadline, stepDeps } from '../services/step-budget.js';
import { countPending, Outbox } from '../outbox/outbox.js';
import { recordInSession, withOutboxRecord } from './outbox-records.js';
import type { Context } from '../../telemetry/index.js';

interface UssdServices {
  sessions: UssdSessionStore;
  deps: MenuDeps;
  /** For ussd_sessions_active; absent with METRICS_ENABLED=false and where the front door counts (app/records.ts). */
  live?: LiveSessions;
  /** Delivers the notifications of committed steps (`notify` actions). */
  outbox: Outbox;
  /** Where phones left services with `resume`. */
  resumePoints: ResumePoints;
}

/** Services shared by the USSD actors of one host, on the records the composition root picked (src/app/records.ts). */
const services = preparedPerHost(async (host): Promise<UssdServices> => {
  const { config, records } = host;
  // The server resolved PIN_ENCRYPTION_KEY to 64 hex characters before starting the hosts.
  const pinCipher = new PinCipher(Buffer.from(config.PIN_ENCRYPTION_KEY ?? '', 'hex'));
  const [sessions, customers, published, languages, resumePoints] = await Promise.all([
    records.ussd.sessions({ index: host.hostIndex, count: config.ACTOR_THREADS }),
    records.ussd.customers(),
    records.ussd.published(),
    records.ussd.languages(),
    records.ussd.resumePoints(),
  ]);
  const hostCatalog = await openHostCatalog(published, host.log);
  const seed = config.METRICS_ENABLED ? await records.ussd.hostLiveSessions?.() : undefined;
  const live =
    seed && new LiveSessions(seed, (sessionId) => shardOf(sessionId, config.ACTOR_THREADS) === host.hostIndex);
  // This host's value of the gauge, sent in its metrics reports (src/metrics/host-report.ts).
  if (live) ussdSessionsActive.collect = (gauge) => void (gauge.with().value = live.count());
  // Delivered while this host still writes the session (the records say where notifications wait).
  const outbox = new Outbox(records.ussd.outbox(recordInSession(host)), host.log, {
    backoffMs: config.USSD_OUTBOX_BACKOFF_MS,
    serves: (sessionId) => shardOf(sessionId, config.ACTOR_THREADS) === host.hostIndex,
    holds: (sessionId) => sessions.holds(sessionId),
  });
  outbox.start();
  countPending(outbox);
  return {
    sessions,
    live,
    outbox,
    resumePoints,
    deps: {
      customers: new CustomerAccounts(customers, pinCipher, { pinLockMinutes: config.PIN_LOCK_MINUTES }),
      pinCipher,
      now: Date.now,
      sessionTtlSeconds: config.USSD_SESSION_TTL_SECONDS,
      catalog: hostCatalog.catalog,
      readVersion: hostCatalog.readVersion,
      languageOf: languages.get,
      rememberLanguage: languages.set,
      resumePoints,
      unknownCodeScreen: `END ${config.USSD_UNKNOWN_CODE_TEXT}`,
      // The `query` action: the main thread's gateway, in process.
      ...(host.chainRest ? { chainRest: host.chainRest } : {}),
    },
  };
});

/**
 * The actor steps from a copy of its session (as it last wrote it, or as its store holds it: sessions.copy) that
 * another node may have moved on since (one node: never, and the store says so: sessions.copyCurrent). Where it may,
 * the copy is trusted only through the write's revision check; a step that would answer without writing, or call an
 * endpoint, confirms it with a read first; a step refused either way is redone once from a fresh read (STALE); and
 * messages that may answer without writing read fresh. Where the copy is current, none of that: no second read.
 */
class UssdActor implements Actor<UssdShape> {
  /** The session as last committed or read, with its revision; undefined when not held (or there is none). */
  #stored: Versioned<UssdSession> | undefined;

  constructor(
    private readonly sessionId: string,
    private readonly services: UssdServices,
  ) {}

  receive(
    message:
      | DialMessage
      | AskAnswerMessage
      | InspectMessage
      | GatewayEndMessage
      | OutboxRecordMessage
      | OutboxResumeMessage,
    cancelled?: AbortSignal,
    trace?: Context,
  ): Promise<string | AskNeeded | SessionView | null | GatewayEndOutcome | boolean | number> {
    if (message.type === 'dial') return this.#dial(message, cancelled, trace);
    if (message.type === 'askAnswer') return this.#askAnswer(message, cancelled);
    if (message.type === 'outboxRecord') return this.#outboxRecord(message);
    if (message.type === 'outboxResume') return this.#outboxResume();
    return message.type === 'inspect' ? this.#inspect() : this.#gatewayEnd(message, trace);
  }

  /**
   * Records what became of a notification in the session's record (where the records are the outbox: from the copy
   * held, then once from a fresh read). False when the record no longer holds it or the partition moved.
   */
  async #outboxRecord(message: OutboxRecordMessage): Promise<boolean> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const stored = await this.#load(attempt > 0);
      const next = stored && withOutboxRecord(stored.value, message);
      if (!next) {
        if (attempt === 0) continue;
        return false;
      }
      try {
        this.#stored = { value: next, revision: await this.services.sessions.update(next, stored) };
        return true;
      } catch (error) {
        this.#stored = undefined;
        if (!isRevisionConflict(error)) throw error;
      }
    }
    return false;
  }

  /** On a partition's new owner: hands the notifications the record still holds to this host's outbox. */
  async #outboxResume(): Promise<number> {
    const pending = (await this.#load(true))?.value.outbox ?? [];
    if (pending.length > 0) this.services.outbox.add(this.sessionId, pending);
    return pending.length;
  }

  /**
   * The session: `fresh`, read (current); else the copy, at once when this actor holds it (no promise for the common
   * step), or as the store holds it.
   */
  #load(fresh = false): Versioned<UssdSession> | undefined | Promise<Versioned<UssdSession> | undefined> {
    if (!fresh && this.#stored) return this.#stored;
    const { sessions } = this.services;
    const loading = fresh ? sessions.get(this.sessionId) : sessions.copy(this.sessionId);
    if (!(loading instanceof Promise)) return (this.#stored = loading);
    return loading.then((stored) => (this.#stored = stored));
  }

  async #inspect(): Promise<SessionView | null> {
    // An answer that writes nothing has no revision check to prove a copy current: read, unless the store vouches.
    const session = (await this.#load(!this.services.sessions.copyCurrent))?.value;
    if (!isLive(session, this.services.deps.now())) return null;
    const { state, context, createdAt, updatedAt, expiresAt } = session;
    return { state, context, createdAt, updatedAt, expiresAt };
  }

  /**
   * Records how the gateway ended the session (once: a repeated notification changes nothing); a session still
   * live ends here, counted with the reason `gateway`.
   */
  async #gatewayEnd({ phoneNumber, end }: GatewayEndMessage, trace?: Context): Promise<GatewayEndOutcome> {
    const { sessions, deps } = this.services;
    for (let attempt = 0; ; attempt++) {
      // It may answer without writing: read, unless the copy is current.
      const stored = await this.#load(attempt > 0 || !sessions.copyCurrent);
      const now = deps.now();
      if (!stored || stored.value.expiresAt <= now) return 'unknown';
      const session = stored.value;
      if (phoneNumber !== undefined && session.phoneNumber !== phoneNumber) return 'unknown';
      if (session.gatewayEnd) return 'repeated';
      const live = session.state !== ENDED_STATE;
      const next: UssdSession = live
        ? {
            ...session,
            state: ENDED_STATE,
            screen: endedScreen(session.screen),
            gatewayEnd: { ...end, at: now },
            updatedAt: now,
            expiresAt: now + ENDED_RETENTION_MS,
          }
        : { ...session, gatewayEnd: { ...end, at: now } };
      try {
        this.#stored = { value: next, revision: await sessions.update(next, stored, trace) };
      } catch (error) {
        this.#stored = undefined;
        if (attempt === 0 && isRevisionConflict(error)) continue;
        throw error;
      }
      this.services.live?.committed(this.sessionId, next);
      if (live) ussdServiceSessionsEnded.with(session.serviceId ?? 'builtin', session.state, 'gateway').inc();
      return 'recorded';
    }
  }

  /**
   * Shows (or keeps, when late) the answer of the chat turn the session waits for; null when it waits for none. No
   * answer yet (the step answered `working`): the account keeps the turn as pending, for the next dial.
   */
  async #askAnswer(message: AskAnswerMessage, cancelled?: AbortSignal): Promise<string | null> {
    const { turnId, answer, late, customerId, serviceId } = message;
    const { sessions } = this.services;
    const deps = stepDeps(this.services.deps, callsDeadline(cancelled, this.services.deps.now()), undefined);
    // Late, the account keeps it too, for the next visit to the ask state: the user may have hung up or dialled
    // again. Whichever shows it first takes it off the account.
    if (late || answer === undefined) await deps.customers.keepAnswer(customerId, serviceId, turnId, answer);
    for (let attempt = 0; answer !== undefined; attempt++) {
      // It may answer without writing: read, unless the copy is current.
      const stored = await this.#load(attempt > 0 || !sessions.copyCurrent);
      if (!stored || !isLive(stored.value, deps.now())) return null;
      const step = await answerAsk(stored.value, deps, turnId, answer, late);
      if (!step) return null;
      try {
        this.#stored = { value: step.session, revision: await sessions.update(step.session, stored) };
      } catch (error) {
        this.#stored = undefined;
        if (attempt === 0 && isRevisionConflict(error)) continue;
        throw error;
      }
      this.services.live?.committed(this.sessionId, step.session);
      // Shown now: a turn the account kept (pending) is taken off it.
      if (message.kept && !late) await deps.customers.takeAnswer(customerId, serviceId, turnId);
      return step.screen;
    }
    return null;
  }

  /** A step from the copy, redone once from a fresh read when the copy proves stale (the class comment). */
  async #dial(dial: DialMessage, cancelled?: AbortSignal, trace?: Context): Promise<string | AskNeeded> {
    const first = await this.#step(dial, false, cancelled, trace);
    return first !== STALE
      ? first
      : ((this.#stored = undefined), this.#step(dial, true, cancelled, trace) as Promise<string | AskNeeded>);
  }

  /**
   * The check before an `http` call of a step on a copy: the session is read, and the step is given up as STALE
   * (redone from that read) unless the copy is what is stored, so a step that another node committed meanwhile is
   * replayed from its record and its endpoint never called again.
   */
  #confirming(copy: Versioned<UssdSession> | undefined, now: number): () => Promise<void> {
    return async () => {
      const fresh = await this.services.sessions.get(this.sessionId);
      const current = copy ? fresh?.revision === copy.revision : fresh === undefined || fresh.value.expiresAt <= now;
      if (!current) throw new StaleCopyError();
    };
  }

  /**
   * A new session over an expired one of the same id, or over notifications of it still waiting on this host,
   * numbers its steps on from theirs: its webhook and notification keys never repeat theirs.
   */
  #renumbered(dial: DialMessage, replaced: UssdSession | undefined): DialMessage {
    const before = Math.max(replaced?.step ?? 0, this.services.outbox.lastStep(this.sessionId));
    return before > 0 ? { ...dial, stepsBefore: before } : dial;
  }

  /**
   * One attempt at a step: on the copy, or `fresh`, on a fresh read. On a copy the store does not vouch for (`held`),
   * STALE when it proves stale; on a current one (one node) the step is final, as on a read.
   */
  async #step(
    dial: DialMessage,
    fresh: boolean,
    cancelled: AbortSignal | undefined,
    trace: Context | undefined,
  ): Promise<string | AskNeeded | typeof STALE> {
    const { sessions } = this.services;
    const held = !fresh && !sessions.copyCurrent;
    const now = this.services.deps.now();
    // The step's http and query calls take half of what is left of the call's deadline (step-budget.ts).
    const calls = callsDeadline(cancelled, now);
    const loading = this.#load(fresh);
    const stored = loading instanceof Promise ? await loading : loading;
    const live = stored && stored.value.expiresAt > now ? stored : undefined;

    // A session id belongs to one phone: another number cannot continue (or read) it.
    if (live && live.value.phoneNumber !== dial.phoneNumber) {
      if (held) return STALE;
      ussdStep.wrong_phone.inc();
      return INVALID_INPUT;
    }
    // Without a live session only a dial (empty text) starts one; later inputs mean it expired.
    if (!live && (dial.text !== '' || dial.latest)) {
      if (held) return STALE;
      ussdStep.expired.inc();
      return SESSION_EXPIRED;
    }

    const deps = stepDeps(this.services.deps, calls, held ? this.#confirming(stored, now) : undefined);
    let step: Awaited<ReturnType<typeof answer>>;
    try {
      const answering = answer(live?.value, this.#renumbered(dial, live ? undefined : stored?.value), deps);
      step = answering instanceof Promise ? await answering : answering;
    } catch (error) {
      if (error instanceof StaleCopyError) return STALE;
      throw error;
    }
    if (step.retry) {
      if (held) return STALE;
      ussdStep.retry.inc();
      return step.screen;
    }
    // No service claims the code: nothing to keep (a later input finds no session and is told it expired).
    if (step.unknownCode) {
      ussdUnknownCodes.with().inc();
      ussdStep.end.inc();
      return step.screen;
    }
    const made = step.session.step !== live?.value.step ? step.session.outbox : undefined;
    const ended = step.ended
      ? { ...step.session, state: ENDED_STATE, expiresAt: now + ENDED_RETENTION_MS }
      : step.session;
    // Where the records are the outbox, the notifications of earlier steps not yet delivered stay in the record.
    const next = sessions.carried(stored?.value, ended);
    // An ask state's question: the account's did:key (made now for an account older than identities).
    const did = step.ask && (await deps.customers.identity(step.session.context.customerId ?? ''));
    // The caller gave up (deadline passed): it answered END already, so this step must not be recorded.
    cancelled?.throwIfAborted();
    // A new session replaces an expired one (or none); a live one moves from the revision this actor read.
    // The saved point joins the step's transaction on one node (the same turn): written before the answer.
    const resume = step.resume;
    const saving = resume && this.services.resumePoints.write(resume.serviceId, resume.phoneNumber, resume.point);
    saving?.catch(() => undefined); // awaited below; a refused step must not leave it unhandled
    try {
      const revision = live ? await sessions.update(next, live, trace) : await sessions.begin(next, now, trace);
      await saving;
      this.#stored = { value: next, revision };
    } catch (error) {
      this.#stored = undefined; // another writer came first (or the write failed): read again next time
      if (held && isRevisionConflict(error)) return STALE;
      throw error;
    }
    this.services.live?.committed(this.sessionId, next);
    if (made) this.services.outbox.add(this.sessionId, made);
    (step.ended ? ussdStep.end : ussdStep.continue).inc();
    // The same id dialled again after it timed out: the sweep will not see the session this one replaced.
    if (!live && stored && stored.value.state !== ENDED_STATE) countTimedOut(stored.value);
    countStep(live?.value, next, step.endReason);
    if (!step.ask || !did) return step.screen;
    return { screen: step.screen, ask: askOf(step.ask, did, next) };
  }
}

/** The screen a gateway-ended session answers a late request with: never a CON (the user has left). */
const endedScreen = (screen: string) => (screen.startsWith('END ') ? screen : SESSION_EXPIRED);

/** An attempt made on a copy that the store did not confirm: redone from a fresh read. */
const STALE = Symbol('stale');

/** Thrown out of a step on a copy that a fresh read found stale, before its `http` call. */
class StaleCopyError extends Error {
  override readonly name = 'StaleCopyError';
}

export const ussdActorKind = actorKind(
  USSD_ACTOR,
  (sessionId, host) => new UssdActor(sessionId, services.of(host)),
  services.prepare,
  // Notifications committed before a restart are delivered without waiting for a dial.
  (host) => host.records.ussd.pendingAtStart(),
);
