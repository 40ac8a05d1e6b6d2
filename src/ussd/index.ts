// Thread: main (front door)
// The USSD face, its routes and the expiry sweep; the sessions themselves are actors.
import type { UssdConfig } from '../config.js';
import type { FaceFactory } from '../face.js';
import { createOperatorGuard } from '../http/operator-guard.js';
import { trustsProxies } from '../http/proxy-trust.js';
import { ussdServiceSessionsEnded, ussdSessionsActive } from '../metrics/catalogue.js';
import { addMainThreadPart } from '../metrics/host-report.js';
import { openUssdSessions } from './repositories.js';
import { registerUssdRoutes } from './routes/index.js';
import { LiveUssdSessions } from './sessions/journal-repository.js';
import { openPublishedServices } from './services/published.js';
import { openResumePoints } from './services/resume-points.js';
import { startServedServices } from './services/served.js';
import { ENDED_STATE, type UssdSession } from './session.js';

export const createUssdFace: FaceFactory<UssdConfig> = async ({ config, store, actors, log, cluster }) => {
  // The operator listing reads the live set: in cluster mode the front door reads it from the sessions journal.
  const sessions = await openUssdSessions(store, config, cluster);
  const shared = sessions instanceof LiveUssdSessions ? sessions : undefined;
  // Checked and published before any route answers: a bad definition stops the start (exit 78).
  const served = await startServedServices(config.USSD_SERVICES_DIR, await openPublishedServices(store, cluster), log);
  let sweeper: NodeJS.Timeout | undefined;
  let stopCounting = () => {};
  return {
    name: 'ussd',
    async start() {
      if (shared) {
        // Cluster mode: the journal's max age does the expiry (no sweep), and the gauge is counted here from the
        // journal (the hosts keep no live set): every node reports the whole cluster's live sessions.
        if (config.METRICS_ENABLED)
          stopCounting = addMainThreadPart(ussdSessionsActive, () => shared.liveCount(Date.now()));
        return;
      }
      // Expired sessions are invisible at once (every read checks expiresAt); the sweep frees their space.
      const every = Math.min(60_000, config.USSD_SESSION_TTL_SECONDS * 1000);
      const resumePoints = await openResumePoints(store);
      sweeper = setInterval(() => {
        sessions.removeExpired(Date.now(), countTimedOut).then(
          (removed) => removed && log.debug({ removed }, 'expired USSD sessions removed'),
          (err) => log.error({ err }, 'USSD expiry sweep failed'),
        );
        resumePoints.removeExpired(Date.now()).then(
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
