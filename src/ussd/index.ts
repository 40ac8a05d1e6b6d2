// Front door (main thread): the USSD face, its routes and the expiry sweep; the sessions themselves are actors.
import type { FaceFactory } from '../face.js';
import { createOperatorGuard } from '../http/operator-guard.js';
import { trustsProxies } from '../http/proxy-trust.js';
import { registerUssdRoutes } from './routes/index.js';
import { LmdbUssdSessionRepository } from './sessions/lmdb-repository.js';

export const createUssdFace: FaceFactory = ({ config, store, actors, log }) => {
  const sessions = new LmdbUssdSessionRepository(store);
  let sweeper: NodeJS.Timeout | undefined;
  return {
    name: 'ussd',
    async start() {
      // Expired sessions are invisible at once (every read checks expiresAt); the sweep frees their space.
      const every = Math.min(60_000, config.USSD_SESSION_TTL_SECONDS * 1000);
      sweeper = setInterval(() => {
        sessions.removeExpired(Date.now()).then(
          (removed) => removed && log.debug({ removed }, 'expired USSD sessions removed'),
          (err) => log.error({ err }, 'USSD expiry sweep failed'),
        );
      }, every);
      sweeper.unref();
    },
    routes(router) {
      registerUssdRoutes(router, { actors, sessions, operatorOnly: createOperatorGuard(config.OPERATOR_TOKEN, trustsProxies(config)), log });
    },
    async stop() {
      clearInterval(sweeper);
    },
  };
};
