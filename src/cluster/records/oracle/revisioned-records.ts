// Thread: any holding a NATS connection, cluster mode
// RevisionedRecords over a replicated JetStream KV bucket, for
// the oracle's plain record families (preferences, credits). The KV revision is the record's revision; create and
// update are the record store's (create-only, revision-checked with its fencing for nats-server 2.9), so two nodes
// racing on one record cannot both win: the loser re-reads (changeRecord) and no credit is spent twice.
import type { ClusterConnection } from '../../connection.js';
import type { RecordKey } from '../../keys.js';
import { KvRecordStore } from '../../record-store.js';
import type { RevisionedRecords } from '../../../oracle/revisions.js';

export async function openJetStreamRevisionedRecords<K, V>(
  connection: ClusterConnection,
  bucket: string,
  keyOf: (key: K) => RecordKey,
): Promise<RevisionedRecords<K, V>> {
  const store = await KvRecordStore.open<V>(connection, { name: bucket });
  return {
    get: (key) => store.get(keyOf(key)),
    create: (key, value) => store.create(keyOf(key), value),
    update: (key, value, revision) => store.update(keyOf(key), value, revision),
  };
}
