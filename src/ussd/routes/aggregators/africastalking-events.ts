// Thread: main (front door)
// Africa's Talking's end-of-session notification (the "events callback" it posts,
// form-encoded, once a session is over): counted by status with its duration, and recorded on the session.
import * as v from 'valibot';
import { declarer } from '../../../http/route.js';
import { reply } from '../../../http/types.js';
import { MAX_SESSION_ID, PRINTABLE } from '../../schema.js';
import type { UssdRouteDeps } from '../index.js';
import { digits, e164 } from './aggregator.js';
import { recordGatewayEnd } from './gateway-end.js';

const SessionEndNotification = v.object({
  sessionId: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(MAX_SESSION_ID), v.regex(PRINTABLE)),
  /** Success (the session reached an END), Incomplete (the user left on a CON) or Failed (our answer failed). */
  status: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(40)),
  phoneNumber: v.optional(v.string()),
  serviceCode: v.optional(v.string()),
  networkCode: v.optional(digits),
  durationInMillis: v.optional(digits),
  hopsCount: v.optional(digits),
  cost: v.optional(v.string()),
  input: v.optional(v.string()),
  lastAppResponse: v.optional(v.string()),
  errorMessage: v.optional(v.string()),
  date: v.optional(v.string()),
});

const route = declarer<void>();

export function africasTalkingEventRoutes(deps: UssdRouteDeps) {
  return [
    route({
      method: 'POST',
      path: '/api/ussd/events',
      auth: 'public',
      summary:
        "Africa's Talking's end-of-session notification: its status and duration counted and kept on the session",
      tags: ['ussd'],
      body: SessionEndNotification,
      bodyContentTypes: ['application/x-www-form-urlencoded', 'application/json'],
      responses: {
        200: {
          description: 'Taken; `recorded` tells whether a stored session took it (the count is kept either way)',
          schema: v.object({ recorded: v.boolean() }),
        },
        400: { description: 'Not a notification (no sessionId or status)' },
      },
      async handler({ body, req }) {
        const duration = Number(body.durationInMillis);
        const status = body.status.slice(0, 20);
        const end =
          body.durationInMillis !== undefined && Number.isFinite(duration) && duration >= 0
            ? { gateway: 'africastalking', status, durationMs: duration }
            : { gateway: 'africastalking', status };
        const phone = body.phoneNumber === undefined ? undefined : e164(body.phoneNumber);
        const recorded = await recordGatewayEnd(deps, body.sessionId, end, req, phone);
        return reply.json(200, { recorded });
      },
    }),
  ];
}
