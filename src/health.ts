// GET / and GET /health: one record each, carrying the fields of both specs (USSD and oracle).
import type { Config } from './config.js';
import type { Router } from './http/router.js';
import { reply } from './http/types.js';
import type { Store } from './store/env.js';

/** A real LMDB write and read: `database` is never a constant. */
async function databaseIsReachable(store: Store): Promise<boolean> {
  try {
    const db = store.db<number>('health');
    const probe = Date.now();
    await db.put('probe', probe);
    return db.get('probe') === probe;
  } catch {
    return false;
  }
}

export function registerHealthRoutes(router: Router, config: Config, store: Store): void {
  const environment = config.NODE_ENV;
  router.get(
    '/',
    () => reply.json(200, { status: 'ok', message: 'Session actor runtime is running', environment, timestamp: new Date().toISOString() }),
    { summary: 'Landing and liveness record', tags: ['health'] },
  );
  router.get(
    '/health',
    async () => {
      const connected = await databaseIsReachable(store);
      return reply.json(connected ? 200 : 503, {
        status: connected ? 'ok' : 'error',
        environment,
        timestamp: new Date().toISOString(),
        uptime: process.uptime(),
        database: connected ? 'connected' : 'disconnected',
      });
    },
    { summary: 'Health with a real database read and write', tags: ['health'] },
  );
}
