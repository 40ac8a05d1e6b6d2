// GET /metrics: the Prometheus text exposition of the registry, guarded like the operator routes unless
// METRICS_PUBLIC=true.
import { HttpErrorBodySchema, type ApiDocs } from '../docs/index.js';
import type { OperatorGuard } from '../http/operator-guard.js';
import type { Router } from '../http/router.js';
import { reply } from '../http/types.js';
import { metricsRegistry } from './registry.js';

export const METRICS_PATH = '/metrics';

export function registerMetricsRoute(router: Router, options: { public: boolean; operatorOnly: OperatorGuard }): void {
  const registry = metricsRegistry();
  const guard = options.public ? undefined : options.operatorOnly;
  router.get(
    METRICS_PATH,
    async function metrics(req) {
      guard?.(req);
      return reply.raw(200, registry.contentType, await registry.metrics());
    },
    {
      summary: 'Prometheus metrics (text exposition format 0.0.4); see README "What to scrape"',
      tags: ['operator'],
      ...(options.public ? { public: true } : { operator: true }),
      responses: {
        200: { description: 'Every metric of this process, actor hosts included', contentType: 'text/plain' },
        401: { description: 'OPERATOR_TOKEN is set and the bearer token is missing or wrong', schema: HttpErrorBodySchema },
        403: { description: 'OPERATOR_TOKEN is unset and the caller is not on loopback', schema: HttpErrorBodySchema },
      },
    } satisfies ApiDocs,
  );
}
