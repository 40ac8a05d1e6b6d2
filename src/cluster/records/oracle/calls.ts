// Thread: any, cluster mode (the front door of any node)
// Live calls in the JetStream KV bucket `oracle_calls`: `c.<callId>` the
// record (create-only, revision-checked with the record store's fencing), `s.<userDid>.<sessionId>.<callId>` one
// index entry per call of a session. KV has no transaction over two keys, so the index entry is written first and
// the record decides: an entry whose record is missing or names another user or session is not listed, and a call
// whose entry was written is listed once its record is.
import type { ClusterConnection } from '../../connection.js';
import { KvRecordStore } from '../../record-store.js';
import { bySync, type CallRecord, type CallRepository } from '../../../oracle/calls/records.js';

type CallEntry = CallRecord | { callId: string };

export async function openJetStreamCalls(connection: ClusterConnection): Promise<CallRepository> {
  const store = await KvRecordStore.open<CallEntry>(connection, { name: 'oracle_calls' });
  const recordKey = (callId: string) => ['c', callId];
  const indexFirst = async (call: CallRecord) => {
    if (call.sessionId !== undefined)
      await store.put(['s', call.userDid, call.sessionId, call.callId], { callId: call.callId });
  };
  const get = async (callId: string) => {
    const found = await store.get(recordKey(callId));
    return found && { value: found.value as CallRecord, revision: found.revision };
  };
  return {
    get,
    async create(call) {
      await indexFirst(call);
      return store.create(recordKey(call.callId), call);
    },
    async update(call, revision) {
      await indexFirst(call);
      return store.update(recordKey(call.callId), call, revision);
    },
    async listSession(userDid, sessionId, limit) {
      const entries = await store.all(['s', userDid, sessionId]);
      const records = await Promise.all(entries.map((entry) => get(entry.value.callId)));
      return records
        .map((found) => found?.value)
        .filter((call): call is CallRecord => call?.userDid === userDid && call.sessionId === sessionId)
        .sort(bySync)
        .slice(0, limit);
    },
  };
}
