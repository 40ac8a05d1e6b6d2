// Thread: main
// GET /runs/:runId?after=<id> (re-join a streamed turn: what it produced after that frame, then live frames until
// `done`) and GET /sessions/:sessionId/run (the session's run in progress). Runs live on the node whose front door
// streamed them (runs/registry.ts); in cluster mode every run is also kept in the runs stream, where a re-join
// through any node reads it (runs/kept-runs.ts), also after the node that streamed it died.
import * as v from 'valibot';
import { oracleErrors } from '../errors.js';
import { reply } from '../../http/types.js';
import { ErrorBodySchema, RunStatusSchema, SseStreamSchema } from './answer-schemas.js';
import { SessionIdParamsSchema } from './schemas.js';
import { AUTH_RESPONSES, route, type OracleRouteDeps } from './deps.js';
import { SSE_HEADERS } from './stream-relay.js';

const RunParamsSchema = v.object({
  runId: v.pipe(v.string(), v.nonEmpty('should not be empty'), v.maxLength(128, 'must be at most 128 characters')),
});
const AfterQuerySchema = v.object({
  after: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d{1,9}$/, 'must be a non-negative whole number'),
      v.transform(Number),
      v.description('The last frame id received (0: from the start)'),
    ),
    '0',
  ),
});

export function runRoutes(deps: OracleRouteDeps) {
  const { runs } = deps;
  return [
    route({
      method: 'GET',
      path: '/runs/:runId',
      auth: 'ucan',
      summary: 'Re-join a streamed turn: its frames after `after`, then live ones until `done`',
      tags: ['Messages'],
      params: RunParamsSchema,
      query: AfterQuerySchema,
      responses: {
        200: {
          description: 'A text/event-stream: a `run` frame, then the frames numbered above `after`',
          schema: SseStreamSchema,
        },
        404: {
          description: 'No such run of this user on this node, or its frames after `after` are no longer kept',
          schema: ErrorBodySchema,
        },
        ...AUTH_RESPONSES,
      },
      async handler({ identity: user, params: { runId }, query: { after }, res }) {
        const run = runs.get(runId, user.did);
        const missed = run?.framesAfter(after);
        if ((!run || missed === undefined) && deps.keptRuns) {
          // Cluster mode: not streamed by this node (or its frames are gone here): the runs stream keeps it.
          const kept = await deps.keptRuns.join(runId, user.did, after);
          if (!kept) throw oracleErrors.runNotFound();
          const { requestId } = kept.info;
          return kept.pipe(res.stream(200, { ...SSE_HEADERS, 'X-Run-Id': runId, 'X-Request-Id': requestId }));
        }
        if (!run || missed === undefined) throw oracleErrors.runNotFound();
        // The answer's id is the run's: the client keeps adding to the same message.
        const reader = res.stream(200, { ...SSE_HEADERS, 'X-Run-Id': runId, 'X-Request-Id': run.info.requestId });
        reader.write(run.runFrame(run.partialLength()) + missed);
        if (run.endedAt !== undefined) return reader.end();
        run.attach(reader);
      },
    }),

    route({
      method: 'GET',
      path: '/sessions/:sessionId/run',
      auth: 'ucan',
      summary: "The session's run in progress (a streamed turn that can be re-joined)",
      tags: ['Sessions'],
      params: SessionIdParamsSchema,
      responses: {
        200: { description: 'The run', schema: RunStatusSchema },
        404: { description: 'No run in progress (of this user, on this node)', schema: ErrorBodySchema },
        ...AUTH_RESPONSES,
      },
      async handler({ identity: user, params: { sessionId } }) {
        const local = runs.running(sessionId, user.did);
        const run = local
          ? { runId: local.info.runId, status: local.status }
          : await deps.keptRuns?.running(sessionId, user.did);
        if (!run) throw oracleErrors.noRunInProgress();
        return reply.json(200, { run });
      },
    }),
  ];
}
