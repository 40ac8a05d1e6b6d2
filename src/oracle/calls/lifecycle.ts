// Thread: main (front door)
// What a sync and an update do to a call, decided in one place and free of side effects (each runs again
// when its write lost a race, changeRecord). The transitions follow the reference runtime's: pending -> active or
// ended, active -> ended, nothing after ended; naming the status a call already has changes nothing, so a retried
// update lands once. A refusal is a CallRefusal with the status of its answer.
import type { CallRecord, CallStatus, CallType } from './records.js';

/** What the owner may tell at sync: the content the SDK writes into its Matrix call event (all optional). */
export interface CallContent {
  sessionId?: string;
  callType?: CallType;
  encryptionKey?: string;
  agentVoice?: string;
  language?: string;
}

export interface CallUpdate {
  callStatus?: Exclude<CallStatus, 'pending'>;
  callStartedAt?: string;
  callEndedAt?: string;
}

export class CallRefusal extends Error {
  constructor(
    readonly status: 400 | 404 | 409,
    message: string,
  ) {
    super(message);
    this.name = 'CallRefusal';
  }
}

export const CALL_NOT_FOUND = 'Call not found';

const NEXT: Record<CallStatus, readonly CallStatus[]> = {
  pending: ['active', 'ended'],
  active: ['ended'],
  ended: [],
};

const CONTENT_FIELDS = ['sessionId', 'callType', 'encryptionKey', 'agentVoice', 'language'] as const;

/**
 * A sync of `callId` by `userDid`: a new pending call, or the same user's call with the fields it lacked filled in.
 * Another user's call id is taken (409); a field given again with another value is a conflict (409).
 */
export function syncedCall(
  current: CallRecord | undefined,
  callId: string,
  userDid: string,
  content: CallContent,
  now: string,
): CallRecord {
  if (!current) return { callId, userDid, callStatus: 'pending', ...defined(content), createdAt: now, updatedAt: now };
  if (current.userDid !== userDid) throw new CallRefusal(409, 'This call id is already synced by another user');
  const next: CallRecord = { ...current };
  let changed = false;
  for (const field of CONTENT_FIELDS) {
    const given = content[field];
    if (given === undefined) continue;
    if (current[field] === undefined) {
      (next as unknown as Record<string, unknown>)[field] = given;
      changed = true;
    } else if (current[field] !== given) throw new CallRefusal(409, `${field} differs from the synced call's`);
  }
  return changed ? { ...next, updatedAt: now } : current;
}

/** An update of the user's call (404 for an unknown call or another user's: they answer alike). */
export function updatedCall(
  current: CallRecord | undefined,
  userDid: string,
  update: CallUpdate,
  now: string,
): CallRecord {
  if (!current || current.userDid !== userDid) throw new CallRefusal(404, CALL_NOT_FOUND);
  const next: CallRecord = { ...current };
  const status = update.callStatus;
  if (status && status !== current.callStatus) {
    if (!NEXT[current.callStatus].includes(status))
      throw new CallRefusal(
        409,
        `Invalid state transition: cannot change from '${current.callStatus}' to '${status}'` +
          ` (allowed from '${current.callStatus}': [${NEXT[current.callStatus].join(', ')}])`,
      );
    next.callStatus = status;
    if (status === 'active' && !next.callStartedAt) next.callStartedAt = update.callStartedAt ?? now;
    if (status === 'ended' && !next.callEndedAt) next.callEndedAt = update.callEndedAt ?? now;
  }
  if (update.callStartedAt) {
    if (next.callStatus === 'pending') throw new CallRefusal(400, 'Cannot set callStartedAt for pending calls');
    next.callStartedAt = update.callStartedAt;
  }
  if (update.callEndedAt) {
    if (next.callStatus !== 'ended') throw new CallRefusal(400, 'Cannot set callEndedAt for non-ended calls');
    next.callEndedAt = update.callEndedAt;
  }
  if (next.callStartedAt && next.callEndedAt && Date.parse(next.callEndedAt) < Date.parse(next.callStartedAt))
    throw new CallRefusal(400, 'callEndedAt must not be before callStartedAt');
  const same =
    next.callStatus === current.callStatus &&
    next.callStartedAt === current.callStartedAt &&
    next.callEndedAt === current.callEndedAt;
  return same ? current : { ...next, updatedAt: now };
}

function defined(content: CallContent): CallContent {
  return Object.fromEntries(Object.entries(content).filter(([, value]) => value !== undefined)) as CallContent;
}
