// Thread: main
// GET /metrics: the Prometheus text exposition of the registry, guarded like the operator routes unless
// METRICS_PUBLIC=true.
import { HttpErrorBodySchema } from '../docs/index.js';
import { declarer, mountRoutes, plainContext } from '../http/route.js';
import type { OperatorGuard } from '../http/operator-guard.js';
import type { Router } from '../http/router.js';
import { reply } from '../http/types.js';
import { metricsRegistry } from './registry.js';

export const METRICS_PATH = '/metrics';

export function registerMetricsRoute(router: Router, options: { public: boolean; operatorOnly: OperatorGuard }): void {
  const registry = metricsRegistry();
  mountRoutes(router, plainContext({ operator: options.operatorOnly }), [
    declarer<void>()({
      method: 'GET',
      path: METRICS_PATH,
      auth: options.public ? 'public' : 'operator',
      summary: 'Prometheus metrics (text exposition format 0.0.4); see docs/metrics.md "What to scrape"',
      tags: ['operator'],
      responses: {
        200: { description: 'Every metric of this process, actor hosts included', contentType: 'text/plain' },
        401: {
          description: 'OPERATOR_TOKEN is set and the bearer token is missing or wrong',
          schema: HttpErrorBodySchema,
        },
        403: { description: 'OPERATOR_TOKEN is unset and the caller is not on loopback', schema: HttpErrorBodySchema },
      },
      handler: async () => reply.raw(200, registry.contentType, await registry.metrics()),
    }),
  ]);
}
