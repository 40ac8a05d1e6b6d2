// Thread: any
// Every metric the server exports, in one place (docs/metrics.md "What to scrape" lists them with their meaning).
// Families are per thread: on an actor host they collect what host-report.ts hands to the main thread.
import { CounterFamily, GaugeFamily, HistogramFamily, type Series } from './families.js';

/** Seconds: from half a millisecond (a cached route) to ten seconds (a slow upstream). */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Seconds: a synced LMDB commit takes from a fraction of a millisecond (page cache) to tens (a busy disk). */
const COMMIT_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

export const httpRequests = new CounterFamily(
  'http_requests_total',
  'HTTP requests taken, by declared route pattern (never the raw path), method and status (499: the client left before the answer)',
  ['route', 'method', 'status'],
);
export const httpRequestDuration = new HistogramFamily(
  'http_request_duration_seconds',
  'Time from a request reaching the front door to its answer being written, by declared route pattern and method',
  ['route', 'method'],
  LATENCY_BUCKETS,
);

export const ussdSessionsActive = new GaugeFamily(
  'ussd_sessions_active',
  'USSD sessions neither expired nor ended (read from LMDB at scrape)',
);
/** What a USSD step ended with; the series exist from the start so that rates work from the first step. */
export const USSD_OUTCOMES = [
  'continue',
  'end',
  'retry',
  'expired',
  'wrong_phone',
  'invalid_request',
  'unavailable',
] as const;
export type UssdOutcome = (typeof USSD_OUTCOMES)[number];
export const ussdSteps = new CounterFamily(
  'ussd_steps_total',
  'USSD requests by outcome: continue (CON), end (END), retry (a gateway repeat), expired, wrong_phone, invalid_request, unavailable',
  ['outcome'],
);
/** The series of each outcome: `ussdStep.end.inc()`. */
export const ussdStep = Object.fromEntries(
  USSD_OUTCOMES.map((outcome) => [outcome, ussdSteps.with(outcome)]),
) as Record<UssdOutcome, Series>;

/** Per USSD service (issue 40): a drop-off funnel is steps by state against sessions ended by state and reason. */
export const ussdServiceSteps = new CounterFamily(
  'ussd_service_steps_total',
  'USSD steps answered by service and by the state the step left the session in (ended: the session ended)',
  ['service', 'state'],
);
export const ussdServiceSessionsEnded = new CounterFamily(
  'ussd_service_sessions_ended_total',
  'USSD sessions ended, by service, the state they ended from and reason: end (an END screen), exit (the exit key), timeout (no answer from the user within the session TTL, or the step deadline passed), error, gateway (the gateway ended it: its end-of-session notification, a release or a terminate)',
  ['service', 'state', 'reason'],
);
/** Seconds: a USSD session lasts from a second (one screen) to the networks' few minutes. */
const SESSION_BUCKETS = [1, 5, 10, 20, 30, 60, 90, 120, 180, 300];
/** The statuses a gateway's end of a session is counted under; any other word is `other`. */
export const GATEWAY_END_STATUSES = ['success', 'incomplete', 'failed', 'release', 'timeout', 'terminate', 'other'];
export const ussdGatewayEnds = new CounterFamily(
  'ussd_gateway_session_ends_total',
  "USSD sessions a gateway said were over, by gateway and status: success, incomplete, failed (Africa's Talking's end-of-session notification), release, timeout (Hubtel), terminate (Beem), other",
  ['gateway', 'status'],
);
export const ussdGatewaySessionDuration = new HistogramFamily(
  'ussd_gateway_session_duration_seconds',
  "Duration of USSD sessions as the gateway reported it at their end (Africa's Talking's durationInMillis), by gateway and status",
  ['gateway', 'status'],
  SESSION_BUCKETS,
);
export const ussdUnknownCodes = new CounterFamily(
  'ussd_unknown_codes_total',
  'Dials of a service code no loaded USSD service claims (answered with the END of USSD_UNKNOWN_CODE_TEXT)',
);
export const ussdServicesLoaded = new GaugeFamily(
  'ussd_services_loaded',
  'USSD services new dials get, by service id and version (1 each)',
  ['service', 'version'],
);

/** The `http` and `notify` actions of USSD services (issue 41, docs/ussd-actions.md). */
export const ussdWebhookCalls = new CounterFamily(
  'ussd_webhook_calls_total',
  'USSD `http` action calls by service, outcome (ok, failed, timeout) and reason (ok, status, not_json, too_large, connection, timeout, no_secret)',
  ['service', 'outcome', 'reason'],
);
export const ussdWebhookDuration = new HistogramFamily(
  'ussd_webhook_duration_seconds',
  'Time of USSD `http` action calls, retries included, by service',
  ['service'],
  LATENCY_BUCKETS,
);
/** The `query` action of USSD services: Cosmos REST paths answered in process by the gateway (docs/ussd-actions.md). */
export const ussdQueryCalls = new CounterFamily(
  'ussd_query_calls_total',
  'USSD `query` action calls by service, outcome (ok, not_found, unreachable) and reason (ok, the gRPC status in snake case, no_route, timeout, not_json, no_gateway)',
  ['service', 'outcome', 'reason'],
);
export const ussdQueryDuration = new HistogramFamily(
  'ussd_query_duration_seconds',
  'Time of USSD `query` action calls, by service',
  ['service'],
  LATENCY_BUCKETS,
);
export const ussdOutboxPending = new GaugeFamily(
  'ussd_outbox_pending',
  'USSD notifications committed and not yet delivered or given up (on this node)',
);
export const ussdOutboxDelivered = new CounterFamily(
  'ussd_outbox_delivered_total',
  'USSD notifications their endpoint accepted (2xx), by service',
  ['service'],
);
export const ussdOutboxGivenUp = new CounterFamily(
  'ussd_outbox_given_up_total',
  'USSD notifications given up after their attempts, by service',
  ['service'],
);

export const journalAppends = new CounterFamily(
  'cluster_journal_appends_total',
  'Cluster mode: fsynced appends to a partition journal by this node, each carrying one or more records, by journal',
  ['journal'],
);
export const journalRecords = new CounterFamily(
  'cluster_journal_records_total',
  'Cluster mode: records appended to a partition journal by this node (records / appends = steps per fsynced write), by journal',
  ['journal'],
);
export const journalLoads = new CounterFamily(
  'cluster_journal_partition_loads_total',
  'Cluster mode: partitions loaded by a journal writer of this node (a claim, a fence per other writer, a read of the stream), by journal',
  ['journal'],
);
export const journalFenced = new CounterFamily(
  'cluster_journal_partitions_fenced_total',
  "Cluster mode: partitions a journal writer of this node gave up because another writer's newer claim fenced them, by journal",
  ['journal'],
);

export const routedCalls = new CounterFamily(
  'cluster_routed_calls_total',
  "Cluster mode: sends and signals this node routed to the node owning the actor's partition, by the way they went: link (a direct connection between the nodes) or nats (request/reply, when the owner has no reachable link)",
  ['path'],
);
/** The series of each way: `routedCall.link.inc()`. */
export const routedCall = { link: routedCalls.with('link'), nats: routedCalls.with('nats') };

export const natsConnected = new GaugeFamily(
  'cluster_nats_connected',
  'Cluster mode: 1 while this node is connected to NATS, 0 while it is disconnected or reconnecting',
);
export const partitionsOwned = new GaugeFamily(
  'cluster_partitions_owned',
  'Cluster mode: partitions this node owns (serves) now; over all nodes they add up to the partition count',
);

export const actorsActive = new GaugeFamily('actors_active', 'Actors held in memory on the actor hosts, by kind', [
  'kind',
]);
export const actorMailboxDepth = new GaugeFamily(
  'actor_mailbox_depth',
  'Messages waiting in or being handled by the mailboxes of an actor host',
  ['host'],
);
export const actorHostRestarts = new CounterFamily(
  'actor_host_restarts_total',
  'Actor hosts restarted after their worker thread died',
  ['host'],
);
export const storeCommitDuration = new HistogramFamily(
  'store_commit_duration_seconds',
  'LMDB write batches: time from the end of the event-loop turn that wrote them to their synced commit, all threads',
  [],
  COMMIT_BUCKETS,
);
export const storeWritesRefused = new CounterFamily(
  'store_writes_refused_total',
  'LMDB writes refused, all threads: low_space (DATA_DIR free space below DATA_DIR_MIN_FREE_BYTES, refused before LMDB), commit_failed (LMDB could not commit)',
  ['reason'],
);
export const storeWritable = new GaugeFamily(
  'store_writable',
  '1 while LMDB takes writes (free space above DATA_DIR_MIN_FREE_BYTES and the last /health probe write landed), else 0',
);

export const diskAvailable = new GaugeFamily(
  'store_disk_available_bytes',
  "Bytes free for the server's user on the file system of DATA_DIR (read at scrape)",
);
export const diskSize = new GaugeFamily('store_disk_size_bytes', 'Size in bytes of the file system of DATA_DIR');

export const sseStreamsActive = new GaugeFamily(
  'sse_streams_active',
  'Open streamed HTTP answers (Server-Sent Events)',
);
export const wsConnectionsActive = new GaugeFamily(
  'ws_connections_active',
  'Open event-channel sockets, by transport (websocket, socket.io)',
  ['transport'],
);
export const wsEventsSent = new CounterFamily(
  'ws_events_sent_total',
  'Events sent to event-channel sockets (a fan-out counts once per socket reached), by transport',
  ['transport'],
);
export const ucanVerifications = new CounterFamily(
  'ucan_verifications_total',
  'UCAN artifacts checked: cache hit, or miss (a full verification)',
  ['cache'],
);
export const gatewayUpstreamDuration = new HistogramFamily(
  'gateway_upstream_duration_seconds',
  'Gateway calls to the chain node, by gRPC service, method and status code',
  ['service', 'method', 'code'],
  LATENCY_BUCKETS,
);
export const httpEngineInfo = new GaugeFamily(
  'http_engine_info',
  'The front door engine serving (value 1): engine uws or node, build official, trufflesuite or none',
  ['engine', 'build'],
);
export const rateLimited = new CounterFamily(
  'rate_limited_total',
  'Requests and socket handshakes refused by the rate limit (429)',
);

// Series without labels (and the two cache outcomes) exist from the start: a scrape shows 0, not nothing.
for (const family of [rateLimited, ussdUnknownCodes]) family.with();
for (const family of [ussdSessionsActive, sseStreamsActive, ussdOutboxPending]) family.with();
storeCommitDuration.with();
for (const reason of ['low_space', 'commit_failed']) storeWritesRefused.with(reason);
for (const cache of ['hit', 'miss']) ucanVerifications.with(cache);
for (const transport of ['websocket', 'socket.io']) {
  wsConnectionsActive.with(transport);
  wsEventsSent.with(transport);
}

export const ALL_FAMILIES = [
  httpRequests,
  httpRequestDuration,
  ussdSessionsActive,
  ussdSteps,
  ussdServiceSteps,
  ussdServiceSessionsEnded,
  ussdUnknownCodes,
  ussdGatewayEnds,
  ussdGatewaySessionDuration,
  ussdServicesLoaded,
  ussdWebhookCalls,
  ussdWebhookDuration,
  ussdQueryCalls,
  ussdQueryDuration,
  ussdOutboxPending,
  ussdOutboxDelivered,
  ussdOutboxGivenUp,
  journalAppends,
  journalRecords,
  journalLoads,
  journalFenced,
  routedCalls,
  natsConnected,
  partitionsOwned,
  actorsActive,
  actorMailboxDepth,
  actorHostRestarts,
  storeCommitDuration,
  storeWritesRefused,
  storeWritable,
  diskAvailable,
  diskSize,
  sseStreamsActive,
  wsConnectionsActive,
  wsEventsSent,
  ucanVerifications,
  gatewayUpstreamDuration,
  rateLimited,
  httpEngineInfo,
];
