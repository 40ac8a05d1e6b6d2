// Thread: any
// A message endpoint over a Node MessagePort (or Worker / parentPort) that sends all messages
// posted in one event-loop turn as ONE postMessage. Under load this turns hundreds of cross-thread posts (each a
// serialisation and a wake-up of the other thread) into a few.
import type { TransferListItem } from 'node:worker_threads';

interface NodePort {
  postMessage(message: unknown, transfer?: readonly TransferListItem[]): void;
  on(event: 'message', listener: (message: unknown) => void): unknown;
}

/** What the RPC (rpc.ts) sends and receives through: one message at a time in, batches on the wire. */
export interface Endpoint {
  postMessage(message: unknown, transfer?: readonly TransferListItem[]): void;
  onMessage(listener: (message: unknown) => void): void;
}

export function batchingEndpoint(port: NodePort): Endpoint {
  let queue: unknown[] = [];
  let transfers: TransferListItem[] = [];
  let scheduled = false;
  let lastFlush = 0;
  const listeners: ((message: unknown) => void)[] = [];

  const flush = () => {
    scheduled = false;
    lastFlush = performance.now();
    const batch = queue;
    const batchTransfers = transfers;
    queue = [];
    transfers = batchTransfers.length ? [] : batchTransfers;
    port.postMessage(batch, batchTransfers);
  };

  port.on('message', (batch) => {
    for (const message of batch as unknown[]) for (const listener of listeners) listener(message);
  });

  return {
    postMessage(message, transfer) {
      queue.push(message);
      if (transfer?.length) transfers.push(...transfer);
      if (!scheduled) {
        scheduled = true;
        // setImmediate runs after the I/O phase: every request that arrived in this turn shares the post.
        // Under load (a post less than a millisecond ago) wait one timer tick instead, so batches grow
        // with the load; at low load nothing waits.
        if (performance.now() - lastFlush < 1) setTimeout(flush, 1);
        else setImmediate(flush);
      }
    },
    onMessage: (listener) => void listeners.push(listener),
  };
}
