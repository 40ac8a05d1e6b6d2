// Thread: main (front door)
// The USSD face, its routes and the expiry sweep; the sessions themselves are actors.
import type { UssdConfig } from '../app/config.js';
import type { Face, FaceContext } from '../app/face.js';
import type { AskAgent } from './services/ask.js';
import { createOperatorGuard } from '../http/operator-guard.js';
import { trustsProxies } from '../http/proxy-trust.js';
import { ussdServiceSessionsEnded, ussdSessionsActive } from '../metrics/catalogue.js';
import { addMainThreadPart } from '../metrics/host-report.js';
import { registerUssdRoutes } from './routes/index.js';
import type { ResumePoints } from './services/resume-points.js';
import { startServedServices } from './services/served.js';
import { ENDED_STATE, type UssdSession } from './session.js';
import { USSD_ACTOR } from './protocol.js';

/** What the oracle face gives this one once it exists: the agent the `ask` states' chat turns go to. */
export interface UssdFaceLinks {
  agent?: AskAgent;
}

export const createUssdFace = async (
  { config, records, actors, log, inherited }: FaceContext<UssdConfig>,
  links: UssdFaceLinks = {},
): Promise<Face> => {
  // The operator listing reads the live set: in cluster mode the front door reads it from the sessions journal.
  const sessions = await records.ussd.liveSessions();
  // Checked and published before any route answers: a bad definition stops the start (exit 78).
  const served = await startServedServices(config.USSD_SERVICES_DIR, await records.ussd.published(), log);
  // Cluster mode: the partitions this node claims (a dead node's, or handed over cleanly by a node joining or
  // stopping) are this node's now, and so are the notifications their sessions' records still hold: each such
  // session's actor (here now) hands them to its host's outbox. (An old owner drops them at its next attempt.)
  inherited?.onClaimed((isClaimed) => {
    void sessions.withPendingOutbox(isClaimed).then(
      async (sessionIds) => {
        const sent = sessionIds.map((sessionId) => actors.ref(USSD_ACTOR, sessionId).send({ type: 'outboxResume' }));
        const failed = (await Promise.allSettled(sent)).filter((each) => each.status === 'rejected').length;
        log.info({ sessions: sessionIds.length, failed }, 'claimed partitions: pending USSD notifications resumed');
      },
      (err: unknown) => log.warn({ err }, 'the notifications of claimed partitions were not resumed'),
    );
  });
  let sweeper: NodeJS.Timeout | undefined;
  let stopCounting = () => {};
  return {
    name: 'ussd',
    async start() {
      // Where the hosts keep no live set (cluster mode), the gauge is counted here from the live index: every node
      // reports the whole cluster's live sessions.
      const { liveCount } = sessions;
      if (config.METRICS_ENABLED && liveCount)
        stopCounting = addMainThreadPart(ussdSessionsActive, () => liveCount.call(sessions, Date.now()));
      // Expired sessions are invisible at once (every read checks expiresAt); the sweep frees their space (a store
      // that expires its own records, such as the journal's or a bucket's max age, answers 0).
      const every = Math.min(60_000, config.USSD_SESSION_TTL_SECONDS * 1000);
      // Opened at the first sweep, so the start waits on no bucket of its own.
      let resumePoints: Promise<ResumePoints> | undefined;
      sweeper = setInterval(() => {
        sessions.removeExpired(Date.now(), countTimedOut).then(
          (removed) => removed && log.debug({ removed }, 'expired USSD sessions removed'),
          (err) => log.error({ err }, 'USSD expiry sweep failed'),
        );
        // A failed opening is tried again at the next sweep.
        (resumePoints ??= records.ussd.resumePoints().catch((error: unknown) => {
          resumePoints = undefined;
          throw error;
        }))
          .then((points) => points.removeExpired(Date.now()))
          .then(
            (removed) => removed && log.debug({ removed }, 'expired USSD resume points removed'),
            (err) => log.error({ err }, 'USSD resume points sweep failed'),
          );
      }, every);
      sweeper.unref();
    },
    routes(router) {
      registerUssdRoutes(router, {
        actors,
        sessions,
        operatorOnly: createOperatorGuard(config.OPERATOR_TOKEN, trustsProxies(config)),
        log,
        stepTimeoutMs: config.USSD_STEP_TIMEOUT_MS,
        services: served,
        beemServiceCode: config.USSD_BEEM_SERVICE_CODE,
        agent: () => links.agent,
      });
    },
    health: () => ({ ussd: { services: served.current() } }),
    async stop() {
      served.stop();
      clearInterval(sweeper);
      stopCounting();
    },
  };
};

/** A session the sweep removed that had not ended: the user stopped answering (idle past its TTL). */
function countTimedOut(session: UssdSession): void {
  if (session.state !== ENDED_STATE)
    ussdServiceSessionsEnded.with(session.serviceId ?? 'builtin', session.state, 'timeout').inc();
}
