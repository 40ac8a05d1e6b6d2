// A comlink Endpoint over a Node MessagePort (or Worker / parentPort) that sends all messages posted in one
// event-loop turn as ONE postMessage. Under load this turns hundreds of cross-thread posts (each a
// serialisation and a wake-up of the other thread) into a few; comlink itself is unchanged.
import type { Endpoint } from 'comlink';

interface NodePort {
  postMessage(message: unknown, transfer?: readonly unknown[]): void;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  start?: () => void;
}

/** comlink's listener type (DOM's EventListenerOrEventListenerObject); it only reads `event.data`. */
type Listener = Parameters<Endpoint['addEventListener']>[1];

export function batchingEndpoint(port: NodePort): Endpoint {
  let queue: unknown[] = [];
  let transfers: unknown[] = [];
  let scheduled = false;
  let lastFlush = 0;
  const listeners = new Set<Listener>();

  const flush = () => {
    scheduled = false;
    lastFlush = performance.now();
    const batch = queue;
    const batchTransfers = transfers;
    queue = [];
    transfers = [];
    port.postMessage(batch, batchTransfers);
  };

  port.on('message', (batch) => {
    for (const data of batch as unknown[]) {
      // Only `data` is read (comlink's message handler), so a bare object stands for the MessageEvent.
      const event = { data } as MessageEvent;
      for (const listener of listeners) {
        if (typeof listener === 'function') listener(event);
        else listener.handleEvent(event);
      }
    }
  });

  return {
    postMessage(message: unknown, transfer?: unknown[]) {
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
    addEventListener: (_type: string, listener: Listener) => void listeners.add(listener),
    removeEventListener: (_type: string, listener: Listener) => void listeners.delete(listener),
    start: port.start?.bind(port),
  };
}
