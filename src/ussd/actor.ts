// The USSD session actor: one per session id, on the actor host its id hashes to. It owns the session
// record; every change is committed to LMDB before the screen is answered.
import { ussdSessionsActive, ussdStep } from '../metrics/catalogue.js';
import { actorKind, perHost, type Actor } from '../runtime/actor-host.js';
import { shardOf } from '../runtime/shard.js';
import { CustomerStore } from '../store/customers.js';
import { INVALID_INPUT, SESSION_EXPIRED } from './answers.js';
import { answer, ENDED_STATE, type MenuDeps } from './menu/index.js';
import { PinCipher } from './pin-cipher.js';
import { USSD_ACTOR, type DialMessage, type UssdShape } from './protocol.js';
import type { UssdSession } from './session.js';
import type { SessionDb } from './session-records.js';
import { LiveSessions } from './live-sessions.js';

/** An ended session is kept this long so a gateway retry of the last request gets the same END screen. */
const ENDED_RETENTION_MS = 60_000;

interface UssdServices {
  sessions: SessionDb;
  deps: MenuDeps;
  /** For ussd_sessions_active; absent with METRICS_ENABLED=false. */
  live?: LiveSessions;
}

/** Services shared by the USSD actors of one host. */
const servicesOf = perHost((host): UssdServices => {
  const { config, store } = host;
  // The server resolved PIN_ENCRYPTION_KEY to 64 hex characters before starting the hosts.
  const pinCipher = new PinCipher(Buffer.from(config.PIN_ENCRYPTION_KEY ?? '', 'hex'));
  const sessions: SessionDb = store.db('ussd-sessions');
  const live = config.METRICS_ENABLED
    ? new LiveSessions(sessions, (sessionId) => shardOf(sessionId, config.ACTOR_THREADS) === host.hostIndex)
    : undefined;
  // This host's value of the gauge, sent in its metrics reports (src/metrics/host-report.ts).
  if (live) ussdSessionsActive.collect = (gauge) => void (gauge.with().value = live.count());
  return {
    sessions,
    live,
    deps: {
      customers: CustomerStore.open(store, pinCipher, { pinLockMinutes: config.PIN_LOCK_MINUTES }),
      pinCipher,
      now: Date.now,
      sessionTtlSeconds: config.USSD_SESSION_TTL_SECONDS,
    },
  };
});

class UssdActor implements Actor<UssdShape> {
  /** The session as last committed; undefined until loaded, null when there is none. */
  #session: UssdSession | null | undefined;

  constructor(
    private readonly sessionId: string,
    private readonly services: UssdServices,
  ) {}

  async receive(dial: DialMessage, cancelled?: AbortSignal): Promise<string> {
    const { sessions, deps } = this.services;
    const now = deps.now();
    if (this.#session === undefined) this.#session = sessions.get(this.sessionId) ?? null;
    const live = this.#session && this.#session.expiresAt > now ? this.#session : undefined;

    // A session id belongs to one phone: another number cannot continue (or read) it.
    if (live && live.phoneNumber !== dial.phoneNumber) {
      ussdStep.wrong_phone.inc();
      return INVALID_INPUT;
    }
    // Without a live session only a dial (empty text) starts one; later inputs mean it expired.
    if (!live && dial.text !== '') {
      ussdStep.expired.inc();
      return SESSION_EXPIRED;
    }

    const step = await answer(live, dial, deps);
    if (step.retry) {
      ussdStep.retry.inc();
      return step.screen;
    }
    const next = step.ended ? { ...step.session, state: ENDED_STATE, expiresAt: now + ENDED_RETENTION_MS } : step.session;
    // The caller gave up (deadline passed): it answered END already, so this step must not be recorded.
    cancelled?.throwIfAborted();
    await sessions.put(this.sessionId, next);
    this.#session = next;
    this.services.live?.committed(this.sessionId, next);
    (step.ended ? ussdStep.end : ussdStep.continue).inc();
    return step.screen;
  }
}

export const ussdActorKind = actorKind(USSD_ACTOR, (sessionId, host) => new UssdActor(sessionId, servicesOf(host)));
