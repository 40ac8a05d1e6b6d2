// Thread: main (the key tools, src/tools/keys.ts)
// Which nodes of the deployment serve now. A serving node renews its
// heartbeat in the lease table (partition-leases.ts) every third of a lease; one that stopped cleanly removed it, and
// one killed left it as it was. So the table is read twice, a lease and a margin apart: a heartbeat written in
// between (a new one, or a newer revision) is a node that serves. Revisions, not the heartbeat's wall-clock time, so
// the tool's clock need not agree with the nodes'.
import type { ClusterConnection } from './connection.js';
import { DEFAULT_LEASE_TTL_MS } from './partition-leases.js';
import { KvRecordStore } from './record-store.js';

/** How long between the two reads: longer than a lease, so even a node renewing at its slowest shows. */
export const SERVING_WAIT_MS = DEFAULT_LEASE_TTL_MS + 500;

/** Node IDs whose heartbeat was renewed within `waitMs` (sorted); empty when no node serves. */
export async function servingNodes(connection: ClusterConnection, waitMs = SERVING_WAIT_MS): Promise<string[]> {
  const leases = await KvRecordStore.open<unknown>(connection, { name: 'leases' });
  const heartbeats = async () =>
    new Map((await leases.all(['node'])).map((record) => [record.key[1], record.revision] as const));
  const before = await heartbeats();
  await new Promise((resolve) => setTimeout(resolve, waitMs));
  const serving: string[] = [];
  for (const [nodeId, revision] of await heartbeats()) if (before.get(nodeId) !== revision) serving.push(nodeId);
  return serving.sort();
}
