// Thread: actor host
// The USSD session actor, one per session id, on the actor host its id hashes to. It owns the
// session record; every change is committed through the UssdSessionRepository before the screen is answered.
import {
  ussdServiceSessionsEnded,
  ussdServiceSteps,
  ussdSessionsActive,
  ussdStep,
  ussdUnknownCodes,
} from '../../metrics/catalogue.js';
import { actorKind, preparedPerHost, type Actor } from '../../runtime/actor-host.js';
import { shardOf } from '../../runtime/shard.js';
import { INVALID_INPUT, SESSION_EXPIRED } from '../answers.js';
import {
  USSD_ACTOR,
  type DialMessage,
  type GatewayEndMessage,
  type GatewayEndOutcome,
  type InspectMessage,
  type SessionView,
  type UssdShape,
} from '../protocol.js';
import { openCustomers, openUssdSessions } from '../repositories.js';
import { ENDED_RETENTION_MS, ENDED_STATE, isLive, type UssdSession } from '../session.js';
import type { UssdSessionRepository } from '../sessions/repository.js';
import { isRevisionConflict, type Versioned } from '../../store/revision.js';
import { CustomerAccounts } from './customer-accounts.js';
import { LiveSessions } from './live-sessions.js';
import { answer, type MenuDeps } from './menu/index.js';
import { PinCipher } from './pin-cipher.js';
import { openHostCatalog } from '../services/host-catalog.js';
import { openLanguageChoices } from '../services/languages.js';
import { openResumePoints, type ResumePoints } from '../services/resume-points.js';
import { openPublishedServices } from '../services/published.js';
import { countPending, Outbox } from '../outbox/outbox.js';
import { hasPending, LmdbOutboxStore } from '../outbox/lmdb-store.js';

interface UssdServices {
  sessions: UssdSessionRepository;
  /** Whether an actor may keep its session between messages (one node: it is the only writer). */
  cachesSessions: boolean;
  deps: MenuDeps;
  /** For ussd_sessions_active; absent with METRICS_ENABLED=false and in cluster mode (the front door counts there). */
  live?: LiveSessions;
  /** Delivers the notifications of committed steps (`notify` actions). */
  outbox: Outbox;
  /** Where phones left services with `resume`. */
  resumePoints: ResumePoints;
}

/** Services shared by the USSD actors of one host: LMDB, or the cluster's JetStream buckets (repositories.ts). */
const services = preparedPerHost(async (host): Promise<UssdServices> => {
  const { config, store, cluster } = host;
  // The server resolved PIN_ENCRYPTION_KEY to 64 hex characters before starting the hosts.
  const pinCipher = new PinCipher(Buffer.from(config.PIN_ENCRYPTION_KEY ?? '', 'hex'));
  const [sessions, customers, published, languages, resumePoints] = await Promise.all([
    openUssdSessions(store, config, cluster, { index: host.hostIndex, count: config.ACTOR_THREADS }),
    openCustomers(store, cluster),
    openPublishedServices(store, cluster),
    openLanguageChoices(store, cluster),
    openResumePoints(store, cluster),
  ]);
  const hostCatalog = await openHostCatalog(published, host.log);
  const live =
    config.METRICS_ENABLED && !cluster
      ? new LiveSessions(sessions, (sessionId) => shardOf(sessionId, config.ACTOR_THREADS) === host.hostIndex)
      : undefined;
  // This host's value of the gauge, sent in its metrics reports (src/metrics/host-report.ts).
  if (live) ussdSessionsActive.collect = (gauge) => void (gauge.with().value = live.count());
  // One node: pending notifications are in LMDB with their steps; in cluster mode this host delivers its own steps'.
  const outbox = new Outbox(cluster ? undefined : new LmdbOutboxStore(store), host.log, {
    backoffMs: config.USSD_OUTBOX_BACKOFF_MS,
    serves: (sessionId) => shardOf(sessionId, config.ACTOR_THREADS) === host.hostIndex,
  });
  outbox.start();
  countPending(outbox);
  return {
    sessions,
    cachesSessions: !cluster,
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
      // The step's webhook calls end well before the front door's deadline answers END for it.
      stepBudgetMs: Math.max(50, Math.floor(config.USSD_STEP_TIMEOUT_MS / 2)),
    },
  };
});

class UssdActor implements Actor<UssdShape> {
  /** The session as last committed, with its revision; undefined until loaded, null when there is none. */
  #stored: Versioned<UssdSession> | null | undefined;

  constructor(
    private readonly sessionId: string,
    private readonly services: UssdServices,
  ) {}

  receive(
    message: DialMessage | InspectMessage | GatewayEndMessage,
    cancelled?: AbortSignal,
  ): Promise<string | SessionView | null | GatewayEndOutcome> {
    if (message.type === 'dial') return this.#dial(message, cancelled);
    return message.type === 'inspect' ? this.#inspect() : this.#gatewayEnd(message);
  }

  /**
   * The session as stored: at once when this actor holds it (no promise for the common step). `fresh`: read it
   * from the store whatever this actor holds.
   */
  #load(fresh = false): Versioned<UssdSession> | null | Promise<Versioned<UssdSession> | null> {
    if (!fresh && this.#stored) return this.#stored;
    return this.services.sessions.get(this.sessionId).then((stored) => (this.#stored = stored ?? null));
  }

  async #inspect(): Promise<SessionView | null> {
    // Cluster mode: an answer that writes nothing has no revision check to prove the held copy current: read.
    const session = (await this.#load(!this.services.cachesSessions))?.value;
    if (!isLive(session, this.services.deps.now())) return null;
    const { state, context, createdAt, updatedAt, expiresAt } = session;
    return { state, context, createdAt, updatedAt, expiresAt };
  }

  /**
   * Records how the gateway ended the session (once: a repeated notification changes nothing); a session still
   * live ends here, counted with the reason `gateway`.
   */
  async #gatewayEnd({ phoneNumber, end }: GatewayEndMessage): Promise<GatewayEndOutcome> {
    const { sessions, deps } = this.services;
    for (let attempt = 0; ; attempt++) {
      const stored = await this.#load(attempt > 0 || !this.services.cachesSessions);
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
        this.#stored = { value: next, revision: await sessions.update(next, stored) };
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
   * Cluster mode: a warm actor answers from the session as it last wrote it (no read). Its partition may have moved
   * away and back since, with another node writing meanwhile, so that copy is only trusted through the write's
   * revision check: a refused write, or an answer that writes nothing, is redone once from a fresh read.
   */
  async #dial(dial: DialMessage, cancelled?: AbortSignal): Promise<string> {
    const cluster = !this.services.cachesSessions;
    // A dial (empty text) reaching a cold actor almost always starts a new session: it assumes none, and `begin`,
    // which refuses to replace a live session, is the check.
    const assumed = cluster && this.#stored === undefined && dial.text === '' && !dial.latest ? null : undefined;
    const held = cluster && (this.#stored != null || assumed === null);
    const first = await this.#step(dial, held, cancelled, assumed);
    return first !== STALE
      ? first
      : ((this.#stored = undefined), this.#step(dial, false, cancelled) as Promise<string>);
  }

  /**
   * One attempt at a step; STALE when it ran on a held copy (`held`) that a fresh read must confirm. `assumed`: the
   * session to start from instead of loading it (null: none).
   */
  async #step(
    dial: DialMessage,
    held: boolean,
    cancelled?: AbortSignal,
    assumed?: null,
  ): Promise<string | typeof STALE> {
    const { sessions, deps } = this.services;
    const now = deps.now();
    const loading = assumed === null ? null : this.#load();
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

    const answering = answer(live?.value, dial, deps);
    const step = answering instanceof Promise ? await answering : answering;
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
    const next = step.ended
      ? { ...step.session, state: ENDED_STATE, expiresAt: now + ENDED_RETENTION_MS }
      : step.session;
    // The caller gave up (deadline passed): it answered END already, so this step must not be recorded.
    cancelled?.throwIfAborted();
    // A new session replaces an expired one (or none); a live one moves from the revision this actor read.
    // The saved point joins the step's transaction on one node (the same turn): written before the answer.
    const resume = step.resume;
    const saving = resume && this.services.resumePoints.write(resume.serviceId, resume.phoneNumber, resume.point);
    saving?.catch(() => undefined); // awaited below; a refused step must not leave it unhandled
    try {
      const revision = live ? await sessions.update(next, live) : await sessions.begin(next, now);
      await saving;
      this.#stored = { value: next, revision };
    } catch (error) {
      this.#stored = undefined; // another writer came first (or the write failed): read again next time
      if (held && isRevisionConflict(error)) return STALE;
      throw error;
    }
    this.services.live?.committed(this.sessionId, next);
    if (next.outbox && next.step !== live?.value.step) this.services.outbox.add(this.sessionId, next.outbox);
    (step.ended ? ussdStep.end : ussdStep.continue).inc();
    // The same id dialled again after it timed out: the sweep will not see the session this one replaced.
    if (!live && stored && stored.value.state !== ENDED_STATE) countTimedOut(stored.value);
    countStep(live?.value, next, step.endReason);
    return step.screen;
  }
}

/** The screen a gateway-ended session answers a late request with: never a CON (the user has left). */
const endedScreen = (screen: string) => (screen.startsWith('END ') ? screen : SESSION_EXPIRED);

/** The service's funnel: the state a step left the session in, and where and why a session ended. */
function countStep(before: UssdSession | undefined, after: UssdSession, reason: 'end' | 'exit' | undefined): void {
  const service = after.serviceId ?? 'builtin';
  ussdServiceSteps.with(service, after.state).inc();
  if (after.state === ENDED_STATE)
    ussdServiceSessionsEnded.with(service, before?.state ?? after.state, reason ?? 'end').inc();
}

/** A session that expired without ending: the user stopped answering. */
function countTimedOut(session: UssdSession): void {
  ussdServiceSessionsEnded.with(session.serviceId ?? 'builtin', session.state, 'timeout').inc();
}

/** An attempt made on a held copy that the store did not confirm: redone from a fresh read. */
const STALE = Symbol('stale');

export const ussdActorKind = actorKind(
  USSD_ACTOR,
  (sessionId, host) => new UssdActor(sessionId, services.of(host)),
  services.prepare,
  // Notifications committed before a restart are delivered without waiting for a dial.
  (host) => !host.cluster && hasPending(host.store),
);
