// Thread: any
// Live calls in the LMDB database `oracle-calls` (by call id, the revision on the record) and their
// per-session index `oracle-call-sessions`, keyed `<userDid>|<sessionId>|<callId>` (`|` occurs in neither a DID
// nor a session id, and call ids refuse it). A record and its index entry are written in one synced transaction.
import type { Store } from '../../../store/env.js';
import { versioned, writeAtRevision, type Revision, type Stored } from '../../../store/revision.js';
import { bySync, type CallRecord, type CallRepository } from '../../../oracle/calls/records.js';

const sessionPrefix = (userDid: string, sessionId: string) => `${userDid}|${sessionId}|`;

export function openLmdbCalls(store: Store): CallRepository {
  const calls = store.db<Stored<CallRecord>>('oracle-calls');
  const index = store.db<true>('oracle-call-sessions');
  const write = (call: CallRecord, expected: Revision | undefined): Promise<Revision> =>
    calls.transaction(() => {
      const revision = writeAtRevision(calls, call.callId, call, expected);
      if (call.sessionId !== undefined)
        index.putSync(`${sessionPrefix(call.userDid, call.sessionId)}${call.callId}`, true);
      return revision;
    });
  return {
    get: async (callId) => versioned(calls.get(callId)),
    create: (call) => write(call, undefined),
    update: (call, revision) => write(call, revision),
    async listSession(userDid, sessionId, limit) {
      const prefix = sessionPrefix(userDid, sessionId);
      const found: CallRecord[] = [];
      for (const key of index.getKeys({ start: prefix, end: `${prefix}\uffff` })) {
        const call = versioned(calls.get(key.slice(prefix.length)))?.value;
        if (call?.userDid === userDid && call.sessionId === sessionId) found.push(call);
      }
      return found.sort(bySync).slice(0, limit);
    },
  };
}
