// The NATS servers of a local cluster as the cluster benches read them.
import type { NatsCluster } from '../../src/tools/local-nats-cluster.js';

/** Messages in and out of every NATS server so far (each server's /varz): clients' and routes' alike. */
export async function natsMessages(nats: NatsCluster): Promise<number> {
  const counts = await Promise.all(
    nats.servers.map(async (server) => {
      const varz = (await (await fetch(`http://127.0.0.1:${server.monitorPort}/varz`)).json()) as {
        in_msgs: number;
        out_msgs: number;
      };
      return varz.in_msgs + varz.out_msgs;
    }),
  );
  return counts.reduce((a, b) => a + b, 0);
}
