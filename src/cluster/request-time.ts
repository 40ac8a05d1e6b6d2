// Thread: main
// What the router makes of a routed call's time and of its failures: the time left of a request when it arrives
// (its deadline, allowing for clock skew between nodes), and a call that got no answer as HostUnavailableError.
import { HostUnavailableError } from '../runtime/errors.js';
import type { ActorRequest } from './nats-router.js';
import { TimeoutError } from '@nats-io/transport-node';
import { LinkLostError, LinkTimeoutError } from './node-link/peers.js';
import { unavailable } from './unavailable.js';

/** A call that got no answer: the runtime's HostUnavailableError (a DomainError it threw stays as it is). */
export function asUnavailable(error: unknown, partition: number, request: ActorRequest, via: string): Error {
  if (error instanceof HostUnavailableError) return error;
  if (error instanceof TimeoutError || error instanceof LinkTimeoutError)
    return unavailable(`partition ${partition}'s owner gave no answer within ${request.timeoutMs} ms`);
  if (error instanceof LinkLostError) return unavailable(error.message);
  return unavailable(`request on ${via} failed: ${(error as Error).message}`);
}

/** Nodes' clocks may differ this much (NTP keeps them far closer): a request is judged late only beyond it. */
const CLOCK_SKEW_MS = 250;

/** What is left of a request's time on arrival: its relative deadline, cut short when it arrived late. */
export function remainingOf(request: ActorRequest): number {
  if (request.deadlineAt === undefined) return request.timeoutMs;
  return Math.min(request.timeoutMs, request.deadlineAt - Date.now() + CLOCK_SKEW_MS);
}
