// Thread: main (the key tools, src/tools/keys.ts)
// Which nodes of the deployment serve now. A serving node renews its
// heartbeat in the lease table (partition-leases.ts) every third of a lease; one that stopped cleanly removed it, and
// one killed left it as it was. So the table is read, then watched for up to a lease and a margin: a heartbeat
// written meanwhile (a new one, or a newer revision) is a node that serves. Revisions, not the heartbeat's wall-clock
// time, so the tool's clock need not agree with the nodes'. The wait ends once every heartbeat of the first read was
// renewed or removed (nothing more to learn of them), unless nodes that join meanwhile must be seen too.
import type { ClusterConnection } from './connection.js';
import { DEFAULT_LEASE_TTL_MS } from './partition-leases.js';
import { KvRecordStore } from './record-store.js';

/** How long the table is watched at most: longer than a lease, so even a node renewing at its slowest shows. */
export const SERVING_WAIT_MS = DEFAULT_LEASE_TTL_MS + 500;

export interface ServingOptions {
  waitMs?: number;
  /**
   * Watch the whole wait for nodes that write their first heartbeat meanwhile (default true). False where such a
   * node can do no harm because it checks the records itself after joining the leases (a rotation recorded before
   * the call, src/app/keys-at-start.ts) or a later call looks again: the wait then ends as soon as every heartbeat of the
   * first read was renewed or removed, at once when there was none.
   */
  newcomers?: boolean;
}

/** Node IDs whose heartbeat was renewed within the wait (sorted); empty when no node serves. */
export async function servingNodes(connection: ClusterConnection, options: ServingOptions = {}): Promise<string[]> {
  const waitMs = options.waitMs ?? SERVING_WAIT_MS;
  const newcomers = options.newcomers ?? true;
  const leases = await KvRecordStore.open<unknown>(connection, { name: 'leases' });
  const heartbeats = async () =>
    new Map((await leases.all(['node'])).map((record) => [record.key[1], record.revision] as const));
  const before = await heartbeats();
  if (!newcomers && before.size === 0) return [];
  const serving = new Set<string>();
  const unsettled = new Set(before.keys());
  let settle = () => {};
  const settled = new Promise<void>((resolve) => (settle = resolve));
  const watch = await leases.watch(['node'], (change) => {
    const nodeId = change.key[1];
    const known = before.get(nodeId);
    if (known !== undefined && change.revision <= known) return;
    if (change.value !== undefined) serving.add(nodeId);
    unsettled.delete(nodeId);
    // Once one serves the answer is a refusal: later heartbeats would only lengthen its list.
    if (unsettled.size === 0 && (!newcomers || serving.size > 0)) settle();
  });
  let timer: NodeJS.Timeout | undefined;
  const waited = await Promise.race([
    settled.then(() => false),
    new Promise<boolean>((resolve) => (timer = setTimeout(resolve, waitMs, true))),
  ]);
  clearTimeout(timer);
  watch.stop();
  // The watch's reader may sit on a server still behind: at the end of the wait the table is read from its leader.
  if (waited)
    for (const [nodeId, revision] of await heartbeats()) if (before.get(nodeId) !== revision) serving.add(nodeId);
  return [...serving].sort();
}
