// Thread: any
// Live calls (voice or video calls with the oracle's live agent, SDK 1.4.0's useLiveAgent),
// one record per call id, owned by the user who synced it. The SDK writes the call's content to a Matrix event
// and names the call `<eventId>@<roomId>`; this server keeps the record itself, so a call is what its owner told
// it (POST /calls/:id/sync) and how it went since (PATCH /calls/:id/update). Writes are create-only or
// revision-checked: two updates racing on one call cannot both land from the same read.
import type { Revision, Versioned } from '../../store/revision.js';

export const CALL_STATUSES = ['pending', 'active', 'ended'] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];
export const CALL_TYPES = ['audio', 'video'] as const;
export type CallType = (typeof CALL_TYPES)[number];

/** Calls one user may sync into one session; one more answers 409. */
export const CALLS_PER_SESSION_MAX = 100;

export interface CallRecord {
  /** `<eventId>@<roomId>`, as the SDK names it. */
  callId: string;
  /** The user who synced it: the only one who may read or change it. */
  userDid: string;
  /** The chat session the call belongs to, when its owner said (the SDK's sync sends no body). */
  sessionId?: string;
  callType?: CallType;
  callStatus: CallStatus;
  /** ISO 8601. */
  callStartedAt?: string;
  callEndedAt?: string;
  /** The call's media key as the client gave it (the SDK encrypts it to the oracle's key); only GET /calls/:id/key reads it. */
  encryptionKey?: string;
  agentVoice?: string;
  language?: string;
  createdAt: string;
  updatedAt: string;
}

export interface CallRepository {
  get(callId: string): Promise<Versioned<CallRecord> | undefined>;
  /** Stores a new call; RevisionConflictError when its id is taken. */
  create(call: CallRecord): Promise<Revision>;
  /** Replaces the call read at `revision`; RevisionConflictError when it was written since (or is gone). */
  update(call: CallRecord, revision: Revision): Promise<Revision>;
  /**
   * The user's calls in one session, oldest sync first, at most `limit`. A call whose record names another user or
   * session (an index entry left behind) is not listed: the record decides.
   */
  listSession(userDid: string, sessionId: string, limit: number): Promise<CallRecord[]>;
}

/** Oldest sync first; the id breaks ties. */
export function bySync(a: CallRecord, b: CallRecord): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.callId < b.callId ? -1 : a.callId > b.callId ? 1 : 0;
}
