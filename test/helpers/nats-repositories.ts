// For the repository contracts on JetStream: connections to a test NATS cluster, and a fresh deployment prefix per
// test (its own buckets), so every test starts from empty stores while the file shares one cluster.
import type { Test } from 'tap';
import { connectCluster, type ClusterConnection } from '../../dist/src/cluster/connection.js';
import type { NatsCluster } from './nats-cluster.js';

let deployments = 0;

/** A connection to `urls` (all servers by default), closed when `t` ends. */
export async function connectTo(
  t: Test,
  cluster: NatsCluster,
  urls = cluster.urls.split(','),
  name = 'repo-test',
): Promise<ClusterConnection> {
  const connection = await connectCluster({ NATS_URL: urls, NATS_PREFIX: 'repo' }, name);
  t.teardown(() => connection.nc.close());
  return connection;
}

/** The same connections seen as one new deployment: bucket names get a prefix no other test uses. */
export function freshDeployment(...connections: ClusterConnection[]): ClusterConnection[] {
  const prefix = `repo${++deployments}`;
  return connections.map((connection) => ({ ...connection, prefix }));
}
