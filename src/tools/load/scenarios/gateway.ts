// Thread: main
// Gateway: one GET per journey, taking the paths in turn.
import type autocannon from 'autocannon';
import { expectStatus, timed } from '../http.js';
import type { Scenario, ScenarioContext } from './types.js';

export function gatewayScenario(ctx: ScenarioContext): Scenario {
  const { gatewayPaths, headers } = ctx.options;
  let next = 0;
  const nextPath = () => gatewayPaths[next++ % gatewayPaths.length];
  return {
    name: 'gateway',
    async iterate(scheduledAt) {
      const path = nextPath();
      await timed(ctx.recorder(), scheduledAt, async () =>
        expectStatus(await ctx.client.request('GET', path, { headers }), 200),
      );
    },
    autocannonRequests: (): autocannon.Request[] => [
      { method: 'GET', setupRequest: (req) => ({ ...req, path: nextPath() }) },
    ],
  };
}
