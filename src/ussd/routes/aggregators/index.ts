// Thread: main (front door)
// The routes of the aggregators other than Africa's Talking (each one module: its
// request and answer format), and Africa's Talking's end-of-session notification.
import { mountRoutes, plainContext } from '../../../http/route.js';
import type { Router } from '../../../http/router.js';
import type { UssdRouteDeps } from '../index.js';
import { africasTalkingEventRoutes } from './africastalking-events.js';
import type { Aggregator } from './aggregator.js';
import { arkesel } from './arkesel.js';
import { beem } from './beem.js';
import { hubtel } from './hubtel.js';
import { nalo } from './nalo.js';
import { mountAggregator } from './aggregator.js';

export const AGGREGATORS: readonly Aggregator[] = [hubtel, arkesel, nalo, beem] as readonly Aggregator[];

export function registerAggregatorRoutes(router: Router, deps: UssdRouteDeps): void {
  for (const adapter of AGGREGATORS) mountAggregator(router, adapter, deps);
  // A notification is not a screen: a body that is not one is a plain 400 (the gateway logs it and moves on).
  mountRoutes(router, plainContext<void>(), africasTalkingEventRoutes(deps));
}
