// Thread: any
// The record of one USSD session (written by its session actor through the UssdSessionRepository).

/** The state of a session once it answered END; the record is kept briefly to answer gateway retries. */
export const ENDED_STATE = 'ended';
/** An ended session is kept this long so a gateway retry of the last request gets the same END screen. */
export const ENDED_RETENTION_MS = 60_000;

/** The gateway `text` a session has consumed, as length and keyed digest (actor/text-history.ts). */
export interface ConsumedHistory {
  length: number;
  digest: string;
  /** The gateway's number of the last request applied, for an aggregator that numbers them (Hubtel's Sequence). */
  step?: number;
}

/** How the gateway said a session ended: its status as it words it, and its duration when it tells one. */
export interface GatewayEnd {
  /** The aggregator: `africastalking`, `hubtel`, `beem`. */
  gateway: string;
  /** As the gateway words it: `Success`, `Incomplete`, `Failed` (Africa's Talking), `release`, `timeout`, `terminate`. */
  status: string;
  durationMs?: number;
  /** When this server recorded it (epoch ms). */
  at?: number;
}

/** What an operator may see (the debug route shows `context` as is): never a PIN, never a draft. */
export interface UssdContext {
  sessionId: string;
  phoneNumber: string;
  /** The last screen text, without its `CON `/`END ` prefix. */
  message: string;
  isAuthenticated: boolean;
  /** Set while a customer is logged in. */
  customerId?: string;
}

/**
 * The session's values (a service saves them by name) as a private draft. PINs in it are encrypted with the PIN
 * cipher, bound to the session ID. The built-in service's are named here.
 */
export interface PendingDraft {
  [name: string]: string | undefined;
  fullName?: string;
  email?: string;
  /** New account PIN waiting for its confirmation (encrypted). */
  pin?: string;
  /** The customer ID just created, shown until the user moves on. */
  createdId?: string;
  /** The customer ID typed on the login screen. */
  loginId?: string;
  /** The current PIN, already checked, kept to refuse a "new" PIN equal to it (encrypted). */
  oldPin?: string;
  /** New PIN waiting for its confirmation (encrypted). */
  newPin?: string;
}

/**
 * A notification a `notify` action left for the outbox (docs/ussd-actions.md), stored in the record of the step that
 * made it, so it is committed with the step or not at all.
 */
export interface OutboxNotification {
  /** `<sessionId>:<step>:<n>`, sent as its idempotency key. */
  id: string;
  service: string;
  url: string;
  /** Header name, environment variable, prefix: the value is read at each delivery, never stored. */
  headers: [string, string, string][];
  body: string;
  attempts: number;
  timeoutMs: number;
  /** Cluster mode: the failed deliveries recorded so far (none when absent). */
  tried?: number;
}

export interface UssdSession {
  sessionId: string;
  phoneNumber: string;
  serviceCode: string;
  /** The service and version the session runs (pinned at its dial); the built-in service when absent. */
  serviceId?: string;
  serviceVersion?: string;
  /** The language of its screens, a code of the service's languages; the service's default when absent. */
  language?: string;
  /** The page of the current screen shown (0, the first, when absent). */
  page?: number;
  /** The number of the last step applied (the dial is 1): with the session id, the key of a webhook call. */
  step?: number;
  /**
   * The notifications the last step left (delivered by the outbox after the answer). In cluster mode: every
   * notification of the session not yet delivered or given up (each step carries them on; the outbox takes them out).
   */
  outbox?: OutboxNotification[];
  /** Menu state name, for example `preMenu`; `ended` once an END was sent. */
  state: string;
  context: UssdContext;
  pending?: PendingDraft;
  /**
   * The gateway `text` already consumed, as length and keyed digest: the raw history holds PINs, so it is
   * never stored (see text-history.ts).
   */
  history: ConsumedHistory;
  /** The last full answer, `CON ...` or `END ...`, sent again on a gateway retry. */
  screen: string;
  /** Set when the gateway said the session ended (routes/aggregators/). */
  gatewayEnd?: GatewayEnd;
  createdAt: number;
  updatedAt: number;
  expiresAt: number;
}

/** The fields of a gateway request the menu needs. */
export interface UssdDial {
  sessionId: string;
  phoneNumber: string;
  serviceCode: string;
  text: string;
  /**
   * Set by the adapter of an aggregator that sends only the latest input (routes/aggregators/): `text` is that
   * input alone, and the session extends the history it keeps with it. Absent for Africa's Talking (whole history).
   */
  latest?: LatestInput;
  /**
   * Set by the session actor on a new dial that replaces an expired session of the same id (or whose notifications
   * still wait): the steps that one took. The new session numbers its steps on from there, so no key repeats.
   */
  stepsBefore?: number;
}

export interface LatestInput {
  /** The gateway's number of this request in the session, when it sends one (Hubtel's Sequence): a retry repeats it. */
  step?: number;
}

/** Active: not expired and not closed by an END (an ended record is only kept to answer gateway retries). */
export function isLive(session: UssdSession | undefined, now = Date.now()): session is UssdSession {
  return session !== undefined && session.expiresAt > now && session.state !== ENDED_STATE;
}
