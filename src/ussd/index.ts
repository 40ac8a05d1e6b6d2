// The USSD face: routes, operator routes and the expiry sweep; the sessions themselves are actors.
import type { FaceFactory } from '../face.js';
import { createOperatorGuard } from '../http/operator-guard.js';
import { trustsProxies } from '../http/proxy-trust.js';
import { registerUssdRoutes } from './routes.js';
import { sweepExpired, type SessionDb } from './session-records.js';

export const createUssdFace: FaceFactory = ({ config, store, runtime, log }) => {
  const sessions: SessionDb = store.db('ussd-sessions');
  let sweeper: NodeJS.Timeout | undefined;
  return {
    name: 'ussd',
    async start() {
      // Expired sessions are invisible at once (every read checks expiresAt); the sweep frees their space.
      const every = Math.min(60_000, config.USSD_SESSION_TTL_SECONDS * 1000);
      sweeper = setInterval(() => {
        sweepExpired(sessions).then(
          (removed) => removed && log.debug({ removed }, 'expired USSD sessions removed'),
          (err) => log.error({ err }, 'USSD expiry sweep failed'),
        );
      }, every);
      sweeper.unref();
    },
    routes(router) {
      registerUssdRoutes(router, { runtime, sessions, operatorOnly: createOperatorGuard(config.OPERATOR_TOKEN, trustsProxies(config)), log });
    },
    async stop() {
      clearInterval(sweeper);
    },
  };
};
