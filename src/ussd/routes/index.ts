// Thread: main (front door)
// The USSD face's routes, POST /api/ussd (dial.ts) and the operator routes
// (operator.ts), mounted with the face's answer to invalid input; the other aggregators' routes (aggregators/).
import type { Logger } from '../../base/log.js';
import { ussdStep } from '../../metrics/catalogue.js';
import { mountRoutes, type RouteContext } from '../../http/route.js';
import type { Router } from '../../http/router.js';
import type { OperatorGuard } from '../../http/operator-guard.js';
import { reply } from '../../http/types.js';
import type { Actors } from '../../runtime/router.js';
import { INVALID_INPUT } from '../answers.js';
import type { UssdLiveIndex } from '../sessions/repository.js';
import { registerAggregatorRoutes } from './aggregators/index.js';
import { dialRoutes } from './dial.js';
import { operatorRoutes } from './operator.js';
import { serviceRoutes } from './services.js';
import type { ServedServices } from '../services/served.js';
import type { AskAgent } from '../services/ask.js';

export interface UssdRouteDeps {
  actors: Actors;
  sessions: UssdLiveIndex;
  operatorOnly: OperatorGuard;
  log: Logger;
  /** USSD_STEP_TIMEOUT_MS: a step not answered by then is answered with the END text. */
  stepTimeoutMs?: number;
  /** The services served (the list route, and the service a failed step is counted against). */
  services?: ServedServices;
  /** The agent the `ask` states' chat turns go to (the oracle face's); none: they show their `failed` text. */
  agent?: () => AskAgent | undefined;
  /** USSD_BEEM_SERVICE_CODE: the code a Beem dial is given (Beem sends none). */
  beemServiceCode?: string;
}

export function registerUssdRoutes(router: Router, deps: UssdRouteDeps): void {
  const { operatorOnly, log } = deps;
  const context: RouteContext<void> = {
    guards: { operator: operatorOnly },
    // A gateway ends the session on any status but 200: bad input is an END screen too.
    invalid(problem, req) {
      log.debug(
        { reqId: req.requestId, problems: problem.issues?.map((i) => i.message) ?? [problem.bodyError] },
        'invalid USSD request',
      );
      ussdStep.invalid_request.inc();
      return reply.text(200, INVALID_INPUT);
    },
  };
  mountRoutes(router, context, [...dialRoutes(deps), ...serviceRoutes(deps), ...operatorRoutes(deps)]);
  registerAggregatorRoutes(router, deps);
}
